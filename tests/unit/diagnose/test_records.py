"""Files against their record, and pip's leftovers, over generated damage of the bundled healthy
GPU machine (h200-healthy): for any set of a wheel's library files that differ from its RECORD,
doctor names exactly those files (files-modified), the plan reinstalls the same version with
--force-reinstall --no-deps (uv: --reinstall-package NAME --no-deps), and the simulated result is healthy;
for any leftovers, doctor says pip-leftovers and the plan's cleanup step removes exactly them."""

from __future__ import annotations

import dataclasses
from typing import List

from hypothesis import given, settings, strategies as st

from fixer import recipebook
from fixer.diagnosis.findings import diagnose
from fixer.model import Environment, Intent, LibraryCopy, PlanOptions
from fixer.pipeline import plan_machine
from fixer.planner.simulate import check_plan
from fixer.planner.steps import load_environment
from fixer.rules import is_complete, modified_files
from tests.helpers.examples import examples

RECIPES = recipebook.load(())
HEALTHY = load_environment("h200-healthy")[0]
PIP_COPIES = [
    i for i, c in enumerate(HEALTHY.libraries) if c.origin == "pip" and c.package and c.files
]


def _with_modified(env: Environment, index: int, names: List[str], why: str) -> Environment:
    c = env.libraries[index]
    files = tuple(dataclasses.replace(f, differs=why) if f.name in names else f for f in c.files)
    libs = list(env.libraries)
    libs[index] = dataclasses.replace(c, files=files)
    return dataclasses.replace(env, libraries=tuple(libs))


@st.composite
def modified(draw: st.DrawFn) -> Environment:
    i = draw(st.sampled_from(PIP_COPIES))
    names = [f.name for f in HEALTHY.libraries[i].files]
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    why = draw(
        st.sampled_from(["size 1 bytes, RECORD 2", "sha256 differs from RECORD (same size)"])
    )
    return _with_modified(HEALTHY, i, chosen, why)


def test_the_healthy_machine_is_healthy() -> None:
    assert PIP_COPIES
    assert not [f for f in diagnose(HEALTHY, RECIPES) if f.severity in ("error", "warning")]


@settings(max_examples=examples(60))
@given(modified(), st.sampled_from(["pip", "uv"]))
def test_modified_files_are_named_and_reinstalled_at_the_same_version(env, installer) -> None:
    copies: List[LibraryCopy] = [c for c in env.libraries if modified_files(c)]
    assert len(copies) == 1 and not is_complete(copies[0])
    c = copies[0]
    findings = diagnose(env, RECIPES)
    mine = [f for f in findings if f.id == "files-modified"]
    assert len(mine) == 1
    for name in modified_files(c):
        assert name in mine[0].title
    plan = plan_machine(env, tuple(findings), Intent(), RECIPES, PlanOptions(installer=installer))
    assert c.package is not None
    req = c.package.requirement
    steps = [s for s in plan.steps if s.kind == "pip-install" and req in s.packages]
    assert steps, [s.summary for s in plan.steps]
    argv = steps[0].argv
    assert "--no-deps" in argv
    if installer == "uv":
        assert argv[argv.index("--reinstall-package") + 1] == c.package.name
    else:
        assert "--force-reinstall" in argv
    assert check_plan(env, plan, RECIPES).healthy


@settings(max_examples=examples(30))
@given(
    st.lists(
        st.sampled_from(
            [
                "{site}/~vidia_cudnn_cu13-9.19.0.56.dist-info",
                "{site}/nvidia/~udnn",
                "{site}/~-vidia_cublas-13.0.2.9.dist-info",
            ]
        ),
        min_size=1,
        unique=True,
    )
)
def test_leftovers_are_found_and_cleaned_by_one_step(templates) -> None:
    assert HEALTHY.python is not None
    site = HEALTHY.python.site_packages[0]
    left = tuple(t.format(site=site) for t in templates)
    env = dataclasses.replace(HEALTHY, pip_leftovers=left)
    findings = diagnose(env, RECIPES)
    found = [f for f in findings if f.id == "pip-leftovers"]
    assert len(found) == 1 and tuple(found[0].evidence) == left
    plan = plan_machine(env, tuple(findings), Intent(), RECIPES, PlanOptions())
    cleanup = [s for s in plan.steps if s.kind == "cleanup"]
    assert len(cleanup) == 1 and cleanup[0].files == left and cleanup[0].argv == ()
    assert check_plan(env, plan, RECIPES).healthy


#: the distributions a framework of h200-healthy pins with == (torch's Requires-Dist)
PINNED = ("nvidia-cudnn-cu13", "nvidia-nccl-cu13", "nvidia-cusparselt-cu13", "triton")


@st.composite
def renamed(draw: st.DrawFn) -> tuple:
    """METADATA says another version than the dist-info folder's name (which stays the healthy
    one): what a hand-edited or half-upgraded install leaves."""
    name = draw(st.sampled_from(PINNED))
    d = next(d for d in HEALTHY.python.distributions if d.name == name)
    parts = [int(x) for x in d.version.split(".")]
    i = draw(st.integers(0, len(parts) - 1))
    parts[i] = draw(st.integers(0, 99).filter(lambda x: x != parts[i]))
    meta = ".".join(str(x) for x in parts)
    dists = tuple(
        dataclasses.replace(x, version=meta, named_version=d.version) if x is d else x
        for x in HEALTHY.python.distributions
    )
    libs = tuple(
        dataclasses.replace(c, package=dataclasses.replace(c.package, version=meta))
        if c.package is not None and c.package.name == name
        else c
        for c in HEALTHY.libraries
    )
    python = dataclasses.replace(HEALTHY.python, distributions=dists)
    return dataclasses.replace(HEALTHY, python=python, libraries=libs), name, d.version


@settings(max_examples=examples(40), deadline=None)
@given(renamed(), st.sampled_from(["pip", "uv"]))
def test_an_install_the_installer_would_skip_is_forced(case, installer) -> None:
    """Every pip step that installs NAME==V while the machine's NAME is V by METADATA (pip's
    view) or by its dist-info folder's name (uv's) forces the reinstall of exactly NAME
    (fixer.system.versions.installer_skips); the simulated result is healthy."""
    env, name, named = case
    findings = diagnose(env, RECIPES)
    plan = plan_machine(env, tuple(findings), Intent(), RECIPES, PlanOptions(installer=installer))
    have = {d.name: (d.version, d.named_version) for d in env.python.distributions}
    for s in plan.steps:
        if s.kind != "pip-install" or s.pip is None:
            continue
        for req in s.packages:
            n, _, v = req.partition("==")
            if n in have and v and v in have[n]:
                assert s.pip.reinstall, (req, s.argv)
                if installer == "uv":
                    assert s.argv[s.argv.index("--reinstall-package") + 1] == n, s.argv
                else:
                    assert "--force-reinstall" in s.argv, s.argv
    # doctor names it; the plan reinstalls the version the folder names; the result is healthy
    assert any(f.id == "files-modified" and name in f.title for f in findings)
    assert any(f"{name}=={named}" in s.packages and s.pip.reinstall for s in plan.steps if s.pip)
    assert check_plan(env, plan, RECIPES).healthy
