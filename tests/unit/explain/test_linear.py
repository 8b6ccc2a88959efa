"""explain is linear in its input: every catalogue pattern is bounded (the loader refuses
`*` / `+`) and anchored on a literal every match contains, and matching inside the windows around
those anchors finds exactly what a search of the whole text finds. The timed guards (each pattern
on adversarial megabytes, four times the input in about four times the time) are in
tests/timing/test_explain_linear.py: they take seconds, and their verdict depends on the
machine's load, so they run in the full suite (CI), not in the quick loop."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.errors import RecipeError
from fixer.explainer import load_catalogue, parse_catalogue
from fixer.explainer.scan import (
    MAX_WIDTH,
    AnchorIndex,
    UnboundedPattern,
    anchors_of,
    join_wrapped,
    width_of,
)
from tests.helpers.examples import examples
from tests.helpers.patterns import catalogue_patterns

PATTERNS = catalogue_patterns()


def test_every_pattern_is_bounded_and_anchored():
    assert len(PATTERNS) > 100
    for where, p in PATTERNS:
        assert p.width <= MAX_WIDTH, where
        assert p.anchors and min(map(len, p.anchors)) >= 3, (where, p.pattern)


def test_the_loader_refuses_an_unbounded_pattern():
    bad = (
        "schema = 2\n[[rule]]\nid = 'cudnn-missing'\ntitle = 't'\nfix = 'f'\n"
        "patterns = ['[a-z/]*libcudnn']\ncites = ['x @release:1']\n"
    )
    with pytest.raises(RecipeError, match="bound every quantifier"):
        parse_catalogue(bad, "errors.toml")
    with pytest.raises(UnboundedPattern):
        width_of(r"a+b")
    assert width_of(r"a{1,5}b") == 6


def test_anchors_are_literals_every_match_contains():
    shared = r"(?P<lib>[\w.]{0,9}\.so)\s{0,3}:\s{0,3}cannot open shared"
    assert anchors_of(shared) == (": cannot open shared",) or anchors_of(shared) == (
        "cannot open shared",
    )
    assert set(anchors_of(r"(?:Segmentation fault|SIGSEGV|core dumped)")) == {
        "segmentation fault",
        "sigsegv",
        "core dumped",
    }
    assert anchors_of(r"(?i:successfully) opened") == ("successfully",)
    # an optional part gives no anchor; a required repeat does
    assert anchors_of(r"(?:abcdef)?xy") == ()
    assert anchors_of(r"(?:abcdef){1,2}xy") == ("abcdef",)


_PIECES = st.sampled_from(
    [a for _, p in PATTERNS for a in p.anchors]
    + ["\n", " ", "libcudnn.so.9", "/usr/lib/", ": ", "9.1.0", "(", ")", "'", "`", "x" * 40]
)


@settings(max_examples=examples(300), deadline=None)
@given(pieces=st.lists(_PIECES, max_size=40), which=st.integers(min_value=0))
def test_windows_find_exactly_what_the_whole_text_search_finds(pieces, which):
    """The invariant behind the anchors: matching inside the windows gives the same matches as
    matching the whole text."""
    _, p = PATTERNS[which % len(PATTERNS)]
    text = "".join(pieces)
    assert [m.span() for m in p.finditer(text)] == [m.span() for m in p.rx.finditer(text)]


_RULES = load_catalogue().rules
_ANCHORS = sorted({a for r in _RULES for p in r.patterns for a in p.anchors})


@settings(max_examples=examples(200), deadline=None)
@given(
    parts=st.lists(
        st.one_of(
            st.sampled_from(_ANCHORS),
            st.sampled_from(_ANCHORS).map(str.upper),
            st.text(max_size=30),
            st.sampled_from(["\n", " ", "libcudnn", "é", "cuDNN"]),
        ),
        max_size=12,
    )
)
def test_the_anchor_index_keeps_exactly_the_rules_whose_patterns_are_not_all_absent(parts):
    """engine._text_hits tries only the rules scan.AnchorIndex keeps: on any text (the
    catalogue's anchors in any case, amid any text), that is every rule some pattern of which
    Pattern.absent_from does not rule out, and no other."""
    text = "".join(parts)
    index = AnchorIndex([r.patterns for r in _RULES])
    expected = {i for i, r in enumerate(_RULES) if not all(p.absent_from(text) for p in r.patterns)}
    assert index.possible(text) == expected


_WRAPPED = load_catalogue().wrapped
_LITERALS = sorted(n.decode() for n in _WRAPPED)


@settings(max_examples=examples(200), deadline=None)
@given(
    parts=st.lists(
        st.one_of(
            st.sampled_from(_LITERALS),
            st.sampled_from(_LITERALS).map(str.upper),
            st.text(max_size=20),
            st.sampled_from(["\n", "\n    ", "\n\t", " ", "-", "."]),
        ),
        max_size=12,
    ),
    cuts=st.lists(st.integers(0, 10**4), max_size=6),
)
def test_join_wrapped_searches_only_the_literals_that_hold_a_join_and_finds_the_same(parts, cuts):
    """scan._crossing keeps of the catalogue's literals only those that hold the bytes around one
    of the text's joins: join_wrapped gives the same text as when it searches every literal (a
    list of them is searched whole), for texts of the literals cut by line breaks anywhere."""
    text = "".join(parts)
    for c in sorted(cuts, reverse=True):
        at = c % (len(text) + 1)
        text = text[:at] + "\n" + text[at:]
    assert join_wrapped(text, _WRAPPED) == join_wrapped(text, sorted(_WRAPPED))
