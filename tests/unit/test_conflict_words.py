"""fixer.render.conflicts says the resolver's clashes and ways out (data) in words, for the text
output and --json alike. Invariants over generated clashes: every clash is said, at most
MAX_CLASHES sentences, none twice, each names what it is about and keeps every party's words."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.render import error_payload
from fixer.render.conflicts import MAX_CLASHES, NO_WAY_OUT, clash_lines, unsatisfiable, way_lines
from fixer.rules import display_name
from tests.helpers.examples import examples

words = (
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.=<> ", min_size=1, max_size=12)
    .map(str.strip)
    .filter(bool)
)
needs = st.builds(m.Need, parent=words, text=words, asked=st.booleans())
refusals = st.builds(
    m.Refusal, who=words, text=words, against=words, chosen=st.booleans(), hardware=st.booleans()
)
KINDS = (
    "no-build",
    "no-copy",
    "blocked",
    "no-build-is",
    "no-single-copy",
    "refused",
    "requirements",
)


@st.composite
def clashes(draw):
    kind = draw(st.sampled_from(KINDS))
    subject = draw(st.sampled_from(("torch", "tensorflow", "jax", "9", "8", "nvidia-cudnn-cu12")))
    n = draw(st.lists(needs, min_size=1, max_size=3))
    held = draw(st.lists(needs, max_size=2))
    r = draw(
        st.lists(
            refusals,
            min_size=1 if kind in ("refused", "blocked") else 0,
            max_size=1 if kind == "refused" else 4,
        )
    )
    return m.Clash(kind, subject, tuple(n), tuple(held), tuple(r))


@settings(max_examples=examples(80), deadline=None)
@given(st.lists(clashes(), min_size=1, max_size=12))
def test_every_clash_is_said_once_within_the_limit(cs):
    lines = clash_lines(cs)
    assert 1 <= len(lines) <= MAX_CLASHES and len(set(lines)) == len(lines)
    said = " ".join(lines)
    for c in cs[:1]:  # the first (most telling) clash always makes it
        if c.kind in ("no-build", "no-build-is"):
            assert display_name(c.subject) in said
        elif c.kind in ("no-copy", "blocked", "no-single-copy"):
            assert f"cuDNN {c.subject}" in said
        elif c.kind == "refused":
            r = c.refusals[0]
            assert r.who in said and r.text in said and r.against in said
        else:
            assert all(n.parent in said and n.text in said for n in c.needs)


@settings(max_examples=examples(50), deadline=None)
@given(
    st.lists(
        st.builds(
            m.WayOut,
            drop=st.sampled_from(("keep", "version", "cuda", "cudnn-from", "framework")),
            name=st.sampled_from(("torch", "tensorflow", "nvidia-cudnn-cu12")),
            value=words,
            changes=st.lists(
                st.builds(
                    m.Pin,
                    name=words,
                    version=words,
                    action=st.sampled_from(("install", "upgrade", "downgrade", "remove")),
                ),
                max_size=5,
            ).map(tuple),
        ),
        max_size=5,
    )
)
def test_every_way_out_says_what_it_drops_and_what_then_changes(ways):
    lines = way_lines(ways)
    if not ways:
        assert lines == [NO_WAY_OUT]
        return
    assert len(lines) == len(ways)
    for w, line in zip(ways, lines):
        dropped = line.split(": ", 1)[0]
        assert dropped.startswith("without ")
        if w.drop in ("version", "cuda", "cudnn-from"):
            assert w.value in dropped
        if w.drop in ("keep", "version"):
            assert w.name in dropped
        if w.drop == "framework":
            assert display_name(w.name) in dropped
        assert all(p.name in line for p in w.changes[:4]) or not w.changes
        assert ("nothing needs to change" in line) == (not w.changes)


def test_the_json_error_carries_the_data_and_the_same_words():
    clash = m.Clash(
        "refused",
        "driver",
        refusals=(
            m.Refusal(
                "torch 2.11.0+cu130", "needs driver >= 580.65.06", "driver 570.86.15", hardware=True
            ),
        ),
    )
    way = m.WayOut(
        "version",
        "torch",
        "2.11.0",
        (m.Pin("torch", "2.10.0+cu128", action="downgrade", installed="2.11.0"),),
    )
    exc = unsatisfiable(("torch",), (clash,), (way,))
    body = error_payload(exc, "plan")["error"]
    assert body["message"] == exc.message == "no stack fits PyTorch on this machine"
    assert (
        body["clashes"]
        == list(exc.clashes)
        == ["torch 2.11.0+cu130 needs driver >= 580.65.06, but driver 570.86.15"]
    )
    assert body["ways_out"] == ["without --torch 2.11.0: lower torch to 2.10.0+cu128"]
    assert body["conflicts"] == [m.to_dict(clash)] and body["relaxations"] == [m.to_dict(way)]
