"""Round four's readings, from their emitters' own format strings (recipes/errors.toml cites
each): torch's cuDNN version check however a terminal wraps it, and its two LD_LIBRARY_PATH
branches; cuDNN's own sub-library loader in a process whose traceback runs through torch; the CUDA
runtime's "insufficient driver" beside nvidia-smi's driver version (NVIDIA's minor-version floors,
recipes/nvidia.toml); JAX's fallback warning with and without a CUDA line; PaddlePaddle's CPU-build
message. Values are generated; the wording is the emitter's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from fixer.recipebook import load as load_recipes
from fixer.rules import minor_version_floor
from fixer.system.versions import version_key
from tests.helpers.examples import examples

TRIPLE = st.tuples(st.integers(7, 10), st.integers(0, 30), st.integers(0, 9))
#: torch/backends/cudnn/__init__.py:60-84@2.13.0: the base message, then one of two sentences
BASE = (
    "cuDNN version incompatibility: PyTorch was compiled  against {built} but found runtime "
    "version {loaded}. PyTorch already comes bundled with cuDNN. One option to resolving this "
    "error is to ensure PyTorch can find the bundled cuDNN."
)
LOOKS_LIKE = (
    "Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn. Please either "
    "remove it from the path or install cudnn {built}"
)
ONE_POSSIBILITY = "one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH."
INDENT = st.sampled_from(["", "  ", " " * 25, "\t"])


def _top(text: str) -> str:
    found = explain(text)
    return found[0].id if found else ""


def _wrap(text: str, cuts: list, indent: str) -> str:
    """The text as a terminal or a log formatter wraps it: some spaces become a line break
    followed by the continuation's indentation."""
    words = text.split(" ")
    return "".join(
        w + ((("\n" + indent) if i in cuts else " ") if i < len(words) - 1 else "")
        for i, w in enumerate(words)
    )


@settings(max_examples=examples(100), deadline=None)
@given(
    built=TRIPLE,
    loaded=TRIPLE,
    branch=st.booleans(),
    cuts=st.lists(st.integers(0, 60), max_size=6),
    indent=INDENT,
)
def test_torch_cudnn_check_branch_decides_however_wrapped(built, loaded, branch, cuts, indent):
    """torch adds "Looks like your LD_LIBRARY_PATH contains ..." when LD_LIBRARY_PATH names a
    cuda/cudnn directory (a copy there shadows torch's: cudnn-shadowed), and "one possibility
    ..." when it names none (the older copy came from elsewhere: cudnn-too-old). A wrap at any
    space keeps the reading."""
    # torch raises it within a major for an older minor (cuDNN >= 7: a newer minor is accepted)
    loaded = (built[0],) + tuple(loaded[1:])
    if loaded[1] > built[1]:
        loaded, built = built, loaded
    if loaded[1] == built[1]:
        return
    b, lo = str(tuple(built)), str(tuple(loaded))
    tail = LOOKS_LIKE.format(built=b) if branch else ONE_POSSIBILITY
    text = "RuntimeError: " + _wrap(BASE.format(built=b, loaded=lo) + tail, cuts, indent)
    assert _top(text) == ("cudnn-shadowed" if branch else "cudnn-too-old"), text


PARTS = st.sampled_from(
    ["engines_precompiled", "engines_runtime_compiled", "cnn", "ops", "adv", "heuristic", "graph"]
)
FRAME_DIR = st.sampled_from(
    ["/usr/local/lib/python3.10/dist-packages/", "/home/u/venv/lib/python3.12/site-packages/", ""]
)
TORCH_FILE = st.sampled_from(
    ["nn/modules/conv.py", "nn/modules/module.py", "utils/_contextlib.py", "nn/functional.py"]
)


@settings(max_examples=examples(100), deadline=None)
@given(
    part=PARTS,
    minor=st.integers(0, 30),
    patch=st.integers(0, 9),
    frame=st.booleans(),
    d=FRAME_DIR,
    f=TORCH_FILE,
)
def test_cudnn9_sub_library_in_a_torch_process_is_incomplete(part, minor, patch, frame, d, f):
    """libcudnn_graph.so.9's "Unable to load any of {%s, %s, %s, %s}" comes from cuDNN itself:
    libcudnn loaded. When the traceback runs through torch's package (torch's wheels bring their
    cuDNN), the copy cannot reach its own part: cudnn-incomplete; with no such frame cuDNN may
    be absent from the search path: cudnn-missing."""
    lib = f"libcudnn_{part}.so"
    text = f"Unable to load any of {{{lib}.9.{minor}.{patch}, {lib}.9.{minor}, {lib}.9, {lib}}}\n"
    if frame:
        text += f'  File "{d}torch/{f}", line {minor + 1}, in forward\n'
    assert _top(text) == ("cudnn-incomplete" if frame else "cudnn-missing"), text


FLOORS = load_recipes().driver_floors
DRIVER = st.tuples(st.integers(400, 620), st.integers(0, 99), st.integers(0, 99)).map(
    lambda t: f"{t[0]}.{t[1]:02d}" if t[2] % 2 else f"{t[0]}.{t[1]:02d}.{t[2]:02d}"
)


def _runs(driver: str, major: int) -> bool:
    low = minor_version_floor(major, FLOORS)
    return low is not None and version_key(driver) >= version_key(low)


@settings(max_examples=examples(150), deadline=None)
@given(driver=DRIVER, major=st.one_of(st.none(), st.integers(11, 13)), minor=st.integers(0, 9))
def test_insufficient_driver_beside_a_driver_that_runs_the_build(driver, major, minor):
    """cudaGetErrorString(cudaErrorInsufficientDriver) beside nvidia-smi's "Driver Version": a
    driver that runs the CUDA the paste names (NVIDIA's minor-version floor of that major), or
    with none named runs some CUDA major, reached no process: driver-missing; a driver below the
    named CUDA's floor is too old."""
    text = (
        "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA "
        f"runtime version\n| NVIDIA-SMI {driver}    Driver Version: {driver}    CUDA Version: 12.2 |\n"
    )
    if major is not None:
        text += f"torch 2.5.1+cu{major}{minor}\n"
    if major is None:
        ok = any(_runs(driver, m) for m in range(11, 20))
    else:
        ok = _runs(driver, major)
    assert _top(text) == ("driver-missing" if ok else "driver-too-old"), text


CUDA_LINE = st.sampled_from(
    [
        "E external/xla/xla/stream_executor/cuda/cuda_driver.cc:{n}] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
        "I external/xla/xla/pjrt/gpu/gpu_helpers.cc:{n}] Unable to initialize backend 'cuda': INTERNAL: no supported devices found for platform CUDA",
    ]
)


@settings(max_examples=examples(50), deadline=None)
@given(n=st.integers(1, 9999), line=st.one_of(st.none(), CUDA_LINE))
def test_jax_fallback_alone_is_a_cpu_jaxlib(n, line):
    """jax's "No GPU/TPU found, falling back to CPU" alone: no CUDA backend was tried (a CPU-only
    jaxlib); beside a CUDA backend's own error the GPU is what is missing."""
    text = (line.format(n=n) + "\n") if line else ""
    text += (
        "WARNING:jax._src.xla_bridge:No GPU/TPU found, falling back to CPU. "
        "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"
    )
    assert _top(text) == ("gpu-missing" if line else "cpu-only-build"), text


@settings(max_examples=examples(30), deadline=None)
@given(dev=st.integers(0, 7), n=st.integers(1, 99999))
def test_paddle_cpu_build_message(dev, n):
    """paddle/fluid/pybind place.cc: CUDAPlace in a build without CUDA."""
    text = (
        f"E0714 16:34:40.972663 {n} pybind.cc:1277] Cannot use GPU because you have installed CPU "
        "version PaddlePaddle.\nIf you want to use GPU, please try to install GPU version "
        "PaddlePaddle by: pip install paddlepaddle-gpu\nIf you only have CPU, please change "
        f"CUDAPlace({dev}) to be CPUPlace()."
    )
    assert _top(text) == "cpu-only-build"


NO_DRIVER = st.sampled_from(
    [
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
        "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
        "that the latest NVIDIA driver is installed and running.",
    ]
)


@settings(max_examples=examples(60), deadline=None)
@given(
    msg=NO_DRIVER,
    verb=st.sampled_from(["I don't have", "my laptop doesn't have", "we do not have", "I have no"]),
    article=st.sampled_from(["", "an ", "any "]),
    vendor=st.sampled_from(["NVIDIA", "Nvidia", "nvidia"]),
    noun=st.sampled_from(
        ["GPU", "card", "adapter", "graphics card", "drivers", "driver installed"]
    ),
)
def test_no_driver_text_beside_a_no_gpu_sentence(msg, verb, article, vendor, noun):
    """The no-driver texts ask whether there is an NVIDIA GPU at all. A sentence saying the
    machine has no NVIDIA GPU (card, adapter) answers it: gpu-missing; one saying only that
    there is no NVIDIA driver decides nothing: torch's wording then ranks gpu-missing first (its
    first request, round fourteen (b)), nvidia-smi's the driver."""
    if verb == "I have no":
        article = ""
    text = f"{msg}\n{verb} {article}{vendor} {noun} on this machine"
    gpu = not noun.startswith("driver") or msg.startswith("RuntimeError: Found no NVIDIA driver")
    assert _top(text) == ("gpu-missing" if gpu else "driver-missing"), text
