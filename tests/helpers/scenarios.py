"""The breakages users meet, as environments on real Colab images or small
machines. Shared by the resolver tests, the plan tests and scripts/bench_plan.py."""

from __future__ import annotations

from fixer import model as m

from tests.helpers.envs import load, load_script, make_env, pip_copy

_me = None


def me():
    global _me
    if _me is None:
        _me = load_script("make_environments")
    return _me


def image(name: str):
    for img in me().load_images():
        if img.name == name:
            return img
    raise KeyError(name)


def tf_next_to_old_torch(recipes: m.Recipes) -> m.Environment:
    """Colab 2025-01-09 (torch 2.5.1+cu121 pins nvidia-cudnn-cu12 9.1.0.70) after
    `pip install tensorflow==2.18.0` (built with cuDNN 9.3)."""
    return me().build_environment(
        image("2025-01-09_" + _commit("2025-01-09")),
        me().GPUS["t4"],
        recipes,
        overrides={"tensorflow": "2.18.0"},
    )


def _commit(date: str) -> str:
    for img in me().load_images():
        if img.date == date:
            return img.commit[:7]
    raise KeyError(date)


def ctranslate2_44_on_cudnn9(recipes: m.Recipes) -> m.Environment:
    """Colab 2026-08 (cuDNN 9 only) with faster-whisper's ctranslate2 4.4.0 (built with cuDNN 8)."""
    env = me().build_environment(
        me().snapshot_image("2026-08-19_a724079"), me().GPUS["t4"], recipes, driver="580.82.07"
    )
    sp = env.python.site_packages[0]
    fb = m.FrameworkBuild(
        "ctranslate2",
        "ctranslate2",
        "4.4.0",
        f"{sp}/ctranslate2",
        "cuda12",
        "12.2",
        "8.9.0",
        None,
        (),
        None,
        True,
        False,
        f"{sp}/ctranslate2/libctranslate2.so.4",
        "dist-info",
    )
    miss = m.LoadResolution(
        "ctranslate2",
        "cudnn",
        "libcudnn.so.8",
        None,
        None,
        None,
        "",
        (
            "LD_LIBRARY_PATH /usr/local/nvidia/lib:/usr/local/nvidia/lib64: no libcudnn.so.8",
            "ld.so.cache /usr/lib/x86_64-linux-gnu: no libcudnn.so.8",
        ),
    )
    dists = env.python.distributions + (m.Distribution("ctranslate2", "4.4.0", sp),)
    return m.Environment(
        **{
            **env.__dict__,
            "frameworks": env.frameworks + (fb,),
            "loads": env.loads + (miss,),
            "python": m.PythonEnv(**{**env.python.__dict__, "distributions": dists}),
        }
    )


def pypi_torch_211_on_driver(
    driver: str = "570.133.20", gpu_cc: str = "8.9", gpu: str = "NVIDIA L4"
) -> m.Environment:
    """`pip install torch` (2.11.0, built for CUDA 13) on a machine whose driver is older than R580."""
    copy = pip_copy("9.19.0.56", "nvidia-cudnn-cu13")
    return make_env(
        gpu_cc=gpu_cc,
        gpu_name=gpu,
        driver=driver,
        python="3.12.3",
        dists={"torch": "2.11.0", "torchvision": "0.26.0", "nvidia-cudnn-cu13": "9.19.0.56"},
        frameworks=(
            m.FrameworkBuild(
                "torch",
                "torch",
                "2.11.0",
                variant="cu130",
                cuda="13.0",
                cudnn="9.19.0",
                cudnn_requirement="nvidia-cudnn-cu13==9.19.0.56",
            ),
        ),
        libraries=(copy,),
        loads=(load("torch", copy),),
    )


def cpu_torch_on_gpu() -> m.Environment:
    """A CPU-only wheel (torch 2.5.1+cpu) on a T4 runtime."""
    return make_env(
        gpu_cc="7.5",
        driver="550.54.15",
        python="3.11.9",
        dists={"torch": "2.5.1+cpu", "torchvision": "0.20.1+cpu"},
        frameworks=(
            m.FrameworkBuild("torch", "torch", "2.5.1+cpu", variant="cpu", is_cuda_build=False),
        ),
    )


def k80() -> m.Environment:
    """A Tesla K80 (3.7; its last driver branch is 470) with a current torch."""
    return make_env(
        gpu_cc="3.7",
        gpu_name="Tesla K80",
        driver="470.256.02",
        python="3.10.12",
        dists={"torch": "2.5.1"},
        frameworks=(
            m.FrameworkBuild(
                "torch", "torch", "2.5.1", variant="cu124", cuda="12.4", cudnn="9.1.0"
            ),
        ),
    )
