"""Round twenty-two: read from the emitters and from what a paste shows, after the misses of
held-out sets 27-30 were read (each measured blind first).

- TensorFlow's CUDA diagnostics "kernel version X does not match DSO version Y", and CUDA error 803
  (the display driver and the CUDA driver of two releases): driver-missing.
- TensorRT's cuBLAS pair (a warning, judged by the versions' order), Myelin's cuBLASLt error
  (cuda-lib-mismatch), and "Unsupported SM" (gpu-arch-unsupported).
- pip's "does not provide the extra": pip-conflict, below what follows it.
- numba's grid-size and torchvision's image-extension warnings: log-noise.
- TensorFlow's "No OpKernel ... Registered devices: [CPU, XLA_CPU]": gpu-missing.
- PaddlePaddle's "CUDA Capability: 21" (Fermi) and its "CUDA device is not set properly".
- torch's "Unexpected error from cudaGetDeviceCount() ... Error 500": driver-missing.
- The driver's PTX JIT ("ptxas application ptx input") older than the PTX: driver-too-old.
- PyTorch Geometric's extensions built for another CUDA: cuda-lib-mismatch.
- The paste's evidence: a container decides a no-driver answer for driver-missing; a machine
  without an NVIDIA GPU decides the driver-too-old readings too; jaxlib's own log paths
  (external/org_tensorflow/...) name no TensorFlow; a cuDNN directory named by its version shows a
  copy; the term of a search command shows none; "Torch 2.0.1+cpu" in any case.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids
from fixer.explainer import explain

DRIVER = st.tuples(st.integers(384, 580), st.integers(0, 199), st.integers(0, 9)).map(
    lambda t: f"{t[0]}.{t[1]}.{t[2]}"
)


@settings(max_examples=examples(20), deadline=None)
@given(kernel=DRIVER, dso=DRIVER)
def test_tensorflow_kernel_module_and_libcuda_of_two_releases(kernel, dso):
    text = (
        "E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: "
        "CUDA_ERROR_NO_DEVICE\n"
        f"E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version {kernel} does "
        f"not match DSO version {dso} -- cannot find working devices in this configuration"
    )
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    form=st.sampled_from(
        [
            'CUDA error at main.cu:{n} code=803(cudaErrorSystemDriverMismatch) "cudaMalloc(&p, n)"',
            'DriverError(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, "system has unsupported display '
            'driver / cuda driver combination")',
            "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you "
            "run some cuda functions before calling NumCudaDevices() that might have already set "
            "an error? Error 803: system has unsupported display driver / cuda driver combination",
        ]
    ),
    n=st.integers(0, 999),
)
def test_display_driver_and_cuda_driver_of_two_releases(form, n):
    text = form.replace("{n}", str(n))
    found = _ids(text)
    assert found[0] == "driver-missing" and "driver-too-old" in found[:2], text


@settings(max_examples=examples(30), deadline=None)
@given(major=st.integers(10, 12), minor=st.integers(1, 8), patch=st.integers(0, 9))
def test_tensorrt_cublas_pair(major, minor, patch):
    built = f"{major}.{minor}.{patch}"
    older = f"{major}.{minor - 1}.{patch}"
    newer = f"{major}.{minor + 1}.0"
    line = (
        "[W] [TRT] TensorRT was linked against cuBLAS/cuBLAS LT {} but loaded cuBLAS/cuBLAS LT {}"
    )
    assert _ids(line.format(built, older))[0] == "cuda-lib-mismatch"
    assert _ids(line.format(built, newer))[0] == "log-noise"
    # the error the same log reports outranks the warning
    sm = "[E] [TRT] 1: [caskUtils.cpp::trtSmToCask::147] Error Code 1: Internal Error (Unsupported SM: 0x809)"
    assert _ids(line.format(built, older) + "\n" + sm)[0] == "gpu-arch-unsupported"


@settings(max_examples=examples(20), deadline=None)
@given(minor=st.integers(4, 9), loaded=st.integers(0, 3))
def test_myelin_compiled_against_a_newer_cublaslt(minor, loaded):
    text = (
        "[E] [TRT] 1: [graphContext.h::MyelinGraphContext::24] Error Code 1: Myelin (Compiled "
        f"against cuBLASLt 11.{minor}.1.0 but running against cuBLASLt 11.{loaded}.1.0.)"
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text


@settings(max_examples=examples(20), deadline=None)
@given(
    version=st.sampled_from(["0.3.4", "0.4.6"]), extra=st.sampled_from(["cuda111", "cuda12_pip"])
)
def test_pip_extra_that_the_release_does_not_provide(version, extra):
    warning = f"WARNING: jax {version} does not provide the extra '{extra}'"
    assert _ids(warning)[0] == "pip-conflict"
    # what followed it decides: a CPU-only jaxlib
    after = f"{warning}\nW xla_bridge.py:364] No GPU/TPU found, falling back to CPU."
    assert _ids(after)[0] == "cpu-only-build", after


@settings(max_examples=examples(20), deadline=None)
@given(
    line=st.sampled_from(
        [
            "/x/numba/cuda/dispatcher.py:488: NumbaPerformanceWarning: Grid size 64 will likely "
            "result in GPU under-utilization due to low occupancy.",
            "NumbaPerformanceWarning: Grid size (1) < 2 * SM count (80) will likely result in GPU "
            "under utilization due to low occupancy.",
            "/x/torchvision/io/image.py:13: UserWarning: Failed to load image Python extension: "
            "''If you don't plan on using image functionality from `torchvision.io`, you can ignore "
            "this warning.",
        ]
    ),
    noise=NOISE,
)
def test_performance_and_optional_extension_warnings(line, noise):
    assert _ids(f"{noise}{line}")[0] == "log-noise"
    error = "RuntimeError: CUDA error: out of memory"
    assert _ids(f"{line}\n{error}")[0] == "out-of-memory"


@settings(max_examples=examples(20), deadline=None)
@given(op=st.sampled_from(["CudnnRNN", "CudnnRNNCanonicalToParams", "CudnnRNNV3"]))
def test_tensorflow_registered_only_the_cpu(op):
    head = (
        f"No OpKernel was registered to support Op '{op}' used by node x (defined at ops.py:1748) "
        "with these attrs: [T=DT_FLOAT]\n"
    )
    kernels = "Registered kernels:\n  device='GPU'; T in [DT_FLOAT]"
    assert _ids(f"{head}Registered devices: [CPU, XLA_CPU]\n{kernels}")[0] == "gpu-missing"
    assert "gpu-missing" not in _ids(f"{head}Registered devices: [CPU, GPU]\n{kernels}")[:1]


@settings(max_examples=examples(20), deadline=None)
@given(cc=st.integers(10, 99))
def test_paddle_prints_the_compute_capability(cc):
    text = (
        f"W0225 20:29:53.582741 16840 device_context.cc:237] Please NOTE: device: 0, CUDA "
        f"Capability: {cc}, Driver API Version: 9.0, Runtime API Version: 9.0"
    )
    found = _ids(text)
    if cc < 30:
        assert found[0] == "gpu-arch-unsupported", text
    else:
        assert "gpu-arch-unsupported" not in found, text


PADDLE_CPU = (
    "UserWarning: You are using GPU version Paddle, but your CUDA device is not set properly. "
    "CPU device will be used by default."
)


@settings(max_examples=examples(20), deadline=None)
@given(
    context=st.sampled_from(
        [
            ("", "driver-too-old"),
            ("I run the official image with docker run -it paddle:2.1.3-gpu\n", "driver-missing"),
            ("The machine has no NVIDIA GPU.\n", "gpu-missing"),
        ]
    )
)
def test_paddle_gpu_build_without_a_usable_device(context):
    before, want = context
    assert _ids(f"{before}{PADDLE_CPU}")[0] == want


def test_torch_device_count_without_the_drivers_symbol():
    text = (
        "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
        "before calling NumCudaDevices() that might have already set an error? Error 500: named "
        "symbol not found"
    )
    assert _ids(text)[0] == "driver-missing"


@settings(max_examples=examples(20), deadline=None)
@given(newer=st.sampled_from(["6.0", "7.0", "8.1"]), older=st.sampled_from(["5.0", "6.4"]))
def test_the_drivers_jit_older_than_the_ptx(newer, older):
    jit = (
        "CudaException: 'a PTX JIT compilation failed'\n"
        f"ptxas application ptx input, line 5; fatal   : Unsupported .version {newer}; current "
        f"version is '{older}'"
    )
    assert _ids(jit)[0] == "driver-too-old", jit
    ptxas = f"ptxas /tmp/tempfile-x, line 5; fatal   : Unsupported .version {newer}; current version is '{older}'"
    assert _ids(ptxas)[0] == "cuda-lib-mismatch", ptxas


@settings(max_examples=examples(20), deadline=None)
@given(
    ext=st.sampled_from(["torch_sparse", "torch_scatter", "torch_cluster", "torch_spline_conv"]),
    a=st.integers(0, 8),
    b=st.integers(0, 8),
)
def test_pyg_extension_of_another_cuda(ext, a, b):
    text = (
        f"RuntimeError: Detected that PyTorch and {ext} were compiled with different CUDA "
        f"versions. PyTorch has CUDA version 11.{a} and {ext} has CUDA version 10.{b}. Please "
        f"reinstall the {ext} that matches your PyTorch install."
    )
    assert _ids(text)[0] == "cuda-lib-mismatch"


NO_DRIVER = (
    "Found no NVIDIA driver on your system. Please check that you\nhave an NVIDIA GPU and "
    "installed a driver from\nhttp://www.nvidia.com/Download/index.aspx"
)


@settings(max_examples=examples(20), deadline=None)
@given(
    where=st.sampled_from(
        [
            "I have installed it through the docker image, and the demo gives",
            "inside the container (podman run ...) it says",
            "running under kubernetes, the pod logs",
        ]
    )
)
def test_no_driver_in_a_container(where):
    text = f"{where}\n{NO_DRIVER}"
    found = explain(text)
    assert found[0].id == "driver-missing", text
    assert any("container" in e for e in found[0].evidence)
    assert "--gpus all" in found[0].fix
    # the user's words that there is no NVIDIA GPU decide first
    assert _ids(f"The host has no NVIDIA GPU.\n{text}")[0] == "gpu-missing"


def test_a_driver_version_decides_before_the_container():
    """A driver version in the paste is what decides an insufficient-driver answer."""
    text = (
        "I run it in the docker container; on the host, Driver Version: 470.57\n"
        "RuntimeError: CUDA driver version is insufficient for CUDA runtime version"
    )
    found = explain(text)
    assert not any("In a container" in f.title for f in found), text


def test_a_denied_container_is_no_evidence():
    assert _ids(f"I am not using docker here.\n{NO_DRIVER}")[0] == "gpu-missing"


def test_no_nvidia_gpu_decides_the_driver_too_old_answer():
    text = (
        "I installed it on an amd gpu rx580, I don't have a nvidia gpu\n"
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found "
        "version 10010)."
    )
    assert _ids(text)[0] == "gpu-missing"


def test_jaxlibs_log_paths_name_no_tensorflow():
    text = (
        "E external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_dnn.cc:319] Loaded "
        "runtime CuDNN library: 7.5.1 but source was compiled with: 7.6.0.  CuDNN library major "
        "and minor version needs to match or have higher minor version in case of CuDNN 7.0 or "
        "later version."
    )
    assert _ids(text)[0] == "cudnn-too-old"


@settings(max_examples=examples(20), deadline=None)
@given(have=st.sampled_from(["6.0", "7.1", "9.1"]), sep=st.sampled_from(["/lib64", "/include:"]))
def test_a_cudnn_directory_named_by_its_version(have, sep):
    want = "5" if not have.startswith("5") else "6"
    text = (
        f"LD_LIBRARY_PATH=/opt/ros/lib:/home/u/cudnn-{have}{sep}/usr/local/cuda/lib64\n"
        f"OSError: libcudnn.so.{want}: cannot open shared object file: No such file or directory"
    )
    assert _ids(text)[0] == "cudnn-major-mismatch", text


def test_an_archive_named_by_cuda_first_shows_no_copy():
    text = (
        "tar xzf cudnn-8.0-linux-x64-v7.1.tgz\n"
        "OSError: libcudnn.so.7: cannot open shared object file: No such file or directory"
    )
    assert _ids(text)[0] == "cudnn-missing"


def test_a_search_term_shows_no_copy():
    text = (
        "rjn@host:~/src$ grep -r 'libcudnn.so.5'\nBinary file mxnet/lib/libmxnet.so matches\n"
        "OSError: libcudnn.so.5: cannot open shared object file: No such file or directory"
    )
    found = explain(text)
    assert found[0].id == "cudnn-missing"
    assert not any("grep" in e for e in found[0].evidence)


@settings(max_examples=examples(20), deadline=None)
@given(name=st.sampled_from(["Torch", "torch", "TORCH"]), minor=st.integers(0, 9))
def test_a_cpu_wheel_named_in_any_case(name, minor):
    text = f"INFO     {name} 2.{minor}.1+cpu\nWARNING  Torch reports CUDA not available"
    assert _ids(text)[0] == "cpu-only-build"


# round twenty-two (b): the Windows loaders' own words


@settings(max_examples=examples(20), deadline=None)
@given(
    module=st.sampled_from(
        ["", " while importing _pywrap_tensorflow_internal", " while importing _C"]
    ),
    how=st.sampled_from(
        [
            ("The specified module could not be found.", "cuda-lib-missing"),
            ("The specified procedure could not be found.", "cuda-lib-mismatch"),
        ]
    ),
)
def test_python_dll_load_failed_by_the_systems_message(module, how):
    message, want = how
    text = f"ImportError: DLL load failed{module}: {message}"
    found = explain(text)
    assert found[0].id == want and len(found) >= 3, text
    assert "system-runtime-too-old" in [f.id for f in found]


@settings(max_examples=examples(20), deadline=None)
@given(
    dll=st.sampled_from(
        [
            ("c10.dll", "system-runtime-too-old"),
            ("shm.dll", "system-runtime-too-old"),
            ("fbgemm.dll", "system-runtime-too-old"),
        ]
    ),
    root=st.sampled_from(["C:\\Python310\\lib\\site-packages", "D:\\envs\\sd\\Lib\\site-packages"]),
)
def test_a_dependency_of_torchs_own_dll(dll, root):
    name, want = dll
    text = (
        "OSError: [WinError 126] The specified module could not be found. Error loading "
        f'"{root}\\torch\\lib\\{name}" or one of its dependencies.'
    )
    assert _ids(text)[0] == want, text


def test_torchs_visual_cpp_runtime_check():
    text = (
        "Microsoft Visual C++ Redistributable is not installed, this may lead to the DLL load "
        "failure.\n                 It can be downloaded at https://aka.ms/vs/16/release/vc_redist.x64.exe"
    )
    assert _ids(text)[0] == "system-runtime-too-old"
