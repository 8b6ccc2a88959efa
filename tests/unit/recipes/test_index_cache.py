"""The index client's HTTP cache is untrusted data like every cache (fixer.system.cachefile): an
answer names the files to download and their hashes, so a planted one under a shared cache
directory (sudo -E, a shared HOME) would choose what gets installed. Only our own private
regular file, young enough, is read back."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from fixer.system.index import _cache_path, _cache_read, default_cache_dir
from fixer.system.paths import write_cache
from tests.helpers.hostile import FOREIGN_CACHE_FILES, plant_foreign

URL = "https://pypi.org/simple/nvidia-cudnn-cu13/"
ACCEPT = "application/vnd.pypi.simple.v1+json"
BODY = b'{"files": []}'


@pytest.fixture
def cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = _cache_path(default_cache_dir(), URL, ACCEPT)
    write_cache(path, BODY)  # as _get writes an answer
    return path


def test_our_private_answer_is_read_back(cached: Path) -> None:
    assert not os.stat(cached).st_mode & 0o077
    assert _cache_read(cached, max_age=None) == BODY
    assert _cache_read(cached, max_age=3600) == BODY


def test_an_answer_older_than_max_age_is_not_read(cached: Path) -> None:
    old = time.time() - 7200
    os.utime(cached, (old, old))
    assert _cache_read(cached, max_age=3600) is None


@pytest.mark.parametrize("how", FOREIGN_CACHE_FILES)
def test_an_answer_anyone_else_could_have_written_is_not_read(
    cached: Path, tmp_path: Path, how: str
) -> None:
    if how == "other-owner" and os.geteuid() != 0:
        pytest.skip("changing a file's owner needs root")
    planted = b'{"files": [{"url": "http://evil.example/x.whl", "hashes": {}}]}'
    plant_foreign(cached, planted, how, tmp_path / "elsewhere")
    assert _cache_read(cached, max_age=None) is None
