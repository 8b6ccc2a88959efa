"""Where does JAX verify's own time go? One variant per process (argv[1]): backend start,
tracing, lowering, XLA backend compile (jax.monitoring durations) and the first run.
Variants: grad (verify's program: grad of sum(y*g)), vjp (cotangent g, no reduction),
vjp-nofp16, vjp-fp32. GPU machine only."""

import os
import sys
import time

sys.path.insert(0, os.getcwd())
T0 = time.perf_counter()
os.environ.setdefault("JAX_PLATFORMS", "cuda,cpu")
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from fixer.children.verify import CASES  # noqa: E402

variant = sys.argv[1] if len(sys.argv) > 1 else "grad"
durations = []
jax.monitoring.register_event_duration_secs_listener(lambda ev, d, **kw: durations.append((ev, d)))
t_import = time.perf_counter() - T0
t = time.perf_counter()
gpu = jax.devices()[0]
t_backend = time.perf_counter() - t

BY_NAME = {c[0].split("-")[0]: c for c in CASES}  # small, 2x16x32x32, stem
if (
    ":" in variant
):  # a case list: dtype:shape:layout,...  e.g. float32:small:NCHW,bfloat16:2x16x32x32:NHWC
    sel = [(d, l, BY_NAME[n]) for d, n, l in (item.split(":") for item in variant.split(","))]
else:
    sel = [("float32", "NCHW", c) for c in CASES]
    if variant not in ("vjp-fp32",):
        if variant != "vjp-nofp16":
            sel.append(("float16", "NHWC", CASES[1]))
        sel.append(("bfloat16", "NHWC", CASES[1]))
rng = np.random.default_rng(0)
data, params = [], []
for dt, layout, (name, xs, ws, stride, pad) in sel:
    npd = np.dtype(getattr(jnp, dt))
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(ws).astype(np.float32)
    ys = (
        xs[0],
        ws[0],
        (xs[2] + 2 * pad - ws[2]) // stride + 1,
        (xs[3] + 2 * pad - ws[3]) // stride + 1,
    )
    g = rng.standard_normal(ys).astype(np.float32)
    if layout == "NHWC":
        x, w, g = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), g.transpose(0, 2, 3, 1)
    gd = np.float32 if (variant == "grad" or ":" in variant) else npd
    data.append(
        [
            jax.device_put(np.ascontiguousarray(a).astype(d), gpu)
            for a, d in ((x, npd), (w, npd), (g, gd))
        ]
    )
    params.append((layout, stride, pad))


def conv(x, w, layout, stride, pad):
    dn = ("NCHW", "OIHW", "NCHW") if layout == "NCHW" else ("NHWC", "HWIO", "NHWC")
    return jax.lax.conv_general_dilated(
        x, w, (stride, stride), [(pad, pad)] * 2, dimension_numbers=dn
    )


def program(args):
    out = []
    for (x, w, g), (layout, stride, pad) in zip(args, params):
        f = lambda x, w, layout=layout, stride=stride, pad=pad: conv(x, w, layout, stride, pad)  # noqa: E731
        if variant == "grad" or ":" in variant:
            loss = lambda x, w, g=g, f=f: jnp.sum(f(x, w).astype(jnp.float32) * g)  # noqa: E731
            out.append((f(x, w),) + tuple(jax.grad(loss, argnums=(0, 1))(x, w)))
        else:
            y, pull = jax.vjp(f, x, w)
            out.append((y,) + tuple(pull(g)))
    return out


t = time.perf_counter()
lowered = jax.jit(program).lower(data)
t_lower = time.perf_counter() - t
t = time.perf_counter()
compiled = lowered.compile()
t_compile = time.perf_counter() - t
t = time.perf_counter()
jax.block_until_ready(compiled(data))
t_run1 = time.perf_counter() - t
t = time.perf_counter()
jax.block_until_ready(compiled(data))
t_run2 = time.perf_counter() - t
total = time.perf_counter() - T0
print(
    "variant=%s\n     XLA_FLAGS=%r cases=%d import=%.2f backend=%.2f trace+lower=%.2f compile=%.2f run1=%.3f run2=%.4f own=%.2f"
    % (
        variant,
        os.environ.get("XLA_FLAGS", ""),
        len(sel),
        t_import,
        t_backend,
        t_lower,
        t_compile,
        t_run1,
        t_run2,
        total - t_import,
    )
)
for ev, d in durations:
    if d > 0.01:
        print("    %-60s %.3f" % (ev, d))
