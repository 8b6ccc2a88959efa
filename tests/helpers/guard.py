"""The guard of tests/unit: no process, no network.

One `sys.audit` hook, switched on around each guarded test's setup, call and teardown (so
fixtures of any scope that the test pulls in are covered too). The interpreter raises an
audit event before it starts a process or touches a socket, whichever API asked for it, so the
hook sees them all without patching each function:

- processes: `subprocess.Popen` (run, check_output, ... and asyncio's subprocesses), `os.system`,
  `os.exec*`, `os.spawn*` (they fork), `os.fork`, `os.forkpty`, `os.posix_spawn[p]`; and
  `multiprocessing` starts (its spawn and forkserver methods start the child below the audit
  layer, so `BaseProcess.start` raises the event `multiprocessing.Process.start` first);
- network: creating an AF_INET/AF_INET6 socket, and `connect`, `bind`, `sendto`, `getaddrinfo`,
  `gethostbyname[_ex]`, `gethostbyaddr` with any address, 127.0.0.1 included (`requests` and
  `socket.create_connection` go through these).

On such an event the hook raises `Forbidden` before the operation happens: a BaseException, so
library code that catches `Exception` around a probe cannot hide it. It also records the event,
and the test fails at its end even if something caught the exception. A test that needs one of
these belongs in tests/integration.

With `FIXER_TEST_GUARD=record:FILE` in the environment the guard covers every test of the run
and records instead of raising: one JSON line per event (test id, phase, event, detail) appended
to FILE. That is how the tests were sorted into the two trees (tests/conftest.py switches it on).
"""

from __future__ import annotations

import json
import multiprocessing.process
import os
import socket
import sys
from typing import Any, Callable, Generator, List, Optional, Tuple

import pytest

from tests.helpers import audit

PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "multiprocessing.Process.start",
    }
)
NETWORK_EVENTS = frozenset(
    {
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "socket.gethostbyname",
        "socket.gethostbyaddr",
    }
)
_INET = (socket.AF_INET, socket.AF_INET6)


class Forbidden(BaseException):
    """A unit test started a process or used the network."""


class _State:
    active: Optional[str] = None  # the test id while a guarded phase runs
    phase = ""
    record_to: Optional[str] = None  # record mode: append events here, never raise
    seen: List[Tuple[str, str]] = []  # (event, detail) during the current test


def _describe(event: str, args: Tuple[Any, ...]) -> Optional[str]:
    """The detail of a forbidden event, or None for an allowed one."""
    if event == "socket.__new__":
        family = args[1] if len(args) > 1 else None
        return f"family {family!r}" if family in _INET else None
    if event in NETWORK_EVENTS:
        if event in ("socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg"):
            return repr(args[1]) if len(args) > 1 else ""
        return repr(args[0]) if args else ""
    if event in PROCESS_EVENTS:
        first = args[0] if args else ""
        return repr(first)[:200]
    return None


#: Every event _describe may forbid.
WATCHED = PROCESS_EVENTS | NETWORK_EVENTS | {"socket.__new__"}


def _hook(event: str, args: Tuple[Any, ...]) -> None:
    if _State.active is None:
        return
    detail = _describe(event, args)
    if detail is None:
        return
    _State.seen.append((event, detail))
    if _State.record_to is not None:
        with open(_State.record_to, "a") as f:
            f.write(
                json.dumps(
                    {"test": _State.active, "phase": _State.phase, "event": event, "detail": detail}
                )
                + "\n"
            )
        return
    raise Forbidden(
        f"{event} {detail}: unit tests start no process and use no network "
        "(move the test to tests/integration)"
    )


def _audited_start(original: Callable[[Any], None]) -> Callable[[Any], None]:
    def start(self: Any) -> None:
        sys.audit("multiprocessing.Process.start", getattr(self, "name", ""))
        original(self)

    return start


def recording() -> bool:
    return os.environ.get("FIXER_TEST_GUARD", "").startswith("record:")


def install() -> None:
    """Install the hook once per process (audit hooks cannot be removed; `_State.active` switches it)."""
    if getattr(sys, "_fixer_unit_guard", False):
        return
    sys._fixer_unit_guard = True  # type: ignore[attr-defined]
    mode = os.environ.get("FIXER_TEST_GUARD", "")
    if mode.startswith("record:"):
        _State.record_to = mode[len("record:") :]
    bp = multiprocessing.process.BaseProcess
    bp.start = _audited_start(bp.start)  # type: ignore[method-assign]
    audit.watch(WATCHED, _hook)


def guarded(item: pytest.Item, phase: str) -> Generator[None, None, None]:
    """Run one phase of a test with the guard on; at the end of the call (and of the teardown),
    fail the test if the guard saw anything, even what the code under test caught."""
    if phase == "setup":
        _State.seen = []
    _State.active, _State.phase = item.nodeid, phase
    try:
        yield
    finally:
        _State.active = None
        if phase != "setup" and _State.seen and _State.record_to is None:
            seen = sorted(set(_State.seen))
            _State.seen = []
            pytest.fail(
                "a unit test started a process or used the network: "
                + "; ".join(f"{e} {d}" for e, d in seen[:5]),
                pytrace=False,
            )


class RecordEverywhere:
    """A plugin that guards every test of the run (record mode)."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from guarded(item, "setup"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from guarded(item, "call"))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        return (yield from guarded(item, "teardown"))
