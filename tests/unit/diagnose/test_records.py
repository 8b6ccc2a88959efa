"""Files against their record, and pip's leftovers, over generated damage of the bundled healthy
GPU machine (h200-healthy): for any set of a wheel's library files that differ from its RECORD,
doctor names exactly those files (files-modified), the plan reinstalls the same version with
--force-reinstall --no-deps (uv: --reinstall --no-deps), and the simulated result is healthy;
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
    assert ("--reinstall" if installer == "uv" else "--force-reinstall") in argv
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
