"""Integration tests: real pip and uv into throw-away venvs from an index served on 127.0.0.1
(tests/helpers/pyindex.py), shared libraries compiled by the test (tests/helpers/stublibs.py),
real Jupyter kernels, the real CLI in child processes, a dpkg database in a sandbox.

tests/unit holds what needs none of that; its guard (tests/unit/conftest.py) fails a unit test
that starts a process or opens a network socket. To learn which tests belong here, run the whole
suite with that guard recording instead of failing (one JSON line per event: test id, phase,
what it did; tests/helpers/guard.py):

    FIXER_TEST_GUARD=record:/tmp/guard.jsonl python -m pytest
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.fakemachine import FakeMachine


@pytest.fixture
def machine(tmp_path: Path) -> FakeMachine:
    """A fake machine tree laid out like the recorded H200 GPU machine (tests/helpers/fakemachine.py)."""
    return FakeMachine(tmp_path / "machine")
