"""Round fourteen (b)'s readings: whether the paste shows a GPU, read from what prints it.

- torch's "Found no NVIDIA driver" (c10/cuda/CUDAFunctions.cpp) and nvidia-smi's "couldn't
  communicate with the NVIDIA driver" ask whether there is an NVIDIA GPU at all. A GPU the paste
  names answers: an NVIDIA device (lspci's terse line, a product name, nvidia-smi's table or -L
  list, TensorFlow's "Found device", a sentence saying nvidia-smi works) decides driver-missing;
  only another vendor's graphics (Intel, AMD, Apple) decides gpu-missing. With neither, the
  catalogue's order stands (driver-missing, then gpu-missing).
- TensorFlow's "Ignore above cudart dlerror if you do not have a GPU set up on your machine"
  (stream_executor/cuda/cudart_stub.cc): an NVIDIA GPU shown keeps the missing CUDA runtime
  first; a failure after the line ranks first; with neither, the missing runtime stays first with
  the check that decides, and the harmless reading second. XLA's later wording of the same line,
  "Could not find cuda drivers on your machine, GPU will not be used" (its dlerror only at
  VLOG(1)): alone the harmless reading first, the missing runtime second; never driver-missing.
- TensorFlow's "Found device N with properties: ... computeCapability: X.Y" (gpu_device.cc) below
  3.5, the lowest minimum of every TensorFlow build in recipes/tensorflow.toml:
  gpu-arch-unsupported first.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import analyze, explain
from fixer.recipebook import load as load_recipes
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

TORCH = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
    "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
)
TORCH_WARN = (
    "UserWarning: CUDA initialization: Found no NVIDIA driver on your system. Please check that "
    "you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx "
    "(Triggered internally at ../c10/cuda/CUDAFunctions.cpp:{n}.)"
)
SMI = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
    "that the latest NVIDIA driver is installed and running."
)
NO_DRIVER = st.sampled_from([TORCH, TORCH_WARN, SMI])

NVIDIA_SHOWN = st.sampled_from(
    [
        "$ lspci | grep -i nvidia\n{slot} 3D controller: NVIDIA Corporation TU104GL [Tesla T4] (rev a1)",
        "{slot} VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)",
        "My GPU is a GeForce GTX {num}",
        "GPU: NVIDIA GeForce RTX {num} Laptop GPU",
        "the card is a Quadro P{num}",
        "running on a Tesla V100-SXM2-16GB",
        "$ nvidia-smi -L\nGPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-{num}a1b2c3)",
        "| NVIDIA-SMI 535.{num}.03   Driver Version: 535.{num}.03   CUDA Version: 12.2 |",
        "nvidia-smi works fine on the host",
        "I have good nvidia-smi in the docker container.",
    ]
)
OTHER_SHOWN = st.sampled_from(
    [
        "{slot} VGA compatible controller: Intel Corporation Alder Lake-P GT2 [Iris Xe Graphics] (rev 0c)",
        "{slot} VGA compatible controller: Advanced Micro Devices, Inc. [AMD/ATI] Navi 23 (rev c7)",
        'the GPU: "Intel Corporation Iris Plus Graphics G7 (rev 07)"',
        "GPU: Intel(R) UHD Graphics {num}",
        "i have installed gpu GIGABYTE Radeon RX {num} Eagle 8G Graphics Card",
        "on my MacBook Pro M2",
        "on MAC pro M1",
        "Apple M3 Max, macOS",
    ]
)
SLOT = st.from_regex(r"0[0-9]:0[0-9]\.[0-7]", fullmatch=True)
NUM = st.integers(100, 9999).map(str)
DENIED = st.sampled_from(
    [
        "I don't have a GeForce GTX {num}",
        "there is no Tesla T{n} here",
        "nvidia-smi doesn't work either",
    ]
)


def _fill(template: str, slot: str, num: str) -> str:
    return template.format(slot=slot, num=num, n=num[:1])


@settings(max_examples=examples(30), deadline=None)
@given(msg=NO_DRIVER, shown=NVIDIA_SHOWN, slot=SLOT, num=NUM, before=st.booleans())
def test_an_nvidia_gpu_named_decides_driver_missing(msg, shown, slot, num, before):
    """The GPU is there: the no-driver message means its driver is what the process lacks; the
    line that decided is quoted; the no-GPU reading stays, below."""
    gpu = _fill(shown, slot, num)
    msg = msg.format(n=num)
    text = f"{gpu}\n{msg}" if before else f"{msg}\n{gpu}"
    found = explain(text)
    assert found[0].id == "driver-missing", (text, [f.id for f in found])
    assert any(e.startswith("decided by:") for e in found[0].evidence)
    assert "gpu-missing" in [f.id for f in found[1:]]


@settings(max_examples=examples(30), deadline=None)
@given(msg=NO_DRIVER, shown=OTHER_SHOWN, slot=SLOT, num=NUM, before=st.booleans())
def test_only_another_vendors_gpu_named_decides_gpu_missing(msg, shown, slot, num, before):
    gpu = _fill(shown, slot, num)
    msg = msg.format(n=num)
    text = f"{gpu}\n{msg}" if before else f"{msg}\n{gpu}"
    found = explain(text)
    assert found[0].id == "gpu-missing", (text, [f.id for f in found])
    assert any(e.startswith("decided by:") for e in found[0].evidence)
    # both vendors named: the NVIDIA device decides (a laptop's iGPU beside its GeForce)
    both = f"{text}\n{_fill('My GPU is a GeForce GTX {num}', slot, num)}"
    assert _ids(both)[0] == "driver-missing", both


@settings(max_examples=examples(20), deadline=None)
@given(msg=NO_DRIVER, denied=DENIED, num=NUM)
def test_a_denied_or_absent_gpu_decides_nothing(msg, denied, num):
    """A clause that denies the device is no evidence of it; with nothing that decides, torch's
    wording ranks gpu-missing first (its first request), nvidia-smi's the driver; torch's warning
    alone is a program that went on (round twenty-four: harmless first, then the same two)."""
    msg = msg.format(n=num)
    plain = _ids(msg)
    torch = "Found no NVIDIA driver" in msg
    want = ["gpu-missing", "driver-missing"] if torch else ["driver-missing", "gpu-missing"]
    if "CUDA initialization: " in msg:
        want = ["log-noise"] + want
    assert plain[: len(want)] == want, plain
    assert _ids(f"{msg}\n{_fill(denied, '01:00.0', num)}")[: len(want)] == plain[: len(want)]


# --- TensorFlow's cudart stub ------------------------------------------------------------------

CUDART = st.sampled_from(
    [
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
        "library 'libcudart.so.{v}'; dlerror: libcudart.so.{v}: cannot open shared object file: "
        "No such file or directory",
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load dynamic "
        "library 'cudart64_{w}.dll'; dlerror: cudart64_{w}.dll not found",
    ]
)
IGNORE = (
    "I tensorflow/stream_executor/cuda/cudart_stub.cc:29] Ignore above cudart dlerror if you do "
    "not have a GPU set up on your machine."
)
VERSIONS = st.sampled_from([("10.0", "100"), ("10.1", "101"), ("11.0", "110"), ("12", "12")])
LATER = st.sampled_from(
    [
        (
            "E tensorflow/stream_executor/cuda/cuda_dnn.cc:{n}] Loaded runtime CuDNN library: "
            "8.0.5 but source was compiled with: 8.1.0.",
            "cudnn-too-old",
        ),
        ("RuntimeError: CUDA error: out of memory", "out-of-memory"),
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(line=CUDART, ver=VERSIONS, n=st.integers(1, 9999), gpu=st.booleans())
def test_cudart_dlerror_that_tensorflow_says_to_ignore(line, ver, n, gpu):
    """Alone: the missing runtime first, the harmless reading second, the check names what
    decides. With an NVIDIA GPU shown: the missing runtime, decided by that line."""
    dlerror = line.format(v=ver[0], w=ver[1])
    text = f"{dlerror}\n{IGNORE}"
    if gpu:
        text += f"\nI tensorflow/core/common_runtime/gpu/gpu_device.cc:{n}] Found device 0 with properties: \npciBusID: 0000:01:00.0 name: NVIDIA GeForce RTX 3060 computeCapability: 8.6"
    r = analyze(text)
    assert [f.id for f in r.findings][:2] == ["cuda-lib-missing", "log-noise"], (text, r)
    decided = [e for e in r.findings[0].evidence if e.startswith("decided by:")]
    assert bool(decided) == gpu
    if not gpu:
        assert "NVIDIA GPU" in dict(r.checks)["cuda-lib-missing"]


@settings(max_examples=examples(20), deadline=None)
@given(line=CUDART, ver=VERSIONS, later=LATER, n=st.integers(1, 9999))
def test_a_failure_after_the_cudart_line_ranks_first(line, ver, later, n):
    text, want = later
    full = f"{line.format(v=ver[0], w=ver[1])}\n{IGNORE}\n{text.format(n=n)}"
    ids = _ids(full)
    assert ids[0] == want and "cuda-lib-missing" in ids[1:], (full, ids)


XLA_STUB = (
    "{y}-12-01 00:00:00.000000: I external/local_xla/xla/tsl/cuda/cudart_stub.cc:{n}] Could not "
    "find cuda drivers on your machine, GPU will not be used."
)
AFTER = st.sampled_from(
    [
        ("", ""),
        ("| NVIDIA-SMI 550.54.15   Driver Version: 550.54.15   CUDA Version: 12.4 |", "gpu"),
        ("RuntimeError: CUDA error: out of memory", "failure"),
        ("I don't have an NVIDIA GPU on this laptop", ""),
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(after=AFTER, y=st.integers(2023, 2026), n=st.integers(1, 99))
def test_xlas_could_not_find_cuda_drivers_is_the_cuda_runtime(after, y, n):
    """XLA's stub logs "Could not find cuda drivers" when the CUDA runtime (cudart) did not load
    (xla/tsl/cuda/cudart_stub.cc GetDsoHandle): never driver-missing. Alone (or beside a sentence
    saying there is no NVIDIA GPU) the harmless reading first, the missing runtime second; beside
    an NVIDIA GPU the missing runtime; a failure after it ranks first."""
    line, what = after
    text = XLA_STUB.format(y=y, n=n) + (f"\n{line}" if line else "")
    ids = _ids(text)
    assert "driver-missing" not in ids, (text, ids)
    want = {
        "": ["log-noise", "cuda-lib-missing"],
        "gpu": ["cuda-lib-missing", "log-noise"],
        "failure": ["out-of-memory", "cuda-lib-missing"],
    }[what]
    assert ids[:2] == want, (text, ids)


# --- TensorFlow's device log: a compute capability below every build's minimum ---------------

FOUND = (
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:{n}] Found device 0 with properties: "
    "\npciBusID: 0000:01:00.0 name: {name} computeCapability: {cc}\ncoreClock: 1.012GHz "
    "coreCount: 6 deviceMemorySize: 1.00GiB deviceMemoryBandwidth: 19.88GiB/s"
)
#: the lowest compute capability any TensorFlow build in the recipes accepts
TF_FLOOR = min(
    tuple(int(x) for x in str(b.min_compute_capability).split("."))
    for b in load_recipes().builds
    if b.framework == "tensorflow" and b.min_compute_capability
)


@settings(max_examples=examples(30), deadline=None)
@given(
    major=st.integers(1, 12),
    minor=st.integers(0, 9),
    name=st.sampled_from(["GeForce GT 220", "Tesla K20c", "NVIDIA GeForce RTX 3060", "Quadro 600"]),
    n=st.integers(1, 9999),
    dlerror=st.booleans(),
)
def test_tensorflow_device_below_every_builds_minimum(major, minor, name, n, dlerror):
    """The pattern's bound is the recipes' lowest TensorFlow minimum: below it the GPU is
    ignored by every released build (first, whatever else the paste shows); at or above it the
    line alone decides nothing."""
    text = FOUND.format(n=n, name=name, cc=f"{major}.{minor}")
    if dlerror:
        text = (
            "W tensorflow/stream_executor/platform/default/dso_loader.cc:55] Could not load "
            f"dynamic library 'cudart64_101.dll'; dlerror: cudart64_101.dll not found\n{IGNORE}\n"
            + text
        )
    ids = _ids(text)
    below = (major, minor) < TF_FLOOR
    assert (ids[:1] == ["gpu-arch-unsupported"]) == below, (text, ids)
    if not below:
        assert "gpu-arch-unsupported" not in ids


# --- Caffe's CUDA_CHECK: glog's CHECK_EQ(error, cudaSuccess) << " " << cudaGetErrorString ------

CAFFE_ERRORS = st.sampled_from(
    [
        (2, "out of memory", "out-of-memory"),
        (35, "CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
        (100, "no CUDA-capable device is detected", "gpu-missing"),
        (209, "no kernel image is available for execution on the device", "gpu-arch-unsupported"),
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(
    err=CAFFE_ERRORS,
    where=st.sampled_from(["syncedmem.cpp:71", "common.cpp:{n}", "math_functions.cu:{n}"]),
    n=st.integers(1, 999),
)
def test_caffe_cuda_check_reads_the_runtime_error_string(err, where, n):
    """The runtime's string after Caffe's prefix is read by the rule that reads that string;
    "out of memory" (cudaErrorMemoryAllocation = 2) in that form is out-of-memory."""
    num, string, want = err
    text = (
        f"F0312 10:17:11.250044  4242 {where.format(n=n)}] Check failed: error == cudaSuccess "
        f"({num} vs. 0)  {string}\n*** Check failure stack trace: ***"
    )
    assert _ids(text)[:1] == [want], (text, _ids(text))
