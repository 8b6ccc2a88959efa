"""Round twelve (b)'s readings, each from the code that prints the message.

- ONNX Runtime's "CUDA execution provider is not enabled in this build." (CreateNotEnabledStatus,
  core/session/provider_stubs.cc): the CUDA provider's entry points answer this only in a build
  that does not include the CUDA provider: cpu-only-build, whatever the wrapper around it.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples

NOISE = st.sampled_from(
    [
        "",
        "Epoch 1/10\n",
        "I0000 00:00:1768485308.759699     549 port.cc:153] oneDNN custom operations are on.\n",
        'Traceback (most recent call last):\n  File "infer.py", line 12, in <module>\n',
    ]
)


def _ids(text: str) -> list:
    return [f.id for f in explain(text)]


# --- ONNX Runtime: the CUDA provider is not in this build --------------------------------

ORT_WRAP = st.sampled_from(
    [
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail: {m}",
        "Error: An error occurred when attempting to register CUDAExecutionProvider: {m}",
        "Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:Fail] {m}",
        "{m}",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(
    NOISE,
    ORT_WRAP,
    st.sampled_from(
        [
            "CUDA execution provider is not enabled in this build. ",
            "CUDA execution provider is not enabled in this build.",
            "CUDA execution provider is not enabled in this build (#1).",
        ]
    ),
)
def test_ort_cuda_provider_not_in_build_is_cpu_only(noise: str, wrap: str, msg: str) -> None:
    assert _ids(noise + wrap.format(m=msg))[:1] == ["cpu-only-build"]


@settings(max_examples=examples(20), deadline=None)
@given(NOISE, st.sampled_from(["TensorRT", "ROCM", "DML", "OpenVINO", "MIGraphX", "CANN"]))
def test_ort_other_providers_not_in_build_are_not_read_as_cuda(noise: str, ep: str) -> None:
    # another provider missing from the build says nothing about CUDA
    assert "cpu-only-build" not in _ids(
        noise + f"{ep} execution provider is not enabled in this build. "
    )
