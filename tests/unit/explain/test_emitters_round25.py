"""Round twenty-five (the sixteenth session): what the paste shows about the GPU and the build
decides between the causes of "CUDA is not available".

- torch.backends.cuda.is_built() False (torch._C._has_cuda), called at a prompt or printed as
  scripts word it ("PyTorch built with CUDA: False"): a build without CUDA, decisively, as
  tf.test.is_built_with_cuda() False already was.
- CUDA reported not available (torch.cuda.is_available() False and the frameworks' wordings of
  it) in a paste that names an NVIDIA GPU (a product name, also in lower case after the vendor
  as users write it, "an Nvidia v100 node"; lspci's line; nvidia-smi's header):
  torch answers False for no driver, no device or a CPU-only build, and the paste rules out "no
  device"; a build without CUDA ranks first, the no-GPU reading stays below it, and the line
  that decided is named. Another vendor's graphics or a sentence saying there is no NVIDIA GPU
  leave gpu_named to decide; the build's CUDA named (+cuXXX, a conda build string) rules out a
  CPU build and leaves the driver's version to decide (round six).

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

UNAVAILABLE = st.sampled_from(
    [
        ">>> torch.cuda.is_available()\nFalse",
        "print(torch.cuda.is_available()) returns False",
        "Is CUDA available: False",
        "UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling",
        "AssertionError: CUDA unavailable, invalid device 0 requested",
        "RuntimeError: Torch is not able to use GPU; add --skip-torch-cuda-test to "
        "COMMANDLINE_ARGS variable to disable this check",
    ]
)
NVIDIA = st.sampled_from(
    [
        "My GPU is a GeForce RTX {n}",
        "01:00.0 VGA compatible controller: NVIDIA Corporation GA106 [GeForce RTX {n}] (rev a1)",
        "| NVIDIA-SMI 535.{n}    Driver Version: 535.{n}    CUDA Version: 12.2 |",
        "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-{n}aa-bb)",
        "I am on a Tesla T4 ({n} MiB free)",
        # as users write a data-centre GPU after the vendor, in any case
        "I am running this on an Nvidia v100 node ({n} jobs)",
        "nvidia a100 80gb, {n} hours in",
    ]
)
NUM = st.sampled_from(["2060", "2080", "3060", "3090", "4070", "4090", "5090"])


@settings(max_examples=examples(60), deadline=None)
@given(asked=UNAVAILABLE, gpu=NVIDIA, n=NUM, noise=NOISE, gpu_first=st.booleans())
def test_cuda_unavailable_beside_an_nvidia_gpu_is_a_build_without_cuda_first(
    asked, gpu, n, noise, gpu_first
):
    parts = [gpu.format(n=n), asked]
    paste = noise + "\n" + "\n".join(parts if gpu_first else parts[::-1])
    found = explain(paste)
    ids = [f.id for f in found]
    assert ids[0] == "cpu-only-build", (paste, ids)
    assert "gpu-missing" in ids[1:], (paste, ids)
    assert any(e.startswith("decided by: ") for e in found[0].evidence), found[0].evidence


@settings(max_examples=examples(40), deadline=None)
@given(asked=UNAVAILABLE, noise=NOISE)
def test_cuda_unavailable_alone_keeps_its_order(asked, noise):
    """Nothing in the paste shows the GPU: the message's own reading (no GPU) stays first."""
    assert _ids(noise + "\n" + asked)[0] == "gpu-missing", asked


@settings(max_examples=examples(40), deadline=None)
@given(
    asked=UNAVAILABLE,
    gpu=NVIDIA,
    n=NUM,
    build=st.sampled_from(
        [
            "torch 2.1.0+cu118",
            "pytorch                   2.1.0           py3.10_cuda12.1_cudnn8.9.2_0    pytorch",
        ]
    ),
)
def test_the_builds_cuda_named_rules_out_a_cpu_build(asked, gpu, n, build):
    paste = "\n".join([gpu.format(n=n), build, asked])
    assert _ids(paste)[0] != "cpu-only-build", paste


@settings(max_examples=examples(40), deadline=None)
@given(
    asked=UNAVAILABLE,
    gpu=NVIDIA,
    n=NUM,
    other=st.sampled_from(
        ["I don't have an NVIDIA GPU on this laptop.", "my card is an amd radeon rx 6600"]
    ),
)
def test_a_sentence_or_another_vendor_still_decides_no_gpu(asked, gpu, n, other):
    """gpu_named's evidence against an NVIDIA GPU keeps this reading out of it."""
    paste = "\n".join([other, gpu.format(n=n), asked])
    assert _ids(paste)[0] == "gpu-missing", paste


@settings(max_examples=examples(30), deadline=None)
@given(
    form=st.sampled_from(
        [
            "PyTorch built with CUDA:         False",
            "torch built with CUDA: False",
            ">>> torch.backends.cuda.is_built()\nFalse",
            "print(torch.backends.cuda.is_built())  -> False",
        ]
    ),
    asked=st.one_of(st.just(""), UNAVAILABLE),
    noise=NOISE,
)
def test_torch_says_it_was_built_without_cuda(form, asked, noise):
    """torch.backends.cuda.is_built(): "Return whether PyTorch is built with CUDA support"
    (torch/backends/cuda/__init__.py, cited on the rule)."""
    paste = "\n".join(x for x in (noise, form, asked) if x)
    found = explain(paste)
    assert found[0].id == "cpu-only-build", (paste, [f.id for f in found])


@settings(max_examples=examples(20), deadline=None)
@given(
    form=st.sampled_from(["PyTorch built with CUDA: True", "torch.backends.cuda.is_built()\nTrue"])
)
def test_built_with_cuda_true_is_not_a_cpu_build(form):
    assert "cpu-only-build" not in _ids(form)[:1], form
