"""The recipe cache is data, not code: JSON (never pickle: no module of the tool may import
pickle, marshal or shelve, which ruff checks: pyproject's flake8-tidy-imports banned-api), read only when it is the user's own
regular file that nobody else can write, and every record checked again by the recipe
checkers. A cache that fails any of that is ignored (the recipes are parsed again, with the same
result), never trusted and never an error."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import recipebook
from fixer.system import cachefile
from tests.helpers.examples import examples
from tests.helpers.hostile import FOREIGN_CACHE_FILES, nothing_happens, plant_foreign, values


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    recipebook.clear_cache()
    yield tmp_path
    recipebook.clear_cache()


def _cache_file(home: Path) -> Path:
    files = sorted((home / "colab-cudnn-fix" / "recipes").glob("*.json"))
    assert len(files) == 1, files
    return files[0]


def _load_again() -> Any:
    recipebook.clear_cache()
    return recipebook.load()


def test_the_cache_is_private_json_and_reads_back_equal(cache_home: Path) -> None:
    first = recipebook.load()
    f = _cache_file(cache_home)
    assert not os.stat(f).st_mode & 0o077
    data = json.loads(f.read_bytes())
    assert data["schema"] == recipebook.CACHE_SCHEMA
    recipebook.clear_cache()
    assert (
        recipebook._disk_cache_read(recipebook._cache_key(recipebook.recipe_files(()), ())) == first
    )
    assert _load_again() == first


@pytest.mark.parametrize("how", FOREIGN_CACHE_FILES)
def test_a_cache_anyone_else_could_have_written_is_ignored(cache_home: Path, how: str) -> None:
    if how == "other-owner" and os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    good = recipebook.load()
    f = _cache_file(cache_home)
    data = json.loads(f.read_bytes())
    data["recipes"]["builds"] = data["recipes"]["builds"][:1]  # what a planted file would change
    plant_foreign(f, json.dumps(data).encode(), how, cache_home / "elsewhere.json")
    assert cachefile.read_bytes(f) is None
    assert _load_again() == good


@settings(
    max_examples=examples(300),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    table=st.sampled_from([a for a, _ in recipebook._CACHED_TABLES] + ["files"]),
    field=st.sampled_from(
        [
            "version",
            "framework",
            "cuda",
            "cudnn",
            "packages",
            "pip",
            "apt",
            "min_driver",
            "name",
            "bytes",
            "distribution",
            "brings",
            "source",
            "bogus",
        ]
    ),
    hostile=values(),
)
def test_a_hostile_cache_record_is_refused_by_the_recipe_checkers(
    cache_home: Path, table: str, field: str, hostile: Any
) -> None:
    good = recipebook.load()
    full = json.loads(_cache_file(cache_home).read_bytes())["recipes"]
    # each table's first record only: a record is checked on its own, and the other 800 of
    # the cache only made every example slower
    raw = {attr: full[attr][:1] for attr, _ in recipebook._CACHED_TABLES}
    raw["files"] = full["files"]
    if table == "files":
        raw["files"] = hostile
    else:
        raw[table][0][field] = hostile
    with nothing_happens() as happened:
        got = recipebook._recipes_from_cache(raw, "cache.json")
    assert happened == []
    if got is None:
        return
    # accepted: only because the value is one the recipe file itself could hold
    assert isinstance(got, type(good))
    rec = raw[table][0] if table != "files" else None
    if rec is not None and field in rec and hostile not in (None, "", [], {}):
        kind = dict(recipebook._CACHED_TABLES)[table]
        recipebook._TABLES[kind][1][field].check(hostile)
