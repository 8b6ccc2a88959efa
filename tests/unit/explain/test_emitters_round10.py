"""Round ten's readings (set 10 read after its blind measure), each from its emitter.

- TensorFlow's "No algorithm worked!": its cuDNN autotuning profiles every algorithm with a
  scratch allocator bounded by the memory left, and raises NotFound when none gave a valid
  result (tensorflow/core/kernels/conv_ops_gpu.cc): out of memory first.
- Poetry's PubGrub report ends "version solving failed." (src/poetry/mixology/incompatibility.py):
  the resolver found no set of versions, a pip conflict.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

NAME = st.from_regex(r"[a-z][a-z0-9_\-]{1,20}", fullmatch=True)
VERSION = st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30)).map(
    lambda t: ".".join(map(str, t))
)


@settings(max_examples=examples(40), deadline=None)
@given(
    op=st.sampled_from(["sequential/conv2d/Relu", "model/conv1/Conv2D", "conv3d_1/Conv3D"]),
    n=st.integers(1, 99999),
    form=st.sampled_from(
        [
            "tensorflow.python.framework.errors_impl.NotFoundError:  No algorithm worked!\n\t [[node {op}]] [Op:__inference_train_function_{n}]",
            "W tensorflow/core/framework/op_kernel.cc:1692] OP_REQUIRES failed at conv_ops.cc:{n} : Not found: No algorithm worked!",
        ]
    ),
)
def test_no_algorithm_worked_is_memory_first(op, n, form):
    ids = _ids(form.format(op=op, n=n))
    assert ids[0] == "out-of-memory" and "cudnn-too-old" in ids[1:]


@settings(max_examples=examples(60), deadline=None)
@given(root=NAME, a=NAME, b=NAME, shared=NAME, va=VERSION, vb=VERSION)
def test_poetry_s_version_solving_failed_is_a_pip_conflict(root, a, b, shared, va, vb):
    text = (
        f"Because {a} ({va}) depends on {shared} ({va})\n and {b} ({vb}) depends on {shared} "
        f"(>={vb}), {a} ({va}) is incompatible with {b} ({vb}).\nSo, because {root} depends on "
        f"both {a} ({va}) and {b} ({vb}), version solving failed."
    )
    assert _ids(text)[0] == "pip-conflict"
