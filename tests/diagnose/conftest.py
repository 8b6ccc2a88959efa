from __future__ import annotations

import pytest

from tests.detect.fakemachine import FakeMachine


@pytest.fixture
def machine(tmp_path) -> FakeMachine:
    return FakeMachine(tmp_path / "machine")
