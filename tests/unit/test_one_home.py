"""Issue 9's "one home" checks that code can make: what fixer.resolver may import, and that no
stage reads back text another stage wrote (index options out of an argv, the loader's search
out of its words, a package out of "name version")."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator, Tuple


from tests.helpers import sources

FIXER = Path(__file__).resolve().parents[2] / "fixer"
RESOLVE = FIXER / "resolver"

#: What the resolver may import from the package: the model, the rules, the version helpers.
ALLOWED = {"fixer.model", "fixer.rules", "fixer.system.versions"}


def _imports(path: Path) -> Iterator[Tuple[int, str]]:
    """(line, absolute module) of every import in `path`, lazy ones inside functions included."""
    package = "fixer." + ".".join(path.relative_to(FIXER).with_suffix("").parts[:-1])
    for node in sources.nodes(path):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            yield node.lineno, mod


def test_the_resolver_imports_only_the_model_the_rules_and_the_version_helpers():
    bad = []
    for path in sorted(RESOLVE.glob("*.py")):
        for line, mod in _imports(path):
            if (
                (mod == "fixer" or mod.startswith("fixer."))
                and not mod.startswith("fixer.resolver")
                and mod not in ALLOWED
            ):
                bad.append(f"{path.relative_to(FIXER.parent)}:{line}: {mod}")
    assert not bad, (
        "the resolver imports beyond the model, the rules and the version helpers:\n"
        + "\n".join(bad)
    )


def _source_lines() -> Iterator[Tuple[str, int, str]]:
    for path in sorted(FIXER.rglob("*.py")):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            yield str(path.relative_to(FIXER.parent)), i, line


def test_no_stage_reads_back_what_another_wrote():
    patterns = {
        # index options and flags out of a plan step's argv (they are Step.pip)
        "argv": re.compile(
            r"""(["']--(index-url|extra-index-url|find-links|no-deps|no-index|reinstall|force-reinstall|"""
            r"""break-system-packages)["']\s+(not\s+)?in\s+\w*\.?argv)|_VALUE_FLAGS"""
        ),
        # the loader's search out of the words of LoadResolution.steps (it is LoadResolution.search)
        "steps": re.compile(
            r"in (ld|res|load)\.steps|preloads by path\"\)|endswith\(\"preloads by path"
        ),
        # a library copy's package out of "name version" (it is Package(name, version))
        "package": re.compile(r"\.package\.(split|partition|replace)\(|_parse_package"),
    }
    hits = [
        f"{p}:{i}: [{k}] {line.strip()}"
        for p, i, line in _source_lines()
        for k, rx in patterns.items()
        if rx.search(line)
    ]
    assert not hits, "\n".join(hits)
