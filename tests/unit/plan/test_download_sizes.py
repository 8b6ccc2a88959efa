"""Download sizes include dependencies, stated as an invariant over generated
plans: a step's known bytes are the sum of the recorded sizes of exactly the distributions the
simulation says that step brings onto the machine (fixer.planner.simulate.simulate, read before and
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
from fixer.planner.steps import bundled_environments, load_environment, make_plan
from fixer.recipebook import load
from fixer.pipeline import resolve
from fixer.rules import requirement_parts
from fixer.model import DEPENDENCIES_OF
from fixer.planner.simulate import simulate
from tests.helpers.examples import examples

RECIPES = load()
ENVS = {n: load_environment(n)[0] for n in bundled_environments()}
GPU_ENVS = sorted(n for n, e in ENVS.items() if e.gpus)
VERSIONS = {
    f: sorted({b.version.split("+")[0] for b in RECIPES.builds_for(f)})
    for f in ("torch", "tensorflow", "jax")
}


def _dists(env: m.Environment) -> Dict[str, str]:
    return {d.name: d.version for d in (env.python.distributions if env.python else ())}


def _machines(env: m.Environment, plan: m.Plan) -> List[Dict[str, str]]:
    """The simulated machine's distributions after each prefix of the plan: [k] is the machine
    before step k, [k + 1] the one after it (each prefix simulated once, not once per use)."""
    return [
        _dists(simulate(env, m.Plan(steps=plan.steps[:k], stack=plan.stack), RECIPES))
        for k in range(len(plan.steps) + 1)
    ]


def _brought(machines: List[Dict[str, str]], plan: m.Plan, k: int) -> Set[Tuple[str, str]]:
    """What step k brings, read off the simulated machine before and after it."""
    before, after = machines[k], machines[k + 1]
    step = plan.steps[k]
    out = {(n, v) for n, v in after.items() if before.get(n) != v}
    if step.pip is not None and step.pip.reinstall:
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
    builds = list(plan.stack.choices and [c.build for c in plan.stack.choices]) + list(
        RECIPES.builds
    )
    mains = {requirement_parts(b.packages[0])[::3]: b for b in reversed(builds) if b.packages}
    for text in step.packages:
        name, _e, _s, exact = requirement_parts(text)
        b = mains.get((name, exact))
        for r in b.requires if b is not None else ():
            dn, extras, spec, dexact = requirement_parts(r)
            if (
                extras
                and before.get(dn) != dexact
                and not any(
                    requirement_parts(x.packages[0])[::3] == (dn, dexact)
                    for x in builds
                    if x.packages
                )
            ):
                out.add(dn)
    return out


def _deps_of(step: m.Step) -> Set[str]:
    """The names a step's "dependencies of NAME VERSION: not known" items are about."""
    return {
        u[len(DEPENDENCIES_OF) :].split(" ")[0].split("[")[0].split(":")[0]
        for u in step.download_unknown
        if u.startswith(DEPENDENCIES_OF)
    }


def _dependency_set(name: str, extras: Tuple[str, ...], version: str) -> Optional[m.DependencySet]:
    key = f"{name}[{','.join(extras)}]" if extras else name
    return RECIPES.dependencies_of("pip", key, version)


def _check_system_install(step: m.Step) -> None:
    """An apt or conda install: the package itself is priced or named; what it brings is
    named (a recorded DependencySet's `brings`, at the package's version), and the rest (its
    `others`, or everything when no source says) is a "dependencies of" item: the total is
    never shown as complete while it is not."""
    manager = "apt" if step.kind == "apt-install" else "conda"
    deps_of = _deps_of(step)
    for text in step.packages:
        if manager == "apt":
            name, _, version = text.partition("=")
        else:
            name, _e, _s, exact = requirement_parts(text)
            if exact is None:
                assert f"conda, fetched by {name}.install()" in step.download_unknown
                continue
            version = exact
        assert f"{name}=={version}" in step.download_unknown or step.download_bytes, (
            text,
            step.download_unknown,
        )
        dset = RECIPES.dependencies_of(manager, name, version)
        if dset is None or dset.others or not dset.complete:
            assert name in deps_of, (text, step.download_unknown)
        for b in dset.brings if dset else ():
            dep = requirement_parts(b.replace("{version}", version))
            size = RECIPES.download_size(dep[0], dep[3] or "")
            assert size is not None or f"{dep[0]}=={dep[3]}" in step.download_unknown, (
                b,
                step.download_unknown,
            )


@st.composite
def intents(draw):
    frameworks = tuple(
        sorted(draw(st.sets(st.sampled_from(("torch", "tensorflow", "jax")), max_size=2)))
    )
    versions = {}
    for f in frameworks:
        if draw(st.booleans()):
            versions[f] = draw(st.sampled_from(VERSIONS[f][-8:]))
    return m.Intent(
        frameworks=frameworks,
        versions=versions,
        cudnn_from=draw(st.sampled_from((None, None, "pip", "apt", "conda"))),
    )


def _plan(name: str, intent: m.Intent) -> Optional[m.Plan]:
    env = ENVS[name]
    try:
        return simulated(env, make_plan(env, resolve(env, intent, RECIPES)), RECIPES)
    except FixerError:
        return None


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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
        assert (step.download_bytes or 0) == sum(s for s in sizes.values() if s is not None), (
            step.packages,
            sizes,
        )
        unsized = sorted(f"{n}=={v}" for (n, v), s in sizes.items() if s is None)
        groups = _extras_groups(plan, k, machines[k])
        plain = sorted(
            u for u in step.download_unknown if not u.startswith(("what ", DEPENDENCIES_OF))
        )
        # a requirement the simulation cannot place at a version (`pip install condacolab`)
        # is named without one; it must be one the step names and the machine lacks
        unplaced = [u for u in plain if "==" not in u]
        assert set(unplaced) <= {requirement_parts(p)[0] for p in step.packages} - set(
            machines[k]
        ), unplaced
        assert [u for u in plain if "==" in u] == unsized
        # every distribution a step installs with its dependencies either has them modelled
        # (a complete DependencySet whose every member is on the simulated machine after the
        # step) or says that they are not known
        deps_of = _deps_of(step)
        if "--no-deps" in step.argv:
            assert not deps_of
        else:
            extras = {requirement_parts(p)[0]: requirement_parts(p)[1] for p in step.packages}
            named = set(extras)
            for n, v in brought:
                if n in deps_of or (
                    n not in named and not _dependency_set(n, extras.get(n, ()), v)
                ):
                    continue
                dset = _dependency_set(n, extras.get(n, ()), v)
                assert dset is not None and dset.complete, (n, v, step.download_unknown)
                members = {
                    requirement_parts(b.replace("{version}", v))[0] for b in dset.brings
                } | set(dset.others)
                assert members <= set(machines[k + 1]), (n, members - set(machines[k + 1]))
        assert {
            u.split(" ")[1].split("[")[0] for u in step.download_unknown if u.startswith("what ")
        } == groups
        if "--no-deps" in step.argv:
            named = {requirement_parts(p)[0] for p in step.packages}
            assert {n for n, _ in brought} <= named
    for step in plan.steps:
        if step.kind in ("apt-install", "conda-install"):
            _check_system_install(step)
    known, unknown = plan.download
    assert known == sum(s.download_bytes or 0 for s in plan.steps)
    assert len(unknown) == sum(len(s.download_unknown) for s in plan.steps)
    # "the known total is complete" (nothing unknown) only when every install's dependency set is known
    with_deps = [
        k
        for k, s in enumerate(plan.steps)
        if s.kind == "pip-install"
        and "--no-deps" not in s.argv
        and {n for n, _ in _brought(machines, plan, k)}
        & {requirement_parts(p)[0] for p in s.packages}
    ]
    if with_deps:
        assert unknown


def test_a_torch_change_counts_its_cuda_wheels():
    """torch 2.8.0 from PyPI (cu128: the driver's CUDA is 12.8) onto the 2026-08 Colab image:
    torch's own wheel and the nvidia-* wheels its pins move (cuDNN 9.10.2.21 among them), not
    torch alone."""
    import dataclasses

    env = dataclasses.replace(
        ENVS["colab-2026-08"], driver=m.Driver(version="570.26", cuda_version="12.8")
    )
    plan = simulated(
        env, make_plan(env, resolve(env, m.Intent(versions={"torch": "2.8.0"}), RECIPES)), RECIPES
    )
    (step, *_rest) = [s for s in plan.steps if s.kind == "pip-install"]
    torch = RECIPES.download_size("torch", "2.8.0")
    cudnn = RECIPES.download_size("nvidia-cudnn-cu12", "9.10.2.21")
    assert torch and cudnn and step.download_bytes is not None
    assert step.download_bytes >= torch + cudnn


def test_unknown_sizes_are_named_and_counted(capsys):
    """An index build with no recorded size is named, and the total says how many are unknown,
    in the text and in --json."""
    import json

    from fixer.cli.commands import app
    from typer.testing import CliRunner

    plan = _plan("h200-healthy", m.Intent(versions={"torch": "2.10.0"}))
    assert plan is not None
    known, unknown = plan.download
    assert known > 0 and "torch==2.10.0+cu130" in unknown
    runner = CliRunner()
    res = runner.invoke(
        app, ["plan", "--environment", "h200-healthy", "--torch", "2.10.0", "--json"]
    )
    body = json.loads(res.stdout)["plan"]["download"]
    assert body["known_bytes"] == known and body["unknown"] == list(unknown)
    pkgs = [u for u in unknown if not u.startswith(DEPENDENCIES_OF)]
    deps = [u for u in unknown if u.startswith(DEPENDENCIES_OF)]
    assert "dependencies of torch 2.10.0+cu130: not known" in deps
    assert f"+ {len(pkgs)} packages of unknown size" in body["text"]
    assert body["text"].endswith(
        f"+ the dependencies of {len(deps)} install{'s' if len(deps) != 1 else ''} (not known)"
    )
    res = runner.invoke(
        app, ["plan", "--environment", "h200-healthy", "--torch", "2.10.0"], env={"COLUMNS": "200"}
    )
    assert f"{len(pkgs)} packages of unknown size" in res.stdout


@pytest.mark.parametrize("name", sorted(ENVS))
def test_bundled_plans_price_every_download(name):
    plan = _plan(name, m.Intent())
    if plan is None:
        return
    for s in plan.steps:
        if s.kind in ("pip-install", "apt-install", "conda-install"):
            assert s.download_bytes is not None or s.download_unknown or s.kind == "pip-install"


JAX_BUILDS = [b for b in RECIPES.builds_for("jax") if b.companions and b.packages]


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(build=st.sampled_from(JAX_BUILDS), name=st.sampled_from(GPU_ENVS))
def test_a_jax_install_brings_its_companions(build, name):
    """`pip install jax[cudaNN]==X` alone, on a machine without JAX: the simulated machine has
    jaxlib, the plugin and its pjrt at the versions the build's companions pin (jax's extra and
    the plugin's install_requires, recipes/dependencies.toml), so diagnose of the result sees
    them; each is priced from its recorded size or named by name==version, never folded into a
    "dependencies of" item, and the step's own requirement says what else it brings."""
    import dataclasses

    from fixer.planner.simulate import downloads

    env = ENVS[name]
    py = env.python
    assert py is not None
    gone = {"jax", "jaxlib"} | {d.name for d in py.distributions if d.name.startswith("jax-")}
    env = dataclasses.replace(
        env,
        python=dataclasses.replace(
            py, distributions=tuple(d for d in py.distributions if d.name not in gone)
        ),
        frameworks=tuple(f for f in env.frameworks if f.framework != "jax"),
    )
    step = m.Step(
        kind="pip-install",
        summary="",
        argv=("pip", "install", build.packages[0]),
        packages=build.packages[:1],
    )
    plan = m.Plan(steps=(step,), stack=m.Stack())
    after = _dists(simulate(env, plan, RECIPES))
    (items,) = downloads(env, plan, RECIPES)
    labels = {d.label for d in items}
    for c in build.companions:
        cname, _e, _s, cver = requirement_parts(c)
        assert after.get(cname) == cver, (c, after.get(cname))
        size = RECIPES.download_size(cname, cver or "")
        assert any(
            d.name == cname and d.version == cver and d.size_bytes == size and not d.dependencies
            for d in items
        ), (c, labels)
        assert not any(d.dependencies and d.name == cname and not d.others for d in items), labels
    jax = next(d for d in items if d.dependencies and d.name == "jax")
    assert "numpy" in jax.others and jax.complete


@pytest.mark.parametrize("build", JAX_BUILDS, ids=lambda b: f"{b.version}-{b.variant}")
def test_every_jax_build_has_its_dependencies_recorded(build):
    """recipes/jax.toml's companions and recipes/dependencies.toml agree: what `jax[cudaNN]==X`
    brings (and what that brings in turn) is exactly the build's companions, each with a record
    of its own, so no JAX install falls back to an unnamed "dependencies of" item."""
    name, extras, _spec, version = requirement_parts(build.packages[0])
    assert version is not None
    pins = {requirement_parts(c)[0]: requirement_parts(c)[3] for c in build.companions}
    todo, brought = [(f"{name}[{','.join(extras)}]", version)], set()
    while todo:
        key, v = todo.pop()
        dset = RECIPES.dependencies_of("pip", key, v)
        assert dset is not None, (key, v)
        for b in dset.brings:
            dep, _e, _s, exact = requirement_parts(b.replace("{version}", v))
            brought.add(dep)
            assert (exact or pins.get(dep)) == pins.get(dep), (b, pins)
            todo.append((dep, pins[dep] or ""))
    assert brought == set(pins)
