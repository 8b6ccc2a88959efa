"""Round eleven (a)'s readings, each from its emitter (recipes/errors.toml cites the lines).

- torch's TORCH_CUDABLAS_CHECK ("CUDA error: <status> when calling `<call>`", ATen/cuda/
  Exceptions.h) and TensorFlow's "failed to run cuBLAS routine: <status>": the status decides.
  CUBLAS_STATUS_EXECUTION_FAILED is a kernel launch that failed (NVIDIA's cublasStatus_t
  documentation): the GPU's architecture first, then a cuBLAS of another release, then the driver.
  CUBLAS_STATUS_INVALID_VALUE is a value the loaded cuBLAS does not accept: a cuBLAS of another
  release first. INTERNAL_ERROR (a failed internal copy, the same remedy as a failed launch) reads
  as EXECUTION_FAILED with memory after; NOT_SUPPORTED is the GPU's architecture, then another
  cuBLAS. NOT_INITIALIZED / ALLOC_FAILED / ARCH_MISMATCH keep their readings. torch 1.x's
  THC (aten/src/THC/THCGeneral.cpp, __THCublasCheck) printed "cublas runtime error : <text>", one
  text per status: each reads as its status does.
- torch's CUFFT_CHECK ("cuFFT error: <status>", ATen/native/cuda/CuFFTUtils.h): INTERNAL_ERROR,
  SETUP_FAILED and EXEC_FAILED name the library, the driver or the GPU; ALLOC_FAILED is memory.
- TensorFlow's cuFFT plans (stream_executor cuda_fft.cc): the work area that TF's own allocator
  could not give is memory (decisive); a plan that cuFFT could not make is memory first (TF
  reserves the GPU's memory), unless the logged cufftResult number says 5, 6 or 7.
- TensorFlow's "Blas GEMM launch failed" (matmul kernels, when ThenBlasGemm fails): memory first
  (cuBLAS could not be created beside TF's memory reservation), below the status rules, so a
  logged cuBLAS status on a line above decides.
- torch's autocast warning (torch/amp/autocast_mode.py: "User provided device_type of 'cuda', but
  CUDA is not available. Disabling" up to 2.9, "CUDA is not available or torch_xla is imported.
  Disabling autocast." from 2.10; torch.cuda.amp.autocast's "only affects CUDA ops, but CUDA is not
  available" in 1.9; GradScaler's "is enabled, but CUDA is not available", 1.9 to 2.11) is
  torch.cuda.is_available() False: read as that is read.
- the c10 dispatcher's "Could not run 'NS::OP' with arguments from the 'AutogradCUDA' (Sparse,
  Quantized) backend" for an extension's operator (the plain 'CUDA' key: round sixteen), and
  libtorch_cuda_cu.so / libtorch_cuda_cpp.so (torch 1.x's split CUDA library, which an extension built against 1.x links) that cannot be opened: an extension and
  the torch it was built for do not go together (pip-conflict). torch's own aten:: operators are
  not read so.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

NOISE = st.sampled_from(
    [
        "",
        "Traceback (most recent call last):\n",
        "epoch 3: loss 0.41\n",
        '  File "/content/train.py", line 88, in forward\n',
        "2024-05-01 10:00:00.123456: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] "
        "Created device /job:localhost/replica:0/task:0/device:GPU:0 with 14000 MB memory\n",
    ]
)
CALL = st.sampled_from(
    [
        "cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)",
        "cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, "
        "ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)",
        "cublasGemmStridedBatchedEx( handle, opa, opb, m, n, k, (void*)&falpha, a, CUDA_R_16BF, "
        "lda, stridea, b, CUDA_R_16BF, ldb, strideb, (void*)&fbeta, c, CUDA_R_16BF, ldc, "
        "stridec, num_batches, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)",
        "cublasCreate(handle)",
        "cublasLtMatmul( ltHandle, computeDesc.descriptor(), &alpha_val, mat1_ptr, ...)",
    ]
)
LINE = st.integers(1, 9999)


def _cublas(status: str, call: str, tf: bool, line: int) -> str:
    if tf:
        return (
            f"E tensorflow/stream_executor/cuda/cuda_blas.cc:{line}] "
            f"failed to run cuBLAS routine: {status}"
        )
    return f"RuntimeError: CUDA error: {status} when calling `{call}`"


@settings(max_examples=examples(60), deadline=None)
@given(before=NOISE, call=CALL, tf=st.booleans(), line=LINE)
def test_cublas_execution_failed_is_the_gpu_then_the_library_then_the_driver(
    before, call, tf, line
):
    ids = _ids(before + _cublas("CUBLAS_STATUS_EXECUTION_FAILED", call, tf, line))
    assert ids[0] == "gpu-arch-unsupported"
    assert {"cuda-lib-mismatch", "driver-too-old"} <= set(ids[1:])
    assert "out-of-memory" not in ids


@settings(max_examples=examples(60), deadline=None)
@given(before=NOISE, call=CALL, tf=st.booleans(), line=LINE)
def test_cublas_invalid_value_is_another_cublas_first(before, call, tf, line):
    ids = _ids(before + _cublas("CUBLAS_STATUS_INVALID_VALUE", call, tf, line))
    assert ids[0] == "cuda-lib-mismatch"
    assert "gpu-arch-unsupported" in ids[1:]


@settings(max_examples=examples(60), deadline=None)
@given(
    before=NOISE,
    call=CALL,
    tf=st.booleans(),
    line=LINE,
    status=st.sampled_from(
        [
            ("CUBLAS_STATUS_NOT_INITIALIZED", "out-of-memory"),
            ("CUBLAS_STATUS_ALLOC_FAILED", "out-of-memory"),
            ("CUBLAS_STATUS_ARCH_MISMATCH", "gpu-arch-unsupported"),
        ]
    ),
)
def test_the_neighbouring_cublas_statuses_keep_their_readings(before, call, tf, line, status):
    name, expected = status
    assert _ids(before + _cublas(name, call, tf, line))[0] == expected


@settings(max_examples=examples(60), deadline=None)
@given(before=NOISE, call=CALL, tf=st.booleans(), line=LINE)
def test_cublas_internal_error_reads_as_a_failed_launch_then_memory(before, call, tf, line):
    # the noise line's own reading (log-noise) is left out of the comparison
    internal = [
        i
        for i in _ids(before + _cublas("CUBLAS_STATUS_INTERNAL_ERROR", call, tf, line))
        if i != "log-noise"
    ]
    launch = [
        i
        for i in _ids(before + _cublas("CUBLAS_STATUS_EXECUTION_FAILED", call, tf, line))
        if i != "log-noise"
    ]
    assert internal[0] == launch[0] == "gpu-arch-unsupported"
    assert internal[: len(launch)] == launch
    assert "out-of-memory" in internal[len(launch) :]


@settings(max_examples=examples(40), deadline=None)
@given(before=NOISE, call=CALL, tf=st.booleans(), line=LINE)
def test_cublas_not_supported_is_the_gpu_then_another_cublas(before, call, tf, line):
    ids = _ids(before + _cublas("CUBLAS_STATUS_NOT_SUPPORTED", call, tf, line))
    assert ids[:2] == ["gpu-arch-unsupported", "cuda-lib-mismatch"]


THC_TEXT = {
    "CUBLAS_STATUS_NOT_INITIALIZED": "library not initialized",
    "CUBLAS_STATUS_ALLOC_FAILED": "resource allocation failed",
    "CUBLAS_STATUS_INVALID_VALUE": "an invalid numeric value was used as an argument",
    "CUBLAS_STATUS_ARCH_MISMATCH": "an absent device architectural feature is required",
    "CUBLAS_STATUS_EXECUTION_FAILED": "the GPU program failed to execute",
    "CUBLAS_STATUS_INTERNAL_ERROR": "an internal operation failed",
}


@settings(max_examples=examples(60), deadline=None)
@given(
    status=st.sampled_from(sorted(THC_TEXT)),
    where=st.sampled_from(
        [
            "/pytorch/aten/src/THC/THCBlas.cu",
            "/opt/conda/conda-bld/pytorch_1556653099582/work/aten/src/THC/THCGeneral.cpp",
        ]
    ),
    line=LINE,
    call=CALL,
    before=NOISE,
)
def test_torch_1x_thc_wording_reads_as_its_status(status, where, line, call, before):
    thc = f"{before}RuntimeError: cublas runtime error : {THC_TEXT[status]} at {where}:{line}"
    now = _ids(before + _cublas(status, call, False, line))
    assert _ids(thc) == now


@settings(max_examples=examples(40), deadline=None)
@given(
    before=NOISE,
    status=st.sampled_from(["CUFFT_INTERNAL_ERROR", "CUFFT_SETUP_FAILED", "CUFFT_EXEC_FAILED"]),
)
def test_torch_cufft_library_statuses_are_the_gpu_then_the_library(before, status):
    ids = _ids(f"{before}RuntimeError: cuFFT error: {status}")
    assert ids[0] == "gpu-arch-unsupported"
    assert {"cuda-lib-mismatch", "driver-too-old"} <= set(ids[1:])


@settings(max_examples=examples(20), deadline=None)
@given(before=NOISE)
def test_torch_cufft_alloc_failed_is_memory(before):
    assert _ids(f"{before}RuntimeError: cuFFT error: CUFFT_ALLOC_FAILED")[0] == "out-of-memory"


def _tf_plan(kind: str, allocator: bool, lowercase: bool, line: int) -> str:
    """CUDAFft::Create*Plan*'s log line around CUDAFftPlan::Initialize's status."""
    verb = "make" if allocator else "create"
    plan = "batched cufft plan" if kind == "batched" else f"cufft {kind} plan"
    with_alloc = " with customized allocator" if allocator else ""
    head = "failed" if lowercase else "Failed"
    return (
        f"F tensorflow/stream_executor/cuda/cuda_fft.cc:{line}] "
        f"{head} to initialize {plan}{with_alloc}: Failed to {verb} cuFFT {kind} plan."
    )


@settings(max_examples=examples(60), deadline=None)
@given(
    kind=st.sampled_from(["batched", "1d", "2d", "3d"]),
    allocator=st.booleans(),
    lowercase=st.booleans(),
    line=LINE,
    before=NOISE,
)
def test_tensorflow_cufft_plan_that_cufft_could_not_make_is_memory_first(
    kind, allocator, lowercase, line, before
):
    ids = _ids(before + _tf_plan(kind, allocator, lowercase, line))
    assert ids[0] == "out-of-memory"
    assert {"gpu-arch-unsupported", "cuda-lib-mismatch"} <= set(ids[1:])


@settings(max_examples=examples(60), deadline=None)
@given(
    code=st.sampled_from(["2", "5", "6", "7"]),
    verb=st.sampled_from(["make", "create"]),
    kind=st.sampled_from(["batched ", "1d ", "2d ", ""]),
    line=LINE,
)
def test_tensorflow_cufft_result_number_decides(code, verb, kind, line):
    text = (
        f"E tensorflow/stream_executor/cuda/cuda_fft.cc:{line}] failed to {verb} cuFFT {kind}"
        f"plan:{code}\nF tensorflow/stream_executor/cuda/cuda_fft.cc:{line + 1}] failed to "
        "initialize batched cufft plan with customized allocator: Failed to make cuFFT batched plan."
    )
    expected = "out-of-memory" if code == "2" else "gpu-arch-unsupported"
    assert _ids(text)[0] == expected


@settings(max_examples=examples(60), deadline=None)
@given(
    message=st.sampled_from(
        [
            "Out of memory while trying to allocate {n} bytes.",
            "Allocating {n} bytes exceeds the memory limit of 4294967296 bytes.",
            "RESOURCE_EXHAUSTED: failed to allocate {n} bytes",
            "INTERNAL: allocator returned null for {n} bytes",
        ]
    ),
    n=st.integers(1, 10**11),
    kind=st.sampled_from(["batched cufft plan", "cufft 1d plan", "cufft 3d plan"]),
    lowercase=st.booleans(),
)
def test_tensorflow_cufft_work_area_from_the_allocator_is_memory(message, n, kind, lowercase):
    head = "failed" if lowercase else "Failed"
    text = (
        f"E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:466] {head} to initialize "
        f"{kind} with customized allocator: {message.format(n=n)}"
    )
    found = explain(text)
    assert found[0].id == "out-of-memory" and found[0].confidence >= 0.8


AUTOCAST = st.sampled_from(
    [
        "UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
        "UserWarning: CUDA is not available or torch_xla is imported. Disabling autocast.",
        "UserWarning: torch.cuda.amp.autocast only affects CUDA ops, but CUDA is not available.  "
        "Disabling.",
        "UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
    ]
)
SITE = st.sampled_from(
    [
        "/usr/local/lib/python3.10/dist-packages",
        "/opt/conda/lib/python3.12/site-packages",
        "C:\\Users\\me\\venv\\Lib\\site-packages",
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(warning=AUTOCAST, site=SITE, line=LINE, before=NOISE)
def test_autocast_without_cuda_reads_as_is_available_false(warning, site, line, before):
    text = f"{before}{site}/torch/amp/autocast_mode.py:{line}: {warning}"
    same = _ids("assert torch.cuda.is_available() is returning False")
    ids = _ids(text)
    assert ids[0] == same[0] == "gpu-missing"
    assert set(same) <= set(ids)


@settings(max_examples=examples(20), deadline=None)
@given(warning=AUTOCAST, index=st.sampled_from(["--index-url", "--extra-index-url"]))
def test_autocast_without_cuda_beside_the_cpu_index_is_the_cpu_build(warning, index):
    text = f"pip install torch {index} https://download.pytorch.org/whl/cpu\n{warning}"
    assert _ids(text)[0] == "cpu-only-build"


OP = st.sampled_from(
    [
        "torchvision::nms",
        "torchvision::roi_align",
        "torchaudio::rnnt_loss",
        "xformers::efficient_attention_forward_cutlass",
        "torch_scatter::scatter_sum",
        "detectron2::nms_rotated",
    ]
)
KEY = st.sampled_from(["CUDA", "AutogradCUDA", "SparseCUDA", "QuantizedCUDA"])
#: the plain CUDA key is read since round sixteen as the extension's CPU build
#: (test_emitters_round16.py): the keys left to this reading
OTHER_KEY = st.sampled_from(["AutogradCUDA", "SparseCUDA", "QuantizedCUDA"])


def _dispatcher(op: str, key: str) -> str:
    return (
        f"NotImplementedError: Could not run '{op}' with arguments from the '{key}' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted during "
        "the selective/custom build process (if using custom build). If you are a Facebook "
        "employee using PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible "
        f"resolutions. '{op}' is only available for these backends: [CPU, Meta, BackendSelect]."
    )


@settings(max_examples=examples(60), deadline=None)
@given(op=OP, key=OTHER_KEY, before=NOISE)
def test_an_extension_operator_without_cuda_kernels_is_a_pip_conflict(op, key, before):
    assert _ids(before + _dispatcher(op, key))[0] == "pip-conflict"


@settings(max_examples=examples(30), deadline=None)
@given(op=st.sampled_from(["aten::empty_strided", "aten::_cudnn_rnn", "prim::Constant"]), key=KEY)
def test_torch_s_own_operators_are_not_read_as_an_extension(op, key):
    assert "pip-conflict" not in _ids(_dispatcher(op, key))


@settings(max_examples=examples(40), deadline=None)
@given(
    lib=st.sampled_from(["libtorch_cuda_cu.so", "libtorch_cuda_cpp.so"]),
    head=st.sampled_from(["OSError: ", "ImportError: ", ""]),
    before=NOISE,
)
def test_torch_1x_split_cuda_library_is_an_extension_built_for_another_torch(lib, head, before):
    text = f"{before}{head}{lib}: cannot open shared object file: No such file or directory"
    assert _ids(text)[0] == "pip-conflict"


@settings(max_examples=examples(20), deadline=None)
@given(major=st.integers(10, 13), head=st.sampled_from(["OSError: ", "ImportError: "]))
def test_torch_s_own_cuda_libraries_keep_their_loader_readings(major, head):
    text = f"{head}libcublas.so.{major}: cannot open shared object file: No such file or directory"
    assert _ids(text)[0] == "cuda-lib-missing"


GEMM = st.sampled_from(
    [
        "InternalError: Blas GEMM launch failed : a.shape=({m}, {k}), b.shape=({k}, {n}), "
        "m={m}, n={n}, k={k}",
        "tensorflow.python.framework.errors_impl.InternalError: Blas SGEMM launch failed : "
        "a.shape=({m}, {k}), b.shape=({k}, {n}), m={m}, n={n}, k={k}",
        "InternalError: Blas xGEMMBatched launch failed : a.shape=[2,{m},{k}], "
        "b.shape=[2,{k},{n}], m={m}, n={n}, k={k}, batch_size=2",
    ]
)
DIM = st.integers(1, 100000)


@settings(max_examples=examples(40), deadline=None)
@given(gemm=GEMM, m=DIM, n=DIM, k=DIM)
def test_tensorflow_blas_launch_failed_alone_is_memory_first(gemm, m, n, k):
    ids = _ids(gemm.format(m=m, n=n, k=k))
    assert ids[0] == "out-of-memory"
    assert {"gpu-arch-unsupported", "cuda-lib-mismatch"} <= set(ids[1:])


@settings(max_examples=examples(60), deadline=None)
@given(
    gemm=GEMM,
    m=DIM,
    n=DIM,
    k=DIM,
    line=LINE,
    status=st.sampled_from(
        [
            "CUBLAS_STATUS_EXECUTION_FAILED",
            "CUBLAS_STATUS_INVALID_VALUE",
            "CUBLAS_STATUS_ARCH_MISMATCH",
            "CUBLAS_STATUS_NOT_INITIALIZED",
        ]
    ),
)
def test_a_logged_cublas_status_decides_over_blas_launch_failed(gemm, m, n, k, line, status):
    logged = f"E tensorflow/stream_executor/cuda/cuda_blas.cc:{line}] failed to run cuBLAS routine: {status}"
    alone = _ids(logged)[0]
    assert _ids(logged + "\n" + gemm.format(m=m, n=n, k=k))[0] == alone
