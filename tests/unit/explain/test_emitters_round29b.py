"""Round twenty-nine (b): an emitter sweep. The messages that projects users paste from
(bitsandbytes, xformers, flash-attention, DeepSpeed, AutoGPTQ, exllamav2, unsloth, vLLM, SGLang,
ollama, CuPy, Numba, cuDF, OpenMM, dlib, JAX, CTranslate2, detectron2, mmcv, insightface and the
Stable Diffusion UIs) print when the GPU stack is wrong, each read from the condition in the code
cited beside its rule in recipes/errors.toml. No held-out report is behind any of them.

Each test generates the message's variable parts (versions, library names, paths, capabilities)
and the lines around it; the messages that report a fallback the program takes are read as
harmless and never outrank a failure beside them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

_CUDA = st.sampled_from(["110", "118", "121", "124", "126", "128", "130"])
_SITE = st.sampled_from(
    [
        "/usr/local/lib/python3.12/dist-packages",
        "/opt/conda/lib/python3.10/site-packages",
        "C:\\Python311\\Lib\\site-packages",
    ]
)
_VERSION = st.from_regex(r"\A[0-9]\.[0-9]{1,2}\.[0-9]{1,2}\Z", fullmatch=True)


@settings(max_examples=examples(60), deadline=None)
@given(cuda=_CUDA, site=_SITE, form=st.booleans(), noise=NOISE)
def test_bitsandbytes_without_a_binary_for_torchs_cuda(cuda, site, form, noise):
    lib = f"{site}/bitsandbytes/libbitsandbytes_cuda{cuda}.so"
    if form:
        line = f"ERROR:bitsandbytes.cextension:bitsandbytes library load error: No compatible CUDA binary found at {lib}"
    else:
        line = f"Library not found: {lib}. Maybe you need to compile it from source?"
    assert _ids(noise + line + "\n")[0] == "pip-conflict", line


@settings(max_examples=examples(30), deadline=None)
@given(
    line=st.sampled_from(
        [
            "RuntimeError: \n🚨 Forgot to compile the bitsandbytes library? 🚨",
            "WARNING: bitsandbytes is running as CPU-only!",
            "WARNING - CUDA kernels for auto_gptq are not installed, this will result in very slow inference speed.",
            " ## Warning: The installed version of PyTorch is 2.6.0+cpu and does not support CUDA or ROCm.",
            " [WARNING]  sparse_attn cuda is not available from torch",
            "ImportError: cannot import name '_C' from 'detectron2' (/content/detectron2/detectron2/__init__.py)",
            "WARNING 03-01 10:10:05 [interface.py:371] Failed to import from vllm._C: ModuleNotFoundError(\"No module named 'vllm._C'\")",
            "2026-05-21 12:10:03,511 WARNING insightface: CUDA provider was requested but CUDAExecutionProvider is not available; using CPU.",
        ]
    ),
    noise=NOISE,
)
def test_a_package_without_its_compiled_cuda_code_is_a_build_without_cuda(line, noise):
    assert _ids(noise + line + "\n")[0] == "cpu-only-build", line


@settings(max_examples=examples(40), deadline=None)
@given(
    line=st.sampled_from(
        [
            "ImportError: Requires Flash-Attention version >={a},<={b} but got {c}.",
            "RuntimeError: PyTorch version mismatch! DeepSpeed ops were compiled and installed with a different version than what is being used at runtime.",
            "Exception: sglang-kernel is installed with version {c}, which is less than the minimum required version {b}.",
            "Exception: flashinfer_python with minimum required version {b} is not installed.",
            "Unsloth: vLLM was built for CUDA 12 but this system has CUDA 13.0.",
            "WARNING:jax_plugins.xla_cuda12:cuda_plugin_extension is not found.",
        ]
    ),
    a=_VERSION,
    b=_VERSION,
    c=_VERSION,
)
def test_packages_of_releases_that_do_not_go_together(line, a, b, c):
    text = line.format(a=a, b=b, c=c) + "\n"
    assert _ids(text)[0] == "pip-conflict", text


@settings(max_examples=examples(60), deadline=None)
@given(
    line=st.sampled_from(
        [
            "RuntimeError: q_v is only supported for Hopper GPUs",
            "ValueError: Unsloth: FBGEMM FP8 quantization is only supported on H100 and higher GPUs. L4 is not supported.",
            "RuntimeError: AWQ Gemm does not support for cuda arch < 7.5",
            "RuntimeError: either the GPU or the CUDA Toolkit does not support fp16",
            "RuntimeError: Missing PTX files for cc={cc}",
            "RuntimeError: This cuDF installation is missing the necessary PTX files that are <={cc}.",
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: {need}, Hardware limit: {have}. Reducing block sizes or `num_stages` may help.",
            "AssertionError: vllm._flashmla_C is not available, likely was not compiled due to insufficient nvcc version or a supported arch was not in the list of target arches to compile for.",
        ]
    ),
    cc=st.sampled_from(["35", "50", "52", "60", "61"]),
    need=st.integers(100000, 300000),
    have=st.integers(40000, 99999),
    noise=NOISE,
)
def test_a_gpu_the_build_or_the_kernel_does_not_support(line, cc, need, have, noise):
    text = noise + line.format(cc=cc, need=need, have=have) + "\n"
    assert _ids(text)[0] == "gpu-arch-unsupported", text


@settings(max_examples=examples(40), deadline=None)
@given(
    line=st.sampled_from(
        [
            "cudf.errors.UnsupportedCUDAError: Detected CUDA Runtime version is {old}. Please update your CUDA Runtime to 11.0 or above.",
            "UserWarning: CUDA Toolkit {old} is unsupported by Numba - 11.2 is the minimum required version.",
            "numba.cuda.cudadrv.error.NvvmSupportError: No supported GPU compute capabilities found. Please check your cudatoolkit version matches your CUDA version.",
            "RuntimeError: Triton only support CUDA 10.0 or higher, but got CUDA version: 9.2",
            "RuntimeError: FlashAttention-3 is only supported on CUDA 12.3 and above",
            "RuntimeError: Cannot load symbol cublasGemmStridedBatchedEx from library libcublas.so.12",
        ]
    ),
    old=st.sampled_from(["9.2", "10.0", "10.1", "10.2"]),
)
def test_a_cuda_runtime_or_toolkit_older_than_the_package_needs(line, old):
    text = line.format(old=old) + "\n"
    assert _ids(text)[0] == "cuda-lib-mismatch", text


@settings(max_examples=examples(30), deadline=None)
@given(
    line=st.sampled_from(
        [
            "RuntimeError: CUDA is not found.",
            "RuntimeError: Relocatable PTX code is requested, but cudadevrt is not found.",
            "RuntimeError: Failed to find CUDA headers.",
            "Exception: Your CUDA environment is invalid. Please check above error log.",
            "-- DID NOT FIND CUDA\n-- Disabling CUDA support for dlib.  DLIB WILL NOT USE CUDA",
            "RuntimeError: Cannot find ptxas",
            'openmm.OpenMMException: There is no registered Platform called "CUDA"',
        ]
    ),
    noise=NOISE,
)
def test_a_cuda_toolkit_or_library_not_found(line, noise):
    assert _ids(noise + line + "\n")[0] == "cuda-lib-missing", line


def test_dlib_built_without_cudnn_and_out_of_memory_for_its_handle():
    built = '-- Found CUDAToolkit: /usr/local/cuda/include (found version "12.2.140")\n-- DID NOT FIND CUDNN\n-- Disabling CUDA support for dlib.  DLIB WILL NOT USE CUDA\n'
    assert _ids(built)[0] == "cudnn-missing"
    alloc = (
        "RuntimeError: Error while calling cudnnCreate(&handles[new_device_id]) in file "
        "/tmp/dlib/dlib/cuda/cudnn_dlibapi.cpp:106. code: 2, reason: CUDA Resources could not be allocated.\n"
    )
    assert _ids(alloc)[0] == "out-of-memory"
    assert _ids("RuntimeError: Insufficient VRAM for model and cache\n")[0] == "out-of-memory"


@settings(max_examples=examples(40), deadline=None)
@given(
    line=st.sampled_from(
        [
            "WARNING[XFORMERS]: Need to compile C++ extensions to use all xFormers features.",
        ]
    ),
    noise=NOISE,
)
def test_xformers_without_its_extension(line, noise):
    assert _ids(noise + line + "\n")[0] == "cpu-only-build"
    # with the wording that names the torch it was built for, the release conflict reads first
    built_for = (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.2.0+cu121)\n"
        "    Python  3.10.13 (you have 3.10.13)\n" + line + "\n"
    )
    assert _ids(built_for)[0] == "pip-conflict"


_FALLBACKS = st.sampled_from(
    [
        " ## Warning: Flash Attention is installed but unsupported GPUs were detected.",
        "Unsloth: FBGEMM on the current GPU cannot load - will switch to Triton kernels",
        "[2026-03-01 10:12:00 TP0] Compute capability below sm80. Use float16 due to lack of bfloat16 support.",
        "The following devices will have suboptimal performance due to a lack of tensor cores:\n  Device 0: NVIDIA GeForce GTX 1660 SUPER",
        "WARNING:Auto-assiging --gpu-memory 14 for your GPU to try to prevent out-of-memory errors. You can manually set other values.",
        "NumbaPerformanceWarning: Host array used in CUDA kernel will incur copy overhead to/from device.",
        "Unsupported Pytorch detected. DynamicVRAM support requires Pytorch version 2.8 or later. Falling back to legacy ModelPatcher.",
        "A tensor with all NaNs was produced in VAE.\nWeb UI will now convert VAE into 32-bit float and retry.",
        ">> xformers not installed",
    ]
)
_FAILURES = st.sampled_from(
    [
        (
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "gpu-arch-unsupported",
        ),
        ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "out-of-memory"),
        (
            "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
            "cuda-lib-missing",
        ),
    ]
)


@settings(max_examples=examples(80), deadline=None)
@given(line=_FALLBACKS, failure=_FAILURES, after=st.booleans())
def test_a_fallback_a_program_takes_is_harmless_and_never_outranks_a_failure(line, failure, after):
    assert _ids(line + "\n")[0] == "log-noise", line
    error, want = failure
    text = f"{line}\n{error}\n" if after else f"{error}\n{line}\n"
    assert _ids(text)[0] == want, text


@settings(max_examples=examples(40), deadline=None)
@given(
    line=st.sampled_from(
        [
            'time=2025-02-20T10:00:01.000Z level=INFO source=gpu.go:377 msg="no compatible GPUs were discovered"',
            "[2025-02-21 10:00:00,000] [WARNING] [real_accelerator.py:181:get_accelerator] Setting accelerator to CPU. If you have GPU or other accelerator, we were unable to detect it.",
            "OSError: Load pretrained model to do quantization requires CUDA available.",
            " ## Error: Too many entries in gpu_split. 0 CUDA devices are available.",
            "ValueError: FP16 Conv1D is only supported on GPU",
            "NotImplementedError: Deformable Conv is not supported on CPUs!",
        ]
    ),
    noise=NOISE,
)
def test_a_program_that_found_no_gpu(line, noise):
    assert _ids(noise + line + "\n")[0] == "gpu-missing", line


@settings(max_examples=examples(30), deadline=None)
@given(version=st.sampled_from(["550.127.08", "560.35.03", "575.64.05"]))
def test_ollama_driver_library_and_module_of_two_versions_need_a_reboot(version):
    text = (
        'time=2025-02-20T10:00:01.000Z level=WARN source=gpu.go:599 msg="version mismatch between '
        f'driver and cuda driver library - reboot or upgrade may be required: library /usr/lib/x86_64-linux-gnu/libcuda.so.{version}"\n'
    )
    assert _ids(text)[0] == "driver-missing"


@settings(max_examples=examples(30), deadline=None)
@given(
    failure=st.sampled_from(
        [
            ("Unable to load cuDNN. Is it installed?", "cudnn-missing"),
            ("Unable to load cuSPARSE. Is it installed?", "cuda-lib-missing"),
        ]
    )
)
def test_jax_plugin_failure_outranks_its_no_cuda_jaxlib_warning(failure):
    msg, want = failure
    text = (
        "ERROR:jax._src.xla_bridge:Jax plugin configuration error: Exception when calling "
        "jax_plugins.xla_cuda12.initialize()\nTraceback (most recent call last):\n"
        f"RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\n{msg}\n"
        "WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a "
        "CUDA-enabled jaxlib is not installed. Falling back to cpu.\n"
    )
    assert _ids(text)[0] == want, text
    alone = (
        "WARNING:jax._src.xla_bridge:An NVIDIA GPU may be present on this machine, but a "
        "CUDA-enabled jaxlib is not installed. Falling back to cpu.\n"
    )
    assert _ids(alone)[0] == "cpu-only-build"
