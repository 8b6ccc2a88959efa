"""Marginal XLA compile + autotune + first-run cost of each candidate verify case for JAX
(forward and both gradients through jax.vjp, as verify does), one process, after a warm-up
conv that pays backend start and cuDNN initialisation. Every (dtype, layout, shape) is
distinct, so XLA's in-process autotune cache never serves one case from another.
Usage (GPU machine): python scripts/device/jax_cases.py"""

import os
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
T0 = time.perf_counter()
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

SHAPES = {
    "small": ((1, 3, 32, 32), (8, 3, 3, 3), 1, 0),
    "pad1": ((2, 16, 32, 32), (32, 16, 3, 3), 1, 1),
    "stem": ((1, 3, 224, 224), (32, 3, 3, 3), 2, 1),
    "s2-16x64": ((1, 16, 64, 64), (32, 16, 3, 3), 2, 1),
    "warmup": ((1, 8, 8, 8), (8, 8, 1, 1), 1, 0),
    "small-8ch": ((1, 8, 32, 32), (8, 8, 3, 3), 1, 0),
}


def cost(dtype, layout, shape):
    xs, ws, stride, pad = SHAPES[shape]
    dn = ("NCHW", "OIHW", "NCHW") if layout == "NCHW" else ("NHWC", "HWIO", "NHWC")
    x = np.random.standard_normal(xs).astype(dtype)
    w = np.random.standard_normal(ws).astype(dtype)
    if layout == "NHWC":
        x, w = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
    x, w = jnp.asarray(np.ascontiguousarray(x)), jnp.asarray(np.ascontiguousarray(w))

    def f(x, w):
        y, pull = jax.vjp(
            lambda a, b: jax.lax.conv_general_dilated(
                a, b, (stride, stride), [(pad, pad)] * 2, dimension_numbers=dn
            ),
            x,
            w,
        )
        return (y,) + tuple(pull(y))

    t = time.perf_counter()
    jax.block_until_ready(jax.jit(f)(x, w))
    return time.perf_counter() - t


imported = time.perf_counter() - T0
t = time.perf_counter()
jax.devices()
backend = time.perf_counter() - t
print(
    "import %.2f s, backend %.2f s, warm-up conv %.2f s"
    % (imported, backend, cost(np.float32, "NCHW", "warmup")),
    flush=True,
)
bf16 = jnp.bfloat16
total = {}
for dtype, layout, shape in [
    (np.float32, "NCHW", "small"),
    (np.float32, "NCHW", "pad1"),
    (np.float32, "NCHW", "stem"),
    (np.float32, "NCHW", "s2-16x64"),
    (np.float32, "NCHW", "small-8ch"),
    (np.float32, "NHWC", "pad1"),
    (np.float16, "NHWC", "pad1"),
    (bf16, "NHWC", "pad1"),
    (np.float16, "NHWC", "s2-16x64"),
    (bf16, "NHWC", "s2-16x64"),
    (np.float16, "NHWC", "small-8ch"),
    (bf16, "NHWC", "small-8ch"),
]:
    c = cost(dtype, layout, shape)
    print("  %-9s %-5s %-10s %6.3f s" % (np.dtype(dtype).name, layout, shape, c), flush=True)
