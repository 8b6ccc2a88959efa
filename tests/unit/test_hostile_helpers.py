"""The hostile-input helpers change a copy, never the good document they start from
(tests/helpers/hostile.py: with_field and without_field copy only the containers on the path)."""

from __future__ import annotations

import copy
import json

from hypothesis import given, settings, strategies as st

from tests.helpers.examples import examples
from tests.helpers.hostile import (
    EVERY_ITEM,
    field_at,
    field_paths,
    mutations,
    with_field,
    without_field,
)

documents = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=12,
).filter(lambda d: isinstance(d, (dict, list)) and field_paths(d, EVERY_ITEM))


@settings(max_examples=examples(100), deadline=None)
@given(documents, st.data())
def test_a_changed_copy_equals_a_deep_copy_changed_and_the_original_stays(doc, data) -> None:
    before = json.dumps(doc)
    path = data.draw(st.sampled_from(field_paths(doc, EVERY_ITEM)))
    expected = copy.deepcopy(doc)
    field_at(expected, path[:-1])[path[-1]] = "hostile"
    assert with_field(doc, path, "hostile") == expected
    expected = copy.deepcopy(doc)
    del field_at(expected, path[:-1])[path[-1]]
    assert without_field(doc, path) == expected
    assert json.dumps(doc) == before


@settings(max_examples=examples(100), deadline=None)
@given(documents, st.data())
def test_a_kept_field_survives_every_mutation(doc, data) -> None:
    """mutations(keep=...) never sets or removes a kept field, nor what holds it; it still
    changes the document, and the good one stays as it was."""
    before = json.dumps(doc)
    kept = data.draw(st.sampled_from(field_paths(doc, EVERY_ITEM)))
    value = json.dumps(field_at(doc, kept))
    m = data.draw(mutations(doc, st.just("hostile"), keep=[kept]))
    assert json.dumps(field_at(m.doc, kept)) == value, (m, kept)
    assert m.doc != doc or m.kind != "set", m
    assert json.dumps(doc) == before
