"""Where JAX's first verify goes beyond its import (issue 25, budget < 3 s): the check child's own
program (fixer/children/verify.py, loaded by path) split into backend init, data, lower,
compile (XLA passes + cuDNN autotune), first run; "vjp" variant builds the same three convs per
case (forward, input gradient, filter gradient) with jax.vjp and a cotangent of the output's
dtype instead of grad of sum(conv * g) (no multiply/convert/reduce fusions to compile).
Usage: python3 scripts/device/jax_why.py LABEL [vjp]   (XLA_FLAGS from the environment, added to
the child's own settings)."""

import importlib.util
import sys
import time

t_start = time.perf_counter()
spec = importlib.util.spec_from_file_location("fixer_verify_child", "fixer/children/verify.py")
child = importlib.util.module_from_spec(spec)
spec.loader.exec_module(child)
child._jax_settings()
label = sys.argv[1]
variant = sys.argv[2] if len(sys.argv) > 2 else "grad"
t0 = time.perf_counter()
import jax  # noqa: E402
import numpy as np  # noqa: E402

t_import = time.perf_counter() - t0
t = time.perf_counter()
gpu = jax.devices("gpu")[0]
t_backend = time.perf_counter() - t
cc = child._parse_cc(getattr(gpu, "compute_capability", None))
selected = child.plan_cases("jax", cc)
pool = child._background()
t = time.perf_counter()
data, refs, params = child._jax_data(jax, gpu, selected, pool)
t_data = time.perf_counter() - t


def vjp_program(params):
    def all_cases(args):
        out = []
        for (x, w, g), (layout, stride, pad) in zip(args, params):
            y, back = jax.vjp(lambda x, w: child._jax_conv(jax, x, w, layout, stride, pad), x, w)
            out.append((y,) + tuple(back(g.astype(y.dtype))))
        return out

    return jax.jit(all_cases)


if variant == "split":
    # one program per case, lowered and compiled in one thread each (XLA releases the GIL)
    from concurrent.futures import ThreadPoolExecutor

    fns = [child._jax_program(jax, [p]) for p in params]
    t = time.perf_counter()
    lows = [f.lower([d]) for f, d in zip(fns, data)]
    t_lower = time.perf_counter() - t
    t = time.perf_counter()
    with ThreadPoolExecutor(len(lows)) as ex:
        comps = list(ex.map(lambda lw: lw.compile(), lows))
    t_compile = time.perf_counter() - t
    t = time.perf_counter()
    outs = [jax.block_until_ready(c([d]))[0] for c, d in zip(comps, data)]
    t_run = time.perf_counter() - t
    compiled = comps[0]
else:
    fn = vjp_program(params) if variant == "vjp" else child._jax_program(jax, params)
    t = time.perf_counter()
    lowered = fn.lower(data)
    t_lower = time.perf_counter() - t
    t = time.perf_counter()
    compiled = lowered.compile()
    t_compile = time.perf_counter() - t
    t = time.perf_counter()
    outs = jax.block_until_ready(compiled(data))
    t_run = time.perf_counter() - t
ok = []
for (dtype_name, layout, case), (y, dx, dw), ref in zip(selected, outs, refs):
    ry, rdx, rdw = ref.result()
    y, dx, dw = (np.asarray(a, dtype=np.float64) for a in (y, dx, dw))
    if layout == "NHWC":
        y, dx, dw = y.transpose(0, 3, 1, 2), dx.transpose(0, 3, 1, 2), dw.transpose(3, 2, 0, 1)
    errs = [child._rel_err_np(a, b) for a, b in ((y, ry), (dx, rdx), (dw, rdw))]
    ok.append(max(errs) <= child.TOLERANCE[dtype_name])
hlo = compiled.as_text() or ""
print(
    "%-30s import %.2f backend %.2f data %.2f lower %.2f compile %.2f run %.2f | beyond import %.2f"
    " | kernels: fusions %d convs %d | ok %s"
    % (
        label,
        t_import,
        t_backend,
        t_data,
        t_lower,
        t_compile,
        t_run,
        t_backend + t_data + t_lower + t_compile + t_run,
        hlo.count("fusion("),
        hlo.count("custom-call"),
        ok,
    ),
    flush=True,
)
