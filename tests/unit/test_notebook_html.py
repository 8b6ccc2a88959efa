"""The notebook HTML of a recording (fixer.render.recorded_html): every word a browser could
break inside (UAX #14: after a hyphen, a slash, a "|", "}", "!", "?" or around a non-ASCII
character) is held on one line by a nowrap
span, and nothing else changes: dropping those spans gives back rich's own HTML exactly, so the
text a person copies is the text printed. The browser's layout of it is checked in
tests/integration/notebook/test_layout.py."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer import render
from tests.helpers.examples import examples

SPAN = '<span style="white-space:nowrap">'
TEXT = st.text(
    alphabet=st.sampled_from(list("abcXYZ019 -/+=.,:;|()[]{}'\"<>&~_\n") + ["é", "\u00a0"]),
    max_size=200,
)


def _rich_html(console) -> str:
    return str(console.export_html(inline_styles=True, code_format="{code}"))


@settings(max_examples=examples(300))
@given(text=TEXT, bold=st.booleans())
def test_only_breakable_words_are_wrapped_and_nothing_else_changes(text: str, bold: bool) -> None:
    console = render.record(
        lambda: render.out().print(text, markup=False, style="bold" if bold else None)
    )
    original = _rich_html(console)
    console = render.record(
        lambda: render.out().print(text, markup=False, style="bold" if bold else None)
    )
    got = render.recorded_html(console)
    body = got[got.index(">") + 1 : got.rindex("</pre>")]
    # every added span holds one word: no white space, no tag
    for inner in re.findall(re.escape(SPAN) + r"(.*?)</span>", body):
        assert inner and not re.search(r"[\s<]", inner)
        assert re.search(r"[-/|}!?]|[^\x00-\x7f\s]", inner)
    assert re.sub(re.escape(SPAN) + r"(.*?)</span>", r"\1", body) == original
    # outside the spans, no word holds a character a browser may break after (UAX #14)
    outside = re.sub(re.escape(SPAN) + r".*?</span>", " ", body)
    for piece in re.findall(r"(?:^|>)([^<]*)", outside):
        for word in piece.split():
            assert not re.search(r"[-/|}!?]|[^\x00-\x7f\s]", word), word
