"""Round eight's readings, each from its emitter or the file layout that decides it.

- torch's "Unable to find a valid cuDNN algorithm to run convolution": AlgoIterator::try_all
  tries every algorithm, skipping each whose workspace allocation runs out of memory (or whose
  call fails in cuDNN), and raises this only when none is left (aten/src/ATen/native/cudnn/
  Conv_v7.cpp; recipes/errors.toml cites it): out of memory first, the cuDNN readings after it.
- "saw A instead of B": B is the copy looked for and not found; it is never read as present.
- torch's own cuDNN (a file in torch/lib, where torch's Windows wheels and its older Linux wheels
  carry one cuDNN major) beside a cuDNN of another major that cannot load: a second cuDNN user in
  torch's environment, cudnn-conflict.
- a Mac: no NVIDIA GPU for torch's "Found no NVIDIA driver" (torch's macOS binaries carry no CUDA).
- TensorFlow's "not built with CUDA kernel binaries compatible with compute capability" is a
  build WITH CUDA (its kernels will be JIT-compiled from PTX): never a CPU-only build.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import load_catalogue
from fixer.explainer.evidence import read_evidence
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

CAT = load_catalogue()
MAJOR = st.integers(5, 10)
PART = st.sampled_from(["ops_infer", "cnn_infer", "adv_infer", "ops", "cnn", "graph"])
QUOTE = st.sampled_from(["", "`", "'", '"'])


def _lib(windows: bool, part: str, major: int) -> str:
    return f"cudnn_{part}64_{major}.dll" if windows else f"libcudnn_{part}.so.{major}"


def _failing(windows: bool, part: str, major: int) -> str:
    lib = _lib(windows, part, major)
    if windows:
        return f"Could not locate {lib}. Please make sure it is in your library path!"
    return f"Could not load library {lib}. Error: {lib}: cannot open shared object file: No such file or directory"


@settings(max_examples=examples(60), deadline=None)
@given(
    before=st.sampled_from(["", "Traceback (most recent call last):\n", "epoch 3: loss 0.41\n"]),
    where=st.sampled_from(
        ["", " (try_all at /opt/conda/work/aten/src/ATen/native/cudnn/Conv.cpp:693)"]
    ),
)
def test_no_valid_cudnn_algorithm_is_memory_first(before, where):
    text = f"{before}RuntimeError: Unable to find a valid cuDNN algorithm to run convolution{where}"
    ids = _ids(text)
    assert ids[0] == "out-of-memory"
    assert {"gpu-arch-unsupported", "cudnn-too-old"} <= set(ids[1:])


@settings(max_examples=examples(80), deadline=None)
@given(windows=st.booleans(), part=PART, seen=MAJOR, looked=MAJOR, q=QUOTE)
def test_a_copy_named_after_instead_of_is_never_present(windows, part, seen, looked, q):
    line = f"I looked and saw {q}{_lib(windows, part, seen)}{q} instead of {q}{_lib(windows, part, looked)}{q}"
    present = [s.major for s in read_evidence(line, CAT) if s.kind == "cudnn-present"]
    assert present == [seen]


@settings(max_examples=examples(100), deadline=None)
@given(
    windows=st.booleans(),
    part=PART,
    want=MAJOR,
    own=MAJOR,
    also=st.booleans(),
    q=QUOTE,
)
def test_torch_s_own_copy_of_another_major_is_a_conflict(windows, part, want, own, also, q):
    """A cuDNN major that cannot load while torch/lib holds another: cudnn-conflict first; with a
    copy of the wanted major listed too, or the same major in torch/lib, never a conflict."""
    torch_lib = r".venv\Lib\site-packages\torch\lib" if windows else "site-packages/torch/lib"
    listing = f"ls {q}{torch_lib}{q} shows {q}{_lib(windows, part, own)}{q}"
    extra = f"\nfound {q}{_lib(windows, 'graph', want)}{q} elsewhere" if also else ""
    ids = _ids(f"{_failing(windows, part, want)}\n{listing}{extra}")
    if want != own and not also:
        assert ids[0] == "cudnn-conflict", ids
        assert {"cudnn-major-mismatch", "cudnn-missing"} & set(ids[1:])
    else:
        assert "cudnn-conflict" not in ids, ids


MAC = st.sampled_from(
    ["on my Mac M1", "on a MacBook Pro", "macOS 14.2", "Apple M2 Max", "Apple silicon", "an M3 Mac"]
)
NO_DRIVER = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
    "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
)


@settings(max_examples=examples(40), deadline=None)
@given(mac=MAC, first=st.booleans())
def test_a_mac_has_no_nvidia_gpu(mac, first):
    said = f"This happens when I run the image {mac}."
    text = f"{said}\n{NO_DRIVER}" if first else f"{NO_DRIVER}\n{said}"
    ids = _ids(text)
    assert ids[0] == "gpu-missing" and "driver-missing" in ids[1:]
    assert _ids(NO_DRIVER)[:2] == ["gpu-missing", "driver-missing"]  # torch's first request


@settings(max_examples=examples(40), deadline=None)
@given(cc=st.sampled_from(["5.2", "8.0", "9.0", "10.0a", "12.0", "12.0a"]), n=st.integers(1, 9999))
def test_tensorflow_jit_from_ptx_is_no_cpu_only_build(cc, n):
    text = (
        f"W0000 00:00:1753232013.685876   {n} gpu_device.cc:2431] TensorFlow was not built with "
        f"CUDA kernel binaries compatible with compute capability {cc}. CUDA kernels will be "
        "jit-compiled from PTX, which could take 30 minutes or longer."
    )
    assert "cpu-only-build" not in _ids(text)


DENIAL = st.sampled_from(
    [
        "there is no {f} in /usr/lib/x86_64-linux-gnu",
        "I don't have {f} anywhere",
        "I can't find {f}",
        "the folder has no {f}",
        "without {f} it fails",
        "{f} doesn't exist",
        "{f} isn’t there",
        "{f} is absent",
    ]
)
AFFIRM = st.sampled_from(
    [
        "{f} (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/{f}",
        "lrwxrwxrwx 1 root root 17 Jan  1 00:00 {f} -> {f}.1.0",
        "I do have {f} in /usr/local/cuda/lib64",
        "-rw-r--r-- 1 root root 1234 {f}",
    ]
)


@settings(max_examples=examples(100), deadline=None)
@given(windows=st.booleans(), part=PART, major=MAJOR, denial=DENIAL, affirm=AFFIRM, other=MAJOR)
def test_a_clause_that_denies_a_file_never_shows_it_present(
    windows, part, major, denial, affirm, other
):
    """A denied file is not present; an affirmed one in the same paste (another clause) is."""
    gone = _lib(windows, part, major)
    here = _lib(windows, part, other)
    text = f"{denial.format(f=gone)}, but\n{affirm.format(f=here)}"
    present = {s.major for s in read_evidence(text, CAT) if s.kind == "cudnn-present"}
    assert present == {other}
