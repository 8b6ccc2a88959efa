"""Round nineteen: read from the emitters after the misses of held-out sets 21 and 22 were read.

- A CPU-only build is a cause only on a machine with an NVIDIA GPU (DESIGN's finding table:
  cpu-only-build is "a framework installed without CUDA on a GPU machine"): the paste's no-GPU
  evidence (another vendor's graphics, a Mac, a sentence saying there is no NVIDIA GPU) decides
  its readings for gpu-missing, as it does the no-driver ones (evidence.gpu_named).
- The emitters' own conditionals are no statement about the machine: TensorFlow's "Ignore above
  cudart dlerror if you do not have a GPU set up on your machine" and torch.load's "If you are
  running on a CPU-only machine, please use torch.load with map_location=...".
- collect_env's "PyTorch version: X+cpu" (its CUDA line may say "Could not collect").
- torch's OutOfMemoryError by its class name (torch.cuda. 1.13-2.3, torch. 2.4 on), the
  cudaMallocAsync allocator's "Allocation on device N would exceed allowed memory", ComfyUI's
  "Got an OOM, unloading all loaded models": out-of-memory.
- DeepSpeed's op builder check ("Installed CUDA version X does not match the version torch was
  compiled with Y, unable to ..."), its v0.8.1 prefix, and the report cut after "unable to".
- numba's "driver missing function: NAME": without cuInit the library is no driver
  (driver-missing); another function missing is an old driver (driver-too-old).
- xFormers' "A matching Triton is not available, some optimizations will not be enabled": a
  warning (log-noise), which an error after it outranks.
- Julia's dlopen ('could not load library "NAME"' and the system's reason): the library's family
  decides; the driver by its bare name (CUDAdrv.jl / CUDA.jl's :libcuda, :nvcuda): driver-missing.
- DeepFaceLab's "No CUDA devices found with minimum required compute capability: X.Y" and "{gpu}
  does not meet minimum required compute capability": gpu-arch-unsupported.
- R torch's installer "Unsupported CUDA version" / "Currently supported versions are":
  cuda-lib-mismatch.
- cuDNN not found in plain words (CMake's "Could NOT find CUDNN", PyTorch's cmake "Cannot find
  cuDNN library", waifu2x-caffe's "cuDNN cannot be used [cudnn64_N.dll] not found"): cudnn-missing.

Round nineteen (b), from error texts sampled without labels (no held-out set):
- c10's "PyTorch is not linked with support for cuda devices": cpu-only-build.
- The NVIDIA kernel module's "The NVIDIA probe routine was not called for N device(s)" (nouveau
  holds the GPU) and "None of the NVIDIA graphics adapters were initialized": driver-missing;
  "No NVIDIA graphics adapter probed!" alone: driver-missing, gpu-missing second (and no
  statement of the user's that there is no NVIDIA GPU).
- The container toolkit's "unsatisfied condition: driver >= N" (an image's per-brand driver
  range beside its cuda>=X.Y): driver-too-old, as for its cuda>= condition.
- ONNX Runtime's "LoadLibrary failed with error 126 ... when trying to load "...dll" cut before
  the closing quote.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

NUM = st.integers(0, 99)
VERSION = st.builds(lambda a, b, c: f"{a}.{b}.{c}", st.integers(1, 2), st.integers(0, 13), NUM)
NOT_COMPILED = st.sampled_from(
    [
        'raise AssertionError("Torch not compiled with CUDA enabled")\n'
        "AssertionError: Torch not compiled with CUDA enabled",
        "AssertionError: Torch not compiled with CUDA enabled",
    ]
)
NO_NVIDIA = st.sampled_from(
    [
        "I have tried it on my Macbook M1 Pro.",
        "I'm on Mac M1.",
        "Running on macOS 14 with an Apple M2.",
        "My laptop has Intel Iris Xe Graphics.",
        "I don't have an NVIDIA GPU.",
        "The machine has an AMD Radeon RX 6800.",
    ]
)
NVIDIA = st.sampled_from(["GeForce RTX 3090", "Tesla T4", "NVIDIA A100", "Quadro P4000"])


@settings(max_examples=examples(30), deadline=None)
@given(said=NO_NVIDIA, error=NOT_COMPILED, before=st.booleans(), noise=NOISE)
def test_a_cpu_build_without_an_nvidia_gpu_is_no_gpu(said, error, before, noise):
    text = f"{said}\n{noise}{error}" if before else f"{noise}{error}\n{said}"
    assert _ids(text)[0] == "gpu-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(gpu=NVIDIA, error=NOT_COMPILED, noise=NOISE)
def test_a_cpu_build_beside_an_nvidia_gpu_stays_a_cpu_build(gpu, error, noise):
    for text in (f"{noise}{error}", f"My GPU is a {gpu}.\n{noise}{error}"):
        assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(error=NOT_COMPILED, n=NUM, noise=NOISE)
def test_the_emitters_conditionals_say_nothing_of_the_machine(error, n, noise):
    tf_stub = (
        f"2021-04-11 09:17:{n:02d}.012963: I tensorflow/stream_executor/cuda/cudart_stub.cc:29] "
        "Ignore above cudart dlerror if you do not have a GPU set up on your machine."
    )
    torch_load = (
        "RuntimeError: Attempting to deserialize object on a CUDA device but "
        "torch.cuda.is_available() is False. If you are running on a CPU-only machine, please "
        "use torch.load with map_location=torch.device('cpu') to map your storages to the CPU."
    )
    for said in (tf_stub, torch_load):
        text = f"{said}\n{noise}{error}"
        assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(version=VERSION, cuda=st.sampled_from(["Could not collect", "None"]), noise=NOISE)
def test_collect_env_names_a_cpu_wheel(version, cuda, noise):
    text = (
        f"{noise}Collecting environment information...\nPyTorch version: {version}+cpu\n"
        f"Is debug build: False\nCUDA used to build PyTorch: {cuda}\nROCM used to build PyTorch: N/A"
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(
    cls=st.sampled_from(["torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"]),
    tail=st.sampled_from(
        [
            "Allocation on device ",
            "Allocation on device 0 would exceed allowed memory. (out of memory)",
            "",
        ]
    ),
    comfy=st.booleans(),
    noise=NOISE,
)
def test_torch_out_of_memory_by_its_class(cls, tail, comfy, noise):
    text = (
        f'{noise}File "G:\\ComfyUI\\python\\Lib\\site-packages\\torch\\nn\\modules\\conv.py", '
        f"line 549, in _conv_forward\n    return F.conv2d(\n{cls}: {tail}"
    )
    if comfy:
        text += "\n\nGot an OOM, unloading all loaded models."
    assert _ids(text)[0] == "out-of-memory", text


def test_plan_failed_with_an_out_of_memory_error_stays_a_warning():
    text = (
        "UserWarning: Plan failed with an OutOfMemoryError: CUDA out of memory. Tried to allocate "
        "2.00 GiB (Triggered internally at ../aten/src/ATen/native/cudnn/Conv_v8.cpp:919.)"
    )
    assert "out-of-memory" in _ids(text)[:2], _ids(text)


@settings(max_examples=examples(20), deadline=None)
@given(
    sys_cuda=st.sampled_from(["10.2", "11.7", "12.0", "12.1"]),
    torch_cuda=st.sampled_from(["11.3", "11.8", "12.4", "10.1"]),
    prefix=st.sampled_from(
        [
            "Exception: ",
            "Exception: >- DeepSpeed Op Builder: ",
            "deepspeed.ops.op_builder.builder.CUDAMismatchException: >- DeepSpeed Op Builder: ",
        ]
    ),
    cut=st.booleans(),
)
def test_deepspeed_op_builder_cuda_check(sys_cuda, torch_cuda, prefix, cut):
    tail = (
        "unable to"
        if cut
        else "unable to compile cuda/cpp extensions without a matching cuda version."
    )
    text = (
        f"{prefix}Installed CUDA version {sys_cuda} does not match the version torch was compiled "
        f"with {torch_cuda}, {tail}"
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text


@settings(max_examples=examples(20), deadline=None)
@given(
    old=st.booleans(),
    fname=st.sampled_from(
        ["cuLinkAddData_v2", "cuMemGetInfo_v2", "cuCtxCreate_v3", "cuDevicePrimaryCtxReset"]
    ),
    req=st.sampled_from(["5.5", "7.5", "8.0", "9.2"]),
)
def test_numba_driver_missing_function(old, fname, req):
    def say(name: str) -> str:
        if old:
            return (
                "Error: CUDA device intialisation problem. driver missing function: "
                f"{name}.\nRequires CUDA {req} or above.\n"
                "Error class: <class 'numba.cuda.cudadrv.error.CudaDriverError'>"
            )
        return f"numba.cuda.cudadrv.error.CudaDriverError: Driver missing function: {name}"

    assert _ids(say("cuInit"))[0] == "driver-missing", say("cuInit")
    assert _ids(say(fname))[0] == "driver-too-old", say(fname)


@settings(max_examples=examples(20), deadline=None)
@given(
    new=st.booleans(),
    after=st.sampled_from(
        ["", "RuntimeError: CUDA error: no kernel image is available for execution on the device"]
    ),
    n=st.integers(1, 9),
)
def test_xformers_without_triton_is_a_warning(new, after, n):
    warning = (
        "WARNING:xformers:A matching Triton is not available, some optimizations will not be "
        "enabled\nTraceback (most recent call last):\nModuleNotFoundError: No module named 'triton'"
        if new
        else "A matching Triton is not available, some optimizations will not be enabled.\n"
        "Error caught was: No module named 'triton'"
    )
    text = "\n".join([warning] * n + ([after] if after else []))
    want = "gpu-arch-unsupported" if after else "log-noise"
    assert _ids(text)[0] == want, text


@settings(max_examples=examples(20), deadline=None)
@given(
    name=st.sampled_from(["libcuda", "nvcuda", "libcuda.so", "libcuda.so.1"]),
    wrap=st.sampled_from(["\u2502    ", "_\u2502    ", "", "> "]),
    head=st.sampled_from(
        ["Error: CUDAdrv.jl failed to initialize", "Error: Could not initialize CUDA"]
    ),
)
def test_julia_could_not_load_the_driver(name, wrap, head):
    text = f'\u250c {head}\n{wrap}exception =\n{wrap}could not load library "{name}"'
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    lib=st.sampled_from(
        [
            ("libcudnn.so.8", "cudnn-missing"),
            ("libcublas.so.11", "cuda-lib-missing"),
            ("libcudart.so.12", "cuda-lib-missing"),
        ]
    ),
    d=st.sampled_from(["/root/.julia/artifacts/abc/lib", "/usr/lib"]),
)
def test_julia_could_not_load_a_named_library(lib, d):
    name, want = lib
    text = (
        f'ERROR: could not load library "{d}/{name}"\n'
        f"{name}: cannot open shared object file: No such file or directory"
    )
    assert _ids(text)[0] == want, text


@settings(max_examples=examples(20), deadline=None)
@given(
    cc=st.sampled_from(["3.5", "3.7", "3.0"]),
    form=st.integers(0, 2),
    gpu=st.sampled_from(["GeForce GT 730M", "GeForce 780M", "Quadro K2000"]),
)
def test_deepfacelab_minimum_compute_capability(cc, form, gpu):
    text = [
        f"No CUDA devices found with minimum required compute capability: {cc}. Falling back to OpenCL mode.",
        f"No CUDA device found with minimum required compute capability {cc}",
        f"{gpu} does not meet minimum required compute capability: {cc}. Falling back to CPU mode.",
    ][form]
    assert _ids(text)[0] == "gpu-arch-unsupported", text


@settings(max_examples=examples(20), deadline=None)
@given(
    have=st.sampled_from(["10.0", "10.2", "11.2", "12.1"]),
    listed=st.lists(
        st.sampled_from(["11.6", "11.7", "11.8", "12.4", "12.6"]), min_size=1, max_size=3
    ),
)
def test_r_torch_unsupported_cuda_version(have, listed):
    text = (
        "> torch::install_torch()\nError in `check_supported_version()`:\n"
        f'\u2716 Unsupported CUDA version "{have}"\n'
        f"\u2139 Currently supported versions are: {' and '.join(repr(v) for v in listed)}."
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text


@settings(max_examples=examples(20), deadline=None)
@given(
    form=st.integers(0, 4),
    dll=st.sampled_from(["cudnn64_5.dll", "cudnn64_7.dll", "cudnn64_8.dll"]),
    missing=st.sampled_from(
        [
            "CUDNN_LIBRARY_PATH CUDNN_INCLUDE_PATH",
            "CUDNN_LIBRARY",
            "CUDNN_INCLUDE_DIR CUDNN_LIBRARY",
        ]
    ),
)
def test_cudnn_not_found_in_plain_words(form, dll, missing):
    text = [
        f"-- Could NOT find CUDNN (missing: {missing})",
        "CMake Warning at cmake/public/cuda.cmake:252 (message):\n  Cannot find cuDNN library.  Turning the option off",
        f"cuDNN cannot be used\r\n[{dll}]not found",
        f"You can not use cuDNN\r\n\u300c{dll}\u300dnot found",
        "cuDNN Not Found",
    ][form]
    assert _ids(text)[0] == "cudnn-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    frame=st.integers(100, 999),
    api=st.sampled_from(
        [
            "Error in force(result) :\n  ",
            "RuntimeError: ",
            "terminate called after throwing an instance of 'c10::Error'\n  what():  ",
        ]
    ),
)
def test_libtorch_without_cuda_linked_in(frame, api):
    text = (
        f"{api}PyTorch is not linked with support for cuda devices (getDeviceGuardImpl at "
        f"../c10/core/impl/DeviceGuardImplInterface.h:{frame})"
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(n=st.integers(1, 8), t=st.integers(1, 99999), nouveau=st.booleans())
def test_nvidia_kernel_module_that_took_no_gpu(n, t, nouveau):
    probed = f"[{t}.595099] NVRM: No NVIDIA graphics adapter probed!"
    held = (
        f"[{t}.976351] NVRM: The NVIDIA probe routine was not called for {n} device(s).\n"
        f"[{t}.977053] NVRM: This can occur when a driver such as: \nNVRM: nouveau, rivafb, "
        "nvidiafb or rivatv \nNVRM: was loaded and obtained ownership of the NVIDIA device(s)."
    )
    text = f"{probed}\n{held}" if nouveau else probed
    got = _ids(text)
    assert got[0] == "driver-missing", text
    if not nouveau:
        assert got[1] == "gpu-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    cond=st.sampled_from(["driver >= 410", "driver >= 525", "cuda>=12.8", "cuda >= 11.0"]),
    ver=st.sampled_from(["18.06.0-ce", "24.0.5"]),
)
def test_container_toolkit_requirement(cond, ver):
    text = (
        "docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: "
        'starting container process caused "process_linux.go:402: container init caused '
        '\\"running prestart hook 1 caused \\\\\\"error running hook: exit status 1, stdout: , '
        "stderr: nvidia-container-cli: requirement error: unsatisfied condition: "
        f'{cond}\\\\\\\\n\\\\\\"\\"": unknown.\n$ docker version\nClient:\n Version:           {ver}'
    )
    assert _ids(text)[0] == "driver-too-old", text


@settings(max_examples=examples(20), deadline=None)
@given(code=st.sampled_from(["126", "127"]), d=st.sampled_from(["D:\\Projects\\bin", "C:\\app"]))
def test_onnxruntime_load_library_cut_before_its_quote(code, d):
    text = (
        "[ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error "
        f'{code} "" when trying to load "{d}\\onnxruntime_providers_cuda.dll'
    )
    assert _ids(text), text
