"""render.prose over generated prose: words, backtick spans, commands and paths mixed, wrapped
at widths from 30 to 120 columns.

Invariants: the words come back in order (nothing lost, nothing cut); every line fits the width
unless it is one unit after its indent; a command or a backtick span is whole on one line."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.render.prose import units, wrap
from tests.helpers.examples import examples

_CHARS = st.sampled_from(list("abcdefghijklmnopqrstuvwxyzABCXYZ0123456789_-+=:@~") + ["é", "数"])
word = st.text(_CHARS, min_size=1, max_size=30).filter(lambda w: w not in ("and", "then"))
phrase = st.lists(word, min_size=1, max_size=6).map(" ".join)
quoted = phrase.map(lambda p: f"`{p}`")
command = st.tuples(
    st.sampled_from(["pip install", "apt-get install -y", "/usr/bin/python3 -m pip install"]),
    st.lists(word, min_size=1, max_size=8),
).map(lambda t: " ".join([t[0], *t[1]]))
pieces = st.lists(st.one_of(word, quoted, command.map(lambda c: c + ".")), min_size=1, max_size=25)


@settings(max_examples=examples(300), deadline=None)
@given(parts=pieces, width=st.integers(30, 120), indent=st.sampled_from(["", "  ", "    "]))
def test_wrap_keeps_words_and_units_and_fits(parts, width, indent) -> None:
    from rich.cells import cell_len

    text = " ".join(parts)
    lines = [t.plain for t in wrap(text, width, indent)]
    assert " ".join(lines).split() == text.split()
    for line in lines:
        body = line[len(indent) :] if line is not lines[0] else line
        assert cell_len(line) <= width or len(units(body)) == 1, (width, line)
    for p in parts:
        if p.startswith("`") or " " in p:  # a span or a command
            assert any(p.rstrip(".") in line for line in lines), (p, lines)


def test_a_program_named_in_passing_hides_no_command_after_it() -> None:
    """'uv or pip install x': "uv" starts no command, and the pip command after it is still one
    unit (the search goes on inside the words a non-command took; Hypothesis found it)."""
    for lead in ("uv or", "uv 00000", "conda and then", "pip metadata of"):
        text = f"{lead} pip install --force-reinstall 'x==1', done"
        spans = [text[s:e] for s, e in units(text)]
        assert "pip install --force-reinstall 'x==1'," in spans, spans
