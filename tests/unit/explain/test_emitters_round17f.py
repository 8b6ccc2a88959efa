"""Round seventeen (f): a GPU's compute capability outside a library's kernels, as the library
words it with the device's capability and the bound it failed.

- xFormers' dispatch (xformers/ops/fmha/common.py:460-473@v0.0.35, :305-309@v0.0.23): "requires
  device with capability >= / <= / > (M, m) but your GPU has capability (M, m) (too old / too
  new)", printed only when the check failed: gpu-arch-unsupported; "xFormers wasn't build with
  CUDA support" beside it decides for the build without CUDA.
- Numba (numba/cuda/cudadrv/nvvm.py:388-397@0.58.1): "GPU compute capability X.Y is not
  supported(requires >=A.B)": gpu-arch-unsupported.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

CAP = st.tuples(st.integers(3, 12), st.integers(0, 9))
OPS = st.sampled_from(
    ["fa2F@v2.5.7-pt", "fa3F@0.0.0", "flshattF@v2.3.6", "cutlassB-pt", "fa2B@2.5.7-pt"]
)
HEAD = (
    "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:"
)


def _cap(c) -> str:
    return f"({c[0]}, {c[1]})"


@settings(max_examples=examples(40), deadline=None)
@given(
    ops=st.lists(OPS, min_size=1, max_size=3),
    bound=CAP,
    have=CAP,
    sign=st.sampled_from([">=", "<=", ">"]),
    noise=NOISE,
    head=st.booleans(),
)
def test_xformers_capability_reasons_are_the_gpu_arch(ops, bound, have, sign, noise, head):
    why = "too old" if sign != "<=" else "too new"
    reasons = [
        f"`{op}` is not supported because:\n    requires device with capability {sign} "
        f"{_cap(bound)} but your GPU has capability {_cap(have)} ({why})"
        for op in ops
    ]
    text = "\n".join(([HEAD] if head else []) + [noise] + reasons)
    got = _ids(text)
    assert got[:2] == ["gpu-arch-unsupported", "cpu-only-build"], (text, got)
    # a build without CUDA among the reasons decides for it
    built = (
        text
        + "\n`cutlassF-pt` is not supported because:\n    xFormers wasn't build with CUDA support"
    )
    assert _ids(built)[0] == "cpu-only-build", _ids(built)


@settings(max_examples=examples(20), deadline=None)
@given(have=CAP, low=CAP, noise=NOISE, cls=st.sampled_from(["NvvmSupportError", "CCSupportError"]))
def test_numba_capability_below_its_toolkit(have, low, noise, cls):
    text = (
        f"{noise}numba.cuda.cudadrv.error.{cls}: GPU compute capability {have[0]}.{have[1]} is "
        f"not supported(requires >={low[0]}.{low[1]})"
    )
    assert _ids(text)[0] == "gpu-arch-unsupported", (text, _ids(text))
