"""make_plan: order, installers, offline/mirror rewriting, env-fix file contents, restart."""

from __future__ import annotations

from fixer import model as m
from fixer.pipeline import simulated
from fixer.planner.steps import make_plan
from fixer.resolver import resolve

from tests.helpers import scenarios as sc
from tests.helpers.envs import make_env, small_recipes, tf_build

MIRRORS = (
    ("https://download.pytorch.org/whl", "http://127.0.0.1:9/torch"),
    ("https://pypi.org/simple", "http://127.0.0.1:9/simple"),
)


def test_healthy_machine_has_nothing_to_do(real_recipes):
    env = sc.me().build_environment(
        sc.me().snapshot_image("2026-08-19_a724079"),
        sc.me().GPUS["l4"],
        real_recipes,
        driver="580.82.07",
    )
    plan = make_plan(env, resolve(env, m.Intent(), real_recipes))
    assert plan.nothing_to_do and plan.steps == () and not plan.restart_required


def test_mirrors_no_index_and_uv_rewrite_every_command(real_recipes):
    env = sc.pypi_torch_211_on_driver()
    stack = resolve(env, m.Intent(), real_recipes)
    plan = make_plan(env, stack, m.PlanOptions(index_mirrors=MIRRORS))
    assert plan.steps[1].argv[5:7] == ("--index-url", "http://127.0.0.1:9/torch/cu128")
    offline = make_plan(env, stack, m.PlanOptions(no_index=True, find_links=("/wheels",)))
    assert offline.steps[1].argv == (
        "/venv/bin/python",
        "-m",
        "pip",
        "install",
        "--no-input",
        "--no-index",
        "--find-links",
        "/wheels",
        "--",
        "torch==2.11.0+cu128",
        "torchvision==0.26.0+cu128",
        "nvidia-cudnn-cu12==9.19.0.56",
    )
    uv = make_plan(env, stack, m.PlanOptions(installer="uv"))
    assert uv.steps[0].argv[:4] == ("uv", "pip", "uninstall", "--python")
    assert uv.steps[1].argv[:5] == ("uv", "pip", "install", "--python", "/venv/bin/python")
    pipped = make_plan(env, stack, m.PlanOptions(installer="pip"))
    assert pipped.steps[1].argv[:3] == ("/venv/bin/python", "-m", "pip")


def test_cpu_wheel_of_the_same_version_is_uninstalled_first_and_pypi_mirror_applies(real_recipes):
    env = sc.cpu_torch_on_gpu()
    plan = make_plan(
        env, resolve(env, m.Intent(), real_recipes), m.PlanOptions(index_mirrors=MIRRORS)
    )
    kinds = [s.kind for s in plan.steps]
    assert kinds == ["pip-uninstall", "pip-install", "verify"]
    assert plan.steps[1].argv[5:7] == ("--index-url", "http://127.0.0.1:9/simple")
    assert "2.5.1+cpu" in plan.steps[0].summary


def test_conda_via_condacolab_on_colab(real_recipes):
    env = sc.tf_next_to_old_torch(real_recipes)
    stack = resolve(env, m.Intent(cudnn_from="conda"), real_recipes)
    plan = make_plan(env, stack)
    assert stack.conda and stack.cudnn_from == "conda"
    steps = [s for s in plan.steps if s.kind == "conda-install"]
    assert steps[0].argv == ("/usr/bin/python3", "-c", "import condacolab; condacolab.install()")
    # condacolab's prefix (condacolab.PREFIX) and the conda it installs there
    assert steps[1].argv[:6] == (
        "/usr/local/bin/conda",
        "install",
        "-y",
        "-c",
        "conda-forge",
        "--override-channels",
    )
    assert steps[1].argv[6:8] == ("-p", "/usr/local")
    assert plan.steps[0].kind == "pip-uninstall" and "nvidia-cudnn-cu12" in plan.steps[0].argv
    # condacolab is installed first when the runtime lacks it
    assert any(s.kind == "pip-install" and s.packages == ("condacolab",) for s in plan.steps)
    # the loader finds the conda copy: /usr/local/lib in ld.so.conf.d, preloaded in new kernels
    assert any(
        s.kind == "env-fix" and s.content and "/usr/local/lib" in s.content for s in plan.steps
    )


def test_download_sizes_come_from_the_recipes():
    b = tf_build("2.18.0", "12.5", "9.3.0")
    b = m.Build(**{**b.__dict__, "size_bytes": 615_000_000})
    rel = m.CudnnRelease(
        "9.3.0", (12,), pip={"nvidia-cudnn-cu12": "9.3.0.75"}, size_bytes=577_000_000
    )
    env = make_env(frameworks=(), dists={})
    recipes = small_recipes([b], [rel])
    plan = simulated(
        env, make_plan(env, resolve(env, m.Intent(frameworks=("tensorflow",)), recipes)), recipes
    )
    assert [s.download_bytes for s in plan.steps if s.kind == "pip-install"] == [
        615_000_000,
        577_000_000,
    ]


def test_plan_records_its_installer_and_its_pip_steps_use_it(real_recipes):
    """Plan.installer is installers.choose's answer, for every --installer and with or without
    a uv found for the target; every pip step of the plan runs that installer."""
    import dataclasses

    from fixer.planner import installers

    base = sc.pypi_torch_211_on_driver()
    stack = resolve(base, m.Intent(), real_recipes)
    for uv in (None, "/opt/uv/bin/uv"):
        assert base.python is not None
        env = dataclasses.replace(base, python=dataclasses.replace(base.python, uv=uv))
        for requested in ("auto", "pip", "uv"):
            plan = make_plan(env, stack, m.PlanOptions(installer=requested))  # type: ignore[arg-type]
            assert (
                plan.installer
                == installers.choose(requested, uv)
                == ("uv" if requested == "uv" or (requested == "auto" and uv) else "pip")
            )
            pip_steps = [s for s in plan.steps if s.kind in ("pip-install", "pip-uninstall")]
            assert pip_steps
            for s in pip_steps:
                assert (
                    s.argv[1:3] == ("pip", "install") or s.argv[1:3] == ("pip", "uninstall")
                ) == (plan.installer == "uv"), s.argv
            assert m.from_dict(m.Plan, m.to_dict(plan)) == plan
