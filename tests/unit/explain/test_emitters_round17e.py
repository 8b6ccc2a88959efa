"""Round seventeen (e): the paste says there is no NVIDIA GPU, beside a message that no (new
enough) driver answered.

- The CUDA runtime answers cudaErrorInsufficientDriver ("CUDA driver version is insufficient for
  CUDA runtime version") also when no driver library loads at all: torch's device_count_impl
  (c10/cuda/CUDAFunctions.cpp:34-53@01a6a16d) asks cudaDriverGetVersion on that error, and 0
  means no driver. With no NVIDIA GPU there is no driver either, so the same evidence that decides
  torch's "Found no NVIDIA driver" decides this one: only another vendor's graphics named, or a
  sentence saying the machine has no NVIDIA GPU, runs on the CPU only, or is a Mac
  (the `no-nvidia-gpu-said` evidence, fixer.explainer.evidence.gpu_named): gpu-missing first,
  the too-old driver below it. An NVIDIA device named decides nothing for it (the driver may be
  there and too old).
- Another vendor's graphics named in any case, as users type it ("intel iris xe graphics").
- The sentence decides torch's and nvidia-smi's no-driver messages as it did before, now as
  evidence (one home) rather than a rule's `requires`.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

INSUFFICIENT = st.sampled_from(
    [
        "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version",
        "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA "
        "runtime version at /pytorch/torch/csrc/cuda/Module.cpp:{n}",
        "Error CUDA driver version is insufficient for CUDA runtime version at line {n} in file "
        "D:\\ai\\tool\\bitsandbytes\\csrc\\ops.cu",
        "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version",
        "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInsufficientDriver: CUDA driver "
        "version is insufficient for CUDA runtime version",
    ]
)
NO_DRIVER = st.sampled_from(
    [
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
        "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx",
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure "
        "that the latest NVIDIA driver is installed and running.",
    ]
)
SAID = st.sampled_from(
    [
        "I don't have an NVIDIA GPU on this laptop.",
        "This machine has no NVIDIA GPU",
        "my PC doesnt have any nvidia card",
        "I'm using CPU, is that the problem?",
        "We are running it on a CPU-only server",
        "it's a CPU only machine",
        "I don't have a dedicated GPU",
        "我使用的是cpu",
        "电脑没有独立显卡",
        "on macOS Sonoma",
        "MacBook Pro with Apple M2",
    ]
)
OTHER = st.sampled_from(
    [
        "I'm using a integrated Intel GPU(iris xe graphics). os is win 11",
        "GPU: intel(r) uhd graphics {n}",
        "00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 620 (rev 07)",
        "my card is an amd radeon rx {n}",
    ]
)
NVIDIA = st.sampled_from(
    [
        "My GPU is a GeForce GTX {n}",
        "01:00.0 3D controller: NVIDIA Corporation TU104GL [Tesla T4] (rev a1)",
    ]
)
NUM = st.integers(100, 9999).map(str)


def _paste(msg: str, line: str, noise: str, before: bool, n: str) -> str:
    msg, line = msg.format(n=n), line.format(n=n)
    parts = [line, noise, msg] if before else [noise, msg, line]
    return "\n".join(parts)


@settings(max_examples=examples(40), deadline=None)
@given(
    msg=INSUFFICIENT,
    line=st.one_of(SAID, OTHER),
    noise=NOISE,
    before=st.booleans(),
    n=NUM,
)
def test_insufficient_driver_beside_no_nvidia_gpu_is_gpu_missing(msg, line, noise, before, n):
    text = _paste(msg, line, noise, before, n)
    found = explain(text)
    got = [f.id for f in found]
    assert got[0] == "gpu-missing", (text, got)
    assert "driver-too-old" in got[1:], got
    assert any(e.startswith("decided by:") for e in found[0].evidence)


@settings(max_examples=examples(20), deadline=None)
@given(msg=INSUFFICIENT, line=NVIDIA, extra=st.one_of(st.just(""), SAID, OTHER), n=NUM)
def test_an_nvidia_gpu_named_leaves_the_driver_first(msg, line, extra, n):
    """The GPU is there: the runtime's answer reads as a too-old (or absent) driver, not as no
    GPU, whatever else the paste says (a laptop's iGPU beside its GeForce)."""
    text = "\n".join(x.format(n=n) for x in (msg, line, extra) if x)
    assert _ids(text)[0] == "driver-too-old", (text, _ids(text))


@settings(max_examples=examples(20), deadline=None)
@given(msg=NO_DRIVER, line=SAID, noise=NOISE, before=st.booleans(), n=NUM)
def test_a_sentence_decides_the_no_driver_messages(msg, line, noise, before, n):
    text = _paste(msg, line, noise, before, n)
    found = explain(text)
    assert found[0].id == "gpu-missing", (text, [f.id for f in found])
    assert "driver-missing" in [f.id for f in found[1:]]
    assert any(e.startswith("decided by:") for e in found[0].evidence)


@settings(max_examples=examples(20), deadline=None)
@given(msg=INSUFFICIENT, n=NUM)
def test_with_nothing_that_decides_the_driver_stays_first(msg, n):
    text = msg.format(n=n) + "\nI do have an NVIDIA driver installed, version 4{n}".format(n=n)
    assert _ids(text)[0] == "driver-too-old", _ids(text)
