"""The journal: what an apply is about to touch, written and fsynced before each change.

Layout in the state directory (fixer.system.paths.state_dir):

    journal/LAST                    id of the newest journal (a hint for people; never the only way:
                                    `Journal.latest` scans the directory)
    journal/<id>/journal.json       the mutable state (schema below), checksummed
    journal/<id>/before.json        the target's distributions before the apply (written once), checksummed
    journal/<id>/manifests/<n>.json every file of a touched distribution: path, sha256, mode, mtime,
                                    symlink target, and the listing of its directories (fixer.applier.filetree)
    journal/<id>/backups/<n>.zip    the bytes of those files, compressed (pruned after the next success)
    journal/<id>/files/<n>          backups of other files before they are overwritten (env files)
    journal/<id>/apply.log          every command and its whole output

journal.json (version 2; version 1 journals are still read):
    {"version": 2, "id", "created", "pid", "python", "root",
     "status": "prepared" | "applying" | "done" | "failed" | "abandoned" | "rolling-back" | "rolled-back"
               | "rollback-incomplete",
     "child": null | {"pid", "pgid", "start", "argv"},   the installer running now (killed before a restore)
     "manifests": {name: "manifests/<n>.json"},           distributions recorded file by file
     "backups": {name: "backups/<n>.zip"},                their bytes
     "installer": "pip" | "uv" | "conda",                 the plan's (Plan.installer); rollback's pip steps use it
     "sources": {"index_urls": [...], "extra_index_urls": [...], "find_links": [...], "no_index": bool,
                 "break_system_packages": bool},         gathered from the steps' Step.pip (fixer.applier.sources)
     "apt_before": {package: version or null}, "apt_held": [package...],
     "files": [{"path", "existed", "backup", "mode", "sha256"}],   backup relative to the journal dir
     "ldconfig": null | ["ldconfig", ...],
     "steps": [{"kind", "summary", "argv", "status": "pending"|"running"|"done"|"failed", "rc", "seconds"}],
     "error": null | text, "rollback": null | {...result...}, "notes": [...],
     "env_fixes": [EnvFix as to_dict writes it],   the plan's loader fixes (a resumed apply fixes the new kernel)
     "resume": absent | {"next": index of the first step still to run, "steps": [Step as to_dict writes it],
                         "reason": text, "command": what the user runs to go on},
     ...further keys are allowed (other parts of the tool add their own), and
     "checksum": "sha256:<hex of the canonical JSON of every other key>"}
    status "awaiting-restart": the apply stopped before a step that must run in a fresh notebook
    kernel (condacolab restarts it); `apply --resume` / fixer.apply(resume=True) runs "resume".

Every save goes to a temporary file, is fsynced, replaces the old one, and the directory is
fsynced: a SIGKILL at any point leaves either the old or the new journal, never half of one.
The checksum catches what atomic writes cannot: a file damaged afterwards. A journal that
cannot be read raises JournalDamaged (exit 2) naming the file; `Journal.salvage` reads what is
left for `rollback --force`. A write that fails (disk full, file-size limit, read-only)
raises JournalWriteFailed.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

from fixer.errors import JournalDamaged, JournalWriteFailed

JOURNAL_VERSION = 2
_READABLE = (1, 2)

#: Statuses of a journal whose apply (or rollback) did not finish ("awaiting-restart": it waits for
#: `apply --resume` after a kernel restart, and its backups must stay).
UNFINISHED = ("applying", "rolling-back", "rollback-incomplete")
WAITING = ("awaiting-restart",)

#: Fields a readable journal must have, with their types.
_REQUIRED = {"id": str, "status": str, "python": str, "steps": list}


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
        unlink_quietly(tmp)
        raise
    fsync_dir(path.parent)


def unlink_quietly(path: "os.PathLike[str] | str") -> None:
    """Remove a temporary file on the way out of a failed write; it may not exist."""
    try:
        os.unlink(path)
    except OSError:
        pass


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


# -- checksummed JSON ------------------------------------------------------------------------


def _digest(body: Dict[str, Any]) -> str:
    canon = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canon.encode("utf-8")).hexdigest()


def encode_checked(data: Dict[str, Any]) -> bytes:
    body = {k: v for k, v in data.items() if k != "checksum"}
    return json.dumps({**body, "checksum": _digest(body)}, indent=1).encode("utf-8")


def decode_checked(raw: bytes, where: str, *, need_checksum: bool = True) -> Dict[str, Any]:
    """Parse a checksummed JSON file; JournalDamaged (naming `where`) when it is not intact."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise JournalDamaged(
            f"{where}: not readable JSON ({exc}); the file is truncated or damaged",
            path=where,
            hint="`colab-cudnn-fix rollback --force` restores from what the journal still holds",
        )
    if not isinstance(data, dict):
        raise JournalDamaged(f"{where}: not a JSON object", path=where)
    stored = data.pop("checksum", None)
    if stored is None:
        if need_checksum:
            raise JournalDamaged(
                f"{where}: no checksum; the file was not written by this tool", path=where
            )
    elif stored != _digest(data):
        raise JournalDamaged(
            f"{where}: checksum mismatch; the file was changed or damaged after it was written",
            path=where,
            hint="`colab-cudnn-fix rollback --force` restores from what the journal still holds",
        )
    return data


def write_checked(path: Path, data: Dict[str, Any]) -> None:
    """Atomic, fsynced, checksummed. JournalWriteFailed when the disk refuses."""
    try:
        atomic_write(path, encode_checked(data))
    except OSError as exc:
        raise JournalWriteFailed(f"cannot write {path}: {exc.strerror or exc}") from exc


def read_checked(path: Path) -> Dict[str, Any]:
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise JournalDamaged(f"{path}: missing", path=str(path))
    except OSError as exc:
        raise JournalDamaged(f"{path}: cannot be read ({exc.strerror})", path=str(path))
    return decode_checked(raw, str(path))


class Journal:
    def __init__(
        self, directory: Path, data: Dict[str, Any], damaged: Optional[List[str]] = None
    ) -> None:
        self.dir = Path(directory)
        self.data = data
        #: what could not be read (only for a salvaged journal)
        self.damaged: List[str] = list(damaged or ())
        #: read by `rollback --force`: damaged parts are listed in `damaged`, not raised
        self.forced = False

    # -- creation / lookup ---------------------------------------------------------------

    @classmethod
    def create(cls, state_dir: Path, *, python: str, root: Optional[str]) -> "Journal":
        """A new journal in status "prepared". JournalWriteFailed when the state directory
        cannot take it (nothing has changed on the machine yet)."""
        now = datetime.datetime.now(datetime.timezone.utc)
        jid = now.strftime("%Y%m%dT%H%M%S") + f"-{now.microsecond:06d}-{os.getpid()}"
        base = Path(state_dir) / "journal"
        directory = base / jid
        try:
            for sub in ("files", "manifests", "backups"):
                (directory / sub).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise JournalWriteFailed(
                f"cannot create the journal directory {directory}: {exc.strerror or exc}"
            )
        data: Dict[str, Any] = {
            "version": JOURNAL_VERSION,
            "id": jid,
            "created": now.isoformat(timespec="seconds"),
            "pid": os.getpid(),
            "python": python,
            "root": root,
            "status": "prepared",
            "child": None,
            "manifests": {},
            "backups": {},
            "sources": {},
            "apt_before": {},
            "apt_held": [],
            "files": [],
            "ldconfig": None,
            "steps": [],
            "error": None,
            "rollback": None,
            "notes": [],
        }
        journal = cls(directory, data)
        journal.save()
        try:
            atomic_write(base / "LAST", jid.encode() + b"\n")
        except OSError as exc:
            raise JournalWriteFailed(f"cannot write {base / 'LAST'}: {exc.strerror or exc}")
        return journal

    @classmethod
    def load(cls, directory: Path) -> "Journal":
        """Read a journal; JournalDamaged naming the file when it is not intact or lacks a field."""
        directory = Path(directory)
        path = directory / "journal.json"
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise JournalDamaged(f"{path}: cannot be read ({exc.strerror})", path=str(path))
        data = decode_checked(raw, str(path), need_checksum=False)
        version = data.get("version")
        if version not in _READABLE:
            raise JournalDamaged(
                f"{path}: unknown journal version {version!r} (this tool reads "
                f"{', '.join(map(str, _READABLE))})",
                path=str(path),
            )
        if version >= 2 and b'"checksum"' not in raw:
            raise JournalDamaged(f"{path}: no checksum", path=str(path))
        for key, kind in _REQUIRED.items():
            if not isinstance(data.get(key), kind):
                raise JournalDamaged(
                    f"{path}: field {key!r} is missing or not a {kind.__name__}",
                    path=str(path),
                    hint="`colab-cudnn-fix rollback --force` restores from what the journal "
                    "still holds",
                )
        if (
            version == 1
            and data.get("status") not in ("prepared", "abandoned")
            and not isinstance(data.get("before"), dict)
        ):
            raise JournalDamaged(f"{path}: field 'before' is missing", path=str(path))
        return cls(directory, data)

    @classmethod
    def salvage(cls, directory: Path) -> "Journal":
        """What a damaged journal still says (for `rollback --force`): journal.json as far as it
        parses (checksum ignored), else a stub; the manifests, backups and before.json found on disk."""
        directory = Path(directory)
        damaged: List[str] = []
        data: Dict[str, Any] = {}
        try:
            data = json.loads((directory / "journal.json").read_bytes().decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            data.pop("checksum", None)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            damaged.append(f"journal.json: {exc}")
            data = {}
        stub: Dict[str, Any] = {
            "version": JOURNAL_VERSION,
            "id": directory.name,
            "pid": None,
            "python": "",
            "root": None,
            "status": "applying",
            "child": None,
            "manifests": {},
            "backups": {},
            "sources": {},
            "apt_before": {},
            "apt_held": [],
            "files": [],
            "ldconfig": None,
            "steps": [],
            "error": None,
            "rollback": None,
            "notes": [],
        }
        for key, default in stub.items():
            if key not in data or (key in _REQUIRED and not isinstance(data[key], _REQUIRED[key])):
                data[key] = default
        for sub, key, suffix in (
            ("manifests", "manifests", ".json"),
            ("backups", "backups", ".zip"),
        ):
            found: Dict[str, Any] = dict(data[key]) if isinstance(data.get(key), dict) else {}
            for p in (
                sorted((directory / sub).glob("*" + suffix)) if (directory / sub).is_dir() else ()
            ):
                found.setdefault(p.name[: -len(suffix)], f"{sub}/{p.name}")
            data[key] = found
        journal = cls(directory, data, damaged)
        journal.forced = True
        if not data.get("python"):
            before = journal.before()
            if before is not None:
                data["python"] = str(before.get("executable", ""))
        return journal

    @classmethod
    def all(cls, state_dir: Path) -> List[Path]:
        """Journal directories, oldest first (ids sort by time)."""
        base = Path(state_dir) / "journal"
        try:
            return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))
        except OSError:
            return []

    @classmethod
    def latest(cls, state_dir: Path, *, force: bool = False) -> Optional["Journal"]:
        """The newest journal, found by scanning the journal directory (LAST is not trusted).
        A directory without journal.json is skipped: it was never written, so nothing changed.
        An unreadable newest journal raises JournalDamaged, or is salvaged with `force`."""
        for directory in reversed(cls.all(state_dir)):
            if not (directory / "journal.json").exists():
                if force and any((directory / "manifests").glob("*.json")):
                    return cls.salvage(directory)
                continue
            try:
                return cls.load(directory)
            except JournalDamaged:
                if force:
                    return cls.salvage(directory)
                raise
        return None

    @classmethod
    def last(cls, state_dir: Path) -> Optional["Journal"]:
        """Alias of latest() (the name earlier code used)."""
        return cls.latest(state_dir)

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
        self.data["version"] = JOURNAL_VERSION
        write_checked(self.dir / "journal.json", self.data)

    def write_part(self, name: str, data: Dict[str, Any]) -> str:
        """Write a checksummed side file (before.json, manifests/<n>.json); return its relative path."""
        write_checked(self.dir / name, data)
        return name

    def read_part(self, name: str) -> Dict[str, Any]:
        return read_checked(self.dir / name)

    def before(self) -> Optional[Dict[str, Any]]:
        """The target's distributions before the apply (before.json; inside journal.json in version 1)."""
        if isinstance(self.data.get("before"), dict):
            return dict(self.data["before"])
        if (self.dir / "before.json").exists():
            try:
                return self.read_part("before.json")
            except JournalDamaged as exc:
                if not self.forced:
                    raise
                self.damaged.append(exc.message)
        return None

    def manifests(self) -> Iterator[Dict[str, Any]]:
        for name, rel in sorted(self.data.get("manifests", {}).items()):
            try:
                yield self.read_part(rel)
            except JournalDamaged as exc:
                if not self.forced:
                    raise
                self.damaged.append(f"{name}: {exc.message}")

    def log(self, text: str) -> None:
        """Append to apply.log (not fsynced per line: it is for people, the JSON is the truth).
        A full disk does not stop anything here: the log is best effort."""
        try:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(text if text.endswith("\n") else text + "\n")
        except OSError:
            pass
