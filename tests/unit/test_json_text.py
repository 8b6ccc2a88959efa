"""Every `--json` output's text (fixer.render.json_text) is exactly `json.dumps(value, indent=2)`:
over generated JSON values (any string, lone surrogates included; any int; floats with NaN and the
infinities; tuples; keys of every kind json takes), over the recorded GPU-machine payloads, and
with the same TypeError for what json cannot encode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.render import json_text
from tests.helpers.examples import examples

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu_machine"

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(blacklist_categories=()))
)
KEYS = (
    st.text(st.characters(blacklist_categories=()))
    | st.integers()
    | st.floats()
    | st.booleans()
    | st.none()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=5).map(tuple)
        | st.dictionaries(KEYS, inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=examples(200))
@given(VALUES)
def test_same_text_as_json_dumps_indent_2(value: object) -> None:
    assert json_text(value) == json.dumps(value, indent=2)


def test_same_text_for_the_recorded_gpu_machine_payloads() -> None:
    lines = [
        ln for f in sorted(DATA.glob("*.jsonl")) for ln in f.read_text().splitlines() if ln.strip()
    ]
    assert lines
    for line in lines:
        value = json.loads(line)
        assert json_text(value) == json.dumps(value, indent=2)


@pytest.mark.parametrize("bad", [{1, 2}, object(), {"k": b"bytes"}, [{(1, 2): 3}]])
def test_what_json_refuses_is_refused_with_the_same_error(bad: object) -> None:
    with pytest.raises(TypeError) as ours:
        json_text(bad)
    with pytest.raises(TypeError) as theirs:
        json.dumps(bad, indent=2)
    assert str(ours.value) == str(theirs.value)
