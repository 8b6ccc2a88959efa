"""The subprocess edge: run one command as an argument list, with a timeout, streaming its output.

Everything apply and rollback execute goes through a `Runner` so tests (and callers) can
inject their own. The default one never lets the installer outlive the apply unnoticed:

- The child gets its own process group (so that stopping it reaches pip's own children:
  build backends, apt's dpkg), and the kernel sends it SIGINT if the apply dies
  (PR_SET_PDEATHSIG): pip then unwinds as after Ctrl-C instead of finishing the install behind
  the rollback's back.
- `on_start(pid)` lets the transaction write the child's pid (and start time) into the journal
  before it can change anything, so that a later `rollback` can find it, stop it and wait for it.
- `keep_fds` hands the target lock to the child: the lock stays held until the child is gone,
  even if the apply was killed.
- Stopping (Ctrl-C, SIGTERM, timeout) sends SIGINT to the child's group first (pip rolls back
  what it moved aside on KeyboardInterrupt where it can), then SIGTERM, then SIGKILL, each after
  a grace period, and always reaps it before returning: nothing is restored while it runs.

No shell is involved anywhere.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, Mapping, Optional, Protocol, Sequence

#: How much of a command's output a CommandResult keeps (the whole output goes to the log).
OUTPUT_TAIL = 64 * 1024
#: Seconds the child gets after SIGINT, then after SIGTERM, before the next signal.
GRACE_INT = 10.0
GRACE_TERM = 5.0

_PR_SET_PDEATHSIG = 1


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


def _child_setup() -> None:
    """In the child, before exec: own process group; SIGINT when the parent dies."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGINT), 0, 0, 0)
        except Exception:
            pass


def process_start_time(pid: int) -> Optional[int]:
    """Field 22 of /proc/PID/stat (clock ticks since boot): with the pid, it names one process
    even after the pid is reused. None when there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    try:
        return int(raw[raw.rindex(")") + 2:].split()[19])
    except (ValueError, IndexError):
        return None


def alive(pid: int, start: Optional[int] = None) -> bool:
    """The process `pid` exists (and, given `start`, is the same one) and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
        fields = raw[raw.rindex(")") + 2:].split()
        if fields[0] in ("Z", "X"):
            return False
        return start is None or int(fields[19]) == start
    except (OSError, ValueError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return start is None


def stop_group(pgid: int, *, is_alive: Callable[[], bool], wait: Callable[[float], bool],
               grace_int: float = GRACE_INT, grace_term: float = GRACE_TERM) -> str:
    """SIGINT, then SIGTERM, then SIGKILL to process group `pgid`, each after its grace period,
    until `is_alive()` is false. `wait(seconds)` waits for the leader (True when it ended).
    Returns the last signal sent ("" when it had already ended)."""
    sent = ""
    for sig, grace in ((signal.SIGINT, grace_int), (signal.SIGTERM, grace_term), (signal.SIGKILL, 30.0)):
        if not is_alive():
            return sent
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return sent
        except PermissionError:
            return sent
        sent = signal.Signals(sig).name
        if wait(grace):
            return sent
    return sent


def stop_recorded(pid: int, start: Optional[int], pgid: Optional[int] = None, *,
                  grace_int: float = GRACE_INT, grace_term: float = GRACE_TERM) -> str:
    """Stop a process that is not our child (an installer a killed apply left behind, recorded in
    its journal) and wait until it is gone. Returns the last signal sent, "" if it was gone."""
    if not alive(pid, start):
        return ""

    def wait(seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if not alive(pid, start):
                return True
            time.sleep(0.05)
        return not alive(pid, start)

    return stop_group(pgid or pid, is_alive=lambda: alive(pid, start), wait=wait,
                      grace_int=grace_int, grace_term=grace_term)


def ignore_signals() -> Dict[int, Any]:
    """Ignore SIGINT/SIGTERM (in the main thread) while a child is stopped or a rollback runs: a
    second Ctrl-C must not leave either half done. Returns the old handlers for restore_signals."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}


def restore_signals(old: Dict[int, Any]) -> None:
    for sig, handler in old.items():
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def run_command(argv: Sequence[str], *, timeout: float,
                on_output: Optional[Callable[[str], None]] = None,
                env: Optional[Mapping[str, str]] = None,
                on_start: Optional[Callable[[int], None]] = None,
                keep_fds: Sequence[int] = ()) -> CommandResult:
    """Run `argv`, calling `on_output(line)` for each line it prints. A command that runs past
    `timeout` seconds is stopped (rc 124, timed_out). KeyboardInterrupt (or any exception raised
    by a signal handler) stops the child's process group (SIGINT, then harder), reaps it, and
    propagates. `on_start(pid)` runs right after the child exists; if it raises, the child is
    stopped and the exception propagates."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            text=True, errors="replace", bufsize=1, preexec_fn=_child_setup, pass_fds=tuple(keep_fds),
            env=dict(env) if env is not None else None,
        )
    except OSError as exc:
        return CommandResult(rc=127, output=f"cannot run {argv[0]}: {exc}", seconds=time.monotonic() - start)
    expired = threading.Event()
    stopping = threading.Lock()

    def _stop() -> None:
        with stopping:
            stop_group(proc.pid, is_alive=lambda: proc.poll() is None, wait=lambda s: _wait(proc, s))

    def _expire() -> None:
        expired.set()
        _stop()

    timer = threading.Timer(timeout, _expire)
    timer.daemon = True
    tail = ""
    try:
        if on_start is not None:
            on_start(proc.pid)
        timer.start()
        assert proc.stdout is not None
        for line in proc.stdout:
            tail = (tail + line)[-OUTPUT_TAIL:]
            if on_output is not None:
                on_output(line.rstrip("\n"))
        rc = proc.wait()
    except BaseException:
        shielded = ignore_signals()
        try:
            # keep reading its output while it unwinds: a child blocked on a full pipe cannot exit
            drain = threading.Thread(target=_drain, args=(proc, on_output), daemon=True)
            drain.start()
            _stop()
            proc.wait()
            drain.join(timeout=5)
        finally:
            restore_signals(shielded)
        raise
    finally:
        timer.cancel()
        if proc.stdout is not None:
            proc.stdout.close()
    seconds = time.monotonic() - start
    if expired.is_set():
        return CommandResult(rc=124, output=tail + f"\n[stopped after {timeout:.0f} s]", seconds=seconds,
                             timed_out=True)
    return CommandResult(rc=rc, output=tail, seconds=seconds)


def _drain(proc: "subprocess.Popen[str]", on_output: Optional[Callable[[str], None]]) -> None:
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if on_output is not None:
                try:
                    on_output(line.rstrip("\n"))
                except Exception:
                    pass
    except (OSError, ValueError):
        pass


def _wait(proc: "subprocess.Popen[str]", seconds: float) -> bool:
    try:
        proc.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False
