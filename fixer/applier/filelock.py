"""One apply (or rollback) at a time: fcntl locks on files.

Two locks, always taken in this order:
- `TargetLock(python, base)`: one per target environment, keyed by its real path, in the lock
  directory inside the private state directory (fixer.system.paths.lock_dir). The installer a
  step runs inherits this lock's descriptor, so the lock stays held until the installer is gone
  too, even when the apply itself was killed.
- `ApplyLock(state_dir)`: guards the journal directory.

Both live in the private state directory (0700, checked on every use): no other user can hold,
replace or read them. Lock files are 0600, opened through fixer.system.fsgate (O_NOFOLLOW).
The kernel drops a lock when the last process holding it dies, even by SIGKILL, so a crash
never leaves a stale lock. The holder writes its pid, command name (not its arguments, which can
hold credentials) into the file, and a second apply names it in LockHeld.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, Optional

from fixer.errors import LockHeld, UsageError
from fixer.system import fsgate
from fixer.system.proc import alive

LOCK_NAME = "apply.lock"


class ApplyLock:
    """Context manager: `with ApplyLock(state_dir): ...` or acquire()/release()."""

    def __init__(self, state_dir: Path, command: Optional[str] = None) -> None:
        self.path = Path(state_dir) / LOCK_NAME
        self.command = command if command is not None else command_name()
        self._fd: Optional[int] = None

    def _open(self) -> int:
        try:
            fsgate.private_dir(self.path.parent, what="lock directory")  # checked on every use
            return fsgate.open_lock(self.path)
        except PermissionError as exc:
            raise UsageError(
                f"cannot create the lock file {self.path}: {exc.strerror}",
                hint="run as a user who can write the state directory (or use --root DIR)",
            )

    def acquire(self, wait: float = 0.0) -> "ApplyLock":
        """Take the lock; LockHeld when another process holds it for more than `wait` seconds."""
        fd = self._open()
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise
                if time.monotonic() < deadline:
                    time.sleep(0.1)
                    continue
                holder = _read_holder(fd)
                os.close(fd)
                raise LockHeld(
                    _describe(holder, self.path),
                    hint="wait for it to finish; a crashed apply releases the lock by itself",
                )
        info = {"pid": os.getpid(), "command": self.command}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode() + b"\n", 0)
            os.fsync(fd)
        except OSError:
            pass  # read-only lock file of another user, or a full disk: the lock itself holds
        self._fd = fd
        return self

    def fileno(self) -> int:
        """The locked descriptor (a child given it keeps the lock held while it runs)."""
        assert self._fd is not None, "lock not held"
        return self._fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            try:
                os.ftruncate(self._fd, 0)
            except OSError:
                pass
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "ApplyLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def command_name() -> str:
    """This process's command name, without its arguments (argv can hold an index URL's token)."""
    prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if prog in ("__main__.py", "-c", "-m", ""):
        return "colab-cudnn-fix"
    return prog[:64]


def target_key(python: str) -> str:
    """What identifies the environment an interpreter installs into, whatever path names it: the
    real path of its virtual environment (the directory holding pyvenv.cfg; a venv's bin/python
    is a symlink to the base interpreter, so the binary cannot tell two venvs apart), else the
    real path of the interpreter itself."""
    absolute = os.path.abspath(python)
    env = os.path.dirname(os.path.dirname(absolute))
    if os.path.isfile(os.path.join(env, "pyvenv.cfg")):
        return os.path.realpath(env)
    return os.path.realpath(absolute)


class TargetLock(ApplyLock):
    """The lock of one target environment: `<lock_dir>/<sha256 of target_key(python)>.lock`."""

    def __init__(self, python: str, base: Path, command: Optional[str] = None) -> None:
        key = target_key(python)
        directory = Path(base)
        super().__init__(directory, command)
        self.python = key
        self.path = directory / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".lock")


def _read_holder(fd: int) -> Dict[str, Any]:
    try:
        raw = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
        return json.loads(raw) if raw else {}
    except (OSError, ValueError):
        return {}


def _describe(holder: Dict[str, Any], path: Path) -> str:
    if not holder:
        return f"another apply holds the lock {path}"
    pid = holder.get("pid")

    if isinstance(pid, int) and not alive(pid):
        return (
            f"the apply pid {pid} ({holder.get('command', '?')}) is gone, "
            f"but an installer it started still runs and holds the lock {path}; "
            "`colab-cudnn-fix rollback` stops it and restores the state before that apply"
        )
    return (
        f"another apply is running: pid {holder.get('pid', '?')} "
        f"({holder.get('command', '?')}); lock file {path}"
    )
