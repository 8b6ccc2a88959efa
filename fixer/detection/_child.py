"""Child processes with a timeout and a kill: started together, collected together.

Detection starts its children (the target-interpreter probe, the NVML/libcuda probe, the
cudnnGetVersion probes) at once and then waits, so their start-up costs overlap.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))

#: Children started and not yet collected. Each runs in its own session (a broken driver probe
#: must not take the terminal's signals), so Ctrl-C does not reach them: kill_live() does.
#: A plain set, not a WeakSet: a Child dropped by frames an interrupt unwound still runs.
_LIVE: "Set[Child]" = set()


def kill_live() -> int:
    """Kill every child still running (Ctrl-C, SIGTERM); returns how many were killed."""
    n = 0
    for child in list(_LIVE):
        if child.proc is not None and child.proc.poll() is None:
            child._kill()
            n += 1
        _LIVE.discard(child)
    return n


@contextlib.contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """Hold a Ctrl-C that arrives inside the block until its end (main thread only: where
    Python runs its SIGINT handler), so a started child is registered before the interrupt."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: List[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if held:
        if callable(old):
            old(signal.SIGINT, None)
        elif old == signal.SIG_DFL:
            raise KeyboardInterrupt


class Child:
    """One running child; `result()` waits (up to the deadline) and decodes its JSON."""

    def __init__(self, argv: Sequence[str], *, timeout: float, env: Optional[Mapping[str, str]] = None,
                 label: str = "") -> None:
        self.argv = list(argv)
        self.label = label or os.path.basename(self.argv[0])
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.error: Optional[str] = None
        self.proc: Optional[subprocess.Popen[bytes]] = None
        with _ctrl_c_deferred():  # a Ctrl-C inside Popen would leave the started child unknown
            try:
                self.proc = subprocess.Popen(
                    self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    env=dict(env) if env is not None else None, start_new_session=True,
                )
            except OSError as exc:
                self.error = f"cannot run {self.argv[0]}: {exc.strerror or exc}"
            else:
                _LIVE.add(self)

    def result(self) -> Tuple[Optional[Any], Optional[str]]:
        """(decoded JSON or None, error text or None)."""
        if self.proc is None:
            return None, self.error
        try:
            out, err = self.proc.communicate(timeout=max(0.01, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self._kill()
            return None, f"{self.label}: no answer within {self.timeout:g} s (killed)"
        except BaseException:  # Ctrl-C while waiting: the child is in its own session, kill it
            self._kill()
            raise
        finally:
            _LIVE.discard(self)
        text = out.decode("utf-8", "replace").strip()
        if self.proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit {self.proc.returncode}"]
            if self.proc.returncode < 0:
                tail = [f"killed by signal {-self.proc.returncode}"]
            return None, f"{self.label}: {tail[0]}"
        for candidate in (text, text.splitlines()[-1] if text else ""):
            try:
                return json.loads(candidate), None
            except ValueError:
                continue
        return None, f"{self.label}: output is not JSON: {text[:200]!r}"

    def _kill(self) -> None:
        assert self.proc is not None
        try:
            os.killpg(self.proc.pid, 9)
        except OSError:
            try:
                self.proc.kill()
            except OSError:
                pass
        try:
            self.proc.communicate(timeout=2)
        except Exception:  # noqa: BLE001 - a child that will not die must not hang detection
            pass


def python_script(python: str, script: str, args: Sequence[str] = (), *, isolated: bool = True,
                  timeout: float, env: Optional[Mapping[str, str]] = None, label: str = "") -> Child:
    """Run one of this package's stdlib-only scripts by path in interpreter `python`."""
    from .._paths import runnable_python

    flags = ["-I", "-S"] if isolated else []
    return Child([runnable_python(python), *flags, os.path.join(HERE, script), *args], timeout=timeout, env=env,
                 label=label or script)


def collect(children: Dict[str, Child]) -> Dict[str, Tuple[Optional[Any], Optional[str]]]:
    try:
        return {k: c.result() for k, c in children.items()}
    except BaseException:
        for c in children.values():
            if c.proc is not None and c.proc.poll() is None:
                c._kill()
        raise
