"""Round twenty-nine (the twentieth session): read from the misses of set 77 and sets 81-84, the
nineteenth session's unread and final blind sets, each reading derived from its emitter's source
(cited beside the rule in recipes/errors.toml).

- ggml's "ggml was not compiled with support for this arch" (ggml_cuda_init's assert under
  GGML_CUDA_INIT, as ollama's runners run it): the GPU's capability is not among the library's
  architectures (gpu-arch-unsupported).
- PyTorch's CMake config "PyTorch requires CUDA X.Y or above": the toolkit CMake found for a build
  against libtorch is older than torch's (cuda-lib-mismatch).
- NVIDIA apex's compiled modules (amp_C, syncbn, fused_layer_norm_cuda, mlp_cuda, ...) missing: an
  install without --cuda_ext / --cpp_ext (cpu-only-build).
- SageMaker's "only GPU instances are supported" / "Please use a GPU instance for training": a job
  given an instance without a GPU (gpu-missing).
- ollama's "detected GPUs" on PhysX's CUDA 3.0 / 6.5 runtime from PATH: an old CUDA runtime found
  first (cuda-lib-mismatch).
- ollama's "no nvidia devices detected by library" (its words for cuInit's CUDA_ERROR_NO_DEVICE):
  read as the driver's no-device answer, a GPU named beside it deciding for the driver.
- Evidence: the driver's version read from its own libcuda file name (libcuda.so.375.82); a host
  directory (/var/lib/nvidia-docker, /var/lib/docker) named in a path is no sign that the process
  runs in a container; the Chinese "只用cpu" (the program "only uses the CPU") is a symptom, not a
  statement that the machine has no GPU.

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

_INSUFFICIENT = (
    "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n"
)


@settings(max_examples=examples(40), deadline=None)
@given(
    prefix=st.sampled_from(
        [
            "//ml/backend/ggml/ggml/src/ggml-cuda/ggml-cuda.cu",
            "/app/ggml/src/ggml-cuda/ggml-cuda.cu",
        ]
    ),
    line=st.integers(1, 9999),
    noise=NOISE,
)
def test_ggml_built_without_the_gpus_architecture(prefix, line, noise):
    text = (
        f"{noise}{prefix}:{line}: GGML_ASSERT(ggml_cuda_has_arch(info.devices[id].cc) && "
        '"ggml was not compiled with support for this arch") failed\n'
    )
    assert _ids(text)[0] == "gpu-arch-unsupported", text


@settings(max_examples=examples(40), deadline=None)
@given(
    found=st.sampled_from(["9.0", "9.2", "10.0", "10.1", "11.3"]),
    need=st.sampled_from(["10.2", "11.0", "11.8"]),
    path=st.sampled_from(
        [
            "/opt/conda/lib/python3.8/site-packages/torch/share/cmake/Caffe2/public/cuda.cmake",
            "/usr/local/libtorch/share/cmake/Caffe2/public/cuda.cmake",
        ]
    ),
    n=st.integers(1, 200),
)
def test_pytorch_cmake_refusing_an_older_toolkit(found, need, path, n):
    text = (
        f"-- Caffe2: CUDA detected: {found}\n-- Caffe2: CUDA nvcc is: /usr/local/cuda-{found}/bin/nvcc\n"
        f"CMake Error at {path}:{n} (message):\n  PyTorch requires CUDA {need} or above.\n"
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text


_APEX = st.sampled_from(
    [
        "amp_C",
        "syncbn",
        "fused_layer_norm_cuda",
        "mlp_cuda",
        "distributed_adam_cuda",
        "distributed_lamb_cuda",
        "apex_C",
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(module=_APEX, quote=st.sampled_from(["'", ""]), noise=NOISE)
def test_apex_without_its_extensions_is_a_build_without_cuda(module, quote, noise):
    text = f"{noise}ModuleNotFoundError: No module named {quote}{module}{quote}\n"
    assert _ids(text)[0] == "cpu-only-build", text


def test_a_module_whose_name_only_begins_like_apexs_is_not_read_as_apex():
    found = _ids("ModuleNotFoundError: No module named 'syncbn_helpers'\n")
    assert not found or found[0] != "cpu-only-build"


@settings(max_examples=examples(40), deadline=None)
@given(
    family=st.sampled_from(["m4", "m5", "c4", "c5", "t2", "t3"]),
    size=st.sampled_from(["large", "xlarge", "2xlarge", "4xlarge"]),
    algorithm=st.sampled_from(
        ["image-classification", "object-detection", "semantic-segmentation"]
    ),
    form=st.booleans(),
)
def test_a_sagemaker_job_on_an_instance_without_a_gpu(family, size, algorithm, form):
    if form:
        text = (
            "ClientError: An error occurred (ValidationException) when calling the CreateTrainingJob "
            f"operation: Instance type ml.{family}.{size} is not supported by algorithm {algorithm}; "
            "only GPU instances are supported.\n"
        )
    else:
        text = (
            f"Training on ml.{family}.{size}\nClientError: Please use a GPU instance for training\n"
        )
    assert _ids(text)[0] == "gpu-missing", text


@settings(max_examples=examples(40), deadline=None)
@given(
    dll=st.sampled_from(["cudart64_30_9.dll", "cudart64_65.dll"]),
    sep=st.sampled_from(["\\\\", "\\"]),
)
def test_ollama_picking_physx_cuda_runtime(dll, sep):
    path = sep.join(["C:", "Program Files (x86)", "NVIDIA Corporation", "PhysX", "Common", dll])
    text = (
        f'time=2024-06-13T13:05:28.979-07:00 level=DEBUG source=gpu.go:148 msg="detected GPUs" library="{path}" count=1\n'
        'time=2024-06-13T13:05:29.058-07:00 level=INFO source=gpu.go:214 msg="[0] CUDA GPU is too old. Compute Capability detected: 1.0"\n'
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text


def test_ollamas_own_cuda_runtime_is_not_read_as_physx():
    text = (
        'time=2024-06-13T13:05:28.979-07:00 level=DEBUG source=gpu.go:148 msg="detected GPUs" '
        'library="C:\\\\Users\\\\me\\\\AppData\\\\Local\\\\Programs\\\\Ollama\\\\cudart64_110.dll" count=1\n'
    )
    found = _ids(text)
    assert not found or found[0] != "cuda-lib-mismatch"


@settings(max_examples=examples(40), deadline=None)
@given(
    version=st.sampled_from(["550.127.08", "575.64.05", "525.89.02"]),
    gpu=st.sampled_from(["", "RTX 4090", "Tesla T4"]),
)
def test_ollama_no_devices_detected_is_the_drivers_no_device_answer(version, gpu):
    named = (
        f"GPU: NVIDIA GeForce {gpu}\n" if gpu == "RTX 4090" else (f"GPU: {gpu}\n" if gpu else "")
    )
    text = (
        f"{named}time=2025-08-29T12:00:56.249+02:00 level=INFO source=gpu.go:604 "
        f'msg="no nvidia devices detected by library /usr/lib/x86_64-linux-gnu/libcuda.so.{version}"\n'
    )
    assert _ids(text)[0] == ("driver-missing" if gpu else "gpu-missing"), text


@settings(max_examples=examples(40), deadline=None)
@given(
    driver=st.sampled_from(
        [("550.54.15", "cu118", "driver-missing"), ("450.80.02", "cu121", "driver-too-old")]
    ),
    form=st.sampled_from(
        ["lrwxrwxrwx 1 root root 17 libcuda.so.1 -> libcuda.so.{v}", "libcuda.so.{v}"]
    ),
)
def test_the_drivers_version_read_from_its_libcuda_file_name(driver, form):
    version, build, want = driver
    text = f"torch 2.1.0+{build}\n{_INSUFFICIENT}{form.format(v=version)}\n"
    assert _ids(text)[0] == want, text


@settings(max_examples=examples(20), deadline=None)
@given(
    path=st.sampled_from(
        ["/var/lib/nvidia-docker", "/var/lib/docker/overlay2", "/var/lib/nvidia-docker/volumes"]
    )
)
def test_a_host_directory_named_in_a_path_is_no_container(path):
    listed = f"{_INSUFFICIENT}`sudo ls -lR {path} | grep libcuda`\n"
    assert _ids(listed)[0] == "driver-too-old", listed
    ran = f"{_INSUFFICIENT}$ docker run -it myimage python train.py\n"
    assert _ids(ran)[0] == "driver-missing"


def test_only_uses_the_cpu_in_chinese_is_a_symptom_not_a_machine_without_gpu():
    error804 = (
        "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run "
        "some cuda functions before calling NumCudaDevices() that might have already set an error? "
        "Error 804: forward compatibility was attempted on non supported HW\n"
    )
    assert _ids("现在跑模型只用cpu不用gpu\n" + error804)[0] == "driver-too-old"
    nodriver = (
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
        "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx\n"
    )
    assert _ids("想在只有CPU的计算机上运行\n" + nodriver)[0] == "gpu-missing"
