"""Round twenty-three: CUDA's own error table read in any wrapper, written from the runtime's
header and strings (no held-out report read for it).

- A code printed beside its own cudaGetErrorString text ("Error 999: unknown error", "cudaGetDeviceCount
  failed: 999 unknown error", "Error 304: OS call failed or operation not supported on this OS"), the
  enum names cudaErrorOperatingSystem / CUDA_ERROR_OPERATING_SYSTEM, and cuInit answering 999 or
  304: the driver did not initialise (driver-missing), whichever program wraps them.
- A code beside another code's text is not that row. The initialization errors stay unread in any
  wrapper: cudaErrorInitializationError (3) is also a forked child's first call (round seventeen
  (b)), and the driver API's CUDA_ERROR_NOT_INITIALIZED also a call made before cuInit.
- torch's answer printed as "CUDA available: False" / Lightning's "GPU available: False": gpu-missing,
  with the driver and the CPU build as its alternatives; "True" reads nothing.

Values are generated; the codes and strings are the runtime's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids
from fixer.explainer import analyze

#: the runtime's rows (nvidia-cuda-runtime-cu12 12.4.127 driver_types.h and libcudart strings):
#: 999 cudaErrorUnknown (30 before CUDA 10.1), 304 cudaErrorOperatingSystem
ROWS = [
    ("999", "unknown error"),
    ("30", "unknown error"),
    ("304", "OS call failed or operation not supported on this OS"),
]
WRAPPERS = [
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
    "before calling NumCudaDevices() that might have already set an error? Error {code}: {text}",
    "cudaGetDeviceCount failed: {code} {text}",
    "CUDA error {code}: {text}",
    "[{prog}] CUDA call failed with error ({code}) : {text}",
    "Error {code}: {text}",
    "{prog}.cu:{line}: cuda error {code} '{text}'",
]
PROG = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=3, max_size=12)


@settings(max_examples=examples(40), deadline=None)
@given(
    row=st.sampled_from(ROWS),
    wrapper=st.sampled_from(WRAPPERS),
    prog=PROG,
    line=st.integers(1, 9999),
    noise=NOISE,
)
def test_a_code_beside_its_own_text_is_read_in_any_wrapper(row, wrapper, prog, line, noise):
    code, text = row
    paste = noise + "\n" + wrapper.format(code=code, text=text, prog=prog, line=line)
    result = analyze(paste)
    assert result.recognised, paste
    assert [f.id for f in result.findings][0] == "driver-missing", paste


@settings(max_examples=examples(30), deadline=None)
@given(
    # (304's text is long and distinctive: it is read on its own, like the enum names)
    row=st.sampled_from([r for r in ROWS if r[0] != "304"]),
    other=st.sampled_from(["1", "2", "7", "100", "700", "801"]),
    prog=PROG,
)
def test_a_code_beside_another_codes_text_is_not_that_row(row, other, prog):
    paste = f"{prog}: error {other}: {row[1]}"
    assert "driver-missing" not in _ids(paste), paste


@settings(max_examples=examples(20), deadline=None)
@given(
    name=st.sampled_from(["cudaErrorOperatingSystem", "CUDA_ERROR_OPERATING_SYSTEM"]),
    prog=PROG,
)
def test_the_enum_names_of_a_driver_that_did_not_initialise(name, prog):
    paste = f"{prog} failed: {name}"
    assert _ids(paste)[0] == "driver-missing", paste


@settings(max_examples=examples(20), deadline=None)
@given(
    code=st.sampled_from(["999", "304"]), spaces=st.sampled_from([" ", ": ", " returned ", "() = "])
)
def test_cuinit_answering_unknown_or_os_error(code, spaces):
    paste = f"cuInit{spaces}{code}"
    assert _ids(paste)[0] == "driver-missing", paste


@settings(max_examples=examples(30), deadline=None)
@given(wrapper=st.sampled_from(WRAPPERS), prog=PROG, line=st.integers(1, 9999))
def test_the_initialization_errors_stay_unread_in_any_wrapper(wrapper, prog, line):
    """cudaErrorInitializationError is also a forked child's first call; CUDA_ERROR_NOT_INITIALIZED
    also a call before cuInit (a forked child's device count, harmless in DeepVariant's log)."""
    for paste in (
        wrapper.format(code="3", text="initialization error", prog=prog, line=line),
        f"{prog} failed: cudaErrorInitializationError",
        "E tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:1278] could not retrieve "
        "CUDA device count: CUDA_ERROR_NOT_INITIALIZED: initialization error",
    ):
        assert "driver-missing" not in _ids(paste), paste


@settings(max_examples=examples(30), deadline=None)
@given(
    word=st.sampled_from(["CUDA", "GPU", "cuda", "gpu"]),
    sep=st.sampled_from([" available: ", "_available = ", " is available: ", " available = "]),
    tail=st.sampled_from(["", ", used: False", "\nTPU available: False, using: 0 TPU cores"]),
    noise=NOISE,
)
def test_cuda_available_false_in_any_words(word, sep, tail, noise):
    paste = f"{noise}\n{word}{sep}False{tail}"
    found = _ids(paste)
    assert found[0] == "gpu-missing", paste
    assert {"cpu-only-build", "driver-too-old"} <= set(found), paste


@settings(max_examples=examples(10), deadline=None)
@given(word=st.sampled_from(["CUDA", "GPU"]))
def test_available_true_reads_nothing(word):
    assert _ids(f"{word} available: True, used: True") == []
