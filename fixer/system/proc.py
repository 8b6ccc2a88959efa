"""Child processes: the one runner behind detection's probes, verify's checks and apply's installers.

    child = Child(argv, timeout=20.0)          # started now: several can run at once
    done = child.wait()                        # -> Completed(returncode, stdout, stderr, seconds, ...)
    done = run(argv, timeout=60.0)             # the same in one call

Every child
- runs in its own process group, so stopping it reaches its own children too (pip's build
  backends, apt's dpkg). By default it gets its own session as well: a Ctrl-C typed at the
  terminal does not reach a probe of a broken driver, `kill_live()` (called by the Ctrl-C
  handler) stops it. `Group.APPLY` keeps the terminal's session (setpgid) and asks the kernel
  to send the child SIGINT when this process dies (PR_SET_PDEATHSIG), so an installer unwinds
  as after Ctrl-C instead of finishing behind a rollback's back;
- has its output captured: stdout and stderr apart, or merged (`merge_stderr`) and handed to
  `on_line` line by line as it comes; `keep` bounds what is kept to the tail;
- is stopped at its deadline, on Ctrl-C or on any exception while it runs: the signals of its
  `Stop` go to its process group in order, each followed by its grace period, while its output
  keeps being read (a child blocked on a full pipe cannot exit). `Stop.reap` says whether the
  runner then waits for it without bound (apply: nothing is restored while an installer runs)
  or leaves a child that even SIGKILL did not end (stuck in the driver) to a reaper thread;
- is reaped: `Completed` comes back only once it has exited, except for a child whose
  answer is complete (`done`, see Child.wait) and which only tears down: a thread reaps it.

`on_start(pid)` runs right after the child exists, before it can change anything (apply writes
the pid into its journal); if it raises, the child is stopped and the exception propagates.
No shell is involved anywhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set, Tuple
from fixer.system.paths import runnable_python

#: Seconds an apply child gets after SIGINT, then after SIGTERM, before the next signal.
GRACE_INT = 10.0
GRACE_TERM = 5.0
_PR_SET_PDEATHSIG = 1


@dataclasses.dataclass(frozen=True)
class Stop:
    """How a child is stopped: each signal goes to its process group, then the child gets the
    grace period to exit before the next one. `reap`: wait for it without bound after the last."""

    signals: Tuple[Tuple[int, float], ...]
    reap: bool = False


#: Probes and checks: SIGKILL at once; a child stuck even then is left to a reaper thread.
KILL = Stop(((signal.SIGKILL, 2.0),))
#: Installers: SIGINT (pip rolls back what it moved aside), SIGTERM, SIGKILL; always reaped.
GENTLE = Stop(
    ((signal.SIGINT, GRACE_INT), (signal.SIGTERM, GRACE_TERM), (signal.SIGKILL, 30.0)), reap=True
)


class Group(enum.Enum):
    SESSION = "session"  # its own session (setsid): the terminal's signals do not reach it
    APPLY = "apply"  # its own process group (setpgid) and SIGINT when this process dies


@dataclasses.dataclass(frozen=True)
class Completed:
    """A child that has ended (or could not start, or was stopped): its exit, output and timing."""

    argv: Tuple[str, ...]
    returncode: Optional[
        int
    ]  # negative: ended by that signal; None: not started, or still exiting (see done)
    stdout: bytes = b""  # stdout and stderr together when merged
    stderr: bytes = b""
    seconds: float = 0.0
    started_wall: float = 0.0  # time.time() when it started
    timed_out: bool = False
    timeout: float = 0.0
    stopped_with: str = ""  # the last signal sent to stop it ("" none)
    error: Optional[str] = None  # why it could not start
    errno: Optional[int] = None  # and the OSError's errno (ENOENT: no such program)
    label: str = ""  # names the child in messages

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")

    @property
    def errors(self) -> str:
        return self.stderr.decode("utf-8", "replace")

    def answer(self) -> Tuple[Optional[Any], Optional[str]]:
        """(the JSON the child printed, as a whole or as its last line, or None; what went
        wrong, starting with the child's label, or None)."""
        label = self.label
        if self.error is not None:
            return None, self.error
        if self.timed_out:
            return None, f"{label}: no answer within {self.timeout:g} s (killed)"
        if self.returncode is not None and self.returncode < 0:
            return None, f"{label}: killed by signal {-self.returncode}"
        if self.returncode != 0:
            tail = self.errors.strip().splitlines()[-1:] or [f"exit {self.returncode}"]
            return None, f"{label}: {tail[0]}"
        text = self.text.strip()
        for candidate in (text, text.splitlines()[-1] if text else ""):
            try:
                return json.loads(candidate), None
            except ValueError:
                continue
        return None, f"{label}: output is not JSON: {text[:200]!r}"


#: Children started and not yet collected (kill_live stops them). A plain set, not a WeakSet:
#: a Child dropped by frames an interrupt unwound still runs.
_LIVE: "Set[Child]" = set()


def kill_live() -> int:
    """Kill every child still running (Ctrl-C, SIGTERM) with its group, and reap it (up to 2 s
    each: a child stuck in the driver may not die); returns how many were killed."""
    n = 0
    for child in list(_LIVE):
        if child.proc is not None and child.proc.poll() is None:
            _signal_group(child.proc, signal.SIGKILL)
            try:
                child.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
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


def _apply_child_setup() -> None:
    """In the child, before exec: own process group; SIGINT when the parent dies."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGINT), 0, 0, 0)
        except Exception:
            pass


def _quiet(on_line: Optional[Callable[[str], None]]) -> Optional[Callable[[str], None]]:
    """`on_line` that cannot raise: while a child is stopped after an error, its output is still
    read (or it could block on a full pipe), and a second error must not cut the stop short."""
    if on_line is None:
        return None
    call = on_line

    def quiet(line: str) -> None:
        try:
            call(line)
        except BaseException:  # noqa: B036 - even a second Ctrl-C raised from it must not stop the stop
            pass

    return quiet


def _signal_group(proc: "subprocess.Popen[bytes]", sig: int) -> bool:
    """Send `sig` to the child's process group (its pid: it leads its group). False when the
    group is gone."""
    try:
        os.killpg(proc.pid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        try:
            proc.send_signal(sig)
            return True
        except ProcessLookupError:
            return False


class Lines:
    """Output cut into lines as a text-mode pipe cuts it: a line ends at \\n, \\r\\n or \\r
    (pip's progress bars), whatever the chunks it arrives in; decoded as UTF-8 (bad bytes replaced)."""

    def __init__(self) -> None:
        self._partial = b""  # the start of a line not complete yet

    def feed(self, data: bytes) -> List[str]:
        lines = (self._partial + data).splitlines(keepends=True)
        self._partial = b""
        if lines and (not lines[-1].endswith((b"\n", b"\r")) or lines[-1].endswith(b"\r")):
            self._partial = lines.pop()  # unfinished, or maybe the first half of "\r\n"
        return [line.rstrip(b"\r\n").decode("utf-8", "replace") for line in lines]

    def end(self) -> List[str]:
        """The last line, if the output did not end with a line break."""
        rest, self._partial = self._partial, b""
        return [rest.rstrip(b"\r").decode("utf-8", "replace")] if rest else []


class Child:
    """One child process, started by the constructor. `error` is set (and `proc` is None) when
    it could not start."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        timeout: float,
        env: Optional[Mapping[str, str]] = None,
        merge_stderr: bool = False,
        group: Group = Group.SESSION,
        stop: Stop = KILL,
        keep_fds: Sequence[int] = (),
        keep: Optional[int] = None,
        label: str = "",
        cwd: Optional[str] = None,
    ) -> None:
        self.argv = tuple(argv)
        self.label = label or os.path.basename(self.argv[0])
        self.timeout = timeout
        self.stop_policy = stop
        self.keep = keep
        self.started = time.perf_counter()
        self.started_wall = time.time()
        self.deadline = self.started + timeout
        self.error: Optional[str] = None
        self.errno: Optional[int] = None
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self._out = bytearray()  # stdout (with stderr when merged)
        self._err = bytearray()
        self._fds: Dict[int, bytearray] = {}  # the pipes not yet at end of file -> their buffer
        self._lines = Lines()
        self._timed_out = False
        self._stopped_with = ""
        self._returncode: Optional[int] = None
        with _ctrl_c_deferred():  # a Ctrl-C inside Popen would leave the started child unknown
            try:
                self.proc = subprocess.Popen(
                    list(self.argv),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
                    env=dict(env) if env is not None else None,
                    start_new_session=group is Group.SESSION,
                    preexec_fn=_apply_child_setup if group is Group.APPLY else None,
                    pass_fds=tuple(keep_fds),
                    cwd=cwd,
                )
            except OSError as exc:
                self.error = f"cannot run {self.argv[0]}: {exc.strerror or exc}"
                self.errno = exc.errno
            else:
                _LIVE.add(self)
                assert self.proc.stdout is not None
                self._fds[self.proc.stdout.fileno()] = self._out
                if self.proc.stderr is not None:
                    self._fds[self.proc.stderr.fileno()] = self._err

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc is not None else None

    def result(self) -> Tuple[Optional[Any], Optional[str]]:
        """Wait, then (its JSON answer or None, what went wrong or None): Completed.answer."""
        return self.wait().answer()

    # ---------------------------------------------------------------------------------
    def wait(
        self,
        *,
        on_line: Optional[Callable[[str], None]] = None,
        on_start: Optional[Callable[[int], None]] = None,
        done: Optional[Callable[[bytes], bool]] = None,
    ) -> Completed:
        """Read the child's output until it ends or its deadline passes (then stop it), and
        reap it. `on_line(line)` gets each line of output as it comes. `done(stdout)`: the
        answer is complete; once its pipes are closed the child is only tearing down (a CUDA
        context takes 0.2 s on the GPU machine), so it is given 0.05 s and then left to a
        reaper thread (returncode None). Ctrl-C (any exception) stops it, then propagates."""
        if self.proc is None:
            return self._completed()
        proc = self.proc
        try:
            if on_start is not None:
                on_start(proc.pid)
            eof = self._pump(self.deadline, on_line)
            if eof and done is not None and done(self._stdout()):
                self._returncode = self._exit_within(0.05)
                if self._returncode is None:
                    threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
                    self._close()
                    return self._completed()
            elif eof:
                self._returncode = self._exit_within(self.deadline - time.perf_counter())
            if not eof or self._returncode is None:
                self._timed_out = True
                self._stop(on_line)
        except BaseException:
            shielded = ignore_signals()
            try:
                self._stop(_quiet(on_line))
            finally:
                restore_signals(shielded)
                self._close()
            raise
        self._close()
        return self._completed()

    def stop(self) -> Completed:
        """Stop it now (the signals of its Stop, to its group) and reap it: a child whose answer
        is no longer wanted."""
        if self.proc is None:
            return self._completed()
        shielded = ignore_signals()
        try:
            if self._fds or self.proc.poll() is None:
                self._stop(None)
            self._returncode = self.proc.poll()
        finally:
            restore_signals(shielded)
            self._close()
        return self._completed()

    # ---------------------------------------------------------------------------------
    def _stop(self, on_line: Optional[Callable[[str], None]]) -> None:
        """Signal the group in the Stop's order, reading output meanwhile, until the child has
        exited and its pipes are closed (or the group is gone); reap it."""
        assert self.proc is not None
        proc = self.proc
        for sig, grace in self.stop_policy.signals:
            if proc.poll() is not None and not self._open():
                break
            if not _signal_group(proc, sig):
                break
            self._stopped_with = signal.Signals(sig).name
            until = time.perf_counter() + grace
            self._pump(until, on_line)  # to end of file, or the grace period
            if self._exit_within(until - time.perf_counter()) is not None and not self._open():
                break
        if self.stop_policy.reap:
            proc.wait()
        elif proc.poll() is None:
            threading.Thread(target=proc.wait, name=f"reap-{proc.pid}", daemon=True).start()
        self._returncode = proc.poll()

    def _exit_within(self, seconds: float) -> Optional[int]:
        assert self.proc is not None
        try:
            return self.proc.wait(timeout=max(0.0, seconds))
        except subprocess.TimeoutExpired:
            return None

    def _open(self) -> bool:
        """Some pipe has not reached end of file (a grandchild may hold it)."""
        return bool(self._fds)

    def _pump(self, until: float, on_line: Optional[Callable[[str], None]]) -> bool:
        """Read the open pipes until all reach end of file (True) or perf_counter() passes
        `until` (False)."""
        if self._fds:
            with selectors.DefaultSelector() as sel:
                for fd in self._fds:
                    sel.register(fd, selectors.EVENT_READ)
                while self._fds:
                    left = until - time.perf_counter()
                    if left <= 0:
                        break
                    for key, _ in sel.select(timeout=left):
                        data = os.read(key.fd, 65536)
                        if data:
                            self._take(self._fds[key.fd], data, on_line)
                        else:
                            sel.unregister(key.fd)
                            del self._fds[key.fd]
        if not self._fds and on_line is not None:
            for line in self._lines.end():
                on_line(line)
        return not self._fds

    def _take(self, buf: bytearray, data: bytes, on_line: Optional[Callable[[str], None]]) -> None:
        buf += data
        if self.keep is not None and len(buf) > 2 * self.keep:
            del buf[: len(buf) - self.keep]
        if on_line is not None:
            for line in self._lines.feed(data):
                on_line(line)

    def _stdout(self) -> bytes:
        return bytes(self._out)

    def _close(self) -> None:
        _LIVE.discard(self)
        assert self.proc is not None
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()

    def _completed(self) -> Completed:
        out, err = bytes(self._out), bytes(self._err)
        if self.keep is not None:
            out, err = out[-self.keep :], err[-self.keep :]
        return Completed(
            argv=self.argv,
            returncode=self._returncode,
            stdout=out,
            stderr=err,
            seconds=time.perf_counter() - self.started,
            started_wall=self.started_wall,
            timed_out=self._timed_out,
            timeout=self.timeout,
            stopped_with=self._stopped_with,
            error=self.error,
            errno=self.errno,
            label=self.label,
        )


def run(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    merge_stderr: bool = False,
    group: Group = Group.SESSION,
    stop: Stop = KILL,
    keep_fds: Sequence[int] = (),
    keep: Optional[int] = None,
    label: str = "",
    cwd: Optional[str] = None,
    on_line: Optional[Callable[[str], None]] = None,
    on_start: Optional[Callable[[int], None]] = None,
) -> Completed:
    """Start `argv` and wait for it (see Child and Child.wait)."""
    return Child(
        argv,
        timeout=timeout,
        env=env,
        merge_stderr=merge_stderr,
        group=group,
        stop=stop,
        keep_fds=keep_fds,
        keep=keep,
        label=label,
        cwd=cwd,
    ).wait(on_line=on_line, on_start=on_start)


def child_env(environ: Mapping[str, str]) -> Dict[str, str]:
    """The user's environment for a probe child, minus LD_PRELOAD (a broken preload must not
    break the probe)."""
    env = {k: v for k, v in environ.items() if k != "LD_PRELOAD"}
    env.setdefault("PATH", os.defpath)
    return env


def python_child(
    python: str,
    script: str,
    args: Sequence[str] = (),
    *,
    isolated: bool = True,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    label: str = "",
) -> Child:
    """Start one of this package's stdlib-only scripts (a path) in interpreter `python`
    (`isolated`: -I -S, no site-packages)."""
    flags = ["-I", "-S"] if isolated else []
    argv = (runnable_python(python), *flags, script, *args)
    return Child(argv, timeout=timeout, env=env, label=label or os.path.basename(script))


# ---------------------------------------------------------------------------------------
# processes that are not our children (an installer a killed apply left behind)
# ---------------------------------------------------------------------------------------


def process_start_time(pid: int) -> Optional[int]:
    """Field 22 of /proc/PID/stat (clock ticks since boot): with the pid, it names one process
    even after the pid is reused. None when there is no such process (or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return None
    try:
        return int(raw[raw.rindex(")") + 2 :].split()[19])
    except (ValueError, IndexError):
        return None


def alive(pid: int, start: Optional[int] = None) -> bool:
    """The process `pid` exists (and, given `start`, is the same one) and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
        fields = raw[raw.rindex(")") + 2 :].split()
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


def stop_recorded(
    pid: int,
    start: Optional[int],
    pgid: Optional[int] = None,
    *,
    grace_int: float = GRACE_INT,
    grace_term: float = GRACE_TERM,
) -> str:
    """Stop a process that is not our child (an installer a killed apply left behind, recorded in
    its journal): SIGINT, SIGTERM, then SIGKILL to its group, each followed by its grace period,
    until it is gone. Returns the last signal sent, "" if it was gone."""
    sent = ""
    for sig, grace in (
        (signal.SIGINT, grace_int),
        (signal.SIGTERM, grace_term),
        (signal.SIGKILL, 30.0),
    ):
        if not alive(pid, start):
            return sent
        try:
            os.killpg(pgid or pid, sig)
        except (ProcessLookupError, PermissionError):
            return sent
        sent = signal.Signals(sig).name
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and alive(pid, start):
            time.sleep(0.05)
    return sent


def ignore_signals() -> Dict[int, Any]:
    """Ignore SIGINT/SIGTERM (in the main thread) while a child is stopped or a rollback runs: a
    second Ctrl-C must not leave either half done. Returns the old handlers for restore_signals."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}


def restore_signals(old: Dict[int, Any]) -> None:
    for sig, handler in old.items():
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
