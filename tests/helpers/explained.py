"""What explain ranks, as the explain tests compare it: one home for the helper that every
emitter round's tests used to define for itself."""

from __future__ import annotations

from typing import Any, List

from fixer.explainer import explain


def ids(text: str, **kw: Any) -> List[str]:
    """The finding ids explain gives `text`, first-ranked first (keywords go to explain)."""
    return [f.id for f in explain(text, **kw)]
