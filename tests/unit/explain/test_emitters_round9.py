"""Round nine's readings (set 9 read after its blind measure), each from its emitter.

- ONNX Runtime's "Specified provider '{}' is not in available provider names." quotes the
  provider (onnxruntime/capi/onnxruntime_inference_collection.py, recipes/errors.toml cites the
  line); the available providers are the ones the package was built with, so CUDA absent there is
  a build without CUDA.
- The BFC allocator's memory dump ("Sum Total of in-use chunks: ...", DumpMemoryLog) is what an
  allocation that failed prints: out of memory.
- Two CuPy packages in one environment (CuPy's own import check, cupy/_environment.py, and the
  missing-submodule AttributeError that check was added for): a pip conflict.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples

OTHERS = st.lists(
    st.sampled_from(
        ["AzureExecutionProvider", "CPUExecutionProvider", "OpenVINOExecutionProvider"]
    ),
    min_size=1,
    max_size=3,
    unique=True,
)


def _top(text: str) -> str:
    found = explain(text)
    return found[0].id if found else ""


@settings(max_examples=examples(60), deadline=None)
@given(
    others=OTHERS,
    path=st.sampled_from(
        [
            "",
            "/usr/lib/python3.12/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py:123: ",
        ]
    ),
)
def test_ort_without_the_cuda_provider_is_a_cpu_only_build(others, path):
    text = (
        f"{path}UserWarning: Specified provider 'CUDAExecutionProvider' is not in available "
        f"provider names.Available providers: '{', '.join(others)}'"
    )
    assert _top(text) == "cpu-only-build"


@settings(max_examples=examples(60), deadline=None)
@given(
    size=st.floats(1, 999, allow_nan=False).map(lambda f: f"{f:.2f}"),
    unit=st.sampled_from(["KiB", "MiB", "GiB"]),
    where=st.sampled_from(
        [
            "tensorflow/core/common_runtime/bfc_allocator.cc:1040",
            "external/xla/xla/tsl/framework/bfc_allocator.cc:1126",
            "tensorflow/tsl/framework/bfc_allocator.cc:1107",
        ]
    ),
)
def test_the_allocator_s_memory_dump_is_out_of_memory(size, unit, where):
    text = f"2021-03-12 00:28:29.816355: I {where}] Sum Total of in-use chunks: {size}{unit}"
    assert _top(text) == "out-of-memory"


@settings(max_examples=examples(40), deadline=None)
@given(
    pkgs=st.lists(
        st.sampled_from(["cupy", "cupy-cuda11x", "cupy-cuda12x", "cupy-cuda13x"]),
        min_size=2,
        max_size=3,
        unique=True,
    ),
    attr=st.sampled_from(["random", "cuda", "linalg"]),
)
def test_two_cupy_packages_are_a_pip_conflict(pkgs, attr):
    warned = (
        "UserWarning: \n  CuPy may not function correctly because multiple CuPy packages are "
        f"installed\n  in your environment:\n\n    {', '.join(sorted(pkgs))}"
    )
    assert _top(warned) == "pip-conflict"
    assert _top(f"AttributeError: module 'cupy' has no attribute '{attr}'") == "pip-conflict"
