"""The breakages users meet, with the real recipes; each plan's commands checked
literally."""

from __future__ import annotations

import dataclasses

import pytest

from fixer import model as m
from fixer import rules
from fixer.errors import Unsatisfiable
from fixer.planner.steps import make_plan
from fixer.pipeline import resolve

from tests.helpers import scenarios as sc
from tests.helpers.envs import make_env

PY = "/venv/bin/python"
APT = (
    "apt-get",
    "install",
    "-y",
    "--no-install-recommends",
    "--allow-downgrades",
    "--allow-change-held-packages",
    "--",
)
VERIFY_VENV = ("colab-cudnn-fix", "verify", "--python", PY)


def argvs(env, recipes, intent=m.Intent()):
    stack = resolve(env, intent, recipes)
    return stack, [s.argv for s in make_plan(env, stack).steps]


def test_tensorflow_next_to_a_torch_that_pins_an_older_cudnn(real_recipes):
    stack, cmds = argvs(sc.tf_next_to_old_torch(real_recipes), real_recipes)
    assert cmds == [
        (
            "/usr/bin/python3",
            "-m",
            "pip",
            "install",
            "--no-input",
            "--no-deps",
            "--",
            "nvidia-cudnn-cu12==9.3.0.75",
        ),
        ("colab-cudnn-fix", "verify", "--python", "/usr/bin/python3"),
    ]
    assert all(c.action == "keep" for c in stack.choices)  # torch is not reinstalled
    assert any("safe at run time" in n for n in stack.notes)


def test_tensorflow_clash_in_words_when_the_cudnn_wheel_is_kept(real_recipes):
    env = sc.tf_next_to_old_torch(real_recipes)
    # keeping only the wheel still fits: TensorFlow goes back to 2.17 (cuDNN 8, from the image's apt copy)
    stack = resolve(env, m.Intent(keep=("nvidia-cudnn-cu12",)), real_recipes)
    assert {c.framework: c.build.version for c in stack.choices}["tensorflow"] == "2.17.1"
    with pytest.raises(Unsatisfiable) as err:
        resolve(env, m.Intent(keep=("nvidia-cudnn-cu12", "tensorflow")), real_recipes)
    clash = " ".join(err.value.clashes)
    assert "TensorFlow 2.18.0" in clash and ">= 9.3" in clash and "9.1.0.70" in clash
    assert (
        "without --keep nvidia-cudnn-cu12: raise nvidia-cudnn-cu12 to 9.3.0.75 (safe at run time)"
        in err.value.ways_out
    )
    assert "without --keep tensorflow: lower tensorflow to 2.17.1" in err.value.ways_out


def test_ctranslate2_built_for_cudnn8_on_a_cudnn9_image(real_recipes):
    stack, cmds = argvs(sc.ctranslate2_44_on_cudnn9(real_recipes), real_recipes)
    # pip cannot hold nvidia-cudnn-cu12 at 8.9 and 9.19 at once: cuDNN 8 comes from apt, next to it
    assert cmds == [
        ("apt-get", "update"),
        APT + ("libcudnn8=8.9.7.29-1+cuda12.2",),
        ("apt-mark", "hold", "--", "libcudnn8"),
        ("colab-cudnn-fix", "verify", "--python", "/usr/bin/python3"),
    ]
    assert stack.cudnn_runtime == {"9": "9.19.0.56", "8": "8.9.7"}


@pytest.mark.parametrize(
    "driver,variant,cudnn",
    [
        # CUDA 12.4: no torch 2.11 variant within it; minor-version compatibility, the lowest: cu126
        ("550.54.15", "cu126", "9.10.2.21"),
        # CUDA 12.8: cu128 is the highest variant within the driver's CUDA
        ("570.133.20", "cu128", "9.19.0.56"),
    ],
)
def test_plain_pypi_torch_211_cuda13_on_an_older_driver(real_recipes, driver, variant, cudnn):
    stack, cmds = argvs(sc.pypi_torch_211_on_driver(driver), real_recipes)
    assert stack.choices[0].build.version == "2.11.0"  # same torch, a CUDA 12 build
    assert f"driver {driver}" in stack.choices[0].reason
    assert bool(stack.choices[0].minor_version) == (variant == "cu126")
    assert cmds == [
        (PY, "-m", "pip", "uninstall", "-y", "--", "nvidia-cudnn-cu13", "torch", "torchvision"),
        (
            PY,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--index-url",
            f"https://download.pytorch.org/whl/{variant}",
            "--",
            f"torch==2.11.0+{variant}",
            f"torchvision==0.26.0+{variant}",
            f"nvidia-cudnn-cu12=={cudnn}",
        ),
        VERIFY_VENV,
    ]


@pytest.mark.parametrize(
    "gpu,cc", [("Tesla P100-PCIE-16GB", "6.0"), ("Tesla V100-SXM2-16GB", "7.0")]
)
def test_pascal_and_volta_with_a_cuda13_build_go_to_cu126(real_recipes, gpu, cc):
    stack, cmds = argvs(sc.pypi_torch_211_on_driver("580.82.07", cc, gpu), real_recipes)
    assert f"compute capability {cc}" in stack.choices[0].reason
    assert cmds == [
        (PY, "-m", "pip", "uninstall", "-y", "--", "nvidia-cudnn-cu13", "torch", "torchvision"),
        (
            PY,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--index-url",
            "https://download.pytorch.org/whl/cu126",
            "--",
            "torch==2.11.0+cu126",
            "torchvision==0.26.0+cu126",
            "nvidia-cudnn-cu12==9.10.2.21",
        ),
        VERIFY_VENV,
    ]
    assert stack.cudnn_runtime == {"9": "9.10.2.21"}  # cuDNN >= 9.11 needs SM 7.5


def test_cpu_only_torch_on_a_gpu_runtime(real_recipes):
    stack, cmds = argvs(sc.cpu_torch_on_gpu(), real_recipes)
    assert cmds == [
        (PY, "-m", "pip", "uninstall", "-y", "--", "torch", "torchvision"),
        (
            PY,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--",
            "torch==2.5.1",
            "torchvision==0.20.1",
            "nvidia-cudnn-cu12==9.1.0.70",
        ),
        VERIFY_VENV,
    ]
    assert "not a CUDA build" in stack.choices[0].reason


def test_k80_gets_cu118_and_a_torch_no_newer_than_27(real_recipes):
    stack, cmds = argvs(sc.k80(), real_recipes)
    b = stack.choices[0].build
    assert b.variant == "cu118" and tuple(int(x) for x in b.version.split(".")[:2]) <= (2, 7)
    # cuDNN 9 starts at SM 5.0: the newest torch on cuDNN 8 with sm_37 kernels
    assert cmds == [
        (
            PY,
            "-m",
            "pip",
            "install",
            "--no-input",
            "--index-url",
            "https://download.pytorch.org/whl/cu118",
            "--",
            "torch==2.3.1+cu118",
            "nvidia-cudnn-cu11==8.7.0.84",
        ),
        VERIFY_VENV,
    ]


def test_asking_for_a_torch_the_k80_cannot_run_says_why(real_recipes):
    with pytest.raises(Unsatisfiable) as err:
        resolve(
            sc.k80(), m.Intent(versions={"torch": "2.11.0"}, frameworks=("torch",)), real_recipes
        )
    text = " ".join(err.value.clashes)
    assert "PyTorch: no build fits PyTorch 2.11.0 (--torch 2.11.0)" in text
    assert "Tesla K80 (compute capability 3.7)" in text and "driver 470.256.02" in text
    assert any(w.startswith("without --torch 2.11.0: ") for w in err.value.ways_out)


def _apt_twins(recipes):
    """(TensorFlow version, its [and-cuda] pip cuDNN, the apt package of that very release)
    for every version in the recipes whose pin has an apt twin."""
    out = []
    for b in recipes.builds_for("tensorflow"):
        pkg, ver = rules.cudnn_pin(b.requires)
        if not pkg:
            continue
        for rel in recipes.cudnn:
            for apt_pkg, apt_ver in rel.apt.items():
                if apt_ver.split("-")[0] == ver and rules.cuda_major_of_package(
                    apt_pkg, apt_ver
                ) in (rules.cuda_major_of_package(pkg, ver), None):
                    out.append((b.version, ver, apt_pkg, apt_ver))
    return sorted(set(out))


def test_cudnn_from_apt_takes_the_exact_twin_of_the_pip_version(real_recipes):
    # on a bare machine, `--cudnn-from apt` installs the apt package of the very release the
    # pip path would install (TensorFlow 2.18: nvidia-cudnn-cu12==9.3.0.75 -> libcudnn9-cuda-12=9.3.0.75-1)
    twins = _apt_twins(real_recipes)
    assert ("2.18.0", "9.3.0.75", "libcudnn9-cuda-12", "9.3.0.75-1") in twins
    env = make_env(gpu_cc="8.9", driver="570.133.20")
    for version, pip_ver, apt_pkg, apt_ver in twins:
        intent = m.Intent(frameworks=("tensorflow",), versions={"tensorflow": version})
        pip_stack = resolve(env, intent, real_recipes)
        assert any(
            p.version == pip_ver for p in pip_stack.pins if p.name.startswith("nvidia-cudnn")
        ), version
        apt_stack = resolve(env, dataclasses.replace(intent, cudnn_from="apt"), real_recipes)
        assert apt_stack.apt == {apt_pkg: apt_ver}, version
