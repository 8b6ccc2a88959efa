"""Round sixteen's classes: text damaged on its way into the paste, a dispatcher's wording, and a
library table.

- Typographic quotes: an issue tracker, a forum or a word processor turns the ASCII quotes of a
  pasted message into ‘ ’ “ ” (or ´ « »); the scanner maps each back to its ASCII quote before
  any pattern runs (fixer/explainer/scan.py, ascii_quotes), so every template of the catalogue
  reads the same with its quotes in either form.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

import string
from typing import Dict, List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import analyze, load_catalogue
from fixer.explainer.scan import TYPOGRAPHIC_QUOTES, ascii_quotes
from tests.helpers.examples import examples

CAT = load_catalogue()
_SLOTS = {
    "lib": "libcudnn_ops.so.9",
    "lib2": "libcudnn_cnn.so.9",
    "dll": "cudnn_ops64_9.dll",
    "dir": "/usr/local/lib/python3.12/dist-packages/nvidia/cudnn/lib",
    "sym": "cudnnCreate",
    "name": "cuDNN",
}


def _filled(template: str) -> str:
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    return template.format(**{f: _SLOTS.get(f, "0") for f in fields})


def _first(text: str) -> str:
    found = analyze(text).findings
    return found[0].id if found else "unrecognised"


#: every template of the catalogue (rules and loader wordings) whose text holds a quote, filled
QUOTED: List[Tuple[str, str, str]] = [
    (where, text, _first(text))
    for where, text in (
        [(r.where, _filled(t)) for r in CAT.rules for t in r.templates]
        + [(lr.where, _filled(t)) for lr in CAT.loaders for t in lr.templates]
    )
    if "'" in text or '"' in text
]


def _smarten(text: str, picks: List[int]) -> str:
    """Each quote of the text replaced as `picks` says: 0 keeps it, k > 0 is the k-th
    typographic form of that quote (cycled)."""
    out: List[str] = []
    i = 0
    for ch in text:
        forms = TYPOGRAPHIC_QUOTES.get(ch)
        if forms:
            k = picks[i % len(picks)]
            i += 1
            out.append(forms[(k - 1) % len(forms)] if k else ch)
        else:
            out.append(ch)
    return "".join(out)


def test_every_typographic_quote_maps_to_its_ascii_quote_one_for_one():
    for ascii_q, forms in TYPOGRAPHIC_QUOTES.items():
        joined = "".join(forms)
        assert ascii_quotes(joined) == ascii_q * len(forms)
    assert len(QUOTED) >= 50  # the catalogue's quoted templates are all here


@settings(max_examples=examples(20), deadline=None)
@given(picks=st.lists(st.integers(0, 8), min_size=1, max_size=12))
def test_a_smartened_template_ranks_the_same_first_cause(picks: List[int]) -> None:
    """For EVERY quoted template: a generated choice of its quotes in typographic form ranks the
    same first cause as the ASCII form, and the scanner restores the text character for
    character."""
    moved: Dict[str, Tuple[str, str]] = {}
    for where, text, first in QUOTED:
        smart = _smarten(text, picks)
        assert ascii_quotes(smart) == text
        got = _first(smart)
        if got != first:
            moved[where] = (first, got)
    assert not moved, moved
