"""The house's rules that code can check: every function fits on a screen (80 lines; the
complexity limit of 12 is ruff's C901, pyproject [tool.ruff.lint.mccabe]), and the stage
packages say in their __init__ what goes in and what comes out."""

from __future__ import annotations

import ast

from tests.helpers import sources
from tests.helpers.paths import REPO

MAX_LINES = 80
TREES = ("fixer", "scripts", "tests")


def _functions():
    for tree in TREES:
        for path in sorted((REPO / tree).rglob("*.py")):
            if "tests/data" in path.as_posix():
                continue
            for node in sources.nodes(path):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield path, node


def test_every_function_fits_on_a_screen():
    long = [
        f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path, node in _functions()
        if node.end_lineno - node.lineno + 1 > MAX_LINES
    ]
    assert not long, "split along its own phases:\n" + "\n".join(long)


def test_every_package_says_what_it_is():
    quiet = [
        str(init.relative_to(REPO))
        for init in sorted((REPO / "fixer").rglob("__init__.py"))
        if not ast.get_docstring(sources.tree(init))
    ]
    assert not quiet, quiet
