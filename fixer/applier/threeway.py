"""Rollback undoes only what apply did: the three-way decision (docs/design.md, "Safety model").

For every path an apply touched the journal keeps three states: what it was before (the
manifests, the file records), what the apply left there (`capture`, written to after.json when
the apply finished) and what is there now. Rollback then:

    now == what apply left      restore it to what it was before
    now != what apply left      changed since the apply: listed and left alone (unless --force)
    not left by the apply       appeared after it (a package the user pip-installed later, a file
                                written into the venv): never removed, not even with --force

"What the apply left" of a distribution's file is its lstat identity (type, size, mode, owner,
mtime, ctime, inode, symlink target): cheap for a 500 MB library, and no write, chmod, chown or
rename can keep all of it (the kernel sets ctime). An apply that did not finish (a failure rolled
back at once, a killed apply) has no after.json: everything there is the apply's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import stat
from typing import Any, Dict, Iterable, List, Optional, Set

from fixer.applier import filetree
from fixer.applier.journal import PathState
from fixer.system import fsgate

AFTER_VERSION = 1


def signature(path: str) -> Optional[List[Any]]:
    """The lstat identity of `path` (None when absent)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    target = os.readlink(path) if stat.S_ISLNK(st.st_mode) else None
    return [
        stat.S_IFMT(st.st_mode),
        stat.S_IMODE(st.st_mode),
        st.st_size if not stat.S_ISDIR(st.st_mode) else 0,
        st.st_uid,
        st.st_gid,
        st.st_mtime_ns if not stat.S_ISDIR(st.st_mode) else 0,
        st.st_ctime_ns if not stat.S_ISDIR(st.st_mode) else 0,
        st.st_ino,
        target,
    ]


def state_of(path: str) -> PathState:
    """The full state of a (small) file the apply writes: type, mode, owner, sha256 or target;
    read without following a symlink on the way (fixer.system.fsgate)."""
    st = fsgate.lstat(path)
    if st is None:
        return PathState()
    mode, uid, gid = stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
    if stat.S_ISLNK(st.st_mode):
        return PathState(kind="symlink", target=os.readlink(path), uid=uid, gid=gid)
    if not stat.S_ISREG(st.st_mode):
        kind = "dir" if stat.S_ISDIR(st.st_mode) else "other"
        return PathState(kind=kind, mode=mode, uid=uid, gid=gid)
    data = fsgate.read_bytes(path)
    digest = hashlib.sha256(data).hexdigest()
    return PathState(kind="file", mode=mode, uid=uid, gid=gid, sha256=digest, size=len(data))


def _walk(path: str) -> Iterable[str]:
    """`path` and, for a directory (not a symlink), everything below it."""
    yield path
    if os.path.isdir(path) and not os.path.islink(path):
        for dirpath, dirnames, filenames in os.walk(path):
            for name in dirnames + filenames:
                yield os.path.join(dirpath, name)


def capture(
    manifests: Iterable[Dict[str, Any]], site_dirs: Iterable[Dict[str, Any]], changed: Iterable[str]
) -> Dict[str, Any]:
    """What the apply left: the listing of each site directory it watched and the identity of
    every path in the recorded distributions' directories, in what is new there, and in
    `changed` (the files of the distributions the apply installed or replaced)."""
    listings: Dict[str, List[str]] = {}
    roots: Set[str] = set(changed)
    for d in site_dirs:
        try:
            names = sorted(os.listdir(d["path"]))
        except OSError:
            continue
        listings[d["path"]] = names
        roots.update(os.path.join(d["path"], n) for n in set(names) - set(d["entries"]))
    for m in manifests:
        roots.update(e["path"] for e in m["files"])
        for d in m["dirs"]:
            try:
                roots.update(os.path.join(d["path"], n) for n in os.listdir(d["path"]))
            except OSError:
                continue
    dirs = {d["path"]: signature(d["path"]) for m in manifests for d in m["dirs"]}
    signatures: Dict[str, Any] = {}
    for r in sorted(roots):
        for p in _walk(r):
            if p not in signatures:
                signatures[p] = signature(p)
    return {"version": AFTER_VERSION, "listings": listings, "signatures": signatures, "dirs": dirs}


@dataclasses.dataclass
class Decision:
    """What rollback keeps: `later` appeared after the apply (never removed), `changed` was
    changed since the apply (kept unless --force, and listed)."""

    later: List[str] = dataclasses.field(default_factory=list)
    changed: List[str] = dataclasses.field(default_factory=list)
    force: bool = False

    @property
    def protect(self) -> Set[str]:
        return set(self.later) | (set() if self.force else set(self.changed))

    def covers(self, path: str) -> bool:
        """`path` is, or lies under, a path that appeared after the apply."""
        return any(path == p or path.startswith(p + os.sep) for p in self.later)


def decide(
    after: Optional[Dict[str, Any]],
    candidates: Iterable[str],
    before_paths: Dict[str, Dict[str, Any]],
    force: bool = False,
    dirs: Optional[Dict[str, Dict[str, Any]]] = None,
) -> Decision:
    """Sort every path rollback would remove or write (`candidates`, directories walked) by the
    three states. `before_paths`: the manifests' entries by path (their before state); `dirs`:
    the recorded directories, each compared itself (one replaced by a symlink is changed)."""
    out = Decision(force=force)
    if after is None:
        return out
    left_dirs = after.get("dirs")
    if isinstance(left_dirs, dict):
        out.changed += [
            d
            for d, entry in (dirs or {}).items()
            if d in left_dirs and signature(d) != left_dirs[d] and not _dir_as_before(d, entry)
        ]
    sigs = after.get("signatures")
    if not isinstance(sigs, dict):
        sigs = {}
    seen: Set[str] = set()
    for c in sorted(set(candidates)):
        for p in _walk(c):
            if p in seen:
                continue
            seen.add(p)
            left = sigs.get(p, _MISSING)
            now = signature(p)
            if left is _MISSING:
                if now is not None and p not in before_paths:
                    out.later.append(p)
                elif now is not None and not _as_before(p, now, before_paths):
                    out.changed.append(p)  # the apply saw no such file here: someone made it since
            elif now != left and not _as_before(p, now, before_paths):
                out.changed.append(p)
    out.later = _tops(out.later)
    return out


_MISSING = object()


def _dir_as_before(path: str, entry: Dict[str, Any]) -> bool:
    """A recorded directory is there as before: a real directory (not a symlink), its mode."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == entry.get("mode")


def _as_before(path: str, now: Optional[List[Any]], before: Dict[str, Dict[str, Any]]) -> bool:
    """`path` already holds its state before the apply (an earlier rollback that stopped half way
    put it back, or removed what the apply added): nothing for this rollback to keep."""
    entry = before.get(path)
    if entry is None:
        return now is None
    return now is not None and filetree.matches(entry)


def _tops(paths: List[str]) -> List[str]:
    """Only the outermost of nested paths (a later package's directory, not each of its files)."""
    out: List[str] = []
    for p in sorted(paths):
        if not out or not p.startswith(out[-1] + os.sep):
            out.append(p)
    return out


def journalled_lines(lines: Iterable[str], decision: Decision) -> List[str]:
    """filetree.check lines, less those about paths that appeared after the apply (they are not
    the apply's: the final check covers exactly the journalled paths)."""
    return [ln for ln in lines if not decision.covers(ln.partition(": ")[0].rstrip("/"))]


__all__ = [
    "Decision",
    "capture",
    "decide",
    "journalled_lines",
    "signature",
    "state_of",
]
