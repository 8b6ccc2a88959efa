"""scripts/bench_apply.py stamps apply's phases with its own reporter (Timeline): it must answer
every hook fixer.model.Reporter has, or the benchmark dies on the GPU machine when a
hook is added (it did: `starting`). Read from the source (ast): the script imports fixer late,
to time that import."""

from __future__ import annotations

import ast
import inspect

from fixer.model import Reporter
from tests.helpers.paths import REPO


def test_the_benchmarks_reporter_has_every_hook_of_reporter():
    tree = ast.parse((REPO / "scripts" / "bench_apply.py").read_text())
    timeline = next(
        n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "Timeline"
    )
    has = {n.name for n in timeline.body if isinstance(n, ast.FunctionDef)}
    hooks = {
        name
        for name, member in inspect.getmembers(Reporter, inspect.isfunction)
        if not name.startswith("_")
    }
    assert hooks and hooks <= has, f"Timeline lacks {sorted(hooks - has)}"
