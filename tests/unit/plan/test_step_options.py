"""Each pip/uv step carries its options as data (Step.pip) and its argv is built from them;
rollback's sources come from that data; a lock is planned by the one planner (make_plan)."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.planner import installers
from fixer import model as m
from fixer.applier.sources import sources_of
from fixer.lockfile import LockedPackage, stack_from_lock, without_written_fixes
from fixer.lockfile.format import AptPin, Lock
from fixer.planner.steps import make_plan
from fixer.resolver import resolve
from tests.helpers import scenarios as sc
from tests.helpers.examples import examples

MIRRORS = (
    ("https://download.pytorch.org/whl", "http://127.0.0.1:9/torch"),
    (installers.PYPI_SIMPLE, "http://127.0.0.1:9/simple"),
)
options = st.builds(
    m.PlanOptions,
    installer=st.sampled_from(("auto", "pip", "uv")),
    find_links=st.lists(st.sampled_from(("/wheels", "/more")), max_size=2, unique=True).map(tuple),
    no_index=st.booleans(),
    index_mirrors=st.sampled_from(((), MIRRORS, MIRRORS[:1])),
)
machines = st.sampled_from((sc.pypi_torch_211_on_driver, sc.cpu_torch_on_gpu))


@settings(max_examples=examples(30), deadline=None)
@given(machines, options, st.sampled_from((None, "/opt/uv/bin/uv")))
def test_every_pip_step_is_its_options_as_data(real_recipes, machine, opts, uv):
    env = machine()
    assert env.python is not None
    env = dataclasses.replace(env, python=dataclasses.replace(env.python, uv=uv))
    plan = make_plan(env, resolve(env, m.Intent(), real_recipes), opts)
    tool = installers.pip_tool(plan.installer)
    pip_steps = [s for s in plan.steps if s.kind in ("pip-install", "pip-uninstall")]
    assert pip_steps
    for s in pip_steps:
        assert s.pip is not None
        if s.kind == "pip-install":
            assert s.argv == installers.pip_argv(
                plan.python, s.packages, s.pip, installer=tool, uv=uv or "uv"
            )
            assert s.pip.no_index == opts.no_index and s.pip.find_links == opts.find_links
            if not opts.no_index and opts.index_mirrors == MIRRORS:
                assert s.pip.index_url and s.pip.index_url.startswith("http://127.0.0.1:9/")
    src = sources_of(plan.steps, opts)
    installs = [s.pip for s in pip_steps if s.kind == "pip-install" and s.pip]
    assert set(src["index_urls"]) == {
        o.index_url for o in installs if o.index_url and not o.no_index
    }
    assert src["no_index"] == opts.no_index and set(opts.find_links) <= set(src["find_links"])
    assert m.from_dict(m.Plan, m.to_dict(plan)) == plan


def test_a_step_from_the_default_index_beside_a_named_one_keeps_pypi_for_rollback():
    named = m.Step(
        "pip-install", "x", pip=m.PipOptions(index_url="https://download.pytorch.org/whl/cu128")
    )
    default = m.Step("pip-install", "y", pip=m.PipOptions())
    src = sources_of((named, default), m.PlanOptions())
    assert src["index_urls"] == ["https://download.pytorch.org/whl/cu128"]
    assert src["extra_index_urls"] == [installers.PYPI_SIMPLE]
    assert sources_of((default,), m.PlanOptions())["index_urls"] == []


LOCK = Lock(
    created="2026-11-26T00:00:00+00:00",
    tool="colab-cudnn-fix 0.1.0",
    indexes=("https://download.pytorch.org/whl/cu128", installers.PYPI_SIMPLE),
    packages=(
        LockedPackage(
            "torch", "2.11.0+cu128", "https://download.pytorch.org/whl/cu128", ("sha256:aa",)
        ),
        LockedPackage(
            "nvidia-cudnn-cu12", "9.19.0.56", installers.PYPI_SIMPLE, ("sha256:bb", "sha256:cc")
        ),
    ),
    remove=("torchvision",),
    apt=(AptPin("libcudnn9-cuda-12", "9.19.0.56-1"),),
    env_fixes=(m.EnvFix("ld-library-path-drop", "/opt/old", why="x"),),
)


def test_a_lock_is_planned_by_make_plan_with_hashes_enforced(tmp_path):
    env = sc.pypi_torch_211_on_driver()
    plan = without_written_fixes(
        make_plan(env, stack_from_lock(LOCK, env), m.PlanOptions(root=str(tmp_path))), str(tmp_path)
    )
    kinds = [s.kind for s in plan.steps]
    # torchvision goes (the lock removes it); torch 2.11.0 goes first too: the locked 2.11.0+cu128 has its
    # version number, which pip would take as already there (make_plan's rule, for every plan)
    assert kinds[0] == "pip-uninstall" and plan.steps[0].packages == ("torchvision", "torch")
    hashed = plan.steps[1]
    assert hashed.kind == "pip-install" and hashed.pip is not None
    assert (
        hashed.pip.require_hashes
        and hashed.pip.no_deps
        and hashed.pip.requirement_files == hashed.files
    )
    assert hashed.pip.index_url == "https://download.pytorch.org/whl/cu128"
    assert hashed.pip.extra_index_urls == (installers.PYPI_SIMPLE,)
    assert hashed.content == (
        "torch==2.11.0+cu128 --hash=sha256:aa\n"
        "nvidia-cudnn-cu12==9.19.0.56 --hash=sha256:bb --hash=sha256:cc\n"
    )
    assert hashed.files[0].startswith(str(tmp_path))
    assert kinds[2:5] == ["apt-update", "apt-install", "apt-hold"] and kinds[-1] == "verify"
    assert set(kinds[5:-1]) == {"env-fix"}
    assert plan.notes == ("from lock made 2026-11-26T00:00:00+00:00 by colab-cudnn-fix 0.1.0",)


def test_a_machine_at_the_lock_has_nothing_to_do(tmp_path):
    env = sc.pypi_torch_211_on_driver()
    assert env.python is not None
    dists = tuple(
        d
        for d in env.python.distributions
        if d.name not in ("torch", "torchvision", "nvidia-cudnn-cu12")
    )
    dists += (
        m.Distribution("torch", "2.11.0+cu128"),
        m.Distribution("nvidia-cudnn-cu12", "9.19.0.56"),
    )
    apt = m.LibraryCopy(
        "cudnn",
        9,
        "9.19.0",
        "/usr/lib/x86_64-linux-gnu",
        "apt",
        m.Package("libcudnn9-cuda-12", "9.19.0.56-1"),
    )
    env = dataclasses.replace(
        env,
        python=dataclasses.replace(env.python, distributions=dists),
        libraries=env.libraries + (apt,),
    )
    lock = dataclasses.replace(LOCK, env_fixes=())
    plan = without_written_fixes(
        make_plan(env, stack_from_lock(lock, env), m.PlanOptions(root=str(tmp_path))), str(tmp_path)
    )
    assert plan.nothing_to_do, [s.summary for s in plan.steps]
