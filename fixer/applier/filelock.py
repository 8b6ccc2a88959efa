"""One apply (or rollback) at a time: fcntl locks on files.

Two locks, always taken in this order:
- `TargetLock(python)`: one per target interpreter, keyed by its real path, in one directory
  that every user and every `--root` agrees on (fixer.system.paths.lock_dir). Two applies on the same
  interpreter are serialized whatever their state directories. The installer a step runs
  inherits this lock's descriptor, so the lock stays held until the installer is gone too,
  even when the apply itself was killed.
- `ApplyLock(state_dir)`: guards the journal directory.

The kernel drops a lock when the last process holding it dies, even by SIGKILL, so a crash
never leaves a stale lock. The holder writes who it is (pid, command, start time) into the
file, and a second apply names it in the LockHeld error.
"""

from __future__ import annotations

import datetime
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

LOCK_NAME = "apply.lock"


class ApplyLock:
    """Context manager: `with ApplyLock(state_dir): ...` or acquire()/release()."""

    def __init__(self, state_dir: Path, command: Optional[str] = None) -> None:
        self.path = Path(state_dir) / LOCK_NAME
        if command is None:
            prog = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
            if prog in ("__main__.py", "-c", "-m"):
                prog = "colab-cudnn-fix" if prog == "__main__.py" else f"python {prog}"
            command = " ".join([prog, *sys.argv[1:]])
        self.command = command
        self._fd: Optional[int] = None

    def _open(self) -> int:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
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
        info = {
            "pid": os.getpid(),
            "command": self.command,
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }
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

    def __init__(
        self, python: str, command: Optional[str] = None, base: Optional[Path] = None
    ) -> None:
        from fixer.system.paths import lock_dir

        key = target_key(python)
        directory = Path(base) if base is not None else lock_dir()
        super().__init__(directory, command)
        self.python = key
        self.path = directory / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".lock")

    def _open(self) -> int:
        directory = self.path.parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
            if directory.stat().st_uid == os.geteuid():
                os.chmod(directory, 0o1777)  # shared by every user, like /tmp itself
        except OSError:
            pass
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o666)
            try:
                if os.fstat(fd).st_uid == os.geteuid():
                    os.fchmod(fd, 0o666)
            except OSError:
                pass
            return fd
        except PermissionError:
            try:  # another user's lock file: a read-only descriptor locks just as well
                return os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
            except OSError as exc:
                raise UsageError(
                    f"cannot open the lock file {self.path} of {self.python}: {exc.strerror}"
                )
        except OSError as exc:
            raise UsageError(
                f"cannot create the lock file {self.path} of {self.python}: {exc.strerror}",
                hint="set COLAB_CUDNN_FIX_LOCK_DIR to a writable directory shared by every user",
            )


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
    from fixer.system.proc import alive

    if isinstance(pid, int) and not alive(pid):
        return (
            f"the apply pid {pid} ({holder.get('command', '?')}, started {holder.get('started', '?')}) is gone, "
            f"but an installer it started still runs and holds the lock {path}; "
            "`colab-cudnn-fix rollback` stops it and restores the state before that apply"
        )
    return (
        f"another apply is running: pid {holder.get('pid', '?')} "
        f"({holder.get('command', '?')}), started {holder.get('started', '?')}; lock file {path}"
    )
