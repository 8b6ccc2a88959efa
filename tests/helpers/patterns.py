"""The explain catalogue's compiled patterns, each named by where it is written: one home for the
unit tests that check their shape (tests/unit/explain/test_linear.py) and the timed guards that
run them on adversarial megabytes (tests/timing/test_explain_linear.py)."""

from __future__ import annotations

from typing import List, Tuple

from fixer.explainer import load_catalogue
from fixer.explainer.scan import Pattern


def catalogue_patterns() -> List[Tuple[str, Pattern]]:
    """(where, pattern) of every rule's patterns, requires, excludes and supports, and of every
    loader wording."""
    cat = load_catalogue()
    out: List[Tuple[str, Pattern]] = []
    for r in cat.rules:
        for key in ("patterns", "requires", "excludes", "supports"):
            out += [(f"{r.where} {key}", p) for p in getattr(r, key)]
    for lr in cat.loaders:
        out += [(f"{lr.where} loader", p) for p in lr.patterns]
    return out
