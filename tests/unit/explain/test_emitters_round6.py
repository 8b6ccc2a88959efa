"""Round six's readings: torch's "no GPU" answer beside the driver version the paste shows.

torch's device_count() turns an insufficient driver into the warning "CUDA initialization: The
NVIDIA driver on your system is too old" and zero devices, so is_available() is False
(pytorch/pytorch c10/cuda/CUDAFunctions.cpp:45-53@01a6a16d9bb6424c034f5623c46bfd08ec21613b);
whether the driver shown runs the build is NVIDIA's minor-version compatibility
(recipes/nvidia.toml's floors). Values are generated; the wording is the emitter's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain, load_catalogue
from fixer.explainer.scan import join_wrapped
from fixer.recipebook import load as load_recipes
from fixer.rules import driver_runs_build, minor_version_floor
from fixer.system.versions import version_key
from tests.helpers.examples import examples
from tests.unit.explain.test_catalogue import FIXED_TEMPLATES

FLOORS = load_recipes().driver_floors
DRIVER = st.tuples(st.integers(400, 620), st.integers(0, 99), st.integers(0, 99)).map(
    lambda t: f"{t[0]}.{t[1]:02d}" if t[2] % 2 else f"{t[0]}.{t[1]:02d}.{t[2]:02d}"
)
NO_GPU = st.sampled_from(
    [
        ">>> torch.cuda.is_available()\nFalse",
        "print(torch.cuda.is_available()) returns False",
        "Is CUDA available: False",
    ]
)
BUILD = st.sampled_from(
    ["torch {v}+cu{m}{n}", "pip install torch=={v}+cu{m}{n}", "torch.__version__ = '{v}+cu{m}{n}'"]
)


def _top(text: str) -> str:
    found = explain(text)
    return found[0].id if found else ""


def _runs(driver: str, major: int) -> bool:
    low = minor_version_floor(major, FLOORS)
    return low is not None and version_key(driver) >= version_key(low)


def _runs_release(driver: str, major: int, minor: int) -> bool:
    """NVIDIA's table by the build's release where it knows the release (a driver at or above
    that release's own GA driver runs it: 450.52 runs CUDA 11.0, whose GA driver is 450.51.05,
    though it is below 11.x's minor-version floor 450.80.02), else by the major's floor."""
    by_release = driver_runs_build(driver, f"{major}.{minor}", FLOORS)
    return _runs(driver, major) if by_release is None else by_release


@settings(max_examples=examples(150), deadline=None)
@given(
    no_gpu=NO_GPU,
    driver=DRIVER,
    major=st.integers(11, 13),
    minor=st.integers(0, 9),
    build=BUILD,
    shown=st.booleans(),
)
def test_no_gpu_beside_a_driver_below_the_builds_cuda_is_a_too_old_driver(
    no_gpu, driver, major, minor, build, shown
):
    """is_available() False with nvidia-smi's driver and the build's +cuXXX in the paste: a driver
    below the floor of the build's CUDA major is too old (driver-too-old first, the line that
    decided it named); one that runs it leaves the message's own reading (gpu-missing) first.
    Without the build's CUDA named, the driver alone decides nothing about its age; the GPU that
    nvidia-smi's header shows puts a build without CUDA first (the sixteenth session)."""
    text = f"{no_gpu}\n| NVIDIA-SMI {driver}    Driver Version: {driver}    CUDA Version: 12.2 |\n"
    if shown:
        text += build.format(v="2.1.0", m=major, n=minor) + "\n"
    found = explain(text)
    too_old = shown and not _runs_release(driver, major, minor)
    # nvidia-smi's header shows the GPU: without the build's CUDA, a CPU build ranks first
    # (evidence.unavailable_beside_gpu); with it, the message's own reading stays first
    expected = "driver-too-old" if too_old else ("gpu-missing" if shown else "cpu-only-build")
    assert found[0].id == expected, text
    if too_old:
        assert any(e.startswith("decided by: | NVIDIA-SMI") for e in found[0].evidence)


INSTALL = st.sampled_from(
    [
        "pip install torch torchvision torchaudio --index-url https://download.pytorch.org/whl/{idx}",
        "pip install torch==2.0.1 --extra-index-url https://download.pytorch.org/whl/{idx}",
        "pip3 install torch -f https://download.pytorch.org/whl/{idx}/torch_stable.html",
    ]
)


@settings(max_examples=examples(100), deadline=None)
@given(
    no_gpu=NO_GPU,
    install=INSTALL,
    cpu=st.booleans(),
    major=st.integers(11, 13),
    before=st.booleans(),
)
def test_no_gpu_after_an_install_from_the_cpu_wheels_is_a_cpu_build(
    no_gpu, install, cpu, major, before
):
    """PyTorch's install commands (pytorch.github.io previous-versions.md): the /whl/cpu index
    serves only CPU builds; a /whl/cuXXX index does not decide it."""
    command = install.format(idx="cpu" if cpu else f"cu{major}8")
    text = f"{command}\n{no_gpu}\n" if before else f"{no_gpu}\n{command}\n"
    assert explain(text)[0].id == ("cpu-only-build" if cpu else "gpu-missing"), text


@settings(max_examples=examples(60), deadline=None)
@given(no_gpu=NO_GPU, driver=DRIVER, major=st.integers(11, 12), minor=st.integers(0, 9))
def test_the_conda_build_string_names_the_builds_cuda(no_gpu, driver, major, minor):
    """The pytorch conda channel's build string (py3.10_cuda11.8_cudnn8.7.0_0) names the build's
    CUDA, as a +cuXXX tag does (anaconda.org/pytorch/pytorch/files)."""
    text = (
        f"{no_gpu}\npytorch                   2.1.0           "
        f"py3.10_cuda{major}.{minor}_cudnn8.9.2_0    pytorch\n"
        f"| NVIDIA-SMI {driver}    Driver Version: {driver}    CUDA Version: 12.2 |\n"
    )
    runs = _runs_release(driver, major, minor)
    assert explain(text)[0].id == ("gpu-missing" if runs else "driver-too-old"), text


CATALOGUE = load_catalogue()


def _inner_spaces(text: str) -> list:
    """The positions of the spaces of `text` between two of its words that stand alone (a run of
    spaces wrapped at one of them comes back as one space)."""
    return [
        i
        for i, c in enumerate(text)
        if c == " "
        and " " not in (text[i - 1 : i], text[i + 1 : i + 2])
        and text[:i].strip()
        and text[i + 1 :].strip()
    ]


#: (a literal of the catalogue, one of the spaces between its words)
SPACED = sorted((n, i) for n in {w.decode() for w in CATALOGUE.wrapped} for i in _inner_spaces(n))


@settings(max_examples=examples(200), deadline=None)
@given(
    spaced=st.sampled_from(SPACED),
    indent=st.sampled_from(["", " ", "    ", "\t", "        "]),
    before=st.sampled_from(["", "RuntimeError: ", "E0101 12:00:00.000 1 x.cc:1] "]),
    after=st.sampled_from(["", ": details", " (code 3)"]),
)
def test_a_message_wrapped_at_one_of_its_spaces_is_joined_back(spaced, indent, before, after):
    """A terminal, a log formatter or a Markdown quote that wraps a message at a space puts a line
    break (and the next line's indentation) where the message had one space: join_wrapped gives
    the line back for every literal of the catalogue."""
    needle, cut = spaced
    # a literal that starts or ends with a space takes it from the words around it
    before = before.rstrip(" ") if needle.startswith(" ") else before
    after = after.lstrip(" ") if needle.endswith(" ") else after
    line = before + needle + after
    at = len(before) + cut
    wrapped = line[:at] + "\n" + indent + line[at + 1 :]
    assert join_wrapped(wrapped, CATALOGUE.wrapped) == line


MULTILINE = [(r, t) for r, t in FIXED_TEMPLATES if "\n" in t.format().strip()]


@settings(max_examples=examples(100), deadline=None)
@given(case=st.sampled_from(MULTILINE), width=st.integers(3, 11))
def test_a_message_under_pytests_failure_marker_reads_as_raised(case, width):
    """pytest prints a failed test's exception with "E" and the report's indentation before each
    line (src/_pytest/_code/code.py, FormattedExcinfo.get_exconly): a message of several lines
    keeps its reading under the marker."""
    _rule, template = case
    text = template.format()
    marked = "".join("E" + " " * width + line + "\n" for line in text.splitlines())
    assert _top(marked) == _top(text), marked


@settings(max_examples=examples(100), deadline=None)
@given(driver=DRIVER, release=st.sampled_from(["2.1.1", "2.4.0", "1.13.1", "2.7.0"]))
def test_an_insufficient_driver_beside_a_release_it_cannot_run_decides_nothing(driver, release):
    """cudaErrorInsufficientDriver beside nvidia-smi's driver and a torch release but no CUDA
    named: when a build of that release (recipes' build tables) needs a CUDA major the driver
    does not run, the driver may be the one too old, and driver-missing is not decided."""
    text = (
        f"| NVIDIA-SMI {driver}    Driver Version: {driver}    CUDA Version: 12.2 |\n"
        f"torch: {release}\n"
        "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
    )
    builds = load_recipes().builds_for("torch", release)
    majors = {int(b.cuda.split(".")[0]) for b in builds if b.cuda}
    if majors and not all(_runs(driver, m) for m in majors):
        assert _top(text) == "driver-too-old", text
