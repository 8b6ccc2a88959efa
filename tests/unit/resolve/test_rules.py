"""Each rule of docs/design.md / data/research/compat.md, on tiny recipes built in code."""

from __future__ import annotations

import dataclasses

import pytest

from fixer import model as m
from fixer.errors import Unsatisfiable, UsageError
from fixer.pipeline import resolve

from tests.helpers.envs import (
    APT_DIR,
    PIP_DIR,
    cudnn,
    load,
    make_env,
    pip_copy,
    small_recipes,
    tf_build,
    torch_build,
)

C91 = cudnn("9.1.0", (12,), pip={"nvidia-cudnn-cu12": "9.1.0.70"})
C93 = cudnn(
    "9.3.0", (12,), pip={"nvidia-cudnn-cu12": "9.3.0.75"}, apt={"libcudnn9-cuda-12": "9.3.0.75-1"}
)
C910 = cudnn("9.10.2", (12,), pip={"nvidia-cudnn-cu12": "9.10.2.21"})
C919 = cudnn(
    "9.19.0",
    (12, 13),
    pip={"nvidia-cudnn-cu12": "9.19.0.56", "nvidia-cudnn-cu13": "9.19.0.56"},
    min_cc="7.5",
)
T251 = torch_build("2.5.1", "cu121", "12.1", "9.1.0", pin="9.1.0.70")
TF218 = tf_build("2.18.0", "12.5", "9.3.0", pin="9.3.0.75")


def pins(stack):
    return {p.name: (p.action, p.version) for p in stack.pins if p.action != "keep"}


def torch_tf_env(**kw):
    copy = pip_copy("9.1.0.70")
    return make_env(
        dists={
            "torch": "2.5.1+cu121",
            "tensorflow": "2.18.0",
            "nvidia-cudnn-cu12": "9.1.0.70",
            "torchvision": "0.20.1",
        },
        frameworks=(
            m.FrameworkBuild("torch", "torch", "2.5.1+cu121", cuda="12.1", cudnn="9.1.0"),
            m.FrameworkBuild(
                "tensorflow", "tensorflow", "2.18.0", variant="and-cuda", cuda="12.5", cudnn="9.3.0"
            ),
        ),
        libraries=(copy,),
        loads=(load("torch", copy), load("tensorflow", copy)),
        **kw,
    )


def test_only_cudnn_wrong_changes_only_the_cudnn_wheel():
    stack = resolve(torch_tf_env(), m.Intent(), small_recipes([T251, TF218], [C91, C93]))
    assert pins(stack) == {"nvidia-cudnn-cu12": ("upgrade", "9.3.0.75")}
    assert [c.action for c in stack.choices] == ["keep", "keep"]
    assert stack.cudnn_runtime == {"9": "9.3.0.75"}
    assert any("safe at run time" in n for n in stack.notes)


def test_clash_in_words_with_the_nearest_ways_out():
    with pytest.raises(Unsatisfiable) as err:
        resolve(
            torch_tf_env(),
            m.Intent(keep=("nvidia-cudnn-cu12",)),
            small_recipes([T251, TF218], [C91, C93]),
        )
    e = err.value
    text = " ".join(e.clashes)
    assert "TensorFlow 2.18.0" in text and ">= 9.3" in text and "9.1.0.70" in text
    assert any("raise nvidia-cudnn-cu12 to 9.3.0.75 (safe at run time)" in w for w in e.ways_out)
    assert e.exit_code == 1


def test_driver_floor_moves_a_cuda13_build_to_a_cuda12_variant_of_the_same_version():
    builds = [
        torch_build(
            "2.11.0",
            v,
            c,
            "9.19.0",
            pin="9.19.0.56",
            ccs=("7.5", "8.0", "9.0"),
            pypi=(v == "cu130"),
        )
        for v, c in (("cu130", "13.0"), ("cu128", "12.8"), ("cu126", "12.6"))
    ]
    builds.append(
        torch_build(
            "2.12.0",
            "cu130",
            "13.0",
            "9.19.0",
            pin="9.19.0.56",
            ccs=("7.5", "8.0", "9.0"),
            pypi=True,
        )
    )
    copy = pip_copy("9.19.0.56", "nvidia-cudnn-cu13")
    env = make_env(
        driver="570.124.06",
        dists={"torch": "2.11.0", "nvidia-cudnn-cu13": "9.19.0.56"},
        frameworks=(
            m.FrameworkBuild(
                "torch", "torch", "2.11.0", variant="cu130", cuda="13.0", cudnn="9.19.0"
            ),
        ),
        libraries=(copy,),
        loads=(load("torch", copy),),
    )
    stack = resolve(env, m.Intent(), small_recipes(builds, [C919]))
    choice = stack.choices[0]
    assert (choice.action, choice.build.version, choice.build.variant) == (
        "change",
        "2.11.0",
        "cu128",
    )
    assert "580.65.06" in choice.reason and "570.124.06" in choice.reason
    p = pins(stack)
    assert p["torch"] == ("upgrade", "2.11.0+cu128")
    # the cu13 cuDNN wheel writes the same files as the cu12 one the new build needs
    assert p["nvidia-cudnn-cu13"] == ("remove", "9.19.0.56")
    assert p["nvidia-cudnn-cu12"] == ("install", "9.19.0.56")


def test_gpu_without_kernels_in_the_build_gets_one_that_has_them():
    builds = [
        torch_build("2.11.0", "cu130", "13.0", "9.19.0", ccs=("7.5", "8.0", "9.0"), pypi=True),
        torch_build("2.11.0", "cu126", "12.6", "9.10.2", pin="9.10.2.21"),
    ]
    env = make_env(
        gpu_cc="7.0",
        gpu_name="Tesla V100",
        driver="580.82.07",
        dists={"torch": "2.11.0"},
        frameworks=(
            m.FrameworkBuild(
                "torch", "torch", "2.11.0", variant="cu130", cuda="13.0", cudnn="9.19.0"
            ),
        ),
    )
    stack = resolve(env, m.Intent(), small_recipes(builds, [C910, C919]))
    assert stack.choices[0].build.variant == "cu126"
    assert "7.5" in stack.choices[0].reason
    assert stack.cudnn_runtime == {"9": "9.10.2.21"}


def test_cudnn_911_and_later_is_never_chosen_below_sm75():
    # cu126 build built with 9.10; raising cuDNN to 9.19 would satisfy a 9.19 consumer but not a V100
    b = torch_build("2.8.0", "cu126", "12.6", "9.10.2", pin="9.10.2.21")
    tf = tf_build("2.99.0", "12.5", "9.19.0")  # an imaginary TF built with 9.19
    env = make_env(
        gpu_cc="7.0",
        dists={"torch": "2.8.0+cu126", "tensorflow": "2.99.0"},
        frameworks=(
            m.FrameworkBuild("torch", "torch", "2.8.0+cu126", cuda="12.6", cudnn="9.10.2"),
            m.FrameworkBuild("tensorflow", "tensorflow", "2.99.0", cuda="12.5", cudnn="9.19.0"),
        ),
    )
    with pytest.raises(Unsatisfiable) as err:
        resolve(env, m.Intent(), small_recipes([b, tf], [C910, C919]))
    assert "SM >= 7.5" in " ".join(err.value.clashes)


def test_python_specifier_is_respected():
    old = torch_build("2.8.0", "cu126", "12.6", "9.10.2", python=">=3.9")
    new = torch_build("2.9.0", "cu126", "12.6", "9.10.2", python=">=3.12")
    stack = resolve(
        make_env(python="3.11.9"),
        m.Intent(frameworks=("torch",)),
        small_recipes([old, new], [C910]),
    )
    assert stack.choices[0].build.version == "2.8.0"
    stack = resolve(
        make_env(python="3.12.3"),
        m.Intent(frameworks=("torch",)),
        small_recipes([old, new], [C910]),
    )
    assert stack.choices[0].build.version == "2.9.0"


def test_cpu_only_build_on_a_gpu_machine_becomes_a_cuda_build_of_the_same_version():
    builds = [
        torch_build("2.5.1", "cu124", "12.4", "9.1.0", pin="9.1.0.70", pypi=True),
        torch_build("2.5.1", "cu121", "12.1", "9.1.0", pin="9.1.0.70"),
        torch_build("2.6.0", "cu124", "12.4", "9.1.0", pin="9.1.0.70", pypi=True),
    ]
    env = make_env(
        dists={"torch": "2.5.1+cpu"},
        frameworks=(
            m.FrameworkBuild("torch", "torch", "2.5.1+cpu", variant="cpu", is_cuda_build=False),
        ),
    )
    stack = resolve(env, m.Intent(), small_recipes(builds, [C91]))
    c = stack.choices[0]
    assert (c.build.version, c.build.variant) == ("2.5.1", "cu124")
    assert "not a CUDA build" in c.reason
    assert pins(stack)["torch"][1] == "2.5.1"


def test_one_cudnn_per_major_for_every_framework_of_the_process():
    # torch on cu130 uses the CUDA-13 cuDNN; TensorFlow needs a CUDA-12 one: torch moves to cu128
    builds = [
        torch_build(
            "2.11.0",
            "cu130",
            "13.0",
            "9.19.0",
            pin="9.19.0.56",
            ccs=("7.5", "8.0", "9.0"),
            pypi=True,
        ),
        torch_build(
            "2.11.0", "cu128", "12.8", "9.19.0", pin="9.19.0.56", ccs=("7.5", "8.0", "9.0")
        ),
        tf_build("2.20.0", "12.5", "9.3.0"),
    ]
    copy = pip_copy("9.19.0.56", "nvidia-cudnn-cu13")
    env = make_env(
        driver="580.82.07",
        dists={"torch": "2.11.0", "nvidia-cudnn-cu13": "9.19.0.56", "tensorflow": "2.20.0"},
        frameworks=(
            m.FrameworkBuild(
                "torch", "torch", "2.11.0", variant="cu130", cuda="13.0", cudnn="9.19.0"
            ),
            m.FrameworkBuild(
                "tensorflow", "tensorflow", "2.20.0", variant="and-cuda", cuda="12.5", cudnn="9.3.0"
            ),
        ),
        libraries=(copy,),
        loads=(load("torch", copy), load("tensorflow", copy)),
    )
    stack = resolve(env, m.Intent(), small_recipes(builds, [C93, C919]))
    assert {c.framework: c.build.variant for c in stack.choices} == {
        "torch": "cu128",
        "tensorflow": "and-cuda",
    }
    assert stack.cudnn_copies == {
        "9": m.CudnnChoice("pip", m.Package("nvidia-cudnn-cu12", "9.19.0.56"))
    }


def test_intent_torch_version_and_cuda():
    builds = [
        torch_build("2.5.1", v, c, "9.1.0", pin="9.1.0.70")
        for v, c in (("cu121", "12.1"), ("cu124", "12.4"))
    ]
    builds.append(torch_build("2.6.0", "cu126", "12.6", "9.5.1"))
    r = small_recipes(builds, [C91, C93])
    stack = resolve(
        make_env(), m.Intent(frameworks=("torch",), versions={"torch": "2.5.1"}, cuda="12.1"), r
    )
    assert (stack.choices[0].build.version, stack.choices[0].build.variant) == ("2.5.1", "cu121")
    assert pins(stack)["torch"] == ("install", "2.5.1+cu121")
    with pytest.raises(UsageError, match=r"--torch 9\.9: no such PyTorch version.*2\.6\.0"):
        resolve(make_env(), m.Intent(frameworks=("torch",), versions={"torch": "9.9"}), r)
    with pytest.raises(UsageError, match=r"--cuda 99: no build .* uses CUDA 99"):
        resolve(make_env(), m.Intent(frameworks=("torch",), cuda="99"), r)
    with pytest.raises(UsageError, match="--keep nosuch"):
        resolve(make_env(), m.Intent(frameworks=("torch",), keep=("nosuch",)), r)


def test_cudnn_from_apt_installs_the_apt_package_and_removes_the_wheel_that_would_shadow_it():
    copy = pip_copy("9.1.0.70")
    env = make_env(
        dists={"torch": "2.5.1+cu121", "tensorflow": "2.18.0", "nvidia-cudnn-cu12": "9.1.0.70"},
        frameworks=(
            m.FrameworkBuild("torch", "torch", "2.5.1+cu121", cuda="12.1", cudnn="9.1.0"),
            m.FrameworkBuild("tensorflow", "tensorflow", "2.18.0", cuda="12.5", cudnn="9.3.0"),
        ),
        libraries=(copy,),
        loads=(load("torch", copy), load("tensorflow", copy)),
    )
    stack = resolve(env, m.Intent(cudnn_from="apt"), small_recipes([T251, TF218], [C91, C93]))
    assert stack.apt == {"libcudnn9-cuda-12": "9.3.0.75-1"}
    assert pins(stack)["nvidia-cudnn-cu12"] == ("remove", "9.1.0.70")
    assert stack.cudnn_from == "apt"


def test_ld_library_path_shadow_becomes_env_fixes():
    good = pip_copy("9.3.0.75")
    bad = m.LibraryCopy("cudnn", 9, "9.1.0", "/opt/old/cudnn", "ld-library-path")
    env = make_env(
        dists={"tensorflow": "2.18.0", "nvidia-cudnn-cu12": "9.3.0.75"},
        frameworks=(
            m.FrameworkBuild("tensorflow", "tensorflow", "2.18.0", cuda="12.5", cudnn="9.3.0"),
        ),
        libraries=(good, bad),
        runtime=m.Runtime(kind="colab"),
        env={"LD_LIBRARY_PATH": "/opt/old/cudnn:/usr/local/nvidia/lib"},
        loads=(
            load(
                "tensorflow",
                bad,
                via="LD_LIBRARY_PATH",
                search=(("LD_LIBRARY_PATH", "/opt/old/cudnn"), ("DT_RUNPATH", PIP_DIR)),
            ),
        ),
    )
    stack = resolve(env, m.Intent(), small_recipes([TF218], [C91, C93]))
    assert pins(stack) == {}
    kinds = {(f.kind, f.value) for f in stack.env_fixes}
    assert ("ld-library-path-drop", "/opt/old/cudnn") in kinds
    assert ("ipython-preload", PIP_DIR + "/libcudnn.so.9") in kinds


def test_missing_cudnn_8_for_an_old_build_comes_from_apt_when_pip_would_clash():
    # tensorflow 2.15 (cuDNN 8.9) next to torch on the pip cuDNN 9 wheel: nvidia-cudnn-cu12 cannot be 8 and 9
    tf215 = m.Build(
        "tensorflow", "2.15.1", "system", "12.2", "8.9.0", packages=("tensorflow==2.15.1",)
    )
    c897 = cudnn(
        "8.9.7",
        (12,),
        pip={"nvidia-cudnn-cu12": "8.9.7.29"},
        apt={"libcudnn8": "8.9.7.29-1+cuda12.2"},
    )
    copy = pip_copy("9.1.0.70")
    env = make_env(
        dists={"torch": "2.5.1+cu121", "tensorflow": "2.15.1", "nvidia-cudnn-cu12": "9.1.0.70"},
        frameworks=(
            m.FrameworkBuild("torch", "torch", "2.5.1+cu121", cuda="12.1", cudnn="9.1.0"),
            m.FrameworkBuild(
                "tensorflow", "tensorflow", "2.15.1", variant="system", cuda="12.2", cudnn="8.9.0"
            ),
        ),
        libraries=(copy,),
        loads=(load("torch", copy), load("tensorflow", None, major=8)),
    )
    stack = resolve(env, m.Intent(), small_recipes([T251, tf215], [C91, c897]))
    assert stack.apt == {"libcudnn8": "8.9.7.29-1+cuda12.2"}
    assert pins(stack) == {"libcudnn8": ("install", "8.9.7.29-1+cuda12.2")}
    assert stack.cudnn_runtime == {"9": "9.1.0.70", "8": "8.9.7"}


def test_no_gpu_keeps_everything():
    env = make_env(
        gpu_cc=None,
        dists={"torch": "2.5.1+cpu"},
        frameworks=(
            m.FrameworkBuild("torch", "torch", "2.5.1+cpu", variant="cpu", is_cuda_build=False),
        ),
    )
    stack = resolve(env, m.Intent(), small_recipes([T251], [C91]))
    assert pins(stack) == {} and stack.choices[0].action == "keep"


def test_search_order_as_detect_records_it_needs_no_loader_fix():
    """The pip copy's files are gone; torch falls through to the apt 9.14 copy. detect records
    the search order as data, $ORIGIN expanded: reinstalling the wheel is enough (torch's RPATH
    reaches it), so the plan has no ld.so.conf fix."""
    sp = "/opt/v/lib/python3.12/site-packages"
    pip = m.LibraryCopy(
        "cudnn",
        9,
        "9.19.0",
        f"{sp}/nvidia/cudnn/lib",
        "pip",
        m.Package("nvidia-cudnn-cu13", "9.19.0.56"),
        "dist-info",
        missing=("libcudnn.so.9",),
        cuda_major=13,
    )
    apt = m.LibraryCopy(
        "cudnn",
        9,
        "9.14.0",
        APT_DIR,
        "apt",
        m.Package("libcudnn9-cuda-13", "9.14.0.64-1"),
        "dpkg",
        cuda_major=13,
    )
    steps = (
        "LD_PRELOAD: -",
        f"DT_RPATH of {sp}/torch/lib/libtorch_cuda.so: $ORIGIN/../../nvidia/cudnn/lib:$ORIGIN",
        "LD_LIBRARY_PATH: /usr/local/nvidia/lib64",
        f"ld.so.cache: {APT_DIR}/libcudnn.so.9",
    )
    search = (
        m.SearchDir("DT_RPATH", f"{sp}/nvidia/cudnn/lib"),
        m.SearchDir("DT_RPATH", f"{sp}/torch/lib"),
        m.SearchDir("LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"),
        m.SearchDir("ld.so.cache", APT_DIR),
    )
    env = make_env(
        gpu_cc="9.0",
        driver="580.159.04",
        python="3.12.3",
        dists={"torch": "2.11.0", "nvidia-cudnn-cu13": "9.19.0.56"},
        frameworks=(
            m.FrameworkBuild(
                "torch", "torch", "2.11.0", variant="cu130", cuda="13.0", cudnn="9.19.0"
            ),
        ),
        libraries=(pip, apt),
        loads=(
            m.LoadResolution(
                "torch",
                "cudnn",
                "libcudnn.so.9",
                f"{APT_DIR}/libcudnn.so.9",
                APT_DIR,
                "9.14.0",
                "ld.so.cache",
                steps,
                search=search,
            ),
        ),
    )
    rel = cudnn("9.19.0", (12, 13), pip={"nvidia-cudnn-cu13": "9.19.0.56"}, min_cc="7.5")
    b = torch_build(
        "2.11.0", "cu130", "13.0", "9.19.0", pin="9.19.0.56", ccs=("7.5", "8.0", "9.0"), pypi=True
    )
    stack = resolve(env, m.Intent(), small_recipes([b], [rel]))
    assert pins(stack) == {
        "nvidia-cudnn-cu13": ("install", "9.19.0.56")
    }  # a reinstall of the same version
    assert stack.env_fixes == () and stack.choices[0].action == "keep"


@pytest.mark.parametrize("runtime,preloads", [("linux", False), ("colab", True)])
def test_older_cuda_libraries_winning_through_ld_library_path_become_env_fixes(runtime, preloads):
    toolkit, own = (
        "/usr/local/cuda-12.1/lib64",
        "/venv/lib/python3.11/site-packages/nvidia/cublas/lib",
    )
    copy = pip_copy("9.1.0.70")
    cublas = m.LoadResolution(
        "torch",
        "cublas",
        "libcublas.so.12",
        f"{toolkit}/libcublas.so.12",
        toolkit,
        "12.1.3",
        "LD_LIBRARY_PATH",
        intended=f"{own}/libcublas.so.12",
    )
    newer = m.LoadResolution(
        "torch",
        "cudart",
        "libcudart.so.12",
        "/opt/cuda-12.8/libcudart.so.12",
        "/opt/cuda-12.8",
        "12.8.90",
        "LD_LIBRARY_PATH",
        intended=f"{own}/libcudart.so.12",
    )
    env = make_env(
        dists={"torch": "2.5.1+cu121", "nvidia-cudnn-cu12": "9.1.0.70"},
        frameworks=(m.FrameworkBuild("torch", "torch", "2.5.1+cu121", cuda="12.1", cudnn="9.1.0"),),
        libraries=(copy,),
        loads=(load("torch", copy), cublas, newer),
        runtime=m.Runtime(kind=runtime),
        env={"LD_LIBRARY_PATH": f"{toolkit}:/opt/cuda-12.8"},
    )
    # torch cu121 was built with CUDA 12.1: cuBLAS 12.1.3 is not older, nothing to do
    assert resolve(env, m.Intent(), small_recipes([T251], [C91])).env_fixes == ()
    env = dataclasses.replace(
        env,
        frameworks=(m.FrameworkBuild("torch", "torch", "2.5.1+cu121", cuda="12.4", cudnn="9.1.0"),),
    )
    stack = resolve(env, m.Intent(), small_recipes([T251], [C91]))
    kinds = {(f.kind, f.value) for f in stack.env_fixes}
    assert ("ld-library-path-drop", toolkit) in kinds
    assert ("ld-library-path-drop", "/opt/cuda-12.8") not in kinds  # a newer minor is compatible
    assert (("ipython-preload", f"{own}/libcublas.so.12") in kinds) == preloads
    assert any("older than the CUDA 12.4" in n for n in stack.notes)
