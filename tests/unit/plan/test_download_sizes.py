"""Download sizes include dependencies (issue 10, item 5), stated as an invariant over generated
plans: a step's known bytes are the sum of the recorded sizes of exactly the distributions the
simulation says that step brings onto the machine (fixer.simulate.simulate, read before and
after the step: what is new or at another version, plus what a forced reinstall names), and
its unknown ones are the rest: the ones with no recorded size, and the extras whose contents no
recipe lists. A --no-deps step counts only what it names."""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.errors import FixerError
from fixer.pipeline import simulated
from fixer.planner import bundled_environments, load_environment, make_plan
from fixer.recipes import load
from fixer.pipeline import resolve
from fixer.rules import requirement_parts
from fixer.simulate import DEPENDENCIES_OF, simulate

RECIPES = load()
ENVS = {n: load_environment(n)[0] for n in bundled_environments()}
GPU_ENVS = sorted(n for n, e in ENVS.items() if e.gpus)
VERSIONS = {f: sorted({b.version.split("+")[0] for b in RECIPES.builds_for(f)}) for f in ("torch", "tensorflow", "jax")}


def _dists(env: m.Environment) -> Dict[str, str]:
    return {d.name: d.version for d in (env.python.distributions if env.python else ())}


def _machines(env: m.Environment, plan: m.Plan) -> List[Dict[str, str]]:
    """The simulated machine's distributions after each prefix of the plan: [k] is the machine
    before step k, [k + 1] the one after it (each prefix simulated once, not once per use)."""
    return [_dists(simulate(env, m.Plan(steps=plan.steps[:k], stack=plan.stack), RECIPES))
            for k in range(len(plan.steps) + 1)]


def _brought(machines: List[Dict[str, str]], plan: m.Plan, k: int) -> Set[Tuple[str, str]]:
    """What step k brings, read off the simulated machine before and after it."""
    before, after = machines[k], machines[k + 1]
    step = plan.steps[k]
    out = {(n, v) for n, v in after.items() if before.get(n) != v}
    if "--force-reinstall" in step.argv or "--reinstall" in step.argv:
        for text in step.packages:
            name, _extras, _spec, exact = requirement_parts(text)
            if exact and after.get(name) == exact:
                out.add((name, exact))
    return out


def _extras_groups(plan: m.Plan, k: int, before: Dict[str, str]) -> Set[str]:
    """Requirements with extras a step's framework install brings whose contents no recipe
    lists (cuda-toolkit[cublas,...]), and that are not already satisfied."""
    step = plan.steps[k]
    if "--no-deps" in step.argv:
        return set()
    out = set()
    builds = list(plan.stack.choices and [c.build for c in plan.stack.choices]) + list(RECIPES.builds)
    mains = {requirement_parts(b.packages[0])[::3]: b for b in reversed(builds) if b.packages}
    for text in step.packages:
        name, _e, _s, exact = requirement_parts(text)
        b = mains.get((name, exact))
        for r in (b.requires if b is not None else ()):
            dn, extras, spec, dexact = requirement_parts(r)
            if extras and before.get(dn) != dexact and not any(requirement_parts(x.packages[0])[::3] == (dn, dexact)
                                                               for x in builds if x.packages):
                out.add(dn)
    return out


@st.composite
def intents(draw):
    frameworks = tuple(sorted(draw(st.sets(st.sampled_from(("torch", "tensorflow", "jax")), max_size=2))))
    versions = {}
    for f in frameworks:
        if draw(st.booleans()):
            versions[f] = draw(st.sampled_from(VERSIONS[f][-8:]))
    return m.Intent(frameworks=frameworks, versions=versions,
                    cudnn_from=draw(st.sampled_from((None, None, "pip", "apt"))))


def _plan(name: str, intent: m.Intent) -> Optional[m.Plan]:
    env = ENVS[name]
    try:
        return simulated(env, make_plan(env, resolve(env, intent, RECIPES)), RECIPES)
    except FixerError:
        return None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(GPU_ENVS), intent=intents())
def test_sizes_are_exactly_what_the_simulation_brings(name, intent):
    plan = _plan(name, intent)
    if plan is None:
        return
    machines = _machines(ENVS[name], plan)
    for k, step in enumerate(plan.steps):
        if step.kind != "pip-install":
            continue
        brought = _brought(machines, plan, k)
        sizes = {nv: RECIPES.download_size(*nv) for nv in brought}
        assert (step.download_bytes or 0) == sum(s for s in sizes.values() if s is not None), (step.packages, sizes)
        unsized = sorted(f"{n}=={v}" for (n, v), s in sizes.items() if s is None)
        groups = _extras_groups(plan, k, machines[k])
        plain = sorted(u for u in step.download_unknown if not u.startswith(("what ", DEPENDENCIES_OF)))
        assert plain == unsized
        # the recipes hold a build's GPU-library pins, never its whole Requires-Dist: every
        # distribution a step installs with its dependencies says that they are not known
        deps_of = {u[len(DEPENDENCIES_OF):].split(" ")[0].split("[")[0].split(":")[0]
                   for u in step.download_unknown if u.startswith(DEPENDENCIES_OF)}
        if "--no-deps" in step.argv:
            assert not deps_of
        else:
            named = {requirement_parts(p)[0] for p in step.packages}
            assert {n for n, _ in brought if n in named} <= deps_of, (step.packages, step.download_unknown)
        assert {u.split(" ")[1].split("[")[0] for u in step.download_unknown if u.startswith("what ")} == groups
        if "--no-deps" in step.argv:
            named = {requirement_parts(p)[0] for p in step.packages}
            assert {n for n, _ in brought} <= named
    known, unknown = plan.download
    assert known == sum(s.download_bytes or 0 for s in plan.steps)
    assert len(unknown) == sum(len(s.download_unknown) for s in plan.steps)
    # "the known total is complete" (nothing unknown) only when every install's dependency set is known
    with_deps = [k for k, s in enumerate(plan.steps) if s.kind == "pip-install" and "--no-deps" not in s.argv
                 and {n for n, _ in _brought(machines, plan, k)} & {requirement_parts(p)[0] for p in s.packages}]
    if with_deps:
        assert unknown


def test_a_torch_change_counts_its_cuda_wheels():
    """torch 2.8.0 from PyPI (cu128: the driver's CUDA is 12.8) onto the 2026-08 Colab image:
    torch's own wheel and the nvidia-* wheels its pins move (cuDNN 9.10.2.21 among them), not
    torch alone."""
    import dataclasses

    env = dataclasses.replace(ENVS["colab-2026-08"], driver=m.Driver(version="570.26", cuda_version="12.8"))
    plan = simulated(env, make_plan(env, resolve(env, m.Intent(versions={"torch": "2.8.0"}), RECIPES)), RECIPES)
    (step, *_rest) = [s for s in plan.steps if s.kind == "pip-install"]
    torch = RECIPES.download_size("torch", "2.8.0")
    cudnn = RECIPES.download_size("nvidia-cudnn-cu12", "9.10.2.21")
    assert torch and cudnn and step.download_bytes is not None
    assert step.download_bytes >= torch + cudnn


def test_unknown_sizes_are_named_and_counted(capsys):
    """An index build with no recorded size is named, and the total says how many are unknown,
    in the text and in --json."""
    import json

    from fixer.cli import app
    from typer.testing import CliRunner

    plan = _plan("h200-healthy", m.Intent(versions={"torch": "2.10.0"}))
    assert plan is not None
    known, unknown = plan.download
    assert known > 0 and "torch==2.10.0+cu130" in unknown
    runner = CliRunner()
    res = runner.invoke(app, ["plan", "--environment", "h200-healthy", "--torch", "2.10.0", "--json"])
    body = json.loads(res.stdout)["plan"]["download"]
    assert body["known_bytes"] == known and body["unknown"] == list(unknown)
    pkgs = [u for u in unknown if not u.startswith(DEPENDENCIES_OF)]
    deps = [u for u in unknown if u.startswith(DEPENDENCIES_OF)]
    assert "dependencies of torch 2.10.0+cu130: not known" in deps
    assert f"+ {len(pkgs)} packages of unknown size" in body["text"]
    assert body["text"].endswith(f"+ the dependencies of {len(deps)} install{'s' if len(deps) != 1 else ''} (not known)")
    res = runner.invoke(app, ["plan", "--environment", "h200-healthy", "--torch", "2.10.0"], env={"COLUMNS": "200"})
    assert f"{len(pkgs)} packages of unknown size" in res.stdout


@pytest.mark.parametrize("name", sorted(ENVS))
def test_bundled_plans_price_every_download(name):
    plan = _plan(name, m.Intent())
    if plan is None:
        return
    for s in plan.steps:
        if s.kind in ("pip-install", "apt-install", "conda-install"):
            assert s.download_bytes is not None or s.download_unknown or s.kind == "pip-install"
