"""Scripts import neither the tests nor each other: each file under scripts/ imports only the
standard library, the package (fixer) and third-party modules, so moving tests or another script
never breaks it. Read from the source (ast), over every script."""

from __future__ import annotations

import ast


from tests.helpers.paths import REPO
from tests.helpers import sources

SCRIPTS = sorted(p for p in (REPO / "scripts").rglob("*.py"))
NAMES = {p.stem for p in SCRIPTS}


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, ("." * node.level) + (node.module or "")
        elif isinstance(node, ast.Call) and getattr(
            node.func, "attr", getattr(node.func, "id", "")
        ) in ("import_module", "spec_from_file_location", "run_path", "run_module", "__import__"):
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    yield node.lineno, arg.value


def test_there_are_scripts():
    assert len(SCRIPTS) >= 10


def test_no_script_imports_the_tests_or_another_script():
    offenders = []
    for path in SCRIPTS:
        for line, name in _imports(sources.tree(path)):
            top = (
                name.split("/")[-1].split(".")[0] if "/" in name else name.lstrip(".").split(".")[0]
            )
            if (
                name.startswith(".")
                or top == "tests"
                or top == "scripts"
                or (top in NAMES and top != path.stem)
            ):
                offenders.append(f"{path.relative_to(REPO)}:{line}: {name}")
    assert not offenders, "\n".join(offenders)
