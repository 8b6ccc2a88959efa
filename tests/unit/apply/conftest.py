"""Unit tests of fixer.applier.filetree work on trees under tmp_path: the file-system gate
(fixer.system.fsgate) allows pytest's temporary directories while each test runs."""

from __future__ import annotations

from typing import Iterator

import pytest

from fixer.system import fsgate


@pytest.fixture(autouse=True)
def _gate_allows_tmp_path(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with fsgate.allowed([tmp_path_factory.getbasetemp()], why="test trees"):
        yield
