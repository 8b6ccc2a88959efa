"""The subprocess edge: run one command as an argument list, with a timeout, streaming its output.

Everything apply and rollback execute goes through a `Runner` so tests (and callers) can
inject their own. The default one starts the child in its own session: a Ctrl-C in the
terminal reaches only us, and we stop the child's whole process group ourselves (then roll
back). No shell is involved anywhere.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import threading
import time
from typing import Callable, Mapping, Optional, Protocol, Sequence

#: How much of a command's output a CommandResult keeps (the whole output goes to the log).
OUTPUT_TAIL = 64 * 1024


@dataclasses.dataclass(frozen=True)
class CommandResult:
    rc: int
    output: str = ""            # the tail of stdout+stderr
    seconds: float = 0.0
    timed_out: bool = False


class Runner(Protocol):
    def __call__(self, argv: Sequence[str], *, timeout: float,
                 on_output: Optional[Callable[[str], None]] = None,
                 env: Optional[Mapping[str, str]] = None) -> CommandResult: ...


def run_command(argv: Sequence[str], *, timeout: float,
                on_output: Optional[Callable[[str], None]] = None,
                env: Optional[Mapping[str, str]] = None) -> CommandResult:
    """Run `argv`, calling `on_output(line)` for each line it prints. A command that runs past
    `timeout` seconds is killed (rc 124, timed_out). KeyboardInterrupt (or any exception raised
    by a signal handler) kills the child's process group and propagates."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, errors="replace", bufsize=1, start_new_session=True,
            env=dict(env) if env is not None else None,
        )
    except OSError as exc:
        return CommandResult(rc=127, output=f"cannot run {argv[0]}: {exc}", seconds=time.monotonic() - start)
    expired = threading.Event()

    def _expire() -> None:
        expired.set()
        _kill_group(proc)

    timer = threading.Timer(timeout, _expire)
    timer.daemon = True
    timer.start()
    tail = ""
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = (tail + line)[-OUTPUT_TAIL:]
            if on_output is not None:
                on_output(line.rstrip("\n"))
        rc = proc.wait()
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        timer.cancel()
        if proc.stdout is not None:
            proc.stdout.close()
    seconds = time.monotonic() - start
    if expired.is_set():
        return CommandResult(rc=124, output=tail + f"\n[killed after {timeout:.0f} s]", seconds=seconds,
                             timed_out=True)
    return CommandResult(rc=rc, output=tail, seconds=seconds)


def _kill_group(proc: "subprocess.Popen[str]") -> None:
    """Stop the child and everything it started (pip's build subprocesses, apt's dpkg)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
