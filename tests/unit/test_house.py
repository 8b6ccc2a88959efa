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


#: The comment that must sit on an in-function import of the project's own modules, or on the
#: comment lines directly above it: what hoisting it to module level was measured to cost
#: (`python -X importtime -m fixer doctor --json`), the import cycle it stands in for, or the
#: Ctrl-C guard it is imported inside (tests/integration/cli/test_interrupt.py).
MARKERS = ("start-up:", "cycle:", "guard:")


def _project_import(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == "fixer"
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] == "fixer" for a in node.names)


def _marked(lines, lineno: int) -> bool:
    """The import's own line, or the run of comment lines (and imports: one comment may speak
    for the imports under it) right above it, names its reason."""
    if any(m in lines[lineno - 1] for m in MARKERS):
        return True
    i = lineno - 2
    while i >= 0 and lines[i].strip().startswith(("#", "from fixer", "import fixer")):
        if any(m in lines[i] for m in MARKERS):
            return True
        i -= 1
    return False


def test_in_function_project_imports_say_why():
    """An import of fixer's own modules inside a function hides a cycle or a start-up cost; each
    says which (fixer/children/ runs in foreign interpreters and imports nothing of fixer)."""
    quiet = []
    for path in sorted((REPO / "fixer").rglob("*.py")):
        if "children" in path.parts:
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for fn in sources.nodes(path):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if _project_import(node) and not _marked(lines, node.lineno):
                    quiet.append(
                        f"{path.relative_to(REPO)}:{node.lineno} {lines[node.lineno - 1].strip()}"
                    )
    assert not quiet, (
        "hoist to module level, or name the measured cost (# start-up: ...):\n"
        + "\n".join(sorted(set(quiet)))
    )
