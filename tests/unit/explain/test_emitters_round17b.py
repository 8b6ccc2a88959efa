"""Round seventeen (b)'s classes: the CUDA runtime's and driver's error codes across CUDA
releases, and the wrappers that print them in their own format.

- The runtime's older wording of cudaErrorDevicesUnavailable (46): "all CUDA-capable devices are
  busy or unavailable" (CUDA 9.0 to 10.2, read from the libcudart torch 1.0.0 to 1.8.1's wheels
  bundle), beside 11.7's "CUDA-capable device(s) is/are busy or unavailable", and its names
  (cudaErrorDevicesUnavailable, CUDA_ERROR_DEVICE_UNAVAILABLE): gpu-missing.
- torch 1.x's __THCudaCheck ("THCudaCheck FAIL file=F line=L error=N : S", "cuda runtime error (N)
  : S at F:L"), Caffe's CUDA_CHECK ("Check failed: error == cudaSuccess (N vs. 0)  S") and MXNet's
  CUDA_CALL ("... e == cudaErrorCudartUnloading: CUDA: S") around the runtime's "out of memory"
  (out-of-memory) and "unknown error" (30 up to CUDA 10.0, 999 from 10.1: driver-missing, with
  gpu-missing the alternative).
- numba's "Error at driver init: Call to cuInit results in NAME (N)" (0.55+) and "[N] Call to
  cuInit results in NAME" (older): CUDA_ERROR_UNKNOWN reads as XLA's failed cuInit does
  (driver-missing); numba up to 0.57 names the stub (34) and 803/804 UNKNOWN_CUDA_ERROR
  (driver-missing; driver-too-old); CUDA_ERROR_NOT_INITIALIZED at cuInit: the driver did not
  initialise (driver-missing).
- CuPy's CUDADriverError "CUDA_ERROR_UNKNOWN: unknown error" and numba's CudaAPIError naming it
  (driver-missing); ggml_cuda_init's "failed to initialize CUDA: unknown error / initialization
  error" (driver-missing).
- TensorFlow's cudart stub: "cudaGetErrorString symbol not found." where libcudart did not load
  (cuda-lib-missing).
- Left unread: a bare "cuda runtime error (3) : initialization error" outside initialisation (a
  forked worker prints it too) and a number without its string or name (the runtime renumbered
  its codes in CUDA 10.1: 34 was "device not ready" before, the stub library after).

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

LINE = st.integers(1, 9999)
THC_FILE = st.sampled_from(
    [
        "/pytorch/aten/src/THC/THCGeneral.cpp",
        "/pytorch/aten/src/THC/THCCachingHostAllocator.cpp",
        "/opt/conda/conda-bld/pytorch_1556653114079/work/aten/src/THC/generic/THCTensorMath.cu",
        "torch/csrc/cuda/Module.cpp",
    ]
)
CLOCK = st.tuples(
    st.integers(0, 23), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999999)
)
HEAD = st.sampled_from(["RuntimeError: ", "Exception: ", ""])


def _read(text: str) -> list:
    """The causes explain names, less the harmless-line reading of a NOISE line."""
    return [i for i in _ids(text) if i != "log-noise"]


def _glog(clock, line: int, where: str) -> str:
    h, m, s, us = clock
    return f"F0312 {h:02d}:{m:02d}:{s:02d}.{us:06d}  4242 {where}:{line}] "


# --- the runtime's older wording of code 46 ----------------------------------------------------


@settings(max_examples=examples(30), deadline=None)
@given(noise=NOISE, file=THC_FILE, line=LINE, clock=CLOCK, form=st.integers(0, 4), head=HEAD)
def test_cuda_9_to_10_2_s_devices_busy_wording_is_gpu_missing(noise, file, line, clock, form, head):
    s = "all CUDA-capable devices are busy or unavailable"
    text = [
        f"THCudaCheck FAIL file={file} line={line} error=46 : {s}",
        f"{head}cuda runtime error (46) : {s} at {file}:{line}",
        _glog(clock, line, "common.cpp") + f"Check failed: error == cudaSuccess (46 vs. 0)  {s}",
        f'CUDA error at main.cu:{line} code=46(cudaErrorDevicesUnavailable) "cudaSetDevice(0)"',
        f"cupy.cuda.driver.CUDADriverError: CUDA_ERROR_DEVICE_UNAVAILABLE: {s}",
    ][form]
    assert _ids(noise + text)[0] == "gpu-missing", text


# --- torch 1.x, Caffe and MXNet around the runtime's strings ------------------------------------


@settings(max_examples=examples(30), deadline=None)
@given(noise=NOISE, file=THC_FILE, line=LINE, clock=CLOCK, form=st.integers(0, 2))
def test_the_wrappers_around_out_of_memory(noise, file, line, clock, form):
    text = [
        f"THCudaCheck FAIL file={file} line={line} error=2 : out of memory",
        "mxnet.base.MXNetError: [10:04:44] src/storage/./pooled_storage_manager.h:"
        f"{line}: Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading: CUDA: out of memory",
        "mxnet.base.MXNetError: [10:04:44] src/storage/storage.cc:"
        f"{line}: Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading CUDA: out of memory",
    ][form]
    assert _ids(noise + text)[0] == "out-of-memory", text


@settings(max_examples=examples(40), deadline=None)
@given(
    noise=NOISE,
    file=THC_FILE,
    line=LINE,
    clock=CLOCK,
    code=st.sampled_from([30, 999]),
    form=st.integers(0, 4),
    head=HEAD,
)
def test_the_wrappers_around_unknown_error(noise, file, line, clock, code, form, head):
    """30 up to CUDA 10.0, 999 from 10.1: the same cudaErrorUnknown, read with its string."""
    text = [
        f"THCudaCheck FAIL file={file} line={line} error={code} : unknown error",
        f"{head}cuda runtime error ({code}) : unknown error at {file}:{line}",
        _glog(clock, line, "common.cpp")
        + f"Check failed: error == cudaSuccess ({code} vs. 0)  unknown error",
        "mxnet.base.MXNetError: [10:04:44] include/mxnet/base.h:"
        f"{line}: Check failed: e == cudaSuccess || e == cudaErrorCudartUnloading: CUDA: unknown error",
        "cupy.cuda.driver.CUDADriverError: CUDA_ERROR_UNKNOWN: unknown error",
    ][form]
    found = _ids(noise + text)
    assert found[0] == "driver-missing", text
    assert "gpu-missing" in found[1:], found


@settings(max_examples=examples(20), deadline=None)
@given(noise=NOISE, file=THC_FILE, line=LINE, clock=CLOCK, head=HEAD)
def test_initialization_error_outside_initialisation_stays_unread(noise, file, line, clock, head):
    """torch 1.x prints it in a forked DataLoader worker too: no finding names that cause."""
    for text in (
        f"{head}cuda runtime error (3) : initialization error at {file}:{line}",
        _glog(clock, line, "common.cpp")
        + "Check failed: error == cudaSuccess (3 vs. 0)  initialization error",
    ):
        assert _read(noise + text) == [], text


# --- numba's cuInit, CuPy's and numba's driver names, ggml_cuda_init -----------------------------

NUMBA_SUPPORT = "numba.cuda.cudadrv.error.CudaSupportError: "


def _numba_init(name: str, code: int, old: bool) -> str:
    """numba 0.55+ ("Error at driver init: <msg> (<code>)") or older ("\\n[<code>] <msg>:")."""
    msg = f"Call to cuInit results in {name}"
    if old:
        return f"{NUMBA_SUPPORT}Error at driver init: \n[{code}] {msg}:"
    return f"{NUMBA_SUPPORT}Error at driver init: {msg} ({code})"


@settings(max_examples=examples(30), deadline=None)
@given(noise=NOISE, old=st.booleans())
def test_numba_s_cuinit_codes(noise, old):
    cases = [
        ("CUDA_ERROR_UNKNOWN", 999, "driver-missing"),
        ("UNKNOWN_CUDA_ERROR", 34, "driver-missing"),  # numba <= 0.57: the stub, unnamed
        ("UNKNOWN_CUDA_ERROR", 803, "driver-too-old"),
        ("UNKNOWN_CUDA_ERROR", 804, "driver-too-old"),
        ("UNKNOWN_CUDA_ERROR", 802, "driver-missing"),  # system not yet initialized
        ("CUDA_ERROR_NOT_INITIALIZED", 3, "driver-missing"),
        ("CUDA_ERROR_NO_DEVICE", 100, "gpu-missing"),  # read before this round
    ]
    for name, code, want in cases:
        text = _numba_init(name, code, old)
        found = _ids(noise + text)
        assert found[0] == want, (text, found)
        if want == "driver-missing":
            assert "gpu-missing" in found[1:], found


@settings(max_examples=examples(20), deadline=None)
@given(noise=NOISE, code=st.sampled_from([805, 806, 807, 808, 809]), old=st.booleans())
def test_cuinit_s_unnamed_mps_codes_stay_unread(noise, code, old):
    """numba up to 0.57 names the MPS codes (cuda.h 805-809) UNKNOWN_CUDA_ERROR too: no finding
    names an MPS server's failure, so only 34, 802, 803 and 804 are read in that form."""
    text = _numba_init("UNKNOWN_CUDA_ERROR", code, old)
    assert _read(noise + text) == [], text


@settings(max_examples=examples(20), deadline=None)
@given(noise=NOISE, s=st.sampled_from(["unknown error", "initialization error"]))
def test_ggml_cuda_init_failing(noise, s):
    text = f"ggml_cuda_init: failed to initialize CUDA: {s}"
    found = _ids(noise + text)
    assert found[0] == "driver-missing", found
    assert "gpu-missing" in found[1:], found


# --- TensorFlow's cudart stub ------------------------------------------------------------------


@settings(max_examples=examples(20), deadline=None)
@given(
    noise=NOISE,
    ver=st.sampled_from(["10.0", "10.1", "11.0", "12"]),
    line=LINE,
    loader=st.booleans(),
    call=st.sampled_from(["cudaGetDevice() failed. Status: ", "CUDA operation failed: "]),
)
def test_the_cudart_stub_s_answer_is_a_missing_cuda_runtime(noise, ver, line, loader, call):
    text = f"InternalError: {call}cudaGetErrorString symbol not found."
    if loader:
        text = (
            f"W tensorflow/stream_executor/platform/default/dso_loader.cc:{line}] Could not load "
            f"dynamic library 'libcudart.so.{ver}'; dlerror: libcudart.so.{ver}: cannot open "
            "shared object file: No such file or directory\n" + text
        )
    assert _ids(noise + text)[0] == "cuda-lib-missing", text
