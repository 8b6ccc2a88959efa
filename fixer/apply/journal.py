"""The journal: what an apply is about to touch, written and fsynced before each change.

Layout in the state directory (fixer._paths.state_dir):

    journal/LAST                    id of the newest journal
    journal/<id>/journal.json       this file's data (schema below)
    journal/<id>/wheels/            wheels repacked from distributions before they change
    journal/<id>/files/<n>          backups of files before they are overwritten
    journal/<id>/apply.log          every command and its whole output

journal.json (version 1):
    {"version": 1, "id", "created", "pid", "python", "root",
     "status": "prepared" | "applying" | "done" | "failed" | "rolling-back" | "rolled-back",
     "before": {"executable", "version", "prefix", "dists": [{name, version, dist_info, installer,
                direct_url, requested}]},      every distribution of the target, before
     "wheels": {name: wheel file name},       repacked backups (under wheels/)
     "sources": {"index_urls": [...], "extra_index_urls": [...], "find_links": [...], "no_index": bool},
     "apt_before": {package: version or null}, "apt_held": [package...],
     "files": [{"path", "existed", "backup", "mode", "sha256"}],   backup relative to the journal dir
     "ldconfig": null | ["ldconfig", ...],    the command to rerun after files under ld.so.conf.d change
     "steps": [{"kind", "summary", "argv", "status": "pending"|"running"|"done"|"failed", "rc", "seconds"}],
     "error": null | text, "rollback": null | {...result...},
     "env_fixes": [EnvFix as to_dict writes it],   the plan's loader fixes (a resumed apply fixes the new kernel)
     "resume": absent | {"next": index of the first step still to run, "steps": [Step as to_dict writes it],
                         "reason": text, "command": what the user runs to go on}}
    status "awaiting-restart": the apply stopped before a step that must run in a fresh notebook
    kernel (condacolab restarts it); `apply --resume` / fixer.apply(resume=True) runs "resume".

Every save goes to a temporary file, is fsynced, replaces the old one, and the directory is
fsynced: a SIGKILL at any point leaves either the old or the new journal, never half of one.
"""
from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any, Dict, Optional

JOURNAL_VERSION = 1


def atomic_write(path: Path, data: bytes, mode: Optional[int] = None) -> None:
    """Write `data` to `path` via a temporary file in the same directory + fsync + os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class Journal:
    def __init__(self, directory: Path, data: Dict[str, Any]) -> None:
        self.dir = Path(directory)
        self.data = data

    # -- creation / lookup ---------------------------------------------------------------

    @classmethod
    def create(cls, state_dir: Path, *, python: str, root: Optional[str]) -> "Journal":
        now = datetime.datetime.now(datetime.timezone.utc)
        jid = now.strftime("%Y%m%dT%H%M%S") + f"-{now.microsecond:06d}-{os.getpid()}"
        base = Path(state_dir) / "journal"
        directory = base / jid
        (directory / "wheels").mkdir(parents=True, exist_ok=True)
        (directory / "files").mkdir(parents=True, exist_ok=True)
        data: Dict[str, Any] = {
            "version": JOURNAL_VERSION, "id": jid, "created": now.isoformat(timespec="seconds"),
            "pid": os.getpid(), "python": python, "root": root, "status": "prepared",
            "before": None, "wheels": {}, "sources": {}, "apt_before": {}, "apt_held": [],
            "files": [], "ldconfig": None, "steps": [], "error": None, "rollback": None,
        }
        journal = cls(directory, data)
        journal.save()
        atomic_write(base / "LAST", jid.encode() + b"\n")
        return journal

    @classmethod
    def load(cls, directory: Path) -> "Journal":
        directory = Path(directory)
        data = json.loads((directory / "journal.json").read_text(encoding="utf-8"))
        if data.get("version") != JOURNAL_VERSION:
            raise ValueError(f"{directory}/journal.json: unknown journal version {data.get('version')!r}")
        return cls(directory, data)

    @classmethod
    def last(cls, state_dir: Path) -> Optional["Journal"]:
        base = Path(state_dir) / "journal"
        try:
            jid = (base / "LAST").read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return None
        if not jid or not (base / jid / "journal.json").is_file():
            return None
        return cls.load(base / jid)

    # -- state ---------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def status(self) -> str:
        return str(self.data["status"])

    @property
    def wheels_dir(self) -> Path:
        return self.dir / "wheels"

    @property
    def log_path(self) -> Path:
        return self.dir / "apply.log"

    def set(self, **values: Any) -> None:
        """Update fields and save (fsynced) at once."""
        self.data.update(values)
        self.save()

    def save(self) -> None:
        atomic_write(self.dir / "journal.json", json.dumps(self.data, indent=1, sort_keys=False).encode())

    def log(self, text: str) -> None:
        """Append to apply.log (not fsynced per line: it is for people, the JSON is the truth)."""
        with open(self.log_path, "a", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
