"""Round thirteen (b)'s readings, each from the text that prints the message or the line.

- TensorFlow's bug template line "- CUDA/cuDNN version: <cuda>, <cudnn>" (and its issue form's
  "### CUDA/cuDNN version" answer): the user's statement of the installed cuDNN, the second
  version. Beside a failed load of another cuDNN major it decides for cudnn-major-mismatch; of
  the same major the reading stays cudnn-missing.
- JAX's cuDNN 9.10 checks (jax_plugins/cuda/__init__.py): cudnn-too-old.
- CTranslate2's CUDA_CHECK out of memory (out-of-memory) and its compute type check
  (gpu-arch-unsupported, then gpu-missing).
- ONNX Runtime's fallback from TensorRT to CUDA (onnxruntime_inference_collection.py): log-noise.
- PaddlePaddle's InitGpuProperties (gpu_resources.cc): architecture warnings, start-up report
  lines (log-noise), the CUDA/cuDNN enforce and the CUDA check (the driver's version).
- XLA's "Possibly insufficient driver version: V" (printed after cudnnCreate returned
  CUDNN_STATUS_NOT_INITIALIZED) reads like that status; JAX's "Unknown backend cuda. Available
  backends are [...]" like its other "no GPU backend" answers; XLA's "Falling back to the CUDA
  driver for PTX compilation; ptxas does not support CC X.Y" like its "ptxas too old".
- A framework plug-in DLL that LoadLibrary refused with error 126: the check is the DLL search
  on PATH.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids


# --- TensorFlow's issue template: "CUDA/cuDNN version" ---------------------------------------

TEMPLATE_LINE = st.sampled_from(
    [
        "- CUDA/cuDNN version: {cuda}{sep}{cudnn}\n- GPU model and memory: {gpu}\n",
        "- **CUDA/cuDNN version**: {cuda}{sep}{cudnn}\n",
        "### CUDA/cuDNN version\n\n{cuda}{sep}{cudnn}\n\n### GPU model and memory\n\n{gpu}\n",
        "CUDA/cuDNN version: CUDA {cuda}{sep}cuDNN {cudnn}\n",
    ]
)
SEP = st.sampled_from([", ", "/", " / ", " and ", "; "])
CUDA = st.sampled_from(["9.0", "10.0", "10.1", "10.2", "11.0", "11.2", "11.8", "12.2"])
GPU = st.sampled_from(["GTX 1080 Ti 11GB", "Tesla T4", "RTX 3090 24GB"])


def _dso_failure(major: int) -> str:
    return (
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
        f"library 'libcudnn.so.{major}'; dlerror: libcudnn.so.{major}: cannot open shared object "
        "file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda/lib64\n"
    )


@settings(max_examples=examples(20), deadline=None)
@given(
    NOISE,
    TEMPLATE_LINE,
    SEP,
    CUDA,
    GPU,
    st.integers(5, 9),
    st.integers(5, 9),
    st.integers(0, 9),
    st.integers(0, 9),
)
def test_template_cudnn_version_is_the_installed_copy(
    noise: str,
    line: str,
    sep: str,
    cuda: str,
    gpu: str,
    have: int,
    want: int,
    minor: int,
    patch: int,
) -> None:
    stated = line.format(cuda=cuda, sep=sep, cudnn=f"{have}.{minor}.{patch}", gpu=gpu)
    ids = _ids(noise + stated + _dso_failure(want))
    assert ids[:1] == (["cudnn-major-mismatch"] if have != want else ["cudnn-missing"])


@settings(max_examples=examples(15), deadline=None)
@given(st.sampled_from(["- CUDA/cuDNN version: {c}\n", "### CUDA/cuDNN version\n\n{c}\n"]), CUDA)
def test_template_line_with_the_cuda_release_only_names_no_cudnn(line: str, cuda: str) -> None:
    # only the CUDA release answered: the CUDA release is not a cuDNN copy; the line alone is
    # no cause
    assert _ids(line.format(c=cuda) + _dso_failure(7))[:1] == ["cudnn-missing"]
    assert _ids(line.format(c=cuda) + "- GPU model and memory: Tesla T4\n") == []


# --- JAX: the cuDNN 9.10 checks of _check_cuda_versions --------------------------------------

JAX_WRAP = st.sampled_from(
    [
        "RuntimeError: {m}",
        "RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\n{m}",
        "CUDA backend failed to initialize: Unable to use CUDA because of the following issues "
        "with CUDA components:\n{m} (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(NOISE, JAX_WRAP, st.booleans(), st.integers(0, 9), st.integers(90000, 91099))
def test_jax_refuses_cudnn_below_9_10_1(
    noise: str, wrap: str, enum_check: bool, minor: int, found: int
) -> None:
    if enum_check:
        m = (
            "cuDNN 9.10.0 had a binary backward-compatibility issue due to reordered enum values "
            f"affecting block-scale datatypes. Found runtime version 91000 and build version "
            f"9{minor:02d}00. Please upgrade to 9.10.1 or above."
        )
    else:
        m = (
            f"cuDNN < 9.10.0 ({found} found) had an issue that caused some multi-GPU matmuls, in "
            "which the same finalized execution plan is used across different GPUs, to be "
            f"functionally incorrect when run with cublasLt >= 12.9 (1209{minor:02d} found). "
            "Please upgrade to 9.10.1 or above."
        )
    assert _ids(noise + wrap.format(m=m))[:1] == ["cudnn-too-old"]


# --- CTranslate2: CUDA_CHECK's out of memory, the compute type check --------------------------


@settings(max_examples=examples(20), deadline=None)
@given(
    NOISE,
    st.sampled_from(["RuntimeError: {m}", '  File "transcribe.py", line 9\nRuntimeError: {m}']),
    st.sampled_from(
        [
            ("CUDA failed with error out of memory", ["out-of-memory"]),
            (
                "Requested float16 compute type, but the target device or backend do not "
                "support efficient float16 computation.",
                ["gpu-arch-unsupported", "gpu-missing"],
            ),
            (
                "Requested bfloat16 compute type, but the target device or backend do not "
                "support efficient bfloat16 computation.",
                ["gpu-arch-unsupported", "gpu-missing"],
            ),
            # neighbours: the runtime's other strings keep their readings; int8 is not read
            (
                "CUDA failed with error no kernel image is available for execution on the device",
                ["gpu-arch-unsupported"],
            ),
            (
                "Requested int8 compute type, but the target device or backend do not support "
                "efficient int8 computation.",
                [],
            ),
        ]
    ),
)
def test_ctranslate2_checks(noise: str, wrap: str, msg_want: tuple) -> None:
    msg, want = msg_want
    got = _ids(noise + wrap.format(m=msg))
    if want:
        assert got[: len(want)] == want
    else:  # unread: only the noise line's own reading, if any
        assert all(i == "log-noise" for i in got)


# --- ONNX Runtime: the session falls back from TensorRT to CUDA -------------------------------


def _fallback(err: str, to: str) -> str:
    return (
        "*************** EP Error ***************\n"
        f"EP Error {err} when using ['TensorrtExecutionProvider', 'CUDAExecutionProvider', "
        "'CPUExecutionProvider']\n"
        f"Falling back to {to} and retrying.\n"
        "****************************************\n"
    )


TRT_ERR = st.sampled_from(
    [
        "/onnxruntime_src/onnxruntime/python/onnxruntime_pybind_state.cc:456 void onnxruntime::"
        "python::RegisterTensorRTPluginsAsCustomOps(PySessionOptions&, const ProviderOptions&) "
        "Please install TensorRT libraries as mentioned in the GPU requirements page, make sure "
        "they're in the PATH or LD_LIBRARY_PATH, and that your GPU is supported.",
        "[ONNXRuntimeError] : 1 : FAIL : TensorRT EP could not be loaded",
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(NOISE, TRT_ERR, st.integers(8, 10), st.integers(0, 2))
def test_ort_fallback_from_tensorrt_to_cuda_is_log_noise(
    noise: str, err: str, m: int, form: int
) -> None:
    to_cuda = _fallback(err, "['CUDAExecutionProvider', 'CPUExecutionProvider']")
    cuda = (
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1862 TryGetProviderInfo_CUDA] Failed to "
        f"load library libonnxruntime_providers_cuda.so with error: libcudnn.so.{m}: cannot open "
        "shared object file: No such file or directory\n"
    )
    if form == 0:
        assert _ids(noise + to_cuda)[:1] == ["log-noise"]
    elif form == 1:  # the CUDA provider failing after it keeps its own reading first
        assert _ids(noise + to_cuda + cuda)[:1] == ["cudnn-missing"]
    else:  # a fallback to the CPU alone is not this reading
        assert "log-noise" not in _ids(_fallback(err, "['CPUExecutionProvider']"))


# --- PaddlePaddle: InitGpuProperties's lines at start ----------------------------------------

GLOG = st.sampled_from(["W0101 00:00:00.000000  4242 gpu_resources.cc:119] ", "W0522 ", ""])


@settings(max_examples=examples(30), deadline=None)
@given(
    GLOG,
    st.sampled_from(["Pascal", "Maxwell", "Kepler", "Volta"]),
    st.integers(20, 130),
    st.integers(10, 12),
    st.integers(7, 9),
    st.integers(0, 9),
    st.integers(0, 9),
    st.integers(0, 5),
)
def test_paddle_start_up_lines(
    glog: str, arch: str, cc: int, cuda: int, cudnn: int, a: int, b: int, form: int
) -> None:
    arch_line = (
        f"{glog}The GPU architecture in your current machine is {arch}, which is not compatible "
        "with Paddle installation with arch: 70 75 80 86 , it is recommended to install the "
        "corresponding wheel package according to the installation information on the official "
        "Paddle website.\n"
    )
    cc_line = (
        f"{glog}The GPU compute capability in your current machine is {cc}, which is not "
        "supported by Paddle, it is recommended to install the corresponding wheel package "
        "according to the installation information on the official Paddle website.\n"
    )
    note = (
        f"{glog}Please NOTE: device: 0, GPU Compute Capability: {a}.{b}, Driver API Version: "
        f"{cuda}.{a}, Runtime API Version: {cuda}.{b}\n{glog}device: 0, cuDNN Version: "
        f"{cudnn}.{a}.\n"
    )
    older = (
        f"{glog}WARNING: device: 0. The installed Paddle is compiled with CUDNN {cudnn}.{a + 1}, "
        f"but CUDNN version in your machine is {cudnn}.{a}, which may cause serious incompatible "
        "bug. Please recompile or reinstall Paddle with compatible CUDNN version.\n"
    )
    driver = (
        f"{glog}WARNING: device: 0. The installed Paddle is compiled with CUDA {cuda}.{a + 1}, but "
        f"CUDA runtime version in your machine is {cuda}.{a}, which may cause serious "
        "incompatible bug. Please recompile or reinstall Paddle with compatible CUDA version.\n"
    )
    enforce = (
        f"ValueError: (InvalidArgument) The installed Paddle is compiled with CUDA{cuda + 1}/"
        f"cuDNN{cudnn + 1},but CUDA/cuDNN version in your machine is CUDA{cuda}/cuDNN{cudnn}. "
        "which will cause serious incompatible bug. Please recompile or reinstall Paddle with "
        "compatible CUDA/cuDNN version.\n"
    )
    text, want = [
        (arch_line, ["gpu-arch-unsupported"]),
        (cc_line, ["gpu-arch-unsupported"]),
        ("", ["log-noise"]),  # the start-up report alone: harmless, and nothing else
        (older, ["cudnn-too-old"]),  # the lines after it keep their readings first
        (driver, ["driver-too-old"]),
        (enforce, ["driver-too-old", "cudnn-major-mismatch"]),
    ][form]
    ids = _ids(note + text)
    assert (ids if not text else ids[: len(want)]) == want


# --- A framework's CUDA plug-in that failed to load without naming the dependency ------------


@settings(max_examples=examples(20), deadline=None)
@given(
    st.sampled_from(["onnxruntime_providers_cuda", "ctranslate2", "torch_cuda", "c10_cuda"]),
    st.sampled_from(["C:\\Python310\\lib\\site-packages\\onnxruntime\\capi", "D:\\venv\\Lib"]),
    st.integers(1000, 3000),
)
def test_plugin_failure_check_names_the_search_that_decides(plugin: str, d: str, n: int) -> None:
    from fixer.explainer import analyze

    # Windows error 126 (ERROR_MOD_NOT_FOUND) names no dependency: the DLL search on PATH decides
    text = (
        f"[E:onnxruntime:Default, provider_bridge_ort.cc:{n} TryGetProviderInfo_CUDA] LoadLibrary "
        f'failed with error 126 "" when trying to load "{d}\\{plugin}.dll"'
    )
    found = analyze(text)
    checks = dict(found.checks)
    assert [f.id for f in found.findings][:2] == ["cudnn-missing", "cuda-lib-missing"]
    assert "where cudnn64_" in checks["cudnn-missing"]
    assert checks["cudnn-missing"] == checks["cuda-lib-missing"]


# --- XLA's cuDNN handle hint, JAX's unknown backend -------------------------------------------


@settings(max_examples=examples(20), deadline=None)
@given(NOISE, st.integers(300, 600), st.integers(0, 199), st.integers(0, 9), st.booleans())
def test_xla_driver_hint_and_jax_unknown_backend(
    noise: str, major: int, minor: int, patch: int, jax: bool
) -> None:
    if jax:
        text = "RuntimeError: Unknown backend cuda. Available backends are ['cpu']\n"
        assert _ids(noise + text)[:2] == ["gpu-missing", "cpu-only-build"]
    else:
        hint = (
            "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:439] Possibly insufficient "
            f"driver version: {major}.{minor}.{patch}\n"
        )
        status = (
            "E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:535] Could not create cudnn "
            "handle: CUDNN_STATUS_NOT_INITIALIZED\n"
        )
        # the hint reads like the status it follows, alone or beside it
        # (the noise line's own harmless reading aside)
        first = [i for i in _ids(noise + hint) if i != "log-noise"]
        assert first[:3] == _ids(status)[:3] == _ids(status + hint)[:3]


@settings(max_examples=examples(15), deadline=None)
@given(
    st.sampled_from(["tensorflow/compiler/xla/stream_executor/gpu/asm_compiler.cc", "x.cc"]),
    st.integers(5, 12),
    st.integers(0, 9),
    st.sampled_from([" ", "\n  "]),
)
def test_xla_ptxas_does_not_support_the_gpu(where: str, major: int, minor: int, sep: str) -> None:
    text = (
        f"W {where}:231] Falling back to the CUDA driver for PTX compilation;{sep}ptxas does not "
        f"support CC {major}.{minor}\nW {where}:234] Used ptxas at /usr/local/cuda/bin/ptxas\n"
    )
    too_old = "UNIMPLEMENTED: /usr/local/cuda/bin/ptxas ptxas too old. Falling back to the driver"
    assert _ids(text)[:1] == _ids(too_old)[:1] == ["cuda-lib-mismatch"]
