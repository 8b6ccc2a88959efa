"""fixer.rules over generated inputs: each rule against its definition, the copies the child
scripts carry, and the completeness rule shared by doctor and plan."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings, strategies as st

from fixer import rules
from fixer import recipebook as recipes
from fixer.diagnosis.findings import diagnose
from fixer.model import Intent, LibraryCopy
from fixer.planner.steps import load_environment, make_plan
from fixer.resolver import resolve
from tests.helpers.examples import examples
from tests.helpers.paths import REPO

ROOT = REPO

versions = st.tuples(st.integers(8, 10), st.integers(0, 30), st.integers(0, 9))
ccs = st.tuples(st.integers(3, 12), st.integers(0, 9))


def _v(t) -> str:
    return ".".join(map(str, t))


@given(versions, versions)
def test_cudnn_compatible_from_8_is_same_major_and_minor_at_least(runtime, built):
    expect = runtime[0] == built[0] and runtime[:2] >= built[:2]
    assert rules.cudnn_compatible(_v(runtime), _v(built)) is expect
    relation = rules.cudnn_relation(_v(runtime), _v(built))
    assert relation == ("ok" if expect else "other-major" if runtime[0] != built[0] else "older")


@given(ccs, st.lists(ccs, max_size=6), st.one_of(st.none(), ccs))
def test_runs_on_is_sass_of_the_same_major_at_most_or_ptx_at_most(cc, sass, ptx):
    expect = any(s[0] == cc[0] and s[1] <= cc[1] for s in sass) or (ptx is not None and ptx <= cc)
    assert rules.runs_on(_v(cc), [_v(s) for s in sass], _v(ptx) if ptx else None) is expect


@given(st.integers(9, 20), st.integers(0, 99), st.integers(0, 99))
def test_cudnn_version_from_int_from_9(major, minor, patch):
    assert (
        rules.cudnn_version_from_int(major * 10000 + minor * 100 + patch)
        == f"{major}.{minor}.{patch}"
    )


@given(st.integers(5, 8), st.integers(0, 9), st.integers(0, 99))
def test_cudnn_version_from_int_before_9(major, minor, patch):
    assert (
        rules.cudnn_version_from_int(major * 1000 + minor * 100 + patch)
        == f"{major}.{minor}.{patch}"
    )


@given(
    st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,5}([._-][A-Za-z0-9]{1,4}){0,3}", fullmatch=True),
    st.one_of(
        st.none(), st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){0,3}(\+cu[0-9]{3})?", fullmatch=True)
    ),
    st.sampled_from(["", "[and-cuda]"]),
    st.sampled_from(["", '; platform_system == "Linux"']),
)
def test_split_requirement_gives_the_canonical_name_and_the_exact_version(
    name, version, extra, marker
):
    req = name + extra + (f"=={version}" if version else "") + marker
    got = rules.split_requirement(req)
    assert got == (rules.canonical_name(name), version)
    assert rules.requirement_name(req) == got[0]


CHILDREN = ROOT / "fixer" / "children"


def test_the_children_share_one_rules_module_stdlib_only():
    """The scripts that run in foreign interpreters load children/childrules.py by path (no
    copy of a rule in them), and that module imports the standard library only."""
    import ast
    import sys

    tree = ast.parse((CHILDREN / "childrules.py").read_text())
    imported = {
        (a.name if isinstance(n, ast.Import) else n.module or "").split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in (n.names if isinstance(n, ast.Import) else [n])
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    shared = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for script in ("verify.py", "deep.py"):
        text = (CHILDREN / script).read_text()
        assert '"childrules.py"' in text, script
        defined = {n.name for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
        assert not shared & defined, f"{script} defines its own copy of {shared & defined}"


@settings(max_examples=examples(200))
@given(st.integers(0, 200000))
def test_the_children_read_cudnn_versions_as_the_package_does(value):
    import importlib.util

    spec = importlib.util.spec_from_file_location("_childrules_test", CHILDREN / "childrules.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.cudnn_version_from_int(value) == rules.cudnn_version_from_int(value)


def _damaged(copy: LibraryCopy, missing: bool, truncated: bool, mixed: bool) -> LibraryCopy:
    files = list(copy.files)
    if truncated and files:
        files[-1] = dataclasses.replace(files[-1], valid_elf=False)
    return dataclasses.replace(
        copy,
        files=tuple(files),
        mixed=mixed,
        missing=(files[-1].name,) if missing and files else (),
    )


@settings(max_examples=examples(12), deadline=None)
@given(st.booleans(), st.booleans(), st.booleans())
def test_an_incomplete_copy_that_loads_is_found_by_doctor_and_repaired_by_plan(
    missing, truncated, mixed
):
    """One completeness rule: whatever makes doctor call the loaded cuDNN copy incomplete or
    mixed (a file missing, one not a loadable ELF object, two versions) makes plan reinstall it."""
    real_recipes = recipes.load()
    env, _, _ = load_environment("h200-healthy")
    loaded = next(
        ld.directory for ld in env.loads if ld.consumer == "torch" and ld.library == "cudnn"
    )
    libs = tuple(
        _damaged(c, missing, truncated, mixed)
        if c.library == "cudnn" and c.directory == loaded
        else c
        for c in env.libraries
    )
    env = dataclasses.replace(env, libraries=libs)
    copy = next(c for c in env.libraries if c.library == "cudnn" and c.directory == loaded)
    ids = {f.id for f in diagnose(env, real_recipes) if f.severity == "error"}
    plan = make_plan(env, resolve(env, Intent(), real_recipes))
    reinstall = [
        s
        for s in plan.steps
        if s.kind == "pip-install" and any("nvidia-cudnn" in p for p in s.packages)
    ]
    assert rules.is_complete(copy) is not (missing or truncated or mixed)
    assert bool(ids & {"cudnn-incomplete", "cudnn-mixed"}) is not rules.is_complete(copy)
    assert bool(reinstall) is not rules.is_complete(copy), (ids, [s.argv for s in plan.steps])
