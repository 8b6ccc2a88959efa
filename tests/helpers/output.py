"""Checks on what a command printed: text that must stay copyable (a path, a command, a cell)."""

from __future__ import annotations


def whole_on_a_line(out: str, text: str) -> bool:
    """`text` (one line: a path, a command, a cell) appears unbroken within one line of `out`."""
    assert "\n" not in text
    return text in out


def words_whole(out: str, text: str) -> bool:
    """Every word of `text` appears unbroken on some line of `out` (a cell that may wrap between words)."""
    return all(whole_on_a_line(out, w) for w in text.split())


def units_whole(out: str, text: str) -> bool:
    """Every unit of `text` by render.prose's rule (a word, a backtick span, a command, a path
    with spaces in its folders) appears unbroken within one line of `out`: prose may wrap
    between units, never inside one."""
    from fixer.render.prose import units

    return all(whole_on_a_line(out, text[s:e]) for s, e in units(text))
