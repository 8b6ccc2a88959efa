"""Unit tests: fast and pure. None of them starts a process or opens a network socket (127.0.0.1
included); what needs either lives in tests/integration.

The guard (tests/helpers/guard.py) wraps every unit test's setup, call and teardown: a process
start or a socket use raises there, before it happens, and the test fails even if the code under
test caught the exception.
"""

from __future__ import annotations

from typing import Generator

import pytest

from tests.helpers import guard

guard.install()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if guard.recording():
        return (yield)
    return (yield from guard.guarded(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    if guard.recording():
        return (yield)
    return (yield from guard.guarded(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    if guard.recording():
        return (yield)
    return (yield from guard.guarded(item, "teardown"))
