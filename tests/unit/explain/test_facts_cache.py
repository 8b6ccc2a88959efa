"""The catalogue's facts cache (fixer.explainer.catalogue): what one process derives from each
pattern (width, anchors, literals, groups) after compiling it, read back by the next, which then
parses no pattern and compiles each on first use. Invariants: a catalogue loaded from the cache
explains every text exactly as one parsed from its source; a cache file of any other shape, or
not this user's own private file, is no cache."""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import analyze, catalogue
from fixer.explainer.scan import Pattern
from tests.helpers.examples import examples
from tests.unit.explain.test_cases import ALL

TEXTS = [c["error"] for c in ALL]


@pytest.fixture()
def fresh(tmp_path, monkeypatch):
    """A cache directory of this test's own and no catalogue in the process's memory."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(catalogue, "_CACHE", {})
    return tmp_path / "colab-cudnn-fix" / "catalogue"


def _answers(texts):
    out = []
    for t in texts:
        e = analyze(t, None)
        out.append((e.findings, e.recognised, e.rules, e.notes, e.checks))
    return out


def test_a_catalogue_read_from_the_cache_explains_every_case_as_one_parsed(fresh):
    parsed = _answers(TEXTS)  # the first load parses and writes the cache
    assert len(list(fresh.iterdir())) == 1
    catalogue._CACHE.clear()
    hit = catalogue.load_catalogue()
    assert all(p._rx is None for r in hit.rules for p in r.patterns)  # nothing compiled yet
    catalogue._CACHE.clear()
    assert _answers(TEXTS) == parsed


def test_every_pattern_built_from_its_facts_equals_the_parsed_one():
    for r in catalogue.load_catalogue().rules:
        for p in r.patterns:
            again = Pattern(p.pattern, p.flags, p.facts())
            assert again.facts() == p.facts()
            assert again.rx.pattern == p.rx.pattern and again.rx.flags == p.rx.flags


@settings(max_examples=examples(40), deadline=None)
@given(st.text(max_size=400), st.sampled_from(TEXTS))
def test_the_cache_changes_no_answer_on_generated_text(noise, case):
    text = noise + "\n" + case + "\n" + noise
    cat = catalogue.load_catalogue()
    for r in cat.rules[:25]:
        for p in r.patterns:
            lazy = Pattern(p.pattern, p.flags, p.facts())
            assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in p.finditer(text)]


BAD = [
    b"not json",
    b"[]",
    b'{"schema": 2, "facts": {}}',
    b'{"schema": 1, "facts": []}',
    b'{"schema": 1, "facts": {"x": [1, [], []]}}',
    b'{"schema": 1, "facts": {"x": [true, [], [], []]}}',
    b'{"schema": 1, "facts": {"x": [99999999, [], [], []]}}',
    b'{"schema": 1, "facts": {"x": [3, ["a", 1], [], []]}}',
    b'{"schema": 1, "facts": {"x": [3, "ab", [], []]}}',
]


def test_a_cache_file_of_another_shape_is_no_cache(fresh):
    """Each shape but the one written reads as no cache; the loader then parses the patterns again
    (compiling every one) and writes the cache anew."""
    first = catalogue.load_catalogue()
    (path,) = fresh.iterdir()
    key = next(iter(catalogue._CACHE))
    for raw in BAD:
        path.write_bytes(raw)
        assert catalogue._facts_read(key) is None, raw
    catalogue._CACHE.clear()
    cat = catalogue.load_catalogue()
    assert all(p._rx is not None for r in cat.rules for p in r.patterns)  # parsed again
    assert [r.patterns[0].facts() for r in cat.rules] == [
        r.patterns[0].facts() for r in first.rules
    ]
    assert json.loads(path.read_bytes())["schema"] == catalogue.FACTS_SCHEMA  # and written again


def test_a_cache_file_others_can_write_is_not_read(fresh):
    catalogue.load_catalogue()  # parses and writes the cache
    (path,) = fresh.iterdir()
    data = json.loads(path.read_bytes())
    data["facts"] = {k: [0, ["zzzz-never-in-any-text"], [], []] for k in data["facts"]}
    path.write_text(json.dumps(data))
    os.chmod(path, 0o666)
    catalogue._CACHE.clear()
    cat = catalogue.load_catalogue()
    assert all(p._rx is not None for r in cat.rules for p in r.patterns)


def test_a_changed_catalogue_file_is_a_new_key(fresh, tmp_path):
    catalogue.load_catalogue()
    src = catalogue.rules_files(())[-1]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / src.name).write_text(
        src.read_text(encoding="utf-8").replace("schema = 1", "schema = 1\n", 1)
    )
    catalogue.load_catalogue((str(mine),))
    assert len(list(fresh.iterdir())) == 2
    assert re.fullmatch(r"[0-9a-f]{24}\.json", sorted(p.name for p in fresh.iterdir())[0])
