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

journal.json (version 3; older journals are refused as damaged: rollback them with the tool that wrote them):
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
     "files": [FileRecord: {"path", "before": PathState, "backup", "created_dirs", "after": PathState}],
                                                          backup relative to the journal dir
     "ldconfig": null | ["ldconfig", ...],
     "after_state": null | "after.json": what the apply left (fixer.applier.threeway.capture),
                                                          written when it finished; rollback restores
                                                          a path only while it still equals this
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

import dataclasses
import datetime
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from fixer.errors import JournalDamaged, JournalWriteFailed
from fixer.model import EnvFix, from_dict
from fixer.planner.envfix import ENV_FILE
from fixer.system import fsgate, grammar

JOURNAL_VERSION = 3
_READABLE = (3,)

#: Statuses of a journal whose apply (or rollback) did not finish ("awaiting-restart": it waits for
#: `apply --resume` after a kernel restart, and its backups must stay).
UNFINISHED = ("applying", "rolling-back", "rollback-incomplete")
WAITING = ("awaiting-restart",)

#: Fields a readable journal must have, with their types.
_REQUIRED = {"id": str, "status": str, "python": str, "steps": list}


def atomic_write(path: Path, data: bytes, mode: Optional[int] = None) -> None:
    """Write `data` to `path` through the gate (fixer.system.fsgate.write_bytes: a fresh
    temporary file, fsync, os.replace, the directory fsynced), 0600 unless `mode` says otherwise."""
    fsgate.write_bytes(path, data, 0o600 if mode is None else mode)


def unlink_quietly(path: "os.PathLike[str] | str") -> None:
    """Remove a temporary file on the way out of a failed write; it may not exist."""
    try:
        fsgate.remove(path)
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


#: A URL in a line of text (a command line, installer output), and the userinfo of one
#: (`https://user:token@host/`: what pip accepts as a credential in an index URL,
#: pip/_internal/utils/misc.py split_auth_from_netloc). Bounded: no nested quantifiers.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,30}://[^ \t\r\n\"'<>]{1,4096}")
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]{0,30}://)[^/@ \t\r\n]{1,2048}@")


def mask_credentials(text: str) -> str:
    """`text` with the userinfo of every URL in it replaced by ***@ (fixer.system.grammar.mask_url,
    the one home of that rule; then a plain scan for what urlsplit would not parse): the journal
    and the log keep no password or token (an `--index-mirror https://user:pass@host/...`)."""
    if "@" not in text:
        return text
    text = _URL.sub(lambda m: grammar.mask_url(m.group(0)), text)
    return _USERINFO.sub(lambda m: m.group(1) + "***@", text)


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return mask_credentials(value)
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


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
        fsgate.private_dir(state_dir)  # 0700, this user's, not a symlink: checked on every use
        now = datetime.datetime.now(datetime.timezone.utc)
        jid = now.strftime("%Y%m%dT%H%M%S") + f"-{now.microsecond:06d}-{os.getpid()}"
        base = Path(state_dir) / "journal"
        directory = base / jid
        try:
            for sub in ("files", "manifests", "backups"):
                fsgate.make_dirs(directory / sub, 0o700)
        except OSError as exc:
            raise JournalWriteFailed(
                f"cannot create the journal directory {directory}: {exc.strerror or exc}"
            )
        data = _fresh(jid, os.getpid(), python, root, "prepared", now.isoformat(timespec="seconds"))
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
        if b'"checksum"' not in raw:
            raise JournalDamaged(f"{path}: no checksum", path=str(path))
        for key, kind in _REQUIRED.items():
            if not isinstance(data.get(key), kind):
                raise JournalDamaged(
                    f"{path}: field {key!r} is missing or not a {kind.__name__}",
                    path=str(path),
                    hint="`colab-cudnn-fix rollback --force` restores from what the journal "
                    "still holds",
                )
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
        stub = _fresh(directory.name, None, "", None, "applying")
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
        if "after_state" not in data and (directory / "after.json").is_file():
            data["after_state"] = "after.json"
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

    # -- typed fields (each key of journal.json has one reader here) --------------------------

    @property
    def python(self) -> str:
        return str(self.data.get("python") or "")

    @property
    def installer(self) -> str:
        return str(self.data.get("installer") or "pip")

    @property
    def sources(self) -> Dict[str, Any]:
        """Where rollback reinstalls from (fixer.applier.sources.sources_of wrote it): index URLs
        by the planner's grammar (grammar.index_url: https, file, or http to this machine),
        find-links places by grammar.find_link, the two flags as booleans. Anything else is
        dropped as damage (it would reach pip's command line), and then no index is used at all
        (no_index: the journal's own wheels and the valid find-links only), never PyPI in place
        of an index that was dropped."""
        value = self.data.get("sources")
        dropped = value is not None and not isinstance(value, dict)
        if dropped:
            self._damage(f"sources: {value!r:.80} is not an object")
        value = value if isinstance(value, dict) else {}
        out: Dict[str, Any] = {}
        for key, check in _SOURCE_LISTS.items():
            items = value.get(key)
            out[key] = []
            for item in items if isinstance(items, list) else ():
                try:
                    out[key].append(check(item))
                except ValueError as exc:
                    self._damage(f"sources.{key}: {exc}")
                    dropped = True
        for key in ("no_index", "break_system_packages"):
            out[key] = value.get(key) is True
        out["no_index"] = out["no_index"] or dropped
        return out

    @property
    def apt_before(self) -> Dict[str, Optional[str]]:
        """Package -> version before the apply (None: not installed); entries that are not a
        Debian package name and version (Policy 5.6.1, 5.6.12) are dropped as damage: they
        would reach apt-get's command line."""
        value = self.data.get("apt_before")
        out: Dict[str, Optional[str]] = {}
        for pkg, version in value.items() if isinstance(value, dict) else ():
            try:
                out[grammar.apt_name(pkg)] = (
                    None if version is None else grammar.apt_version(version)
                )
            except ValueError as exc:
                self._damage(f"apt_before: {exc}")
        return out

    @property
    def apt_held(self) -> Tuple[str, ...]:
        held = self.data.get("apt_held")
        return tuple(p for p in (held if isinstance(held, list) else ()) if _is_apt_name(p))

    @property
    def ldconfig(self) -> Optional[List[str]]:
        """The ldconfig command the apply ran: only the tool's own (fixer.applier.envfix.ldconfig_argv),
        never another command a damaged journal names."""
        value = self.data.get("ldconfig")
        if value is None or value == []:
            return None
        if value != ["ldconfig"]:
            self._damage(f"ldconfig: {value!r:.100} is not the tool's ldconfig command")
            return None
        return ["ldconfig"]

    @property
    def files(self) -> Tuple["FileRecord", ...]:
        """The file records; one that cannot be read is left out and named in `damaged`."""
        value = self.data.get("files")
        out: List[FileRecord] = []
        for r in value if isinstance(value, list) else ():
            try:
                out.append(FileRecord.from_dict(r))
            except JournalDamaged as exc:
                self._damage(exc.message)
        return tuple(out)

    @property
    def notes(self) -> List[str]:
        value = self.data.get("notes")
        return [str(n) for n in value] if isinstance(value, list) else []

    @property
    def steps(self) -> List[Dict[str, Any]]:
        """The step records, mutable: _run_steps updates them in place and saves."""
        return list(self.data["steps"])

    @property
    def child(self) -> Optional["ChildRecord"]:
        return ChildRecord.from_dict(self.data.get("child"))

    @property
    def resume(self) -> Optional["ResumeRecord"]:
        return ResumeRecord.from_dict(self.data.get("resume"))

    @property
    def env_fixes(self) -> List[Dict[str, Any]]:
        value = self.data.get("env_fixes")
        return [f for f in value if isinstance(f, dict)] if isinstance(value, list) else []

    def loader_fixes(self) -> Tuple[EnvFix, ...]:
        """The plan's loader fixes (a resumed apply applies them to the fresh kernel, which
        preloads the libraries they name), each by the grammar a lock's fixes pass
        (grammar.loader_fix_value): JournalDamaged (exit 2, naming the field) otherwise."""
        value = self.data.get("env_fixes")
        where = self.dir / "journal.json"
        out: List[EnvFix] = []
        for i, raw in enumerate(value if isinstance(value, list) else ()):
            key = f"$.env_fixes[{i}]"
            try:
                fix = from_dict(EnvFix, raw, key)
                checked = grammar.loader_fix_value(fix.kind, fix.value, env_file=ENV_FILE)
                why = grammar.short_text(fix.why, 1024, "text")
            except (ValueError, TypeError) as exc:
                message = str(exc) if str(exc).startswith(key) else f"{key}: {exc}"
                raise JournalDamaged(f"{where}: {message}", path=str(where)) from None
            out.append(EnvFix(fix.kind, checked, why=why))
        return tuple(out)

    @property
    def root(self) -> Optional[str]:
        """The --root sandbox the apply ran in, or None."""
        value = self.data.get("root")
        return value if isinstance(value, str) else None

    @property
    def after_snapshot(self) -> Optional[Dict[str, Any]]:
        """The versions snapshot recorded when the apply finished (its "after"), or None."""
        value = self.data.get("after")
        return value if isinstance(value, dict) else None

    @property
    def leftovers(self) -> List[str]:
        """pip's moved-aside leftovers a cleanup step removes (fixer.applier.leftovers)."""
        value = self.data.get("leftovers")
        return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []

    @property
    def backups(self) -> Dict[str, str]:
        """name -> backups/<name>.zip (a path inside the journal directory, or left out)."""
        value = self.data.get("backups")
        items = value.items() if isinstance(value, dict) else ()
        return {str(k): str(v) for k, v in items if _inside(v)}

    @property
    def index_copies(self) -> Dict[str, Dict[str, Any]]:
        """name -> the wheel the index still serves (fixer.applier.indexcopy.find wrote it):
        kept only with a wheel file name (one path component), an index URL by the planner's
        grammar and a sha256; anything else is damage (rollback would download from it and
        write under its name)."""
        value = self.data.get("index_copies")
        out: Dict[str, Dict[str, Any]] = {}
        for name, copy in value.items() if isinstance(value, dict) else ():
            why = _bad_copy(copy)
            if why is None:
                out[str(name)] = copy
            else:
                self._damage(f"index_copies.{str(name)[:40]}: {why}")
        return out

    def add_note(self, text: str) -> None:
        """Append a note and save."""
        self.data["notes"] = self.notes + [text]
        self.save()

    def after_state(self) -> Optional[Dict[str, Any]]:
        """What the apply left (after.json), or None when it did not finish."""
        rel = self.data.get("after_state")
        if not isinstance(rel, str):
            return None
        try:
            return self.read_part(rel)
        except JournalDamaged as exc:
            if not self.forced:
                raise
            self.damaged.append(exc.message)
            return None

    def set(self, **values: Any) -> None:
        """Update fields and save (fsynced) at once."""
        self.data.update(values)
        self.save()

    def save(self) -> None:
        """Write journal.json (checksummed, 0600), credentials in URLs masked."""
        self.data["version"] = JOURNAL_VERSION
        write_checked(self.dir / "journal.json", _masked(self.data))

    def write_part(self, name: str, data: Dict[str, Any]) -> str:
        """Write a checksummed side file (before.json, manifests/<n>.json); return its relative path."""
        write_checked(self.dir / name, data)
        return name

    def read_part(self, name: str) -> Dict[str, Any]:
        """A side file of this journal; `name` must stay inside its directory."""
        if not _inside(name):
            raise JournalDamaged(f"{self.dir}: {name!r:.100} is not a file of this journal")
        return read_checked(self.dir / name)

    def _damage(self, what: str) -> None:
        if what not in self.damaged:
            self.damaged.append(what)

    def before(self) -> Optional[Dict[str, Any]]:
        """The target's distributions before the apply (before.json)."""
        if (self.dir / "before.json").exists():
            try:
                return self.read_part("before.json")
            except JournalDamaged as exc:
                if not self.forced:
                    raise
                self.damaged.append(exc.message)
        return None

    def manifests(self) -> Iterator[Dict[str, Any]]:
        value = self.data.get("manifests")
        for name, rel in sorted((value if isinstance(value, dict) else {}).items()):
            try:
                yield self.read_part(rel)
            except JournalDamaged as exc:
                if not self.forced:
                    raise
                self.damaged.append(f"{name}: {exc.message}")

    def log(self, text: str) -> None:
        """Append to apply.log (not fsynced per line: it is for people, the JSON is the truth).
        A full disk does not stop anything here: the log is best effort."""
        text = mask_credentials(text)
        try:
            fsgate.append_text(self.log_path, text if text.endswith("\n") else text + "\n")
        except OSError:
            pass


#: The list fields of "sources" and the grammar of their items.
_SOURCE_LISTS = {
    "index_urls": grammar.index_url,
    "extra_index_urls": grammar.index_url,
    "find_links": grammar.find_link,
}


_WHEEL_FILE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+!-]{0,250}\.whl")


def _bad_copy(copy: Any) -> Optional[str]:
    """Why an index_copies entry is not one indexcopy.find writes, or None."""
    if not isinstance(copy, dict):
        return "not an object"
    filename, url, sha = copy.get("filename"), copy.get("url"), copy.get("sha256")
    if not isinstance(filename, str) or not _WHEEL_FILE.fullmatch(filename):
        return f"{filename!r:.80} is not a wheel file name"
    try:
        grammar.sha256_hex(sha)
    except ValueError:
        return "no sha256"
    try:
        grammar.index_url(url)
    except ValueError as exc:
        return str(exc)
    return None


def _is_apt_name(value: Any) -> bool:
    try:
        grammar.apt_name(value)
        return True
    except ValueError:
        return False


def _inside(rel: Any) -> bool:
    """A relative path that stays inside the journal directory (no `..`, not absolute)."""
    return (
        isinstance(rel, str)
        and bool(rel)
        and not rel.startswith("/")
        and "\0" not in rel
        and ".." not in rel.split("/")
    )


# -- records -----------------------------------------------------------------------------------


def _int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


@dataclasses.dataclass(frozen=True)
class PathState:
    """One path as the apply saw it: its type ("absent", "file", "symlink", "dir", "other"),
    mode, owner, and content (sha256 and size of a file, target of a symlink)."""

    kind: str = "absent"
    mode: Optional[int] = None
    uid: Optional[int] = None
    gid: Optional[int] = None
    sha256: Optional[str] = None
    size: Optional[int] = None
    target: Optional[str] = None

    @classmethod
    def from_dict(cls, d: Any) -> "PathState":
        if not isinstance(d, dict):
            return cls()
        kind = d.get("kind")
        return cls(
            kind=kind if kind in ("file", "symlink", "dir", "other") else "absent",
            mode=_int(d.get("mode")),
            uid=_int(d.get("uid")),
            gid=_int(d.get("gid")),
            sha256=_str(d.get("sha256")),
            size=_int(d.get("size")),
            target=_str(d.get("target")),
        )

    def to_dict(self) -> Dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}

    @property
    def exists(self) -> bool:
        return self.kind != "absent"

    def differences(self, now: "PathState") -> List[str]:
        """How `now` differs from this state, in words ([] when equal)."""
        if now.kind != self.kind:
            was = f"{self.kind} -> {self.target}" if self.kind == "symlink" else self.kind
            return [f"{now.kind} (was {was})"]
        out: List[str] = []
        if self.kind == "symlink" and now.target != self.target:
            out.append(f"symlink -> {now.target} (was -> {self.target})")
        if self.kind == "file" and (now.sha256, now.size) != (self.sha256, self.size):
            out.append("content differs (sha256)")
        if self.mode is not None and now.mode != self.mode and self.kind != "symlink":
            out.append(f"mode {now.mode or 0:o} (was {self.mode:o})")
        if self.uid is not None and (now.uid, now.gid) != (self.uid, self.gid):
            out.append(f"owner {now.uid}:{now.gid} (was {self.uid}:{self.gid})")
        return out


@dataclasses.dataclass(frozen=True)
class FileRecord:
    """A file the apply writes outside a distribution (a loader fix, the loader cache, a hashed
    requirements file): its state before, its backup, the directories writing it creates, and
    what the apply left there (None until it finished)."""

    path: str
    before: PathState
    backup: Optional[str] = None
    created_dirs: Tuple[str, ...] = ()
    after: Optional[PathState] = None

    @property
    def existed(self) -> bool:
        return self.before.exists

    @classmethod
    def from_dict(cls, d: Any) -> "FileRecord":
        if not isinstance(d, dict) or not isinstance(d.get("path"), str) or not d["path"]:
            raise JournalDamaged(f"a file record is not an object with a path: {d!r:.200}")
        after = d.get("after")
        return cls(
            path=d["path"],
            before=PathState.from_dict(d.get("before")),
            backup=d["backup"] if _inside(d.get("backup")) else None,
            created_dirs=tuple(x for x in d.get("created_dirs") or () if isinstance(x, str)),
            after=PathState.from_dict(after) if isinstance(after, dict) else None,
        )

    def to_dict(self) -> Dict[str, Any]:
        return {
            "path": self.path,
            "before": self.before.to_dict(),
            "backup": self.backup,
            "created_dirs": list(self.created_dirs),
            "after": self.after.to_dict() if self.after is not None else None,
        }


@dataclasses.dataclass(frozen=True)
class ChildRecord:
    """The installer a step runs now (a later rollback stops it first)."""

    pid: int
    pgid: Optional[int] = None
    start: Optional[int] = None

    @classmethod
    def from_dict(cls, d: Any) -> Optional["ChildRecord"]:
        if not isinstance(d, dict) or _int(d.get("pid")) is None:
            return None
        return cls(pid=d["pid"], pgid=_int(d.get("pgid")), start=_int(d.get("start")))


@dataclasses.dataclass(frozen=True)
class ResumeRecord:
    """Where an apply that waits for a kernel restart goes on."""

    next: int
    steps: Tuple[Dict[str, Any], ...]
    reason: str = ""
    command: str = ""

    @classmethod
    def from_dict(cls, d: Any) -> Optional["ResumeRecord"]:
        if not isinstance(d, dict) or _int(d.get("next")) is None:
            return None
        steps = d.get("steps")
        if not isinstance(steps, list) or not all(isinstance(x, dict) for x in steps):
            return None
        return cls(
            next=d["next"],
            steps=tuple(steps),
            reason=str(d.get("reason") or ""),
            command=str(d.get("command") or ""),
        )


def _fresh(
    jid: str,
    pid: Optional[int],
    python: str,
    root: Optional[str],
    status: str,
    created: Optional[str] = None,
) -> Dict[str, Any]:
    """A journal's record with nothing done yet: the one shape a new journal is written in and a
    damaged one is completed to."""
    return {
        "version": JOURNAL_VERSION,
        "id": jid,
        **({"created": created} if created is not None else {}),
        "pid": pid,
        "python": python,
        "root": root,
        "status": status,
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
