"""Round twenty-one: read from the emitters after the misses of held-out sets 25 and 26 were read
(both were measured blind first).

- NVML's "Driver/library version mismatch" in any wrapper (nvidia-container-cli's "nvml error:",
  nvidia-docker 1.x's "nvml:") and the kernel module's "NVRM: API mismatch": driver-missing.
- The CUDA toolkit's link-time stub (".../stubs/libcuda.so") loaded as the driver: driver-missing.
- pip's "Could not find a version that satisfies the requirement" in any case; with only older
  releases listed on an OS whose glibc is older than 2.28: system-runtime-too-old.
- ONNX Runtime's BFC arena failure without its size; PyTorch's extension check cut at its start;
  PyTorch's capability list without its first line; "CUDA is not available" in any words.
- ollama's insufficient-driver answer and its missing driver function; a CUDA build that counts no
  devices (PaddlePaddle, ggml): the driver first, unless the paste shows no NVIDIA GPU.
- TensorRT's cuDNN pair, judged like every built / loaded pair.
- CMake's "Could NOT find" of the CUDA toolkit and its libraries: cuda-lib-missing.
- The no-NVIDIA-GPU evidence: AMD's graphics and a Mac as users name them; a clause ends at a
  double quote, and a parenthetical is its own clause (the error a user quotes denies nothing).

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

NUM = st.integers(0, 99)
DRIVER = st.tuples(st.integers(390, 580), st.integers(0, 99), st.integers(0, 99)).map(
    lambda t: f"{t[0]}.{t[1]:02d}.{t[2]:02d}"
)
HOME = st.sampled_from(["/home/u/miniconda3", "/scratch/x/opt", "/usr/local", "/opt"])


@settings(max_examples=examples(30), deadline=None)
@given(
    form=st.sampled_from(
        [
            "nvidia-container-cli: initialization error: nvml error: driver/library version "
            "mismatch: unknown",
            "nvidia-docker | 2017/12/21 05:04:46 Error: nvml: Driver/library version mismatch",
            "Failed to initialize NVML: Driver/library version mismatch",
        ]
    ),
    noise=NOISE,
)
def test_nvml_mismatch_in_any_wrapper(form, noise):
    text = f"{noise}{form}"
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(client=DRIVER, module=DRIVER)
def test_kernel_module_of_another_release(client, module):
    text = (
        f"[ 12.345678] NVRM: API mismatch: the client has the version {client}, but\n"
        f"NVRM: this kernel module has the version {module}.  Please\n"
        "NVRM: make sure that this kernel module and all NVIDIA driver\n"
        "NVRM: components have the same version."
    )
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(home=HOME, minor=NUM)
def test_the_toolkits_stub_loaded_as_the_driver(home, minor):
    text = (
        "Call to cuInit results in UNKNOWN_CUDA_ERROR\n"
        f"AttributeError: {home}/cuda-12.{minor}/lib64/stubs/libcuda.so: undefined symbol: _undef"
    )
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    head=st.sampled_from(
        ["ERROR: Could not find", "could not find", "Could Not Find", "COULD NOT FIND"]
    ),
    minor=NUM,
)
def test_pip_found_no_version_in_any_case(head, minor):
    text = f"{head} a version that satisfies the requirement torch==1.7.{minor}+cu110"
    assert _ids(text)[0] == "pip-conflict", text


OLD_OS = st.sampled_from(
    ["centos 7", "CentOS Linux 7", "RHEL 7.9", "Ubuntu 18.04", "ubuntu 16.04", "glibc 2.17"]
)


@settings(max_examples=examples(30), deadline=None)
@given(os_=OLD_OS, minor=NUM, before=st.booleans())
def test_only_older_releases_on_an_old_glibc(os_, minor, before):
    pip = (
        f"ERROR: Could not find a version that satisfies the requirement onnxruntime==1.18.{minor} "
        "(from versions: 1.12.0, 1.15.1, 1.16.3)\n"
        f"ERROR: No matching distribution found for onnxruntime==1.18.{minor}"
    )
    text = f"Target platform: {os_}\n{pip}" if before else f"{pip}\n\nOS: {os_}"
    assert _ids(text)[0] == "system-runtime-too-old", text
    # no OS named, or no release at all for this platform: pip's own reading stands
    assert _ids(pip)[0] == "pip-conflict"
    none = pip.replace("1.12.0, 1.15.1, 1.16.3", "none")
    assert _ids(f"{none}\nOS: {os_}")[0] == "pip-conflict"


def test_a_new_glibc_says_nothing_of_the_platform():
    text = (
        "ERROR: Could not find a version that satisfies the requirement torch==2.9.0 (from "
        "versions: 2.2.0, 2.3.1)\nOS: Ubuntu 22.04"
    )
    assert _ids(text)[0] == "pip-conflict", text


@settings(max_examples=examples(20), deadline=None)
@given(size=st.one_of(st.just(""), NUM.map(lambda n: f" of size {n}00000")))
def test_bfc_arena_failure_with_or_without_its_size(size):
    text = f"bfc_arena.cc ... Failed to allocate memory for requested buffer{size} on every batch"
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(20), deadline=None)
@given(cut=st.sampled_from(["The ", "he ", "", "[Bug] he "]), a=NUM, b=NUM)
def test_extension_cuda_check_cut_at_its_start(cut, a, b):
    text = (
        f"{cut}detected CUDA version (11.{a % 9}) mismatches the version that was used to compile "
        f"PyTorch (12.{b % 9}). Please make sure to use the same CUDA versions."
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text


@settings(max_examples=examples(20), deadline=None)
@given(archs=st.lists(st.sampled_from(["37", "50", "60", "61", "70", "75"]), min_size=1))
def test_pytorch_capability_list_alone(archs):
    text = (
        "The current PyTorch install supports CUDA capabilities "
        + " ".join(f"sm_{a}" for a in archs)
        + ".\nIf you want to use the NVIDIA GeForce RTX 3070 GPU with PyTorch, please check the "
        "instructions at https://pytorch.org/get-started/locally/"
    )
    assert _ids(text)[0] == "gpu-arch-unsupported", text


@settings(max_examples=examples(20), deadline=None)
@given(
    form=st.sampled_from(
        [
            "NotImplementedError: Cuda is not availabel",
            "RuntimeError: CUDA is not available on this machine",
            "cuda is not available, exiting",
        ]
    ),
    noise=NOISE,
)
def test_cuda_not_available_in_any_words(form, noise):
    text = f"{noise}{form}"
    assert _ids(text)[0] == "gpu-missing", text


OLLAMA_35 = st.sampled_from(
    [
        'msg="Unable to load cudart" library=/usr/lib/ollama/libcudart.so.12 error="your nvidia '
        'driver is too old or missing.  If you have a CUDA GPU please upgrade to run ollama"',
        'msg="Unable to load cudart CUDA management library /tmp/ollama1/runners/cuda_v11/'
        'libcudart.so.11.0: your nvidia driver is too old or missing, please upgrade to run ollama"',
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(line=OLLAMA_35, noise=NOISE)
def test_ollama_insufficient_driver(line, noise):
    text = f"{noise}time=2024-09-03T16:36:00.853+08:00 level=DEBUG source=gpu.go:537 {line}"
    assert _ids(text)[0] == "driver-too-old", text
    # the same answer on a machine without an NVIDIA GPU
    assert _ids(f"I have an AMD Radeon card.\n{text}")[0] == "gpu-missing"


@settings(max_examples=examples(20), deadline=None)
@given(fn=st.sampled_from(["cuCtxCreate_v3", "cuDeviceGetUuid", "cuMemGetInfo_v2"]))
def test_ollama_driver_without_a_function(fn):
    text = (
        'level=INFO source=gpu.go:568 msg="unable to load cuda driver library" '
        f'library=C:\\WINDOWS\\system32\\nvcuda.dll error="symbol lookup for {fn} failed: '
        'The specified procedure could not be found."'
    )
    assert _ids(text)[0] == "driver-too-old", text


def test_a_runtime_function_is_not_the_drivers():
    text = "cudart init failure: symbol lookup for cudaSetDevice failed: undefined symbol"
    assert "driver-too-old" not in _ids(text)[:1], text


@settings(max_examples=examples(20), deadline=None)
@given(
    line=st.sampled_from(
        [
            "W0624 14:32:46.220422 23029 init.cc:136] Compiled with WITH_GPU, but no GPU found "
            "in runtime.",
            "ggml_init_cublas: no CUDA devices found, CUDA will be disabled",
        ]
    ),
    gpu=st.sampled_from(["", "I have a NVIDIA GeForce RTX 3090 Ti. nvidia-smi works.\n"]),
)
def test_a_cuda_build_that_counts_no_devices(line, gpu):
    text = f"{gpu}{line}"
    assert _ids(text)[0] == "driver-too-old", text
    assert _ids(f"The machine has no NVIDIA GPU.\n{line}")[0] == "gpu-missing"


@settings(max_examples=examples(30), deadline=None)
@given(
    form=st.sampled_from(
        [
            "[W] [TRT] TensorRT was linked against cuDNN {b} but loaded cuDNN {l}",
            "WARNING: TensorRT was compiled against cuDNN {b} but is linked against cuDNN {l}. "
            "This mismatch may potentially cause undefined behavior.",
            "I got the warning: tensorrt is linked to cuDNN {b} but cuDNN {l} is loaded",
        ]
    ),
    major=st.integers(7, 9),
    minor=st.integers(1, 9),
    patch=NUM,
)
def test_tensorrt_cudnn_pair(form, major, minor, patch):
    built = f"{major}.{minor}.{patch % 10}"
    older = f"{major}.{minor - 1}.{patch % 7}"
    newer = f"{major}.{minor + 1}.0"
    assert _ids(form.format(b=built, l=older))[0] == "cudnn-too-old"
    assert _ids(form.format(b=built, l=newer))[0] == "log-noise"


@settings(max_examples=examples(20), deadline=None)
@given(
    name=st.sampled_from(["CUDA", "CUDAToolkit", "NVJPEG", "NCCL", "CUBLAS", "CUPTI", "NVTX"]),
    tail=st.sampled_from(
        [
            " (missing: {n}_INCLUDE_DIR {n}_LIBRARY)",
            ': Found unsuitable version "", but required is at\n  least "9.0"',
        ]
    ),
)
def test_cmake_could_not_find_a_cuda_library(name, tail):
    text = (
        "CMake Error at /usr/share/cmake-3.13/Modules/FindPackageHandleStandardArgs.cmake:137 "
        f"(message):\n  Could NOT find {name}{tail.format(n=name)}"
    )
    assert _ids(text)[0] == "cuda-lib-missing", text


@settings(max_examples=examples(30), deadline=None)
@given(
    said=st.sampled_from(
        [
            "im on an m1 macbook pro if that helps.",
            "(OSX)",
            "I'm using Mac and trying to run it",
            "I have AMD GPU I get this error",
            "my laptop has an amd graphics card",
            "Running on macOS Sonoma.",
        ]
    ),
    quoted=st.booleans(),
)
def test_a_mac_or_an_amd_machine_in_the_users_words(said, quoted):
    error = "Torch not compiled with CUDA enabled"
    text = f'{said} "{error}"' if quoted else f"{said}\nAssertionError: {error}"
    assert _ids(text)[0] == "gpu-missing", text


def test_a_denied_gpu_is_no_evidence():
    text = "I don't have an AMD GPU, only this one.\nAssertionError: Torch not compiled with CUDA enabled"
    assert _ids(text)[0] == "cpu-only-build", text


def test_a_macos_home_directory_says_nothing_of_the_gpu():
    """Macs of CUDA's time (to CUDA 10.2) had NVIDIA GPUs, and their traces show /Users/NAME."""
    text = (
        "luajit: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime "
        "version at /tmp/luarocks_cutorch-scm-1-384/cutorch/lib/THC/THCGeneral.c:16\n"
        "\t/Users/rafal/torch/install/share/lua/5.1/cutorch/init.lua:2: in main chunk"
    )
    assert _ids(text)[0] == "driver-too-old", text


def test_a_parenthetical_beside_a_version_denies_nothing():
    """A parenthetical is its own clause; the words after it belong to the sentence around."""
    text = (
        "I am using CUDA 10.0 and CuDNN 7.4.1 (Python 3.7), it works for demo_cli.\n"
        "Loaded runtime CuDNN library: 7.2.1 but source was compiled with: 7.4.1.  CuDNN library "
        "major and minor version needs to match or have higher minor version in case of CuDNN 7.0 "
        "or later version."
    )
    assert _ids(text)[0] == "cudnn-shadowed", text
