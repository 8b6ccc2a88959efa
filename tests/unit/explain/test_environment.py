"""explain combined with a detected Environment: the exact copies behind a version error, a
shadowing finding when a good copy lost, environment facts that confirm or weaken a rule, and
diagnose's findings merged after the text's."""

from __future__ import annotations

import pytest

from fixer.explainer import analyze, explain
from fixer.model import Driver, Environment, FrameworkBuild, Gpu, LibraryCopy, Package, Runtime

APT = LibraryCopy(
    library="cudnn",
    major=9,
    version="9.14.0",
    directory="/usr/lib/x86_64-linux-gnu",
    origin="apt",
    package=Package("libcudnn9-cuda-13", "9.14.0.64-1"),
)
PIP = LibraryCopy(
    library="cudnn",
    major=9,
    version="9.19.0",
    directory="/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib",
    origin="pip",
    package=Package("nvidia-cudnn-cu13", "9.19.0.56"),
)
TORCH = FrameworkBuild(
    framework="torch",
    distribution="torch",
    version="2.11.0+cu130",
    cuda="13.0",
    cudnn="9.19.0",
    is_cuda_build=True,
)
H200 = Environment(
    gpus=(Gpu(index=0, name="NVIDIA H200", compute_capability="9.0"),),
    driver=Driver(version="580.159.04", cuda_version="13.0"),
    frameworks=(TORCH,),
    libraries=(APT, PIP),
)
# The text torch printed on the GPU machine with the pip cuDNN hidden (data/gpu_machine).
TORCH_TEXT = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime "
    "version (9, 14, 0). PyTorch already comes bundled with cuDNN. One option to resolving this error is to "
    "ensure PyTorch can find the bundled cuDNN. one possibility is that there is a conflicting cuDNN in "
    "LD_LIBRARY_PATH."
)


def test_gpu_machine_text_plus_its_copies_is_shadowed_then_too_old_with_paths():
    found = explain(TORCH_TEXT, H200)
    assert [f.id for f in found][:2] == ["cudnn-shadowed", "cudnn-too-old"]
    shadowed, too_old = found[0], found[1]
    assert shadowed.title == (
        f"cuDNN 9.14.0 in {APT.directory} is loaded ahead of cuDNN 9.19.0 in {PIP.directory}"
    )
    assert (
        f"loaded: apt cuDNN 9.14.0 in {APT.directory}, libcudnn9-cuda-13 9.14.0.64-1"
        in too_old.evidence
    )
    assert any(e.startswith("would satisfy the build: pip cuDNN 9.19.0") for e in too_old.evidence)


def test_without_a_good_copy_it_stays_too_old():
    env = Environment(gpus=H200.gpus, driver=H200.driver, frameworks=(TORCH,), libraries=(APT,))
    found = explain(TORCH_TEXT, env)
    assert found[0].id == "cudnn-too-old"
    assert "cudnn-shadowed" not in [f.id for f in found]


ENGINE = "RuntimeError: GET was unable to find an engine to execute this computation"


def test_environment_facts_confirm_or_weaken_a_rule():
    alone = explain(ENGINE)[0]
    incomplete = Environment(
        libraries=(
            PIP.__class__(**{**PIP.__dict__, "missing": ("libcudnn_engines_precompiled.so.9",)}),
        )
    )
    complete = Environment(libraries=(PIP,))
    assert alone.id == "cudnn-incomplete"
    assert explain(ENGINE, incomplete)[0].confidence == pytest.approx(alone.confidence + 0.25)
    weak = [f for f in explain(ENGINE, complete) if f.id == "cudnn-incomplete"][0]
    assert weak.confidence == pytest.approx(alone.confidence * 0.5)


def test_machine_findings_come_after_the_text_and_say_so():
    r = analyze(TORCH_TEXT, H200)
    assert r.recognised
    text_ids = [
        f.id
        for f in r.findings
        if "found on this machine (not named by the text)" not in f.evidence
    ]
    assert text_ids[:2] == ["cudnn-shadowed", "cudnn-too-old"]
    for f in r.findings:
        if "found on this machine (not named by the text)" in f.evidence:
            assert f.confidence <= 0.35


def test_machine_findings_alone_do_not_make_the_text_recognised():
    r = analyze("a message nobody knows", Environment(libraries=(APT, PIP)))
    assert r.recognised is False


COLAB_CPU = Environment(runtime=Runtime(kind="colab", accelerator="cpu"), frameworks=(TORCH,))
NO_DRIVER = "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"


def test_no_driver_on_a_colab_cpu_runtime_is_change_runtime_type():
    r = analyze(NO_DRIVER, COLAB_CPU)
    assert r.findings[0].id == "gpu-missing" and "Change runtime type" in r.findings[0].fix
    assert r.colab_no_gpu is True


def test_no_driver_elsewhere_is_no_gpu_first_with_the_driver_second():
    """torch's message asks first whether there is an NVIDIA GPU (round fourteen (b)); a machine
    detected with a GPU halves that reading (when_env)."""
    r = analyze(NO_DRIVER)
    assert [f.id for f in r.findings][:2] == ["gpu-missing", "driver-missing"]
    assert "lspci" in r.check_for("gpu-missing") and r.colab_no_gpu is False


def test_no_driver_with_a_colab_path_in_the_text_is_change_runtime_type():
    text = (
        '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py", line 298, in _lazy_init\n'
        + NO_DRIVER
    )
    assert analyze(text).findings[0].id == "gpu-missing"


def test_cli_exits_3_on_a_colab_cpu_runtime(monkeypatch, capsys):
    import fixer.api
    from fixer.cli import main

    # explain's machine comes from fixer.api's detect (the GPU machine edge)
    monkeypatch.setattr(fixer.api, "run_detect", lambda python=None: COLAB_CPU)
    assert main(["explain", NO_DRIVER]) == 3
    assert "Change runtime type" in capsys.readouterr().out


def test_two_frameworks_named_by_the_machine_are_named_in_the_fix():
    tf = FrameworkBuild(
        framework="tensorflow",
        distribution="tensorflow",
        version="2.20.0",
        cuda="12.5",
        cudnn="9.3.0",
        is_cuda_build=True,
    )
    env = Environment(gpus=H200.gpus, driver=H200.driver, frameworks=(TORCH, tf), libraries=(APT,))
    text = "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0."
    top = explain(text, env)[0]
    assert (
        top.id == "cudnn-too-old" and "torch, tensorflow" in top.fix and "imported first" in top.fix
    )


def test_the_machine_decides_between_alternatives():
    """is_available() is False: a CPU-only torch on the machine makes cpu-only-build the cause."""
    cpu_torch = FrameworkBuild(
        framework="torch", distribution="torch", version="2.11.0+cpu", is_cuda_build=False
    )
    text = "assert torch.cuda.is_available() is returning False"
    assert explain(text)[0].id == "gpu-missing"
    env = Environment(gpus=H200.gpus, driver=H200.driver, frameworks=(cpu_torch,))
    assert explain(text, env)[0].id == "cpu-only-build"
