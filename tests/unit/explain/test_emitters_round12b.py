"""Round twelve (b)'s readings, each from the code that prints the message.

- ONNX Runtime's "CUDA execution provider is not enabled in this build." (CreateNotEnabledStatus,
  core/session/provider_stubs.cc): the CUDA provider's entry points answer this only in a build
  that does not include the CUDA provider: cpu-only-build, whatever the wrapper around it.
- TensorFlow's "Could not load dynamic library 'libnvinfer(_plugin).so.N'; dlerror: <dependency>:
  cannot open shared object file" (TF-TRT's IsGoogleTensorRTEnabled asks the DSO loader for
  TensorRT, warns and runs on without it): the dependency was needed by the optional TensorRT
  only, so the line is log-noise even when the dependency is a CUDA library; the same wording for
  a library TensorFlow needs keeps its reading.
- TensorFlow's fused batch norm "cuDNN launch failure : input shape (...)"
  (core/kernels/fused_batch_norm_op.cc: ThenBatchNormalizationForward/Backward returned not-ok):
  ambiguous, memory first, then the GPU's architecture, then another cuDNN; the version check
  printed above it decides.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids


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


# --- TF-TRT: TensorRT's own dependencies ----------------------------------------------------

DSO = st.sampled_from(
    [
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:{n}]",
        "W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:{n}]",
    ]
)
CUDA_DEP = st.sampled_from(
    [
        "libcudart.so.{v}.0",
        "libcublas.so.{v}",
        "libnvrtc.so.{v}.1",
        "libcudnn.so.{m}",
        "libnvinfer.so.{m}",
        "libmyelin.so.1",
    ]
)
TRT_WARN = st.sampled_from(
    [
        "",
        "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:30] Cannot dlopen some TensorRT "
        "libraries. If you would like to use Nvidia GPU with TensorRT, please make sure the "
        "missing libraries mentioned above are installed properly.\n",
        "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Cannot dlopen "
        "some TensorRT libraries. If you would like to use Nvidia GPU with TensorRT, please make "
        "sure the missing libraries mentioned above are installed properly.\n",
    ]
)


def _dso(where: str, lib: str, dep: str) -> str:
    return (
        f"{where} Could not load dynamic library '{lib}'; dlerror: {dep}: cannot open shared "
        "object file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda/lib64\n"
    )


@settings(max_examples=examples(30), deadline=None)
@given(
    NOISE,
    DSO,
    st.sampled_from(["libnvinfer", "libnvinfer_plugin"]),
    CUDA_DEP,
    st.integers(5, 10),
    st.integers(9, 12),
    TRT_WARN,
    st.integers(10, 999),
)
def test_tensorrt_dependency_missing_is_log_noise(
    noise: str, where: str, stem: str, dep: str, m: int, v: int, warn: str, n: int
) -> None:
    text = noise + _dso(where.format(n=n), f"{stem}.so.{m}", dep.format(v=v, m=m)) + warn
    found = explain(text)
    assert [f.id for f in found][:1] == ["log-noise"]
    assert all(f.id == "log-noise" for f in found)


@settings(max_examples=examples(30), deadline=None)
@given(
    DSO,
    st.sampled_from(
        [
            ("libcudart.so.{v}.0", "cuda-lib-missing"),
            ("libcublas.so.{v}", "cuda-lib-missing"),
            ("libcudnn.so.{m}", "cudnn-missing"),
            ("libcuda.so.1", "driver-missing"),
        ]
    ),
    st.integers(5, 10),
    st.integers(9, 12),
    TRT_WARN,
    st.integers(10, 999),
)
def test_a_library_tensorflow_needs_keeps_its_reading_beside_tensorrt(
    where: str, lib_want: tuple, m: int, v: int, warn: str, n: int
) -> None:
    lib, want = lib_want[0].format(v=v, m=m), lib_want[1]
    w = where.format(n=n)
    trt = _dso(w, f"libnvinfer.so.{m}", lib) + warn
    # the same library, now missing for TensorFlow itself, on its own line
    assert _ids(trt + _dso(w, lib, lib))[:1] == [want]
    assert _ids(_dso(w, lib, lib))[:1] == [want]


@settings(max_examples=examples(20), deadline=None)
@given(
    DSO,
    st.sampled_from(["libnvinfer", "libnvinfer_plugin"]),
    st.sampled_from(
        [
            ("/lib/x86_64-linux-gnu/libm.so.6", "GLIBC_2.{g}"),
            ("/lib/x86_64-linux-gnu/libc.so.6", "GLIBC_2.{g}"),
            ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "GLIBCXX_3.4.{g}"),
        ]
    ),
    st.integers(5, 10),
    st.integers(17, 38),
    st.integers(10, 999),
)
def test_a_c_runtime_too_old_for_tensorrt_is_the_machine_s_runtime(
    where: str, stem: str, runtime: tuple, m: int, g: int, n: int
) -> None:
    # TensorRT stays optional, but a glibc / libstdc++ older than its build is the machine's
    # own runtime (the same age as every other NVIDIA library built with it)
    lib, node = runtime[0], runtime[1].format(g=g)
    line = (
        f"{where.format(n=n)} Could not load dynamic library '{stem}.so.{m}'; dlerror: {lib}: "
        f"version `{node}' not found (required by /usr/lib/x86_64-linux-gnu/{stem}.so.{m}); "
        "LD_LIBRARY_PATH: /usr/local/nvidia/lib:/usr/local/nvidia/lib64\n"
    )
    assert _ids(line)[:1] == ["system-runtime-too-old"]


# --- TensorFlow's fused batch norm ---------------------------------------------------------

SHAPE = st.lists(st.integers(1, 512), min_size=4, max_size=5).map(
    lambda d: "[" + ",".join(map(str, d)) + "]"
)
BN_WRAP = st.sampled_from(
    [
        "tensorflow.python.framework.errors_impl.InternalError: {m} [Op:FusedBatchNormV3]",
        "InternalError:  {m}\n\t [[node model/bn/FusedBatchNormV3 (defined at train.py:41) ]]",
        "tensorflow.python.framework.errors_impl.InternalError: {m}\n\t [[{{{{node "
        "training/Adam/gradients/bn/FusedBatchNormGradV3}}}}]]",
    ]
)


def _bn(wrap: str, shape: str) -> str:
    return wrap.format(m=f"cuDNN launch failure : input shape ({shape})")


@settings(max_examples=examples(30), deadline=None)
@given(NOISE, BN_WRAP, SHAPE)
def test_fused_batch_norm_launch_failure_is_memory_first(noise: str, wrap: str, shape: str) -> None:
    found = explain(noise + _bn(wrap, shape))
    assert [f.id for f in found][:3] == ["out-of-memory", "gpu-arch-unsupported", "cudnn-too-old"]
    assert found[0].confidence < 0.85  # ambiguous: the logged status decides


@settings(max_examples=examples(30), deadline=None)
@given(BN_WRAP, SHAPE, st.integers(5, 8), st.integers(0, 9), st.integers(1, 9))
def test_fused_batch_norm_after_the_version_check_is_the_version(
    wrap: str, shape: str, major: int, minor: int, up: int
) -> None:
    check = (
        f"E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: "
        f"{major}.{minor}.0 but source was compiled with: {major}.{minor + up}.0.  CuDNN library "
        "major and minor version needs to match or have higher minor version in case of CuDNN 7.0 "
        "or later version.\n"
    )
    assert _ids(check + _bn(wrap, shape))[:1] == ["cudnn-too-old"]
    assert _ids(check)[:1] == ["cudnn-too-old"]


# --- TensorFlow 2.11+ on native Windows: TensorFlow's own "no GPU" answers -------------------

NO_GPU_ANSWER = st.sampled_from(
    [
        "tf.config.list_physical_devices('GPU') # [] is returned",
        ">>> tf.config.list_physical_devices('GPU')\n[]",
        "from tensorflow.python.client import device_lib\nprint(device_lib.list_local_devices())\n"
        '\n[name: "/device:CPU:0"\ndevice_type: "CPU"\nmemory_limit: 268435456\n]',
    ]
)
VERSION_LAYOUT = st.sampled_from(
    [
        "My tensorflow version is 2.{minor}.{patch}.",
        "### Tensorflow Version\n\n2.{minor}.{patch}\n",
        "TensorFlow version: 2.{minor}.{patch}",
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(
    NO_GPU_ANSWER,
    VERSION_LAYOUT,
    st.integers(0, 25),
    st.integers(0, 5),
    st.sampled_from(["Windows 11", "Windows 10", "Ubuntu 22.04", "WSL2 on Windows 11"]),
)
def test_tensorflow_2_11_on_native_windows_answers_no_gpu_as_a_cpu_build(
    answer: str, layout: str, minor: int, patch: int, system: str
) -> None:
    # tensorflow.org/install/pip: 2.10 was the last release with GPU support on native Windows
    text = f"{layout.format(minor=minor, patch=patch)}\nMy system is {system}.\n{answer}"
    native_windows = system.startswith("Windows")
    assert (_ids(text)[:1] == ["cpu-only-build"]) == (native_windows and minor >= 11), text


@settings(max_examples=examples(20), deadline=None)
@given(st.integers(11, 25), st.sampled_from(["# False", "\nFalse", "\n>>> False", ": False"]))
def test_tensorflow_built_without_cuda_is_a_cpu_build_and_a_listed_gpu_is_not(
    minor: int, answer: str
) -> None:
    built = f"Windows 11, tensorflow 2.{minor}.0\nprint(tf.test.is_built_with_cuda()) {answer}"
    assert _ids(built)[:1] == ["cpu-only-build"]
    listed = (
        f"Windows 11, tensorflow 2.{minor}.0\nprint(device_lib.list_local_devices())\n"
        '[name: "/device:CPU:0"\ndevice_type: "CPU"\n, name: "/device:GPU:0"\ndevice_type: "GPU"\n]'
    )
    assert "cpu-only-build" not in _ids(listed)
