"""Round twenty-four: the driver's own state decides "no device", and more ways a paste says the
machine has no NVIDIA GPU (written from the misses of sets 31-42, read once they were training
data; each rule from its emitter's source, cited in recipes/errors.toml).

- A no-device or unusable-driver answer (cudaErrorNoDevice "no CUDA-capable device is detected",
  CUDA_ERROR_NO_DEVICE, torch's "No CUDA GPUs are available", "CUDA driver version is insufficient
  for CUDA runtime version", 804's "forward compatibility was attempted on non supported HW")
  beside a line that shows the driver unreachable (nvidia-smi's "couldn't communicate with the
  NVIDIA driver", NVML's "Driver/library version mismatch", the kernel module's "NVRM: API
  mismatch"): the driver's state is what to fix (driver-missing first, the answer's reading its
  alternative). Alone, the answer keeps its reading; alone, the driver line stays driver-missing.
- "I have no GPU", "fails with no GPU", "my Mac laptop", "AMD显卡" decide the no-driver and
  CPU-build messages for gpu-missing, as the earlier sayings do; a framework's own "No GPU/TPU
  found" is not such a sentence.
- The linker that cannot find a GPU library (GNU ld's "cannot find -lcudnn", MSVC's LNK1181 on
  cudnn.lib): cudnn-missing, or cuda-lib-missing for the CUDA libraries; another library reads no
  GPU cause.
- FFmpeg's NVENC API check (a driver older than the SDK FFmpeg was built with): driver-too-old;
  the driver's video library that nv-codec-headers cannot load ("Cannot load
  libnvidia-encode.so.1"): driver-missing (added in the sixteenth session, from nvenc.c: the
  requirement line follows a failed load too).
- xformers' "this function is for smN, but was built for smM" and Paddle 3.1's "Mismatched GPU
  Architecture": gpu-arch-unsupported.
- ONNX Runtime's "Memcpy nodes are added to the graph": harmless (log-noise), below any failure.
- darknet's "CUDNN < 7 doesn't support groups" and a compiler that does not know a cuDNN symbol
  or arity (another major's API): cudnn-major-mismatch; another unknown symbol reads no cuDNN cause.
- dlib's CHECK_CUDA "code: 999, reason: unknown error": driver-missing, as the runtime's own row.

Values are generated; the message texts are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

NO_DEVICE = [
    "cudaGetDeviceCount returned 100\n-> no CUDA-capable device is detected",
    "RuntimeError: cuda runtime error (38) : no CUDA-capable device is detected at "
    "torch/csrc/cuda/Module.cpp:32",
    "E tensorflow/stream_executor/cuda/cuda_driver.cc:{n}] failed call to cuInit: "
    "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    "numba.cuda.cudadrv.driver.CudaAPIError: [100] Call to cuInit results in CUDA_ERROR_NO_DEVICE",
    "RuntimeError: No CUDA GPUs are available",
    "RuntimeError: CUDA driver version is insufficient for CUDA runtime version",
    "ggml_cuda_init: failed to initialize CUDA: forward compatibility was attempted on non "
    "supported HW",
    "F0322 17:55:22.220342 {n} common.cpp:151] Check failed: error == cudaSuccess (38 vs. 0)  no "
    "CUDA-capable device is detected",
]
UNREACHED = [
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
    "the latest NVIDIA driver is installed and running.",
    "Failed to initialize NVML: Driver/library version mismatch",
    'nvidia-smi complains "Failed to initialize NVML: Driver/library version mismatch"',
    "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: "
    "unknown",
    "[ {n}.123456] NVRM: API mismatch: the client has the version 535.129.03, but\nNVRM: this "
    "kernel module has the version 535.113.01.  Please",
    'nvidia-smi itself fails with "Driver/library version mismatch"',
]


@settings(max_examples=examples(40), deadline=None)
@given(
    nodevice=st.sampled_from(NO_DEVICE),
    unreached=st.sampled_from(UNREACHED),
    driver_first=st.booleans(),
    n=st.integers(1, 9999),
    noise=NOISE,
)
def test_an_unreachable_driver_decides_no_device(nodevice, unreached, driver_first, n, noise):
    parts = [unreached.format(n=n), nodevice.format(n=n)]
    paste = noise + "\n" + "\n".join(parts if driver_first else parts[::-1])
    found = _ids(paste)
    assert found[0] == "driver-missing", paste
    # the answer's own reading stays, as the decided reading's alternative
    assert _ids(nodevice.format(n=n))[0] in found[1:], paste


@settings(max_examples=examples(20), deadline=None)
@given(nodevice=st.sampled_from(NO_DEVICE), n=st.integers(1, 9999), noise=NOISE)
def test_the_answer_alone_keeps_its_reading(nodevice, n, noise):
    paste = noise + "\n" + nodevice.format(n=n)
    assert _ids(paste)[0] in ("gpu-missing", "driver-too-old"), paste


@settings(max_examples=examples(20), deadline=None)
@given(unreached=st.sampled_from(UNREACHED), n=st.integers(1, 9999), noise=NOISE)
def test_the_driver_line_alone_stays_driver_missing(unreached, n, noise):
    paste = noise + "\n" + unreached.format(n=n)
    assert _ids(paste)[0] == "driver-missing", paste


#: messages that no driver answered, or that the build has no CUDA: the sayings decide them
ASKED = [
    "AssertionError: Torch not compiled with CUDA enabled",
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
    "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
]
SAID = [
    "I have no GPU, so I should run it with CPU",
    "Currently fails with no GPU:",
    "the server has no GPU",
    "There is no GPU in this laptop.",
    "already installed pytorch in my Mac laptop.",
    "I run it in my Mac",
    "请问是不是不支持AMD显卡？",
    "我的电脑是A卡",
]


@settings(max_examples=examples(40), deadline=None)
@given(
    asked=st.sampled_from(ASKED),
    said=st.sampled_from(SAID),
    said_first=st.booleans(),
    noise=NOISE,
)
def test_a_machine_said_to_have_no_gpu(asked, said, said_first, noise):
    parts = [said, asked]
    paste = noise + "\n" + "\n".join(parts if said_first else parts[::-1])
    assert _ids(paste)[0] == "gpu-missing", paste


@settings(max_examples=examples(10), deadline=None)
@given(
    line=st.sampled_from(
        [
            "WARNING: No GPU/TPU found, falling back to CPU.",
            "No GPU detected, not printing devices' names.",
            "if you have no GPU, set device='cpu'",
        ]
    )
)
def test_a_framework_line_about_no_gpu_is_not_a_saying(line):
    paste = f"{line}\nAssertionError: Torch not compiled with CUDA enabled"
    assert _ids(paste)[0] == "cpu-only-build", paste


@settings(max_examples=examples(20), deadline=None)
@given(
    who=st.sampled_from(["caffe", "paddle", "torch ", "我的", ""]),
    built=st.sampled_from(["编译", "构建", "安装"]),
    verb=st.sampled_from(["使用的是", "用的是"]),
    cpu=st.sampled_from(["cpu", "CPU"]),
    version=st.sampled_from(["", "版本", "版"]),
    noise=NOISE,
)
def test_a_build_said_to_be_for_the_cpu_is_not_a_machine_without_a_gpu(
    who, built, verb, cpu, version, noise
):
    """ "caffe编译使用的是CPU" (compiled for the CPU), "用的是cpu版本" (the CPU version) say what was
    built, as "compiled without GPU support" does in English: the framework's own CPU-build error
    keeps its reading (noted while reading the misses of sets 31-42)."""
    said = f"{who}{built}{verb}{cpu}{version}"
    paste = f"{noise}\n{said}\nAssertionError: Torch not compiled with CUDA enabled"
    assert _ids(paste)[0] == "cpu-only-build", paste
    if not version:
        return
    alone = f"{noise}\n我{verb}{cpu}{version}\nAssertionError: Torch not compiled with CUDA enabled"
    assert _ids(alone)[0] == "cpu-only-build", alone


# ---------------------------------------------------------------------------------------------
# the emitters of round twenty-four's rules, in recipes/errors.toml with their sources
# ---------------------------------------------------------------------------------------------

GPU_LIBS = ["cudart", "cublas", "cublasLt", "cufft", "curand", "cusparse", "cusolver", "nvrtc"]
LINKERS = ["/usr/bin/ld", "/usr/bin/x86_64-linux-gnu-ld", "ld", "/usr/bin/ld.gold"]


@settings(max_examples=examples(40), deadline=None)
@given(
    linker=st.sampled_from(LINKERS),
    lib=st.sampled_from(["cudnn"] + GPU_LIBS),
    static=st.booleans(),
    tail=st.sampled_from(["", ": No such file or directory"]),
    noise=NOISE,
)
def test_the_linker_that_cannot_find_a_gpu_library(linker, lib, static, tail, noise):
    name = lib + ("_static" if static and lib != "cudnn" else "")
    paste = (
        f"{noise}\n{linker}: cannot find -l{name}{tail}\ncollect2: error: ld returned 1 exit status"
    )
    assert _ids(paste)[0] == ("cudnn-missing" if lib == "cudnn" else "cuda-lib-missing"), paste


@settings(max_examples=examples(20), deadline=None)
@given(lib=st.sampled_from(["cudnn"] + GPU_LIBS), case=st.sampled_from(["lib", "LIB"]))
def test_msvc_that_cannot_open_a_gpu_import_library(lib, case):
    paste = f"LINK : fatal error LNK1181: cannot open input file '{lib}.{case}'"
    assert _ids(paste)[0] == ("cudnn-missing" if lib == "cudnn" else "cuda-lib-missing"), paste


@settings(max_examples=examples(20), deadline=None)
@given(lib=st.sampled_from(["m", "pthread", "z", "png", "opencv_core"]))
def test_the_linker_that_cannot_find_another_library_reads_no_gpu_cause(lib):
    paste = f"/usr/bin/ld: cannot find -l{lib}: No such file or directory"
    assert not {"cudnn-missing", "cuda-lib-missing"} & set(_ids(paste)), paste


@settings(max_examples=examples(20), deadline=None)
@given(
    codec=st.sampled_from(["h264_nvenc", "hevc_nvenc", "av1_nvenc"]),
    req=st.tuples(st.integers(8, 13), st.integers(0, 3)),
    minimum=st.sampled_from(["(unknown)", "470.57.02", "531.61"]),
)
def test_ffmpeg_nvenc_needs_a_newer_driver(codec, req, minimum):
    major, minor = req
    found = f"{major}.{minor - 1}" if minor else f"{major - 1}.9"
    paste = (
        f"[{codec} @ 0x55d0c0a3c0c0] Driver does not support the required nvenc API version. "
        f"Required: {major}.{minor} Found: {found}\n"
        f"[{codec} @ 0x55d0c0a3c0c0] The minimum required Nvidia driver for nvenc is {minimum} "
        "or newer"
    )
    assert _ids(paste)[0] == "driver-too-old", paste


_ENCODE = (
    ["h264_nvenc", "hevc_nvenc", "av1_nvenc"],
    ["libnvidia-encode.so.1", "nvEncodeAPI64.dll", "nvEncodeAPI.dll"],
)
_DECODE = (["h264_cuvid", "hevc_cuvid", "av1_cuvid"], ["libnvcuvid.so.1", "nvcuvid.dll"])


@settings(max_examples=examples(40), deadline=None)
@given(
    side=st.sampled_from([_ENCODE, _DECODE]).flatmap(
        lambda s: st.tuples(st.sampled_from(s[0]), st.sampled_from(s[1]))
    ),
    minimum=st.sampled_from(["", "(unknown)", "470.57.02", "531.61"]),
    noise=NOISE,
)
def test_ffmpeg_that_cannot_load_the_drivers_video_library(side, minimum, noise):
    """nv-codec-headers' LOAD_LIBRARY ("Cannot load %s") for the driver's own video libraries: no
    driver reaches the process (or a container lacks the video capability). After a failed
    encoder load nvenc.c prints the driver it needs, as after a too-old API version: that line
    does not make it driver-too-old. (A decoder prints no such line.)"""
    codec, lib = side
    lines = [noise, f"[{codec} @ 0x55d0c0a3c0c0] Cannot load {lib}"]
    if minimum and codec.endswith("nvenc"):
        lines.append(
            f"[{codec} @ 0x55d0c0a3c0c0] The minimum required Nvidia driver for nvenc is "
            f"{minimum} or newer"
        )
    paste = "\n".join(lines)
    ids = _ids(paste)
    assert ids[0] == "driver-missing", (paste, ids)
    assert "gpu-missing" in ids[1:], (paste, ids)
    assert "driver-too-old" not in ids, (paste, ids)


@settings(max_examples=examples(20), deadline=None)
@given(
    arch=st.sampled_from(["70", "75", "80", "86", "89", "90"]),
    built=st.sampled_from(["500", "610", "700", "750", "800", "860"]),
    form=st.sampled_from(["this function", "kernel `fmha_cutlassF_f16_aligned_64x64_rf_sm80`"]),
    noise=NOISE,
)
def test_xformers_built_without_the_gpus_kernels(arch, built, form, noise):
    paste = f"{noise}\nFATAL: {form} is for sm{arch}, but was built for sm{built}"
    assert _ids(paste)[0] == "gpu-arch-unsupported", paste


@settings(max_examples=examples(20), deadline=None)
@given(
    archs=st.lists(st.sampled_from(["61", "70", "75", "80", "86", "89", "90"]), min_size=1),
    gpu=st.sampled_from(["120", "100", "61", "50"]),
)
def test_paddle_mismatched_gpu_architecture(archs, gpu):
    listed = " ".join(archs) + " "
    paste = (
        "E0628 11:31:02.763801  2596 gpu_resources.cc:98] Mismatched GPU Architecture: The "
        f"installed PaddlePaddle package was compiled for {listed},but your current GPU is {gpu} "
        "Solution: Install the correct wheel package built for your GPU"
    )
    assert _ids(paste)[0] == "gpu-arch-unsupported", paste


@settings(max_examples=examples(20), deadline=None)
@given(n=st.integers(1, 999), graph=st.sampled_from(["torch_jit", "main_graph", "tf2onnx"]))
def test_onnxruntime_memcpy_nodes_are_harmless(n, graph):
    warning = (
        "[W:onnxruntime:, transformer_memcpy.cc:74 onnxruntime::MemcpyTransformer::ApplyImpl] "
        f"{n} Memcpy nodes are added to the graph {graph} for CUDAExecutionProvider. It might "
        "have negative impact on performance (including unable to run CUDA graph)."
    )
    assert _ids(warning)[0] == "log-noise", warning
    # a real failure beside it ranks above it
    failure = "RuntimeError: CUDA error: out of memory"
    assert _ids(f"{warning}\n{failure}")[0] == "out-of-memory"


@settings(max_examples=examples(20), deadline=None)
@given(errno_text=st.sampled_from(["", ": Success", ": No such file or directory"]))
def test_darknet_built_with_a_cudnn_below_7(errno_text):
    paste = f"CUDNN < 7 doesn't support groups, please upgrade!{errno_text}"
    assert _ids(paste)[0] == "cudnn-major-mismatch", paste


SYMBOLS = [
    "cudnnSetFilterNdDescriptor_v4",
    "cudnnSetConvolution2dDescriptor",
    "cudnnGetConvolutionForwardAlgorithm",
    "CUDNN_CONVOLUTION_FWD_SPECIFY_WORKSPACE_LIMIT",
    "CUDNN_CONVOLUTION_FWD_PREFER_FASTEST",
]
COMPILERS = [
    "src/{f}.cpp:{n}:12: error: '{sym}' was not declared in this scope",
    "src/{f}.c:{n}:12: error: '{sym}' undeclared (first use in this function)",
    'src/{f}.cu({n}): error: identifier "{sym}" is undefined',
    "src/{f}.cpp:{n}:5: error: use of undeclared identifier '{sym}'",
    "src/{f}.cpp({n}): error C3861: '{sym}': identifier not found",
    "src/{f}.cpp({n}): error C2065: '{sym}': undeclared identifier",
]


@settings(max_examples=examples(40), deadline=None)
@given(
    sym=st.sampled_from(SYMBOLS),
    compiler=st.sampled_from(COMPILERS),
    f=st.sampled_from(["cudnn_conv", "mod", "layer"]),
    n=st.integers(1, 9999),
    quotes=st.sampled_from([("'", "'"), ("\u2018", "\u2019")]),
)
def test_a_cudnn_symbol_the_compiler_does_not_know(sym, compiler, f, n, quotes):
    line = compiler.format(sym=sym, f=f, n=n)
    if "error C" not in line:
        line = line.replace("'", quotes[0], 1).replace("'", quotes[1], 1)
    assert _ids(line)[0] == "cudnn-major-mismatch", line


@settings(max_examples=examples(20), deadline=None)
@given(
    func=st.sampled_from(["cudnnSetConvolution2dDescriptor", "cudnnSetConvolutionNdDescriptor"]),
    many=st.sampled_from(["many", "few"]),
)
def test_a_cudnn_call_of_another_majors_arity(func, many):
    for line in (
        f"error: too {many} arguments to function 'cudnnStatus_t {func}(cudnnConvolutionDescriptor_t"
        ", int, int)'",
        f"error C2660: '{func}': function does not take 8 arguments",
    ):
        assert _ids(line)[0] == "cudnn-major-mismatch", line


@settings(max_examples=examples(20), deadline=None)
@given(sym=st.sampled_from(["cv::cuda::GpuMat", "at::cuda::getCurrentCUDAStream", "THCState"]))
def test_another_symbol_the_compiler_does_not_know_reads_no_cudnn_cause(sym):
    paste = f"src/a.cpp:1:1: error: '{sym}' was not declared in this scope"
    assert "cudnn-major-mismatch" not in _ids(paste), paste


@settings(max_examples=examples(20), deadline=None)
@given(code=st.sampled_from(["999", "30"]), line=st.integers(1, 999))
def test_dlibs_check_cuda_with_the_unknown_error(code, line):
    paste = (
        "Error while calling cudaGetDevice(&the_device_id) in file "
        f"/tmp/pip-install/dlib/dlib/cuda/gpu_data.cpp:{line}. code: {code}, reason: unknown error"
    )
    assert _ids(paste)[0] == "driver-missing", paste


# torch's no-driver warning (device_count's TORCH_WARN "CUDA initialization: ...") -------------

WARNED = (
    "{path}:{line}: UserWarning: CUDA initialization: Found no NVIDIA driver on your system. "
    "Please check that you have an NVIDIA GPU and installed a driver from "
    "http://www.nvidia.com/Download/index.aspx (Triggered internally at "
    "/pytorch/c10/cuda/CUDAFunctions.cpp:100.)\n  return torch._C._cuda_getDeviceCount() > 0"
)
PATHS = st.sampled_from(
    [
        "/opt/conda/lib/python3.8/site-packages/torch/cuda/__init__.py",
        "/home/u/env/lib/python3.6/site-packages/torch/autograd/__init__.py",
    ]
)
AFTER = st.sampled_from(
    ["", "Epoch 1/3: loss 0.52", "YOLOv5 v4.0 torch 1.8.0 CPU", "Results saved to runs/exp"]
)


@settings(max_examples=examples(30), deadline=None)
@given(path=PATHS, line=st.integers(1, 999), after=AFTER)
def test_torchs_no_driver_warning_alone_is_a_program_that_went_on(path, line, after):
    paste = WARNED.format(path=path, line=line) + "\n" + after
    found = _ids(paste)
    assert found[0] == "log-noise", paste
    # the warning's own readings stay, for a program that was meant to use a GPU
    assert found[1:3] == ["gpu-missing", "driver-missing"], paste


FAILURES = [
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
    "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
    "AssertionError: Torch not compiled with CUDA enabled",
    "RuntimeError: No CUDA GPUs are available",
    "CUDA available: False",
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
    "the latest NVIDIA driver is installed and running.",
]
SHOWN = [
    "GPU: NVIDIA GeForce RTX 3060 Laptop GPU",
    "I have an AMD Radeon RX 6600",
    "I don't have an NVIDIA GPU",
    "docker run -it myimage python train.py",
]


@settings(max_examples=examples(30), deadline=None)
@given(
    path=PATHS,
    line=st.integers(1, 999),
    other=st.sampled_from(FAILURES + SHOWN),
    other_first=st.booleans(),
)
def test_a_failure_or_the_machine_shown_beside_the_warning_decides_instead(
    path, line, other, other_first
):
    parts = [WARNED.format(path=path, line=line), other]
    paste = "\n".join(parts[::-1] if other_first else parts)
    assert _ids(paste)[0] != "log-noise", paste
