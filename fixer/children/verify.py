"""Runs INSIDE the target interpreter (by path, stdlib only at module level): imports one
framework, convolves on the GPU, compares with a CPU reference, and reports which cuDNN
files the process actually mapped.

    python verify.py torch|tensorflow|jax|cupy [--device cpu] [--cc 8.0]
    python verify.py libs [--dlopen PATH ...] [--built 9.19.0]

Why a child: a broken cuDNN can segfault, abort or hang the process that loads it, and a
library once mapped cannot be unmapped. The parent (fixer.verifier.checks) runs this with a timeout
in its own process group and classifies what came back.

Output protocol: one JSON object per line, each prefixed with MARK, written to a private
copy of the original stdout. File descriptor 1 is pointed at stderr before any framework is
imported, so whatever a framework prints cannot corrupt the protocol. Records are written
as soon as they are known (flushed, unbuffered), so a crash keeps everything up to it:
  start, imported, device | nogpu, case..., loaded, built, error..., done.

`--device cpu` runs the "GPU" cases on the CPU: only for testing this script on machines
without a GPU. `libs` mode dlopens the given files and reports the mapped cuDNN files:
the loaded-library check without a framework (tested with compiled stub libraries).
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import time
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: threading is imported lazily where it is used
    import threading

MARK = "@@fixer-verify@@ "
_OUT_FD = 1
_T0 = time.perf_counter()  # every record carries "t": seconds since this module started
_WALL0 = time.time()  # the same moment on the wall clock, for the parent's startup time

#: (name, x shape NCHW, w shape OIHW, stride, padding). The first is the small shape that
#: silently returned wrong numbers on the GPU machine with engines_precompiled missing.
CASES = (
    ("small-3x32x32", (1, 3, 32, 32), (8, 3, 3, 3), 1, 0),
    ("2x16x32x32-pad1", (2, 16, 32, 32), (32, 16, 3, 3), 1, 1),
    ("stem-3x224x224-s2", (1, 3, 224, 224), (32, 3, 3, 3), 2, 1),
)
#: Largest allowed max|gpu - ref| / max|ref| per dtype. fp32 runs with the framework's
#: default TF32 setting (10-bit mantissa, ~5e-4 relative per product): 1e-2 allows it.
TOLERANCE = {"float32": 1e-2, "float16": 2e-2, "bfloat16": 5e-2}
STEADY_REPEATS = 5


def _load_childrules():
    """fixer/children/childrules.py, the rules shared with the package, loaded by path (this
    script runs in a foreign interpreter and cannot import the package)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "childrules.py")
    spec = importlib.util.spec_from_file_location("_colab_cudnn_fix_childrules", path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load " + path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_rules = _load_childrules()
CUDNN_SUBLIBRARIES = _rules.CUDNN_SUBLIBRARIES
cudnn_sublibraries = _rules.cudnn_sublibraries
cudnn_version_from_int = _rules.cudnn_version_from_int
cudnn_requirement = _rules.cudnn_requirement
_CUDNN_FILE = re.compile(r"^(libcudnn[a-z_]*)\.so(?:\.(\d+(?:\.\d+)*))?$")


def emit(event: str, **fields) -> None:
    rec = {"event": event, "t": round(time.perf_counter() - _T0, 4)}
    rec.update(fields)
    data = (MARK + json.dumps(rec, default=str) + "\n").encode()
    while data:
        n = os.write(_OUT_FD, data)
        data = data[n:]


def _protect_stdout() -> None:
    """Keep a private fd for the protocol; send fd 1 (framework chatter) to stderr."""
    global _OUT_FD
    _OUT_FD = os.dup(1)
    os.dup2(2, 1)


def _error(stage: str, exc: BaseException) -> None:
    emit(
        "error",
        stage=stage,
        type=type(exc).__name__,
        message=str(exc)[-4000:],
        traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-6000:],
    )


#: A conv step on a cuDNN copy known to be incomplete that gives no result for this long is
#: reported as stalled (JAX hung until the parent's 120 s timeout on the GPU machine with
#: libcudnn_engines_precompiled missing). A healthy first step took at most 2.3 s there warm,
#: 5.4 s from a cold file cache. FIXER_VERIFY_STALL_SECONDS overrides it.
STALL_SECONDS = 20.0
STALL_EXIT = 70


class Watchdog:
    """Ends the child with a classified record when one step stalls. Armed only where a
    stall is expected (a cuDNN copy lacking sub-libraries): a healthy stack is never cut
    short, and a hang elsewhere still meets the parent's timeout."""

    def __init__(self, seconds: float, why: str) -> None:
        self.seconds, self.why = seconds, why
        self._timer: threading.Timer | None = None

    def arm(self, stage: str) -> None:
        import threading

        self.disarm()
        self._timer = threading.Timer(self.seconds, self._fire, args=(stage,))
        self._timer.daemon = True
        self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self, stage: str) -> None:
        emit(
            "error",
            stage=stage,
            type="Stalled",
            message="no result after %g s (%s): stopped without waiting for the timeout"
            % (self.seconds, self.why),
        )
        emit("loaded", stage="stalled", **loaded_cudnn(ask_versions=False))
        _fast_exit(STALL_EXIT)


def watchdog_for(loaded: dict):
    """A Watchdog when the loaded cuDNN copy lacks sub-libraries, else None."""
    if not loaded.get("missing"):
        return None
    try:
        seconds = float(os.environ.get("FIXER_VERIFY_STALL_SECONDS", STALL_SECONDS))
    except ValueError:
        seconds = STALL_SECONDS
    return Watchdog(seconds, "the cuDNN copy lacks " + ", ".join(loaded["missing"]))


def _fast_exit(code: int) -> None:
    """Flush everything and leave without the frameworks' teardown: destroying a CUDA context,
    cuDNN handles and XLA's threads cost about a second per check on the GPU machine, after
    every result was already written."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    try:
        ctypes.CDLL(None).fflush(None)  # C stdio buffers (a framework's printf to the old fd 1)
    except Exception:  # noqa: BLE001
        pass
    # Close every descriptor on the parent's pipes: it reads to end of file, and need not
    # wait for the teardown of the process (a CUDA context takes 0.2 s to release).
    for fd in {_OUT_FD, 1, 2}:
        try:
            os.close(fd)
        except OSError:
            pass
    os._exit(code)


# ---------------------------------------------------------------------------------------
# the loaded-library check: /proc/self/maps + cudnnGetVersion on the mapped files
# ---------------------------------------------------------------------------------------


def mapped_cudnn_files(maps_text: str) -> list:
    """Paths of libcudnn* files in a /proc/PID/maps text, in order of first appearance."""
    seen = []
    for line in maps_text.splitlines():
        parts = line.split(None, 5)
        if len(parts) < 6:
            continue
        path = parts[5].strip()
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        if _CUDNN_FILE.match(os.path.basename(path)) and path not in seen:
            seen.append(path)
    return seen


def _mapped_version(path: str):
    """cudnnGetVersion of an already-mapped file (RTLD_NOLOAD: never loads anything new)."""
    try:
        lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 4) | getattr(os, "RTLD_LAZY", 1))
        fn = lib.cudnnGetVersion
    except (OSError, AttributeError):
        return None
    fn.restype = ctypes.c_size_t
    fn.argtypes = []
    try:
        return cudnn_version_from_int(int(fn()))
    except Exception:  # noqa: BLE001 - a foreign library; any failure means "unknown"
        return None


def loaded_cudnn(ask_versions: bool = True) -> dict:
    """Which cuDNN files this process mapped, their versions, and what their copy lacks.
    ask_versions=False reads versions from file names only (no dlopen: the watchdog calls this
    while the main thread may be stuck inside the dynamic loader, holding its lock)."""
    try:
        with open("/proc/self/maps") as fh:
            paths = mapped_cudnn_files(fh.read())
    except OSError as exc:
        return {"files": [], "error": str(exc)}
    files = []
    for p in paths:
        m = _CUDNN_FILE.match(os.path.basename(p))
        base, suffix = (m.group(1), m.group(2)) if m else (os.path.basename(p), None)
        file_version = suffix if suffix and suffix.count(".") >= 2 else None
        # A full version in the real file name (apt: libcudnn_ops.so.9.14.0) wins: a
        # sub-library's cudnnGetVersion forwards to whichever libcudnn_graph was mapped first,
        # so in a mixed process it reports the other copy's version (seen on the GPU machine).
        version = None if (file_version or not ask_versions) else _mapped_version(p)
        files.append(
            {
                "path": p,
                "dir": os.path.dirname(p),
                "lib": base,
                "major": int(suffix.split(".")[0]) if suffix else None,
                "version": file_version or version,
                "version_source": "filename"
                if file_version
                else ("cudnnGetVersion" if version else None),
            }
        )
    main = [f for f in files if f["lib"] == "libcudnn"]
    missing = []
    if main and cudnn_sublibraries(main[0]["major"] or 0):
        d, major = main[0]["dir"], main[0]["major"]
        try:
            present = set(os.listdir(d))
        except OSError:
            present = set()
        for sub in cudnn_sublibraries(major):
            name = "libcudnn_%s.so.%d" % (sub, major)
            if not any(n == name or n.startswith(name + ".") for n in present):
                missing.append(name)
    return {"files": files, "missing": missing}


# ---------------------------------------------------------------------------------------
# shared helpers
# ---------------------------------------------------------------------------------------


def _rel_err_np(got, ref) -> float:
    """The same measure with NumPy arrays (fast on the 224x224 case)."""
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if got.shape != ref.shape or not np.isfinite(got).all():
        return float("inf")
    peak = float(np.abs(ref).max()) if ref.size else 0.0
    worst = float(np.abs(got - ref).max()) if ref.size else 0.0
    return worst / peak if peak > 0 else worst


def _rel_err_torch(got, ref) -> float:
    """The same measure with torch tensors (NumPy may be missing next to torch)."""
    got = got.detach().double().cpu()
    ref = ref.detach().double().cpu()
    if got.shape != ref.shape or not bool(got.isfinite().all()):
        return float("inf")
    peak = float(ref.abs().max()) if ref.numel() else 0.0
    worst = float((got - ref).abs().max()) if ref.numel() else 0.0
    return worst / peak if peak > 0 else worst


def np_conv_reference(x, w, g, stride, pad):
    """Float64 NumPy reference of conv2d (NCHW x OIHW) forward, and the gradients of
    sum(y * g) with respect to x and w. No framework, no compilation: it costs milliseconds."""
    import numpy as np
    from numpy.lib.stride_tricks import sliding_window_view

    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    kh, kw = w.shape[2], w.shape[3]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    ho, wo = g.shape[2], g.shape[3]
    win = sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride][:, :, :ho, :wo]
    y = np.einsum("ncijpq,ocpq->noij", win, w, optimize=True)
    dw = np.einsum("ncijpq,noij->ocpq", win, g, optimize=True)
    dxp = np.zeros_like(xp)
    for p in range(kh):
        for q in range(kw):
            dxp[:, :, p : p + stride * ho : stride, q : q + stride * wo : stride] += np.einsum(
                "noij,oc->ncij", g, w[:, :, p, q]
            )
    dx = dxp[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]
    return y, dx, dw


def _dtypes_for(cc) -> list:
    """float32 everywhere; float16 from Volta (7.0, tensor cores); bfloat16 from Ampere (8.0)."""
    out = ["float32"]
    if cc is not None and cc >= (7, 0):
        out.append("float16")
    if cc is not None and cc >= (8, 0):
        out.append("bfloat16")
    return out


#: The shapes the reduced precisions run (float32 runs every shape): a channel count that
#: takes the tensor-core engines, and a 3-channel input layer. The small 3-channel shape is
#: float32 only: in half precision it cost 160-260 ms of algorithm search per dtype in torch
#: on the H200 (search on, as torch ran then) while adding no engine family the stem lacks
#: (scripts/device/torch_cases.py).
HALF_SHAPES = ("2x16x32x32-pad1", "stem-3x224x224-s2")


def plan_cases(framework: str, cc) -> list:
    """[(dtype, layout, case)] the child runs: float32 NCHW on every shape, then each reduced
    precision the GPU supports in NHWC (channels-last, where mixed precision runs in practice).

    JAX compiles everything as one XLA program (each conv forward and both gradients); when it
    autotuned every conv in it (level 1, before JAX_AUTOTUNE_LEVEL was 0), each reduced
    precision added 0.7-1.0 s on an H200 and each float32 shape 0.33-0.49 s (scripts/device/jax_cases.py, jax_variants.sh). To stay within 3 s beyond the
    import on the slower H200 machines too, JAX runs float32 on the small shape and the
    16-channel one (not the 224x224 stem: stride 2 is torch's and TensorFlow's to cover) and
    the one reduced precision its users train in, on the 16-channel shape: bfloat16 where the
    GPU has it, float16 on Volta/Turing (Colab's T4). torch and TensorFlow users run both
    under autocast / mixed_float16, and their per-conv search is cheaper: they run both, on
    HALF_SHAPES, and float32 on every shape."""
    halves = _dtypes_for(cc)[1:]
    if framework == "jax":
        return [("float32", "NCHW", c) for c in CASES[:2]] + [
            (d, "NHWC", c) for d in halves[-1:] for c in CASES if c[0] == HALF_SHAPES[0]
        ]
    return [("float32", "NCHW", c) for c in CASES] + [
        (d, "NHWC", c) for d in halves for c in CASES if c[0] in HALF_SHAPES
    ]


def _background():
    """One worker thread for the CPU references, so they overlap the GPU work (torch's CPU
    convs and NumPy's einsum release the GIL)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="fixer-reference")


def _parse_cc(text):
    if not text:
        return None
    parts = str(text).replace(",", ".").split(".")
    try:
        return (int(parts[0]), int(parts[1]) if len(parts) > 1 else 0)
    except ValueError:
        return None


def _requires_pin(dist_names) -> tuple:
    """The nvidia-cudnn pin in the Requires-Dist of the first of `dist_names` installed."""
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover
        return None, None
    for name in dist_names:
        try:
            reqs = metadata.requires(name) or []
        except Exception:  # noqa: BLE001
            continue
        req, version = cudnn_requirement(reqs)
        if req:
            return version, "Requires-Dist of %s: %s" % (name, req)
    return None, None


def _case_record(name, dtype, layout, errs, tol, first_ms, steady_ms, xs, ws, stride, pad):
    ok = all(e <= tol for e in errs.values())
    return dict(
        case=name,
        dtype=dtype,
        layout=layout,
        x=list(xs),
        w=list(ws),
        stride=stride,
        padding=pad,
        errors={k: (None if v == float("inf") else round(v, 6)) for k, v in errs.items()},
        max_error=(None if max(errs.values()) == float("inf") else round(max(errs.values()), 6)),
        tolerance=tol,
        ok=ok,
        first_ms=round(first_ms, 3),
        steady_ms=round(steady_ms, 3),
    )


class _Timing:
    """Times one case: the first call (the algorithm search / autotune), reported once per
    framework together with the cuDNN files mapped by then, then the steady state."""

    def __init__(self, watchdog=None) -> None:
        self.first = True
        self.watchdog = watchdog

    def run(self, call, name, dtype_name):
        """(first ms, steady ms, the result of one more call)."""
        if self.watchdog:
            self.watchdog.arm("conv %s %s" % (name, dtype_name))
        try:
            return self._run(call, name, dtype_name)
        finally:
            if self.watchdog:
                self.watchdog.disarm()

    def _run(self, call, name, dtype_name):
        t = time.perf_counter()
        call()
        first_ms = (time.perf_counter() - t) * 1000
        if self.first:
            emit("first", ms=first_ms, case=name, dtype=dtype_name)
            emit("loaded", stage="after first conv", **loaded_cudnn())
            self.first = False
        t = time.perf_counter()
        for _ in range(STEADY_REPEATS):
            call()
        steady_ms = (time.perf_counter() - t) * 1000 / STEADY_REPEATS
        return first_ms, steady_ms, call()


# ---------------------------------------------------------------------------------------
# torch
# ---------------------------------------------------------------------------------------


def _torch_import():
    """Import torch; emit "imported" and "built" (the cuDNN it was compiled with)."""
    t0 = time.perf_counter()
    import torch

    emit(
        "imported",
        framework="torch",
        version=torch.__version__,
        seconds=time.perf_counter() - t0,
        cuda_build=torch.version.cuda is not None,
        cuda=torch.version.cuda,
    )
    try:
        cv = torch._C._cudnn.getCompileVersion()  # (9, 19, 0): the cuDNN torch was compiled with
        built, source = "%d.%d.%d" % tuple(cv[:3]), "torch._C._cudnn.getCompileVersion()"
    except Exception:  # noqa: BLE001 - private API, absent in CPU builds and old versions
        built, source = _requires_pin(["torch"])
    emit("built", cudnn_built=built, source=source)
    return torch


def _torch_device(torch, device: str, cc_override):
    """(compute capability, watchdog) of the device the cases run on, or None after a "nogpu"
    record (a CPU-only build, no usable GPU)."""
    if device == "cpu":
        emit("device", name="cpu (test mode)", cc=None, cudnn_enabled=False, tf32_conv=False)
        return cc_override, None
    if torch.version.cuda is None:
        emit(
            "nogpu",
            reason="cpu-only-build",
            message="torch %s is a CPU-only build (torch.version.cuda is None)" % torch.__version__,
        )
        return None
    if not torch.cuda.is_available():
        msg = "torch.cuda.is_available() is False"
        try:
            torch.cuda.init()
        except Exception as exc:  # noqa: BLE001 - the real reason, e.g. "No CUDA GPUs are available"
            msg = "%s: %s" % (type(exc).__name__, exc)
        emit("nogpu", reason="no-device", message=msg)
        return None
    cc = torch.cuda.get_device_capability(0)
    emit(
        "device",
        name=torch.cuda.get_device_name(0),
        cc="%d.%d" % cc,
        cudnn_enabled=bool(torch.backends.cudnn.enabled),
        tf32_conv=bool(torch.backends.cudnn.allow_tf32),
    )
    torch.backends.cudnn.enabled = True
    # torch's default (no algorithm search): what users' code runs unless it opts in. Measured on
    # the H200 (scripts/device/verify_jit.sh): with the search on, a freshly started machine JIT-
    # compiled the runtime-compiled engines it tried (8.3 s beyond the import, 1.1 s without),
    # and with engines_precompiled missing the search hid the wrong numbers the default gives.
    torch.backends.cudnn.benchmark = False
    loaded = loaded_cudnn()
    emit("loaded", stage="after import", **loaded)  # kept even if the first conv crashes
    return cc, watchdog_for(loaded)


def _torch_inputs(torch, plan) -> list:
    """(x, w, g) per case: seeded, rounded to the case's dtype on the host."""
    gen = torch.Generator().manual_seed(0)
    inputs = []
    for dtype_name, _layout, (_name, xs, ws, stride, pad) in plan:
        dtype = getattr(torch, dtype_name)
        x = torch.randn(xs, generator=gen).to(dtype)
        w = (torch.randn(ws, generator=gen) / (ws[1] * ws[2] * ws[3]) ** 0.5).to(dtype)
        ys = (
            xs[0],
            ws[0],
            (xs[2] + 2 * pad - ws[2]) // stride + 1,
            (xs[3] + 2 * pad - ws[3]) // stride + 1,
        )
        inputs.append((x, w, torch.randn(ys, generator=gen)))
    return inputs


def _torch_reference(x, w, g, stride, pad):
    """Float64 CPU forward and gradients from the same (rounded) inputs, and its ms."""
    import torch.nn.functional as F

    t = time.perf_counter()
    xr = x.detach().double().requires_grad_()  # own copies: this runs on another thread
    wr = w.detach().double().requires_grad_()
    yr = F.conv2d(xr, wr, stride=stride, padding=pad)
    (yr * g.detach().double()).sum().backward()
    return (yr.detach(), xr.grad, wr.grad), (time.perf_counter() - t) * 1000


def _torch_case(torch, dev, timing, case, tensors, ref) -> None:
    """Run one case on `dev` (forward and backward), compare with its reference, emit "case"."""
    import torch.nn.functional as F

    dtype_name, layout, (name, xs, ws, stride, pad) = case
    x, w, g = tensors
    fmt = torch.channels_last if layout == "NHWC" else torch.contiguous_format
    # copy=True: with --device cpu .to() would hand back the very tensor the
    # reference thread is reading, and requires_grad_() would change it under it.
    xg = x.to(dev, copy=True).contiguous(memory_format=fmt).requires_grad_()
    wg = w.to(dev, copy=True).contiguous(memory_format=fmt).requires_grad_()
    gg = g.to(dev, copy=True)

    def step():
        xg.grad = None
        wg.grad = None
        y = F.conv2d(xg, wg, stride=stride, padding=pad)
        (y.float() * gg).sum().backward()
        if dev.type != "cpu":
            torch.cuda.synchronize()
        return y

    first_ms, steady_ms, y = timing.run(step, name, dtype_name)
    (yr, dxr, dwr), ref_ms = ref.result()
    errs = {
        "y": _rel_err_torch(y, yr),
        "dx": _rel_err_torch(xg.grad, dxr),
        "dw": _rel_err_torch(wg.grad, dwr),
    }
    record = _case_record(
        name,
        dtype_name,
        layout,
        errs,
        TOLERANCE[dtype_name],
        first_ms,
        steady_ms,
        xs,
        ws,
        stride,
        pad,
    )
    emit("case", **record, ref_ms=round(ref_ms, 3))


def run_torch(device: str, cc_override) -> None:
    torch = _torch_import()
    found = _torch_device(torch, device, cc_override)
    if found is None:
        return
    cc, watchdog = found
    dev = torch.device("cuda" if device != "cpu" else "cpu")
    timing = _Timing(watchdog)
    plan = plan_cases("torch", cc)
    inputs = _torch_inputs(torch, plan)
    pool = _background()
    refs = [
        pool.submit(_torch_reference, x, w, g, c[3], c[4])
        for (x, w, g), (_, _, c) in zip(inputs, plan)
    ]
    for case, tensors, ref in zip(plan, inputs, refs):
        dtype_name, layout, (name, _xs, _ws, _stride, _pad) = case
        try:
            _torch_case(torch, dev, timing, case, tensors, ref)
        except Exception as exc:  # noqa: BLE001 - every failure is a result
            _error("conv %s %s %s" % (name, dtype_name, layout), exc)
    pool.shutdown(wait=False)
    # torch's own check of the runtime cuDNN: raises the "cuDNN version incompatibility" text.
    try:
        emit(
            "runtime",
            cudnn_reported=torch.backends.cudnn.version(),
            available=torch.backends.cudnn.is_available(),
        )
    except Exception as exc:  # noqa: BLE001
        _error("torch.backends.cudnn.version()", exc)


# ---------------------------------------------------------------------------------------
# jax
# ---------------------------------------------------------------------------------------


def _jax_versions_module():
    import importlib

    for name in ("jax_cuda13_plugin", "jax_cuda12_plugin", "jaxlib.cuda"):
        try:
            return importlib.import_module(name + "._versions"), name
        except Exception:  # noqa: BLE001
            continue
    return None, None


def _inputs(rng, xs, ws, stride, pad):
    """Random NCHW/OIHW inputs, the output gradient, and the output shape (float32 NumPy)."""
    import numpy as np

    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) / (ws[1] * ws[2] * ws[3]) ** 0.5).astype(np.float32)
    ys = (
        xs[0],
        ws[0],
        (xs[2] + 2 * pad - ws[2]) // stride + 1,
        (xs[3] + 2 * pad - ws[3]) // stride + 1,
    )
    g = rng.standard_normal(ys).astype(np.float32)
    return x, w, g


#: XLA's autotuning levels (xla/debug_options_flags.cc, --xla_gpu_autotune_level: "0 = off;
#: 1 = on; 2 = on+init; 3 = on+init+reinit; 4 = on+init+reinit+check", 4 the default). The check
#: runs level 0: each conv runs the engine cuDNN's heuristics rank first, as torch does with
#: cudnn.benchmark off (its default). Autotuning would add nothing the check can report: XLA's
#: conv autotuner marks an engine whose launch fails DISQUALIFIED and "simply skips" it
#: (xla/service/gpu/autotuning/conv_algorithm_picker.cc, openxla/xla@0be8dac, "three tiers of
#: errors" and AutotuneOneConvRunner), so a broken engine never fails an autotuned program, at any
#: level; level 0 runs the heuristic's engine and reports its failure. Every cuDNN sub-library
#: is mapped after the first conv at level 0 as at level 1 (the engine libraries included), and
#: the results are compared with the check's own float64 CPU reference. Level 1 cost 2.2-2.9 s
#: beyond the import against 0.8-0.9 s at level 0, and 2.4 s as the first JAX process on a freshly
#: started H100 (docs/measurements/runs-2026-11-27b/jax_level.txt, scripts/device/jax_level.sh).
#: A level the user set in XLA_FLAGS is kept.
JAX_AUTOTUNE_LEVEL = "0"


def _jax_settings() -> None:
    """The switches JAX's check runs with, set before jax is imported (the check only; they
    change no file and nothing of the user's own processes):
    - JAX_PLATFORMS=cuda: without it, a CUDA backend that fails to initialise (cuDNN too old, no
      device) is only logged and JAX silently falls back to the CPU; with it the real reason is
      raised, and no CPU client is started (the reference is NumPy's);
    - XLA_PYTHON_CLIENT_PREALLOCATE=false: JAX would otherwise take 75 % of the GPU's memory at
      its first allocation ("GPU memory allocation", docs.jax.dev/en/latest/gpu_memory_allocation.html),
      which fails next to a notebook kernel and beside the other checks running at the same time;
    - --xla_gpu_autotune_level=JAX_AUTOTUNE_LEVEL in XLA_FLAGS (see there)."""
    os.environ.setdefault("JAX_PLATFORMS", "cuda")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_gpu_autotune_level" not in flags:
        os.environ["XLA_FLAGS"] = (
            flags + " --xla_gpu_autotune_level=" + JAX_AUTOTUNE_LEVEL
        ).strip()


def _jax_device(jax, device: str, cc_override, versions):
    """(device, compute capability, watchdog) the cases run on, or None after a "nogpu" record."""
    if device == "cpu":
        emit("device", name="cpu (test mode)", cc=None, cudnn_enabled=False, tf32_conv=False)
        return jax.devices("cpu")[0], cc_override, None
    try:
        gpus = jax.devices("gpu")
    except Exception as exc:  # noqa: BLE001 - "Unknown backend: 'gpu' requested ..." and init errors
        if versions is None and _jax_versions_module()[0] is None:
            emit(
                "nogpu",
                reason="cpu-only-build",
                message="no CUDA plugin for jax (%s: %s)" % (type(exc).__name__, exc),
            )
        else:
            emit("nogpu", reason="no-device", message="%s: %s" % (type(exc).__name__, exc))
        emit("loaded", stage="after failed GPU init", **loaded_cudnn())
        return None
    gpu = gpus[0]
    loaded = loaded_cudnn()
    emit("loaded", stage="after GPU init", **loaded)
    cc = _parse_cc(getattr(gpu, "compute_capability", None))
    emit(
        "device",
        name=getattr(gpu, "device_kind", str(gpu)),
        cc="%d.%d" % cc if cc else None,
        cudnn_enabled=True,
        tf32_conv=True,
    )
    return gpu, cc, watchdog_for(loaded)


def _jax_built(versions, plugin) -> None:
    if versions is None:
        emit("built", cudnn_built=None, source=None)
        return
    try:
        emit(
            "built",
            cudnn_built=cudnn_version_from_int(int(versions.cudnn_build_version())),
            source="%s._versions.cudnn_build_version()" % plugin,
        )
        emit("runtime", cudnn_reported=int(versions.cudnn_get_version()))
    except Exception as exc:  # noqa: BLE001
        _error("jax cuda versions", exc)


def _jax_conv(jax, x, w, layout, stride, pad):
    dn = ("NCHW", "OIHW", "NCHW") if layout == "NCHW" else ("NHWC", "HWIO", "NHWC")
    return jax.lax.conv_general_dilated(
        x, w, (stride, stride), [(pad, pad), (pad, pad)], dimension_numbers=dn
    )


def _jax_data(jax, gpu, selected, pool):
    """Device inputs, CPU references (futures) and (layout, stride, pad) per case. Inputs are
    rounded and laid out with NumPy on the host (jnp.bfloat16 is a NumPy dtype): a jnp
    conversion per array would dispatch (and compile) an XLA op each."""
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    data, refs, params = [], [], []
    for dtype_name, layout, (_name, xs, ws, stride, pad) in selected:
        np_dtype = np.dtype(getattr(jnp, dtype_name))
        x, w, g = _inputs(rng, xs, ws, stride, pad)
        x = x.astype(np_dtype).astype(np.float32)  # rounded as the GPU sees them
        w = w.astype(np_dtype).astype(np.float32)
        refs.append(pool.submit(np_conv_reference, x, w, g, stride, pad))
        if layout == "NHWC":
            x, w, g = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0), g.transpose(0, 2, 3, 1)
        data.append(
            [
                jax.device_put(np.ascontiguousarray(x).astype(np_dtype), gpu),
                jax.device_put(np.ascontiguousarray(w).astype(np_dtype), gpu),
                jax.device_put(np.ascontiguousarray(g).astype(np.float32), gpu),
            ]
        )
        params.append((layout, stride, pad))
    return data, refs, params


def _jax_program(jax, params):
    """One jitted program: each case's conv and both gradients."""
    import jax.numpy as jnp

    def all_cases(args):
        out = []
        for (x, w, g), (layout, stride, pad) in zip(args, params):

            def loss(x, w, g=g, layout=layout, stride=stride, pad=pad):
                return jnp.sum(_jax_conv(jax, x, w, layout, stride, pad).astype(jnp.float32) * g)

            out.append(
                (_jax_conv(jax, x, w, layout, stride, pad),)
                + tuple(jax.grad(loss, argnums=(0, 1))(x, w))
            )
        return out

    return jax.jit(all_cases)


def _jax_report(selected, outs, refs, first_ms, steady_ms) -> None:
    import numpy as np

    for (dtype_name, layout, (name, xs, ws, stride, pad)), (y, dx, dw), ref in zip(
        selected, outs, refs
    ):
        ry, rdx, rdw = ref.result()
        y, dx, dw = (np.asarray(a, dtype=np.float64) for a in (y, dx, dw))
        if layout == "NHWC":
            y, dx, dw = y.transpose(0, 3, 1, 2), dx.transpose(0, 3, 1, 2), dw.transpose(3, 2, 0, 1)
        errs = {"y": _rel_err_np(y, ry), "dx": _rel_err_np(dx, rdx), "dw": _rel_err_np(dw, rdw)}
        record = _case_record(
            name,
            dtype_name,
            layout,
            errs,
            TOLERANCE[dtype_name],
            first_ms,
            steady_ms,
            xs,
            ws,
            stride,
            pad,
        )
        emit("case", **record, timing="all cases together")


def run_jax(device: str, cc_override) -> None:
    if device != "cpu":
        _jax_settings()
    t0 = time.perf_counter()
    import jax

    emit(
        "imported",
        framework="jax",
        version=jax.__version__,
        seconds=time.perf_counter() - t0,
        cuda_build=None,
        cuda=None,
    )
    versions, plugin = _jax_versions_module()
    found = _jax_device(jax, device, cc_override, versions)
    if found is None:
        return
    gpu, cc, watchdog = found
    _jax_built(versions, plugin)
    # Every (dtype, shape) case goes into ONE jitted program: XLA compiles and autotunes once
    # (see plan_cases for which cases, and why).
    selected = plan_cases("jax", cc)
    stage = "conv (all cases in one XLA program)"
    pool = _background()
    try:
        data, refs, params = _jax_data(jax, gpu, selected, pool)
        fn = _jax_program(jax, params)
        if watchdog:
            watchdog.arm(stage)
        t = time.perf_counter()
        jax.block_until_ready(fn(data))
        first_ms = (time.perf_counter() - t) * 1000
        if watchdog:
            watchdog.disarm()
        emit(
            "first",
            ms=first_ms,
            case="all cases",
            dtype="all",
            includes="XLA compile (autotuning as XLA_FLAGS says)",
        )
        emit("loaded", stage="after first conv", **loaded_cudnn())
        t = time.perf_counter()
        for _ in range(STEADY_REPEATS):
            jax.block_until_ready(fn(data))
        steady_ms = (time.perf_counter() - t) * 1000 / STEADY_REPEATS
        _jax_report(selected, fn(data), refs, first_ms, steady_ms)
    except Exception as exc:  # noqa: BLE001
        _error(stage, exc)
    pool.shutdown(wait=False)


# ---------------------------------------------------------------------------------------
# tensorflow
# ---------------------------------------------------------------------------------------


def _tf_import():
    """Import TensorFlow; emit "imported" and "built" (its build info's cuDNN)."""
    t0 = time.perf_counter()
    import tensorflow as tf

    info = {}
    try:
        info = dict(tf.sysconfig.get_build_info())
    except Exception:  # noqa: BLE001
        pass
    emit(
        "imported",
        framework="tensorflow",
        version=tf.__version__,
        seconds=time.perf_counter() - t0,
        cuda_build=bool(info.get("is_cuda_build", tf.test.is_built_with_cuda())),
        cuda=info.get("cuda_version"),
    )
    built = info.get("cudnn_version")
    emit(
        "built",
        cudnn_built=str(built) if built else None,
        source="tf.sysconfig.get_build_info()['cudnn_version']",
    )
    return tf


def _tf_device(tf, device: str, cc_override):
    """(device name, compute capability, watchdog), or None after a "nogpu" record."""
    if device == "cpu":
        emit("device", name="cpu (test mode)", cc=None, cudnn_enabled=False, tf32_conv=False)
        return "/CPU:0", cc_override, None
    if not tf.test.is_built_with_cuda():
        emit(
            "nogpu",
            reason="cpu-only-build",
            message="tensorflow %s is not built with CUDA" % tf.__version__,
        )
        return None
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        emit("nogpu", reason="no-device", message="tf.config.list_physical_devices('GPU') is empty")
        return None
    for g in gpus:
        try:
            tf.config.experimental.set_memory_growth(g, True)
        except Exception:  # noqa: BLE001
            pass
    details = {}
    try:
        details = tf.config.experimental.get_device_details(gpus[0])
    except Exception:  # noqa: BLE001
        pass
    cc = tuple(details.get("compute_capability") or ()) or None
    emit(
        "device",
        name=details.get("device_name", "GPU:0"),
        cc="%d.%d" % cc if cc else None,
        cudnn_enabled=True,
        tf32_conv=bool(tf.config.experimental.tensor_float_32_execution_enabled()),
    )
    loaded = loaded_cudnn()
    emit("loaded", stage="after GPU init", **loaded)
    return "/GPU:0", cc, watchdog_for(loaded)


def _tf_case(tf, where, timing, rng, dtype_name, layout, case) -> None:
    """Run one case (forward and both gradients), compare with NumPy's float64, emit "case"."""
    import numpy as np

    name, xs, ws, stride, pad = case
    dtype = getattr(tf, dtype_name)
    x, w, g = _inputs(rng, xs, ws, stride, pad)
    x = tf.cast(tf.cast(x, dtype), tf.float32).numpy()  # rounded as the GPU sees them
    w = tf.cast(tf.cast(w, dtype), tf.float32).numpy()
    ry, rdx, rdw = np_conv_reference(x, w, g, stride, pad)
    if layout == "NHWC":
        xa, ga = x.transpose(0, 2, 3, 1), g.transpose(0, 2, 3, 1)
        pads = [[0, 0], [pad, pad], [pad, pad], [0, 0]]
    else:
        xa, ga = x, g
        pads = [[0, 0], [0, 0], [pad, pad], [pad, pad]]
    wa = w.transpose(2, 3, 1, 0)  # TF filters are HWIO in both layouts

    def run():
        xv = tf.constant(xa, dtype=dtype)
        wv = tf.constant(wa, dtype=dtype)
        with tf.GradientTape() as tape:
            tape.watch([xv, wv])
            y = tf.nn.conv2d(xv, wv, strides=stride, padding=pads, data_format=layout)
            loss = tf.reduce_sum(tf.cast(y, tf.float32) * ga)
        dx, dw = tape.gradient(loss, [xv, wv])
        return y.numpy(), dx.numpy(), dw.numpy()  # .numpy() waits for the GPU

    with tf.device(where):
        first_ms, steady_ms, (y, dx, dw) = timing.run(run, name, dtype_name)
    y, dx, dw = (np.asarray(a, dtype=np.float64) for a in (y, dx, dw))
    if layout == "NHWC":
        y, dx = y.transpose(0, 3, 1, 2), dx.transpose(0, 3, 1, 2)
    dw = dw.transpose(3, 2, 0, 1)
    errs = {"y": _rel_err_np(y, ry), "dx": _rel_err_np(dx, rdx), "dw": _rel_err_np(dw, rdw)}
    emit(
        "case",
        **_case_record(
            name,
            dtype_name,
            layout,
            errs,
            TOLERANCE[dtype_name],
            first_ms,
            steady_ms,
            xs,
            ws,
            stride,
            pad,
        ),
    )


def run_tensorflow(device: str, cc_override) -> None:
    import numpy as np

    tf = _tf_import()
    found = _tf_device(tf, device, cc_override)
    if found is None:
        return
    where, cc, watchdog = found
    rng = np.random.default_rng(0)
    timing = _Timing(watchdog)
    for dtype_name, layout, case in plan_cases("tensorflow", cc):
        if device == "cpu":
            layout = "NHWC"  # TensorFlow's NCHW convs exist on the GPU only
        try:
            _tf_case(tf, where, timing, rng, dtype_name, layout, case)
        except Exception as exc:  # noqa: BLE001
            _error("conv %s %s %s" % (case[0], dtype_name, layout), exc)


# ---------------------------------------------------------------------------------------
# cupy: no convolution of its own in recent versions; a GEMM against NumPy proves the GPU
# path, and cuDNN is reported when cupy's cudnn module is present (CuPy < 14).
# ---------------------------------------------------------------------------------------


def run_cupy(device: str, cc_override) -> None:
    t0 = time.perf_counter()
    import cupy
    import numpy as np

    emit(
        "imported",
        framework="cupy",
        version=cupy.__version__,
        seconds=time.perf_counter() - t0,
        cuda_build=True,
        cuda=None,
    )
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 - cudaErrorNoDevice and friends
        emit("nogpu", reason="no-device", message="%s: %s" % (type(exc).__name__, exc))
        return
    if n == 0:
        emit("nogpu", reason="no-device", message="cupy.cuda.runtime.getDeviceCount() == 0")
        return
    props = cupy.cuda.runtime.getDeviceProperties(0)
    emit(
        "device",
        name=props.get("name", b"").decode(errors="replace")
        if isinstance(props.get("name"), bytes)
        else props.get("name"),
        cc="%d.%d" % (props.get("major", 0), props.get("minor", 0)),
        cudnn_enabled=False,
        tf32_conv=False,
    )
    built = None
    try:
        from cupy.cuda import cudnn as _cudnn  # noqa: F401 - CuPy < 14 only

        built = cudnn_version_from_int(int(_cudnn.get_build_version()))
        emit("runtime", cudnn_reported=int(_cudnn.getVersion()))
    except Exception:  # noqa: BLE001
        pass
    emit(
        "built", cudnn_built=built, source="cupy.cuda.cudnn.get_build_version()" if built else None
    )
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    try:
        t = time.perf_counter()
        c = cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(b))
        first_ms = (time.perf_counter() - t) * 1000
        emit("first", ms=first_ms, case="gemm-256", dtype="float32")
        t = time.perf_counter()
        for _ in range(STEADY_REPEATS):
            cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(b))
        steady_ms = (time.perf_counter() - t) * 1000 / STEADY_REPEATS
        err = _rel_err_np(c, a.astype(np.float64) @ b.astype(np.float64))
        emit(
            "case",
            case="gemm-256",
            dtype="float32",
            layout="-",
            x=[256, 256],
            w=[256, 256],
            stride=None,
            padding=None,
            errors={"y": round(err, 6)},
            max_error=round(err, 6),
            tolerance=TOLERANCE["float32"],
            ok=err <= TOLERANCE["float32"],
            first_ms=round(first_ms, 3),
            steady_ms=round(steady_ms, 3),
        )
        emit("loaded", stage="after gemm", **loaded_cudnn())
    except Exception as exc:  # noqa: BLE001
        _error("gemm float32", exc)


# ---------------------------------------------------------------------------------------
# libs mode: the loaded-library check alone (tests, and a quick look at a process)
# ---------------------------------------------------------------------------------------


def run_libs(paths, built) -> None:
    emit("imported", framework="libs", version=None, seconds=0.0, cuda_build=True, cuda=None)
    emit("built", cudnn_built=built, source="--built" if built else None)
    for p in paths:
        try:
            ctypes.CDLL(p, mode=getattr(os, "RTLD_GLOBAL", 256) | getattr(os, "RTLD_NOW", 2))
        except OSError as exc:
            _error("dlopen %s" % p, exc)
    emit("loaded", stage="after dlopen", **loaded_cudnn())


RUNNERS = {"torch": run_torch, "jax": run_jax, "tensorflow": run_tensorflow, "cupy": run_cupy}


def _options(rest) -> tuple:
    """(device, compute capability, --dlopen paths, --built version) from the options."""
    device, cc, dlopen, built = "gpu", None, [], None
    while rest:
        opt = rest.pop(0)
        val = rest.pop(0) if rest else None
        if opt == "--device":
            device = val or "gpu"
        elif opt == "--cc":
            cc = _parse_cc(val)
        elif opt == "--dlopen":
            dlopen.append(val)
        elif opt == "--built":
            built = val
    return device, cc, dlopen, built


def main(argv) -> int:
    _protect_stdout()
    try:
        import faulthandler

        faulthandler.enable()  # a segfault in a native library still leaves a Python traceback on stderr
    except Exception:  # noqa: BLE001
        pass
    if not argv:
        emit(
            "error",
            stage="usage",
            type="UsageError",
            message="usage: verify.py FRAMEWORK [options]",
        )
        return 2
    framework = argv[0]
    device, cc, dlopen, built = _options(list(argv[1:]))
    t0 = time.perf_counter()
    emit(
        "start",
        framework=framework,
        python=sys.executable,
        pid=os.getpid(),
        wall=_WALL0,
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES"),
    )
    try:
        if framework == "libs":
            run_libs(dlopen, built)
        elif framework in RUNNERS:
            RUNNERS[framework](device, cc)
        else:
            emit(
                "error",
                stage="usage",
                type="UsageError",
                message="unknown framework %r" % framework,
            )
            return 2
    except ImportError as exc:
        _error("import %s" % framework, exc)
    except Exception as exc:  # noqa: BLE001 - reported, never raised past here
        _error(framework, exc)
    if framework != "libs":
        emit("loaded", stage="end", **loaded_cudnn())
    emit("done", seconds=time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    _fast_exit(main(sys.argv[1:]))
