"""Which conv cases make JAX verify's XLA compile slow? Times jit compile + first run of one
program per case set, after a warm-up, in one process (GPU machine)."""
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.block_until_ready(jax.jit(lambda x: x + 1)(jnp.ones(3)))   # backend init + a trivial compile

SHAPES = {"small": ((1, 3, 32, 32), (8, 3, 3, 3), 1, 0), "pad1": ((2, 16, 32, 32), (32, 16, 3, 3), 1, 1),
          "stem": ((1, 3, 224, 224), (32, 3, 3, 3), 2, 1)}


def program(cases):
    def conv(x, w, layout, stride, pad):
        dn = ("NCHW", "OIHW", "NCHW") if layout == "NCHW" else ("NHWC", "HWIO", "NHWC")
        return jax.lax.conv_general_dilated(x, w, (stride, stride), [(pad, pad)] * 2, dimension_numbers=dn)

    data, params = [], []
    for dtype, layout, shape in cases:
        xs, ws, stride, pad = SHAPES[shape]
        x = np.random.standard_normal(xs).astype(dtype)
        w = np.random.standard_normal(ws).astype(dtype)
        if layout == "NHWC":
            x, w = x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0)
        data.append((jnp.asarray(np.ascontiguousarray(x)), jnp.asarray(np.ascontiguousarray(w))))
        params.append((layout, stride, pad))

    def f(args):
        out = []
        for (x, w), (layout, stride, pad) in zip(args, params):
            loss = lambda x, w, layout=layout, stride=stride, pad=pad: jnp.sum(conv(x, w, layout, stride, pad).astype(jnp.float32))
            out.append((conv(x, w, layout, stride, pad),) + tuple(jax.grad(loss, argnums=(0, 1))(x, w)))
        return out
    t = time.perf_counter()
    jax.block_until_ready(jax.jit(f)(data))
    return time.perf_counter() - t


bf16 = jnp.bfloat16
for label, cases in [
    ("fp32 NCHW small", [(np.float32, "NCHW", "small")]),
    ("fp32 NCHW pad1", [(np.float32, "NCHW", "pad1")]),
    ("fp32 NCHW stem", [(np.float32, "NCHW", "stem")]),
    ("fp32 NCHW all 3", [(np.float32, "NCHW", s) for s in SHAPES]),
    ("fp16 NHWC small", [(np.float16, "NHWC", "small")]),
    ("fp16 NHWC pad1", [(np.float16, "NHWC", "pad1")]),
    ("bf16 NHWC small", [(bf16, "NHWC", "small")]),
    ("bf16 NHWC pad1", [(bf16, "NHWC", "pad1")]),
    ("fp16 NCHW small", [(np.float16, "NCHW", "small")]),
    ("fp32x3 + fp16/bf16 NHWC pad1", [(np.float32, "NCHW", s) for s in SHAPES] + [(np.float16, "NHWC", "pad1"), (bf16, "NHWC", "pad1")]),
]:
    print(f"{label:34s} {program(cases):6.2f} s", flush=True)
