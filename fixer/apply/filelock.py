"""One apply (or rollback) at a time: an fcntl lock on a file in the state directory.

The kernel drops the lock when the holder dies, even by SIGKILL, so a crash never leaves a
stale lock. The holder writes who it is (pid, command, start time) into the file, and a
second apply names it in the LockHeld error.
"""
from __future__ import annotations

import datetime
import errno
import fcntl
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Optional

from ..errors import LockHeld, UsageError

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

    def acquire(self) -> "ApplyLock":
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except PermissionError as exc:
            raise UsageError(f"cannot create the lock file {self.path}: {exc.strerror}",
                             hint="run as a user who can write the state directory (or use --root DIR)")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                os.close(fd)
                raise
            holder = _read_holder(fd)
            os.close(fd)
            raise LockHeld(_describe(holder, self.path),
                           hint="wait for it to finish; a crashed apply releases the lock by itself")
        info = {"pid": os.getpid(), "command": self.command,
                "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode() + b"\n", 0)
        os.fsync(fd)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "ApplyLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> Dict[str, Any]:
    try:
        raw = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip()
        return json.loads(raw) if raw else {}
    except (OSError, ValueError):
        return {}


def _describe(holder: Dict[str, Any], path: Path) -> str:
    if not holder:
        return f"another apply holds the lock {path}"
    return (f"another apply is running: pid {holder.get('pid', '?')} "
            f"({holder.get('command', '?')}), started {holder.get('started', '?')}; lock file {path}")
