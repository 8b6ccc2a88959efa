"""Where does torch verify's own time go? One process: CUDA start-up stages, then per
(dtype, case): CPU reference cost (torch float64 vs NumPy), first call (cuDNN algorithm
search with benchmark on) and steady state. GPU machine only.
Usage: python scripts/device/torch_cases.py bench|nobench [numpy]"""

import os
import sys
import time

sys.path.insert(0, os.getcwd())
T0 = time.perf_counter()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from fixer.children.verify import CASES, np_conv_reference  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "bench"
marks = [("import torch", time.perf_counter() - T0)]


def mark(label):
    marks.append((label, time.perf_counter() - T0))


torch.cuda.is_available()
mark("cuda.is_available")
cc = torch.cuda.get_device_capability(0)
mark("get_device_capability")
torch.zeros(1, device="cuda")
torch.cuda.synchronize()
mark("context (first tensor)")
torch.backends.cudnn.benchmark = mode == "bench"
rows = []
gen = torch.Generator().manual_seed(0)
for dtype_name in ("float32", "float16", "bfloat16"):
    dtype = getattr(torch, dtype_name)
    fmt = torch.contiguous_format if dtype_name == "float32" else torch.channels_last
    for name, xs, ws, stride, pad in CASES:
        x = torch.randn(xs, generator=gen).to(dtype)
        w = (torch.randn(ws, generator=gen) / (ws[1] * ws[2] * ws[3]) ** 0.5).to(dtype)
        ys = (
            xs[0],
            ws[0],
            (xs[2] + 2 * pad - ws[2]) // stride + 1,
            (xs[3] + 2 * pad - ws[3]) // stride + 1,
        )
        g = torch.randn(ys, generator=gen)
        t = time.perf_counter()
        xr = x.double().requires_grad_()
        wr = w.double().requires_grad_()
        (F.conv2d(xr, wr, stride=stride, padding=pad) * g.double()).sum().backward()
        ref_torch = time.perf_counter() - t
        t = time.perf_counter()
        np_conv_reference(x.float().numpy(), w.float().numpy(), g.numpy(), stride, pad)
        ref_np = time.perf_counter() - t
        xg = x.cuda().contiguous(memory_format=fmt).requires_grad_()
        wg = w.cuda().contiguous(memory_format=fmt).requires_grad_()
        gg = g.cuda()

        def step():
            xg.grad = None
            wg.grad = None
            y = F.conv2d(xg, wg, stride=stride, padding=pad)
            (y.float() * gg).sum().backward()
            torch.cuda.synchronize()

        t = time.perf_counter()
        step()
        first = time.perf_counter() - t
        t = time.perf_counter()
        for _ in range(5):
            step()
        steady = (time.perf_counter() - t) / 5
        rows.append((dtype_name, name, ref_torch, ref_np, first, steady))
mark("all cases")
print(
    "mode=%s cc=%s torch=%s cudnn=%s"
    % (mode, cc, torch.__version__, torch.backends.cudnn.version())
)
prev = 0.0
for label, t in marks:
    print("  %-28s at %6.3f s  (+%.3f)" % (label, t, t - prev))
    prev = t
print("  %-9s %-20s %9s %9s %9s %9s" % ("dtype", "case", "ref_torch", "ref_np", "first", "steady"))
for d, n, a, b, c, e in rows:
    print(
        "  %-9s %-20s %8.1fms %8.1fms %8.1fms %8.3fms" % (d, n, a * 1e3, b * 1e3, c * 1e3, e * 1e3)
    )
print(
    "  sums: ref_torch %.3f s, ref_np %.3f s, first %.3f s, steady*5 %.3f s"
    % (
        sum(r[2] for r in rows),
        sum(r[3] for r in rows),
        sum(r[4] for r in rows),
        5 * sum(r[5] for r in rows),
    )
)
