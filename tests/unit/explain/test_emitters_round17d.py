"""Round seventeen (d)'s readings: frameworks and runtimes beyond torch/TF/JAX, each in its own
words, from the code that prints them.

- Caffe's NO_GPU ("Cannot use GPU in CPU-only Caffe: check mode.", include/caffe/util/
  device_alternate.hpp under CPU_ONLY): cpu-only-build.
- MXNet without MXNET_USE_CUDA ("Compile with USE_CUDA=1 to enable GPU usage", storage.cc; "GPU is
  not enabled", MXNET_GPU_NOT_ENABLED_ERROR after a source file and line): cpu-only-build. Its CUDA
  build's device count ("GPU usage requires at least 1 GPU", threaded_engine.cc / storage.cc):
  gpu-missing first, the driver (cudaGetDeviceCount failed) second.
- llama.cpp's -ngl / split-mode / main-GPU warnings when llama_supports_gpu_offload() is false
  ("not compiled with GPU offload support", "no usable GPU found", "compiled without support for
  GPU offload"): cpu-only-build first, gpu-missing second; ggml_cuda_init's own failure line, when
  the paste has it, decides instead.
- Chainer's check_cuda_available(): "CUDA environment is not correctly set up" followed by "No
  module named 'cupy'" is cpu-only-build; its "cuDNN is not enabled. Please reinstall CuPy after
  you install cudnn" warning is cudnn-missing, a cuDNN of another major second.
- OpenCV's throw_no_cuda ("The library is compiled without CUDA support", -216 No CUDA support):
  cpu-only-build.
- TensorRT's checkEngineDeviceCompatible ("The engine plan file is generated on an incompatible
  device, expecting compute X got compute Y, please rebuild."): gpu-arch-unsupported.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

N = st.integers(0, 99999)
CLOCK = st.tuples(st.integers(0, 23), st.integers(0, 59), st.integers(0, 59)).map(
    lambda t: "%02d:%02d:%02d" % t
)
PREFIX = st.sampled_from(["", "/work/mxnet/", "../", "/home/user/incubator-mxnet/"])


# --- Caffe --------------------------------------------------------------------------------------


@settings(max_examples=examples(15), deadline=None)
@given(
    noise=NOISE,
    clock=CLOCK,
    pid=N,
    where=st.sampled_from(["common.cpp:66", "common.cpp:74", "conv_layer.cpp:80", "net.cpp:43"]),
    tail=st.sampled_from(["", "\n*** Check failure stack trace: ***", "\nAborted (core dumped)"]),
)
def test_caffe_built_cpu_only_is_a_build_without_cuda(noise, clock, pid, where, tail):
    text = f"{noise}F0101 {clock}.000000 {pid} {where}] Cannot use GPU in CPU-only Caffe: check mode.{tail}"
    assert _ids(text)[0] == "cpu-only-build", text


# --- MXNet --------------------------------------------------------------------------------------


@settings(max_examples=examples(20), deadline=None)
@given(
    noise=NOISE,
    clock=CLOCK,
    prefix=PREFIX,
    line=st.integers(1, 3000),
    form=st.sampled_from(
        [
            ("src/storage/storage.cc", "Compile with USE_CUDA=1 to enable GPU usage"),
            ("src/ndarray/ndarray.cc", "GPU is not enabled"),
            ("src/engine/naive_engine.cc", "GPU is not enabled"),
            ("src/operator/nn/convolution.cc", "GPU is not enabled"),
            ("src/engine/stream_manager.h", "GPU is not enabled"),
        ]
    ),
    head=st.sampled_from(["mxnet.base.MXNetError: ", "MXNetError: ", ""]),
)
def test_mxnet_without_cuda_is_a_build_without_cuda(noise, clock, prefix, line, form, head):
    path, message = form
    text = f"{noise}{head}[{clock}] {prefix}{path}:{line}: {message}"
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(15), deadline=None)
@given(
    noise=NOISE,
    clock=CLOCK,
    prefix=PREFIX,
    line=st.integers(1, 3000),
    check=st.sampled_from(
        [
            "device_count_ > 0 (-1 vs. 0)",
            "num_gpu_device > 0 (0 vs. 0)",
            "device_count_ > 0 (0 vs. 0)",
        ]
    ),
)
def test_mxnet_counting_no_gpu_is_gpu_missing_then_the_driver(noise, clock, prefix, line, check):
    text = (
        f"{noise}mxnet.base.MXNetError: [{clock}] {prefix}src/engine/threaded_engine.cc:{line}: "
        f"Check failed: {check} : GPU usage requires at least 1 GPU"
    )
    found = _ids(text)
    assert found[0] == "gpu-missing", (text, found)
    assert found[1] == "driver-missing", (text, found)


# --- llama.cpp ----------------------------------------------------------------------------------

LLAMA_WARNINGS = st.sampled_from(
    [
        "warning: not compiled with GPU offload support, --gpu-layers option will be ignored\n"
        "warning: see main README.md for information on enabling GPU BLAS support",
        "warning: not compiled with GPU offload support, --n-gpu-layers option will be ignored",
        "warning: not compiled with GPU offload support, --gpu-layers-draft option will be ignored",
        "warning: no usable GPU found, --gpu-layers option will be ignored\n"
        "warning: one possible reason is that llama.cpp was compiled without GPU support\n"
        "warning: consult docs/build.md for compilation instructions",
        "warning: llama.cpp was compiled without support for GPU offload. Setting the split mode "
        "has no effect.",
        "warning: llama.cpp was compiled without support for GPU offload. Setting a tensor split "
        "has no effect.",
        "warning: llama.cpp was compiled without support for GPU offload. Setting the main GPU has "
        "no effect.",
    ]
)
MODEL = st.sampled_from(
    ["models/7B/ggml-model-q4_0.gguf", "/models/llama-2-13b.Q5_K_M.gguf", "mistral.gguf"]
)


@settings(max_examples=examples(20), deadline=None)
@given(noise=NOISE, warning=LLAMA_WARNINGS, model=MODEL, layers=st.integers(1, 200))
def test_llama_cpp_without_gpu_offload_is_a_cpu_build_first(noise, warning, model, layers):
    text = (
        f"{noise}$ ./main -m {model} -ngl {layers}\n{warning}\nllama_model_loader: loaded meta data"
    )
    found = _ids(text)
    assert found[0] == "cpu-only-build", (text, found)
    assert found[1] == "gpu-missing", (text, found)


@settings(max_examples=examples(15), deadline=None)
@given(
    warning=LLAMA_WARNINGS,
    failure=st.sampled_from(
        [
            ("no CUDA-capable device is detected", "gpu-missing"),
            ("CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
        ]
    ),
)
def test_llama_cpp_with_ggml_cuda_init_failing_reads_that_failure(warning, failure):
    error, expected = failure
    text = f"ggml_cuda_init: failed to initialize CUDA: {error}\n{warning}"
    found = _ids(text)
    assert found[0] == expected, (text, found)
    assert "cpu-only-build" not in found, (text, found)


# --- Chainer ------------------------------------------------------------------------------------

CHAINER_URL = st.sampled_from(
    [
        "https://github.com/chainer/chainer#installation",
        "https://github.com/pfnet/chainer#installation",
    ]
)


@settings(max_examples=examples(15), deadline=None)
@given(
    noise=NOISE,
    url=CHAINER_URL,
    quote=st.sampled_from(["'cupy'", "cupy"]),
    line=st.integers(1, 900),
)
def test_chainer_without_cupy_is_a_build_without_cuda(noise, url, quote, line):
    text = (
        f'{noise}  File "/usr/lib/python3/dist-packages/chainer/backends/cuda.py", line {line}, '
        f"in check_cuda_available\n    raise RuntimeError(msg)\n"
        f"RuntimeError: CUDA environment is not correctly set up\n(see {url}).No module named {quote}"
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(10), deadline=None)
@given(url=CHAINER_URL, module=st.sampled_from(["'cupyx.scipy.linalg'", "'cupy_backends'"]))
def test_chainer_with_another_import_error_is_not_read_as_no_cupy(url, module):
    text = f"RuntimeError: CUDA environment is not correctly set up\n(see {url}).No module named {module}"
    assert "cpu-only-build" not in _ids(text)[:1], text


@settings(max_examples=examples(15), deadline=None)
@given(
    noise=NOISE,
    line=st.integers(1, 900),
    form=st.sampled_from(
        [
            "Please reinstall CuPy after you install cudnn\n"
            "(see https://docs-cupy.chainer.org/en/stable/install.html#install-cudnn).",
            "Please reinstall CuPy after you install cudnn\n"
            "(see https://docs-cupy.chainer.org/en/stable/install.html"
            "#install-cupy-with-cudnn-and-nccl).",
            "Please reinstall chainer after you install cudnn\n"
            "(see https://github.com/pfnet/chainer#installation).",
        ]
    ),
)
def test_chainer_without_cudnn_is_cudnn_missing_then_another_major(noise, line, form):
    text = (
        f"{noise}/usr/local/lib/python3.6/site-packages/chainer/backends/cuda.py:{line}: "
        f"UserWarning: cuDNN is not enabled.\n{form}"
    )
    found = _ids(text)
    assert found[0] == "cudnn-missing", (text, found)
    assert found[1] == "cudnn-major-mismatch", (text, found)


# --- OpenCV -------------------------------------------------------------------------------------


@settings(max_examples=examples(15), deadline=None)
@given(
    noise=NOISE,
    version=st.tuples(st.integers(3, 4), st.integers(0, 12), st.integers(0, 9)).map(
        lambda v: "%d.%d.%d" % v
    ),
    root=st.sampled_from(["/io/opencv", "/tmp/pip-req-build-abc/opencv", "C:\\opencv"]),
    line=st.integers(1, 200),
    head=st.sampled_from(
        [
            "cv2.error: ",
            "terminate called after throwing an instance of 'cv::Exception'\n  what():  ",
        ]
    ),
)
def test_opencv_without_cuda_is_a_build_without_cuda(noise, version, root, line, head):
    text = (
        f"{noise}{head}OpenCV({version}) {root}/modules/core/include/opencv2/core/"
        f"private.cuda.hpp:{line}: error: (-216:No CUDA support) The library is compiled without "
        f"CUDA support in function 'throw_no_cuda'"
    )
    assert _ids(text)[0] == "cpu-only-build", text


# --- TensorRT -----------------------------------------------------------------------------------

CC = st.sampled_from(
    ["5.3", "6.1", "7.0", "7.2", "7.5", "8.0", "8.6", "8.7", "8.9", "9.0", "10.0", "12.0"]
)


@settings(max_examples=examples(20), deadline=None)
@given(
    noise=NOISE,
    pair=st.tuples(CC, CC).filter(lambda p: p[0] != p[1]),
    form=st.integers(0, 2),
    clock=CLOCK,
)
def test_a_tensorrt_engine_from_another_gpu_is_gpu_arch_unsupported(noise, pair, form, clock):
    built, here = pair
    message = (
        f"The engine plan file is generated on an incompatible device, expecting compute {built} "
        f"got compute {here}, please rebuild."
    )
    line = [
        f"[TRT] [E] 6: {message}",
        f"[01/08/2024-{clock}] [TRT] [E] IRuntime::deserializeCudaEngine: Error Code 6: API Usage "
        f"Error ({message})",
        f"[TensorRT] ERROR: INVALID_CONFIG: {message}",
    ][form]
    assert _ids(noise + line)[0] == "gpu-arch-unsupported", line
