"""Round twenty: read from the emitters after the misses of held-out sets 23 and 24 were read.

- The no-NVIDIA-GPU evidence in the words users write: "a Linux VM w/o any GPU", "without a GPU"
  (not a build "compiled without GPU support"), "a cpu instance type", "Mac doesn't have cuda",
  "on my Mac"; it decides the no-driver, missing-libcuda and CPU-only-build readings.
- nvcc's "Unsupported gpu architecture 'compute_NN" cut before its closing quote; Docker's "could
  not select device driver with capabilities: [[gpu]]" retold without the quoted empty name.
- A compiler's missing CUDA header by family (curand_kernel.h as much as cuda_runtime.h):
  cuda-lib-missing; a missing cudnn.h: cudnn-missing.
- XGBoost's "XGBoost version not compiled with GPU support": cpu-only-build.
- PaddlePaddle's "Out of memory error on GPU N. Cannot allocate": out-of-memory.
- TensorRT's "Unable to open library: X due to <dlerror>": the library dlerror names decides.
- xFormers' load check with a "+cpu" torch: cpu-only-build (and its "with CUDA" part optional for
  the release conflict).
- nvidia-docker 1.x's "unsupported CUDA version: driver X < image Y": driver-too-old.
- CTranslate2's compute-type conversion warning: log-noise.
- llama.cpp's system_info "BLAS = 0": cpu-only-build.
- distutils' "unable to execute '.../bin/nvcc': No such file or directory": cuda-lib-missing.

Round twenty (b), from the allocators' and wrappers' sources (no held-out set):
- GPU memory: ONNX Runtime's BFC arena, ggml's "cudaMalloc failed: out of memory", TensorRT's
  "Requested amount of GPU memory", vLLM's KV cache checks, transformers' "Make sure you have
  enough GPU RAM": out-of-memory.
- Host memory: PyTorch's DefaultCPUAllocator, NumPy's "Unable to allocate", the kernel's OOM
  killer, a DataLoader worker out of shared memory (and, lower, one killed by SIGKILL).
- PyTorch's TypedStorage deprecation and elastic's redirects notice: log-noise.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

NUM = st.integers(0, 99)
SAID = st.sampled_from(
    [
        "I just installed it on a Linux VM w/o any GPU.",
        "The server runs without a GPU.",
        "even though I specified a cpu instance type.",
        "Mac doesn't have cuda, I know.",
        "I run this on my Mac.",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(
    said=SAID,
    error=st.sampled_from(
        [
            "OSError: libcuda.so.1: cannot open shared object file: No such file or directory",
            "AssertionError: Torch not compiled with CUDA enabled",
            "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
            "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        ]
    ),
    before=st.booleans(),
    noise=NOISE,
)
def test_no_nvidia_gpu_in_the_users_words(said, error, before, noise):
    text = f"{said}\n{noise}{error}" if before else f"{noise}{error}\n{said}"
    assert _ids(text)[0] == "gpu-missing", text


def test_a_build_compiled_without_gpu_support_says_nothing_of_the_machine():
    text = (
        "UserWarning: The installed version of bitsandbytes was compiled without GPU support. "
        "8-bit optimizers and GPU quantization are unavailable."
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(
    arch=st.sampled_from(["compute_61", "compute_86", "sm_89", "compute_120"]), cut=st.booleans()
)
def test_nvcc_architecture_cut_before_its_quote(arch, cut):
    quote = "" if cut else "'"
    text = (
        f"nvcc fatal   : Unsupported gpu architecture '{arch}{quote}\n"
        "error: command '/usr/bin/nvcc' failed with exit status 1"
    )
    assert _ids(text), text
    assert _ids(text)[0] in ("cuda-lib-mismatch", "gpu-arch-unsupported"), text


@settings(max_examples=examples(10), deadline=None)
@given(quoted=st.booleans())
def test_docker_without_a_gpu_driver_retold(quoted):
    name = '"" ' if quoted else ""
    text = f"Getting `could not select device driver {name}with capabilities: [[gpu]]`"
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    header=st.sampled_from(
        [
            "curand_kernel.h",
            "cuda_runtime.h",
            "cusparse.h",
            "cublas_v2.h",
            "cuda_fp8.h",
            "thrust/device_vector.h",
        ]
    ),
    n=st.integers(1, 300),
)
def test_a_missing_cuda_header_by_family(header, n):
    text = (
        f"/x/csrc/includes/custom_cuda_layers.h:{n}:10: fatal error: {header}: No such file or "
        f"directory\n   {n} | #include <{header}>"
    )
    assert _ids(text)[0] == "cuda-lib-missing", text


def test_a_missing_cudnn_header():
    text = "src/conv.cu:3:10: fatal error: cudnn.h: No such file or directory"
    assert _ids(text)[0] == "cudnn-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    form=st.sampled_from(
        [
            "version not compiled",
            "version not compile",
            "version is not compiled",
            "is not compiled",
        ]
    ),
    gpu=st.sampled_from(["GPU", "CUDA"]),
)
def test_xgboost_without_cuda(form, gpu):
    text = f"xgboost.core.XGBoostError: XGBoost {form} with {gpu} support."
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(gpu=st.integers(0, 7), need=st.floats(1, 9000), have=st.floats(0, 500), new=st.booleans())
def test_paddle_out_of_memory(gpu, need, have, new):
    held = "10.647278GB memory has been allocated and " if new else ""
    text = (
        f"Out of memory error on GPU {gpu}. Cannot allocate {need:.6f}MB memory on GPU {gpu}, "
        f"{held}available memory is only {have:.6f}MB.\n\nPlease check whether there is any "
        f"other process using GPU {gpu}."
    )
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(20), deadline=None)
@given(
    dep=st.sampled_from(
        [
            ("libcudnn.so.8", "cudnn-missing"),
            ("libcublas.so.12", "cuda-lib-missing"),
            ("libcudart.so.11.0", "cuda-lib-missing"),
        ]
    ),
    tail=st.booleans(),
)
def test_tensorrt_unable_to_open_library_due_to(dep, tail):
    lib, want = dep
    why = ": cannot open shared object file: No such file or directory" if tail else ""
    text = f"[E] Uncaught exception detected: Unable to open library: libnvinfer_plugin.so.8 due to {lib}{why}"
    assert _ids(text)[0] == want, text


@settings(max_examples=examples(20), deadline=None)
@given(minor=st.integers(0, 5), cuda=st.sampled_from(["", " with CUDA 1201", " with CUDA 1108"]))
def test_xformers_beside_a_cpu_torch(minor, cuda):
    text = (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        f"    PyTorch 2.{minor}.0+cu121{cuda} (you have 2.{minor}.0+cpu)\n"
        "    Python  3.10.11 (you have 3.10.11)"
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(
    built=st.sampled_from(["2.0.1", "2.1.0"]), have=st.sampled_from(["2.1.0+cu121", "2.2.1+cu118"])
)
def test_xformers_release_conflict_without_its_cuda_part(built, have):
    text = (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        f"    PyTorch {built} (you have {have})\n    Python  3.11.5 (you have 3.11.5)"
    )
    assert _ids(text)[0] == "pip-conflict", text


@settings(max_examples=examples(20), deadline=None)
@given(drv=st.sampled_from(["7.5", "8.0", "9.0"]), img=st.sampled_from(["8.0", "9.1", "10.0"]))
def test_nvidia_docker_1_cuda_check(drv, img):
    text = f"nvidia-docker | 2017/05/02 10:00:00 Error: unsupported CUDA version: driver {drv} < image {img}"
    assert _ids(text)[0] == "driver-too-old", text


@settings(max_examples=examples(20), deadline=None)
@given(
    saved=st.sampled_from(["float16", "int8_float16", "bfloat16"]),
    after=st.sampled_from(["", "RuntimeError: CUDA failed with error out of memory"]),
)
def test_ctranslate2_compute_type_warning(saved, after):
    text = (
        "[2024-01-01 10:00:00.000] [ctranslate2] [thread 6280] [warning] The compute type "
        f"inferred from the saved model is {saved}, but the target device or backend do not "
        f"support efficient {saved} computation. The model weights have been automatically "
        "converted to use the float32 compute type instead."
    )
    if after:
        text += "\n" + after
    assert _ids(text)[0] == ("out-of-memory" if after else "log-noise"), text


@settings(max_examples=examples(10), deadline=None)
@given(threads=st.integers(1, 64), spaced=st.booleans())
def test_llama_cpp_without_a_blas_backend(threads, spaced):
    blas = "BLAS = 0" if spaced else "BLAS=0"
    text = (
        f"system_info: n_threads = {threads} / 16 | AVX = 1 | AVX2 = 1 | FMA = 1 | NEON = 0 | "
        f"F16C = 1 | {blas} | SSE3 = 1 | VSX = 0 |"
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(20), deadline=None)
@given(
    home=st.sampled_from(
        ["/usr/local/cuda-10.0:/usr/local/cuda-10.0:", "/opt/cuda/", "/usr/local/cuda-11.8"]
    )
)
def test_distutils_could_not_run_nvcc(home):
    nvcc = f"{home}/bin/nvcc"
    text = (
        f"unable to execute '{nvcc}': No such file or directory\n"
        f"error: command '{nvcc}' failed with exit status 1"
    )
    assert _ids(text)[0] == "cuda-lib-missing", text


@settings(max_examples=examples(30), deadline=None)
@given(
    form=st.integers(0, 5),
    n=st.integers(1, 99999),
    mib=st.floats(1, 90000),
)
def test_gpu_allocators_that_ran_out(form, n, mib):
    text = [
        f"onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size {n}",
        f"ggml_backend_cuda_buffer_type_alloc_buffer: allocating {mib:.2f} MiB on device 0: cudaMalloc failed: out of memory",
        f"[TRT] [E] 1: Requested amount of GPU memory ({n} bytes) could not be allocated. There may not be enough free memory for allocation to succeed.",
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
        f"ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache ({n}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
        "ValueError: Some modules are dispatched on the CPU or the disk. Make sure you have enough GPU RAM to fit the quantized model. If you want to dispatch the model on the CPU or the disk while keeping these modules in 32-bit, you need to set `llm_int8_enable_fp32_cpu_offload=True`",
    ][form]
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(30), deadline=None)
@given(form=st.integers(0, 5), n=st.integers(1, 10**12), gib=st.floats(0.1, 999))
def test_host_memory_that_ran_out(form, n, gib):
    text = [
        f"RuntimeError: [enforce fail at alloc_cpu.cpp:83] . DefaultCPUAllocator: can't allocate memory: you tried to allocate {n} bytes. Error code 12 (Cannot allocate memory)",
        f"RuntimeError: [enforce fail at C:\\cb\\pytorch_1000000000000\\work\\c10\\core\\impl\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate {n} bytes.",
        f"numpy.core._exceptions._ArrayMemoryError: Unable to allocate {gib:.1f} GiB for an array with shape (100000, 100000) and data type float64",
        f"[{n % 99999}.123] Out of memory: Killed process {n % 99999} (python) total-vm:52428800kB, anon-rss:50331648kB",
        f"[{n % 99999}.123] Memory cgroup out of memory: Killed process {n % 99999} (python3)",
        f"RuntimeError: DataLoader worker (pid {n % 99999}) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
    ][form]
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(10), deadline=None)
@given(pid=st.integers(1, 99999))
def test_a_killed_dataloader_worker_reads_memory_first(pid):
    text = f"RuntimeError: DataLoader worker (pid {pid}) is killed by signal: Killed."
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(10), deadline=None)
@given(
    notice=st.sampled_from(
        [
            "UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.",
            "NOTE: Redirects are currently not supported in Windows or MacOs.",
            "NOTE: Redirects are currently not supported in MacOs.",
        ]
    ),
    after=st.booleans(),
)
def test_pytorch_notices_are_warnings(notice, after):
    text = notice + ("\nRuntimeError: CUDA error: out of memory" if after else "")
    assert _ids(text)[0] == ("out-of-memory" if after else "log-noise"), text
