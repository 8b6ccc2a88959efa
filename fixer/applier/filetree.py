"""Distributions file by file: record them, back them up, put them back byte for byte, check them.

An installer changes a distribution in ways a version number does not show: pip moves the old
copy aside under `~`-prefixed names (pip's AdjacentTempDirectory) before it writes the new one
and deletes that copy only at the end; a kill in between leaves both, or neither. Compiled
`.pyc` files, modes and directories change too. So what apply keeps, and what rollback checks,
is the distribution's files themselves:

    manifest = record(dist_info, prefix=...)     every file the distribution's RECORD lists, plus
                                                 the __pycache__ entries of its .py files: path,
                                                 sha256, size, mode, mtime, symlink target; and each
                                                 directory holding them with its mode and listing
    backup(manifest, archive)                    the bytes of those files: big ones kept by reflink or
                                                 hard link beside the archive (no copy), the rest
                                                 compressed into it (zip); see "Keeping bytes"
    check(manifest)                              what differs now, one line each ([] when identical)
    restore([(manifest, archive)], remove=...)   removes what the apply added (the new version's
                                                 files, pip's `~` leftovers, anything new in the
                                                 recorded directories), writes back every file that
                                                 differs (bytes, mode, mtime), then check()s

Modification times are restored too: a `.pyc` records its source's mtime, and Python would
rewrite one whose source looks newer. The functions only read and write files; they never run
an installer. fixer.applier.transaction calls them; other tests (generated damage) can too.

Keeping bytes (backup). pip's uninstall keeps the old files by *renaming* them into a stash and
moves them back on failure (pip 25.x, src/pip/_internal/req/req_uninstall.py,
StashedUninstallPathSet): it costs nothing and restores exactly. A journal cannot take the files
away from the installer (pip and uv must still see the old version to replace it), but it can
keep a second name for the same bytes:
    - reflink (FICLONE, btrfs/XFS): a copy-on-write clone; a later write to either name never
      reaches the other. Tried first.
    - hard link (os.link): the same inode under the journal's backups/<name>.links/<n>. That keeps
      the bytes only while nobody writes the old inode in place. pip never does: its installer
      unlinks an existing file before writing the new one (src/pip/_internal/operations/install/
      wheel.py, ZipBackedFile.save: "Unlinking the file allows writing of new contents while allowing
      the process to continue to use the old copy"), and its uninstall renames. uv removes the
      old distribution before it installs and links or clones from its cache, but its copy
      fallback writes an existing destination in place (std::fs::copy; astral-sh/uv#1546), and
      it rewrites RECORD in place (astral-sh/uv#227). So only files of at least LINK_MIN bytes
      are linked (libraries, never the installer's own small dist-info files), and rollback
      hashes the linked bytes before it uses them: a link whose bytes changed is a damaged
      backup (the index's wheel then supplies the file where one is recorded), never a silent
      wrong restore.
    - copy + compress into the zip: files below LINK_MIN, and every file when linking fails
      (EXDEV: the journal on another file system; EPERM: fs.protected_hardlinks, or a file
      system without links).
Each file is read once, to hash it (big files on a few threads: hashlib releases the GIL). The
stash keeps the file's mode: a link is the same inode, and a clone or zip entry records it.
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import os
import secrets
import stat
import zipfile
from pathlib import Path
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from fixer.applier.journal import fsync_dir, unlink_quietly
from fixer.system import fsgate

MANIFEST_VERSION = 1

#: pip's AdjacentTempDirectory names start with "~" (req_uninstall.StashedUninstallPathSet).
LEFTOVER_PREFIX = "~"

_CHUNK = 1 << 22
#: Files at least this big are kept by reflink or hard link; smaller ones go into the zip (see the
#: module doc: the installer's own dist-info files are small and may be rewritten in place).
LINK_MIN = 1 << 20
#: Threads hashing big files at once (sha256 runs without the GIL on large buffers).
HASH_THREADS = min(8, os.cpu_count() or 1)
#: linux/fs.h: #define FICLONE _IOW(0x94, 9, int)
FICLONE = 0x40049409
#: Errors that mean "this file system cannot link/clone here": fall back to a copy.
_NO_LINK = {
    errno.EXDEV,
    errno.EPERM,
    errno.EMLINK,
    errno.EOPNOTSUPP,
    errno.ENOSYS,
    errno.EACCES,
    errno.EINVAL,
    errno.ENOTTY,
    errno.ETXTBSY,
    errno.EFBIG,  # a clone past RLIMIT_FSIZE: a hard link writes no data
}


def sha256_of(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def is_leftover(name: str) -> bool:
    """A name pip gives a directory or dist-info it moved aside (`~vidia_cudnn_cu13-9.14.0.64.dist-info`,
    `nvidia/~udnn`): pip's own scan ignores such entries as "invalid distribution"."""
    return name.startswith(LEFTOVER_PREFIX)


# ---------------------------------------------------------------------------------------
# record
# ---------------------------------------------------------------------------------------


def record_paths(dist_info: str, prefixes: Sequence[str] = ()) -> List[str]:
    """Absolute paths of the files a .dist-info's RECORD lists, plus the compiled caches of
    its .py files (which pip removes with them), existing ones only, sorted. A row that is
    absolute or leaves the environment (`prefixes`: its prefix; the site directory always counts)
    raises fixer.system.fsgate.PathRefused (fsgate.record_row: pip's own rules)."""
    di = Path(dist_info)
    site = di.parent
    inside = [str(site), *prefixes]
    paths: Set[str] = set()
    record = di / "RECORD"
    rows: List[str] = []
    if record.is_file():
        with open(record, encoding="utf-8", errors="replace") as f:
            rows = [row for row, _hash, _size in fsgate.record_rows(f.read())]
    else:  # no RECORD (damaged install): at least the dist-info itself
        rows = [f"{di.name}/{p.name}" for p in di.iterdir()] if di.is_dir() else []
    for rel in rows:
        p = fsgate.record_row(str(site), rel, inside)
        paths.add(p)
        if p.endswith(".py"):
            cache = os.path.join(os.path.dirname(p), "__pycache__")
            stem = os.path.basename(p)[:-3] + "."
            try:
                for name in os.listdir(cache):
                    if name.startswith(stem) and name.endswith(".pyc"):
                        paths.add(os.path.join(cache, name))
            except OSError:
                pass
    return sorted(p for p in paths if os.path.lexists(p))


def _file_entry(path: str, with_hash: bool = True) -> Dict[str, Any]:
    st = os.lstat(path)
    owner = {"uid": st.st_uid, "gid": st.st_gid}
    if stat.S_ISLNK(st.st_mode):
        return {"path": path, "kind": "symlink", "target": os.readlink(path), **owner}
    entry: Dict[str, Any] = {
        "path": path,
        "kind": "file",
        "size": st.st_size,
        "mode": stat.S_IMODE(st.st_mode),
        "mtime_ns": st.st_mtime_ns,
        **owner,
    }
    if with_hash:
        entry["sha256"] = sha256_of(path)
    return entry


def _dirs_of(paths: Iterable[str], stop: str) -> List[str]:
    """Every directory holding one of `paths`, up to and including `stop` (site-packages); for a
    file outside it (a script in bin/), only the directory holding it."""
    stop = os.path.normpath(stop)
    out: Set[str] = set()
    for p in paths:
        d = os.path.dirname(p)
        if d == stop or d.startswith(stop + os.sep):
            while d not in out:
                out.add(d)
                if d == stop:
                    break
                d = os.path.dirname(d)
        else:
            out.add(d)
    return sorted(out)


def dir_entry(path: str) -> Dict[str, Any]:
    st = os.lstat(path)
    return {
        "path": path,
        "mode": stat.S_IMODE(st.st_mode),
        "uid": st.st_uid,
        "gid": st.st_gid,
        "entries": sorted(os.listdir(path)),
    }


def record(
    dist_info: str,
    *,
    name: str = "",
    version: str = "",
    hashes: bool = True,
    prefixes: Sequence[str] = (),
) -> Dict[str, Any]:
    """The manifest of the distribution whose metadata directory is `dist_info` (see module doc);
    `prefixes`: the environment its RECORD rows must stay in (record_paths)."""
    di = os.path.normpath(str(dist_info))
    site = os.path.dirname(di)
    files = record_paths(di, prefixes)
    dirs = _dirs_of(files, site)
    return {
        "version": MANIFEST_VERSION,
        "name": name,
        "dist_version": version,
        "dist_info": di,
        "site": site,
        "files": [_file_entry(p, hashes) for p in files],
        "dirs": [dir_entry(d) for d in dirs if os.path.isdir(d)],
    }


def record_tree(top: str, site: str, *, name: str) -> Dict[str, Any]:
    """The manifest of a tree that no RECORD lists (pip's moved-aside leftovers, see
    fixer.applier.leftovers): every file and symlink under `top` (symlinks not followed), hashed,
    and the directories holding them up to `site`."""
    top = os.path.normpath(top)
    files: List[str] = []
    walked: Set[str] = set()
    if os.path.isdir(top) and not os.path.islink(top):
        for dirpath, dirnames, filenames in os.walk(top):
            walked.add(dirpath)  # empty directories too
            files += [os.path.join(dirpath, n) for n in filenames]
            files += [
                os.path.join(dirpath, n)
                for n in dirnames
                if os.path.islink(os.path.join(dirpath, n))
            ]
    else:
        files.append(top)
    files.sort()
    return {
        "version": MANIFEST_VERSION,
        "name": name,
        "dist_version": "",
        "dist_info": top,
        "site": site,
        "files": [_file_entry(p, True) for p in files],
        "dirs": [
            dir_entry(d) for d in sorted(set(_dirs_of(files, site)) | walked) if os.path.isdir(d)
        ],
    }


def stash_dir(archive: Path) -> Path:
    """Where backup() keeps the linked or cloned files of `archive`: `<archive>.links/`, beside it."""
    archive = Path(archive)
    return archive.with_name(archive.name + ".links")


def _clone(src: str, dst: str) -> None:
    """A reflink copy of `src` at `dst` (FICLONE); OSError where the file system has none."""
    import fcntl

    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fout = fsgate.create_new(dst, 0o600)
        try:
            fcntl.ioctl(fout, FICLONE, fin)
            fsgate.fchmod(fout, stat.S_IMODE(os.fstat(fin).st_mode))
            os.fsync(fout)
        except BaseException:
            os.close(fout)
            unlink_quietly(dst)
            raise
        os.close(fout)
    finally:
        os.close(fin)


class _Linker:
    """Keeps one file under a second name: reflink first, then a hard link; remembers what the
    file system refused so that each way is tried once per backup."""

    def __init__(self) -> None:
        self.clone = True
        self.link = True

    def keep(self, src: str, dst: str) -> Optional[str]:
        """ "reflink", "link", or None (copy it instead)."""
        if self.clone:
            try:
                _clone(src, dst)
                return "reflink"
            except OSError as exc:
                if exc.errno not in _NO_LINK:
                    raise
                self.clone = False
        if self.link:
            try:
                fsgate.link(src, dst)
            except OSError as exc:
                if exc.errno not in _NO_LINK:
                    raise
                self.link = exc.errno not in (errno.EXDEV, errno.EOPNOTSUPP, errno.ENOSYS)
                return None
            if not stat.S_ISREG(os.lstat(dst).st_mode):  # not the file recorded: never keep it
                fsgate.remove(dst)
                return None
            return "link"
        return None


def _hash_checked(entry: Dict[str, Any], path: str) -> str:
    """sha256 of `path` (the kept bytes of `entry`), checked against the manifest when it has one."""
    digest = sha256_of(path)
    if entry.get("sha256") and digest != entry["sha256"]:
        raise OSError(f"{entry['path']} changed while it was being backed up")
    return digest


def _link_all(entries: Sequence[Tuple[int, Dict[str, Any]]], stash: Path) -> List[Tuple[int, str]]:
    """Reflink or hard-link each big file into `stash`; [(slot, how)] of those kept that way."""
    linker = _Linker()
    kept: List[Tuple[int, str]] = []
    for slot, entry in entries:
        if not (linker.clone or linker.link):
            break
        if not stash.is_dir():
            fsgate.make_dirs(stash, 0o700)
        how = linker.keep(entry["path"], str(stash / str(slot)))
        if how is not None:
            kept.append((slot, how))
    return kept


def _zip_entry(zf: zipfile.ZipFile, entry: Dict[str, Any]) -> None:
    info = zipfile.ZipInfo(entry["path"].lstrip("/"), date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100000 | entry["mode"]) << 16
    h = hashlib.sha256()
    with (
        open(entry["path"], "rb") as fin,
        zf.open(info, "w", force_zip64=entry["size"] > 0x7FFFFFFF) as fout,
    ):
        for chunk in iter(lambda: fin.read(_CHUNK), b""):
            h.update(chunk)
            fout.write(chunk)
    if entry.get("sha256") and h.hexdigest() != entry["sha256"]:
        raise OSError(f"{entry['path']} changed while it was being backed up")
    entry["sha256"] = h.hexdigest()
    entry["kept"] = "zip"


def backup(
    manifest: Dict[str, Any], archive: Path, *, compresslevel: int = 1, skip_wheel: bool = False
) -> int:
    """Keep the bytes of the manifest's files (see "Keeping bytes" in the module doc): files of
    LINK_MIN bytes or more by reflink or hard link into stash_dir(archive), each recorded in its
    entry as `kept` ("reflink"/"link") and `slot` (its name there); the others, and any the file
    system would not link, in a zip at `archive` (deflate, level 1). Each file is read once, to
    hash it, and checked against the manifest. Returns the bytes written (the zip's size).
    `skip_wheel`: leave out the files the index's wheel supplies (`wheel_path`, see indexcopy)."""
    archive = Path(archive)
    stash = stash_dir(archive)
    todo = [
        (slot, e)
        for slot, e in enumerate(manifest["files"])
        if e["kind"] == "file" and not (skip_wheel and e.get("wheel_path"))
    ]
    big = [(slot, e) for slot, e in todo if e["size"] >= LINK_MIN]
    kept = dict(_link_all(big, stash))
    with ThreadPoolExecutor(HASH_THREADS) as pool:
        hashes = {
            slot: pool.submit(_hash_checked, manifest["files"][slot], str(stash / str(slot)))
            for slot in kept
        }
        _write_zip(archive, [e for slot, e in todo if slot not in kept], compresslevel)
        for slot, future in hashes.items():
            manifest["files"][slot].update(sha256=future.result(), kept=kept[slot], slot=slot)
    if kept:
        fsync_dir(stash)
    return archive.stat().st_size


def _write_zip(archive: Path, entries: Sequence[Dict[str, Any]], compresslevel: int) -> None:
    """The zip at `archive`, 0600, through the gate (a fresh temporary file, fsynced, renamed)."""
    with (
        fsgate.atomic_file(archive, 0o600) as out,
        zipfile.ZipFile(
            out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=compresslevel, allowZip64=True
        ) as zf,
    ):
        for entry in entries:
            _zip_entry(zf, entry)


# ---------------------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------------------


def _hashes(paths: Sequence[str]) -> Dict[str, Optional[str]]:
    """sha256 of each path (None where it cannot be read), big files on HASH_THREADS threads."""

    def one(p: str) -> Optional[str]:
        try:
            return sha256_of(p)
        except OSError:
            return None

    if len(paths) < 2:
        return {p: one(p) for p in paths}
    with ThreadPoolExecutor(HASH_THREADS) as pool:
        return dict(zip(paths, pool.map(one, paths)))


def _file_problems(entry: Dict[str, Any], digest: Optional[str]) -> List[str]:
    """How the file of `entry` differs now ([] when it does not); `digest`: its sha256, read
    beforehand for a regular file of the recorded size."""
    p = entry["path"]
    if not os.path.lexists(p):
        return [f"{p}: missing"]
    st = os.lstat(p)
    if entry["kind"] == "symlink":
        if not stat.S_ISLNK(st.st_mode):
            return [f"{p}: not a symlink (was -> {entry['target']})"]
        if os.readlink(p) != entry["target"]:
            return [f"{p}: symlink -> {os.readlink(p)} (was -> {entry['target']})"]
        return _owner_differs(p, st, entry)
    if not stat.S_ISREG(st.st_mode):
        return [f"{p}: not a regular file"]
    out = []
    if st.st_size != entry["size"] or digest != entry["sha256"]:
        out.append(f"{p}: content differs (sha256)")
    if stat.S_IMODE(st.st_mode) != entry["mode"]:
        out.append(f"{p}: mode {stat.S_IMODE(st.st_mode):o} (was {entry['mode']:o})")
    return out + _owner_differs(p, st, entry)


def _owner_differs(p: str, st: os.stat_result, entry: Dict[str, Any]) -> List[str]:
    """The owner line of a path whose record has one (manifests of this tool since issue 21)."""
    if "uid" not in entry or (st.st_uid, st.st_gid) == (entry["uid"], entry.get("gid")):
        return []
    return [f"{p}: owner {st.st_uid}:{st.st_gid} (was {entry['uid']}:{entry.get('gid')})"]


def _dir_problems(d: Dict[str, Any], recorded: Set[str]) -> List[str]:
    """How the directory `d` differs from its record: added names, lost names, its mode."""
    path = d["path"]
    if not os.path.isdir(path) or os.path.islink(path):
        return [f"{path}/: directory missing"]
    out = []
    now = set(os.listdir(path))
    for name in sorted(now - set(d["entries"])):
        why = "leftover of an interrupted installer" if is_leftover(name) else "not there before"
        out.append(f"{os.path.join(path, name)}: {why}")
    for name in sorted(set(d["entries"]) - now):
        full = os.path.join(path, name)
        if full not in recorded:
            out.append(f"{full}: missing (not a file of the distribution: cannot be restored)")
    st = os.lstat(path)
    mode = stat.S_IMODE(st.st_mode)
    if mode != d["mode"]:
        out.append(f"{path}/: mode {mode:o} (was {d['mode']:o})")
    return out + _owner_differs(path + "/", st, d)


def _same_size_files(manifest: Dict[str, Any]) -> List[str]:
    """The manifest's regular files that still have their recorded size: those worth hashing."""
    out = []
    for e in manifest["files"]:
        if e["kind"] != "file":
            continue
        try:
            st = os.lstat(e["path"])
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size == e["size"]:
            out.append(e["path"])
    return out


def check(manifest: Dict[str, Any], *, leftovers: bool = True) -> List[str]:
    """Every way the files differ from the manifest now, one line each; [] means byte-identical
    (content, mode, symlink target), no file missing, nothing added to its directories. Every
    file of the recorded size is hashed (on HASH_THREADS threads)."""
    digests = _hashes(_same_size_files(manifest))
    out: List[str] = []
    for entry in manifest["files"]:
        out.extend(_file_problems(entry, digests.get(entry["path"])))
    recorded = {e["path"] for e in manifest["files"]}
    for d in manifest["dirs"]:
        out.extend(_dir_problems(d, recorded))
    return out


# ---------------------------------------------------------------------------------------
# restore
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class RestoreReport:
    restored: List[str] = dataclasses.field(default_factory=list)  # files written back
    removed: List[str] = dataclasses.field(default_factory=list)  # files/dirs taken away
    errors: List[str] = dataclasses.field(default_factory=list)  # what could not be done
    remaining: List[str] = dataclasses.field(default_factory=list)  # check() after the restore


def _ancestors(paths: Iterable[str]) -> Set[str]:
    out: Set[str] = set()
    for p in paths:
        d = os.path.dirname(p)
        while d not in out and d != os.path.dirname(d):
            out.add(d)
            d = os.path.dirname(d)
    return out


@dataclasses.dataclass
class _Guard:
    """Paths rollback must not remove or write (fixer.applier.threeway decides: what appeared
    after the apply, and what changed since it unless --force), and the directories holding them."""

    protect: Set[str]
    holding: Set[str]

    @classmethod
    def of(cls, protect: Iterable[str]) -> "_Guard":
        keep = set(protect)
        return cls(keep, _ancestors(keep))


def _remove(path: str, report: RestoreReport, guard: Optional[_Guard] = None) -> None:
    """Remove `path` through the gate (never through a symlink); a directory holding a protected
    path loses only the rest."""
    if guard is not None and path in guard.protect:
        return
    try:
        if guard is not None and path in guard.holding and os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                _remove(os.path.join(path, name), report, guard)
            return
        if fsgate.remove(path):
            report.removed.append(path)
    except OSError as exc:
        report.errors.append(f"cannot remove {path}: {exc.strerror or exc}")


def _prune(removed: Iterable[str], keep: Set[str], report: RestoreReport) -> None:
    """Directories the removals left empty (a fresh install's `nvidia/cudnn/lib`), deepest first,
    below a recorded directory and not recorded themselves (restore recreates those)."""
    for d in sorted(_ancestors(removed), key=lambda p: -p.count(os.sep)):
        if d in keep or not os.path.isdir(d) or os.path.islink(d):
            continue
        if any(d.startswith(k + os.sep) for k in keep) and not os.listdir(d):
            try:
                if fsgate.remove_empty_dir(d):
                    report.removed.append(d)
            except OSError as exc:
                report.errors.append(f"cannot remove {d}/: {exc.strerror or exc}")


def _matches(entry: Dict[str, Any], digest: Optional[str] = None) -> bool:
    """The file is there with the recorded content (`digest`: its sha256 if already read)."""
    p = entry["path"]
    try:
        st = os.lstat(p)
    except OSError:
        return False
    if entry["kind"] == "symlink":
        return stat.S_ISLNK(st.st_mode) and os.readlink(p) == entry["target"]
    if not (stat.S_ISREG(st.st_mode) and st.st_size == entry["size"]):
        return False
    return bool((digest if digest is not None else sha256_of(p)) == entry["sha256"])


def _finish_file(tmp: str, entry: Dict[str, Any]) -> None:
    fsgate.chmod(tmp, entry["mode"])
    fsgate.utime(tmp, entry["mtime_ns"])


def _set_owner(entry: Dict[str, Any]) -> None:
    """The recorded owner of the path itself (a restored file is created by this process)."""
    uid, gid = entry.get("uid"), entry.get("gid")
    if not isinstance(uid, int) or not isinstance(gid, int):
        return
    st = os.lstat(entry["path"])
    if (st.st_uid, st.st_gid) != (uid, gid):
        fsgate.chown(entry["path"], uid, gid)


def _write_back(
    entry: Dict[str, Any],
    zf: Optional[zipfile.ZipFile],
    arcname: Optional[str] = None,
    kept: Optional[Path] = None,
) -> None:
    """Put the file of `entry` back from `kept` (its linked or cloned bytes: hashed, then linked
    back), or from the zip `zf` (member `arcname`, default its path): into a temporary name
    beside it, checked against the recorded sha256, then renamed over whatever is there."""
    p = entry["path"]
    parent = os.path.dirname(p)
    tmp = os.path.join(parent, f".ccf-restore-{secrets.token_hex(6)}-{os.path.basename(p)[:64]}")
    if os.path.isdir(p) and not os.path.islink(p):
        fsgate.remove(p)
    if entry["kind"] == "symlink":
        fsgate.symlink(entry["target"], p)
        _set_owner(entry)
        return
    try:
        if kept is not None:
            if not stat.S_ISREG(os.lstat(kept).st_mode) or sha256_of(str(kept)) != entry["sha256"]:
                raise OSError(f"the backup of {p} is damaged (sha256 differs)")
            fsgate.link(kept, tmp)
        else:
            _extract(entry, zf, arcname, tmp)
        _finish_file(tmp, entry)
        fsgate.rename(tmp, p)
    except BaseException:
        unlink_quietly(tmp)
        raise
    _set_owner(entry)


def _extract(
    entry: Dict[str, Any], zf: Optional[zipfile.ZipFile], arcname: Optional[str], tmp: str
) -> None:
    p = entry["path"]
    if zf is None:
        raise OSError(f"no backup holds {p}")
    h = hashlib.sha256()
    fd = fsgate.create_new(tmp, 0o600)
    with zf.open(arcname or p.lstrip("/")) as fin, os.fdopen(fd, "wb") as fout:
        for chunk in iter(lambda: fin.read(_CHUNK), b""):
            h.update(chunk)
            fout.write(chunk)
        fout.flush()
        os.fsync(fout.fileno())
    if h.hexdigest() != entry["sha256"]:
        raise OSError(f"the backup of {p} is damaged (sha256 differs)")


def _kept_path(entry: Dict[str, Any], archive: Optional[Path]) -> Optional[Path]:
    """The linked or cloned copy backup() recorded for `entry`, or None. The journal is untrusted
    input: `slot` must be a plain non-negative integer, so the path stays in the stash."""
    slot = entry.get("slot")
    if archive is None or entry.get("kept") not in ("link", "reflink"):
        return None
    if not isinstance(slot, int) or isinstance(slot, bool) or slot < 0:
        return None
    return stash_dir(Path(archive)) / str(slot)


def _sweep(
    items: Sequence[Tuple[Dict[str, Any], Optional[Path]]],
    remove: Iterable[str],
    report: RestoreReport,
    guard: Optional[_Guard] = None,
) -> List[Dict[str, Any]]:
    """Take away what the apply added: the new versions' files (`remove`), then anything new in
    the recorded directories (pip's `~` copies, files a killed extraction left), deepest first.
    Returns the recorded directories, shallowest first."""
    keep: Set[str] = set()
    for manifest, _ in items:
        keep.update(e["path"] for e in manifest["files"])
        keep.update(d["path"] for d in manifest["dirs"])
    for path in sorted(set(remove) - keep, key=lambda p: (-p.count(os.sep), p)):
        _remove(path, report, guard)
    dirs = sorted(
        {d["path"]: d for m, _ in items for d in m["dirs"]}.values(),
        key=lambda d: d["path"].count(os.sep),
    )
    for d in reversed(dirs):
        if not os.path.isdir(d["path"]) or os.path.islink(d["path"]):
            continue
        for name in sorted(set(os.listdir(d["path"])) - set(d["entries"])):
            _remove(os.path.join(d["path"], name), report, guard)
    _prune(report.removed, {d["path"] for d in dirs}, report)
    return dirs


def _recreate_dirs(
    dirs: Sequence[Dict[str, Any]], report: RestoreReport, guard: Optional[_Guard] = None
) -> None:
    for d in dirs:
        if guard is not None and d["path"] in guard.protect:
            continue  # changed since the apply (a symlink put in its place): left alone
        try:
            if os.path.islink(d["path"]) or (
                os.path.lexists(d["path"]) and not os.path.isdir(d["path"])
            ):
                fsgate.remove(d["path"])
            fsgate.make_dirs(d["path"], d["mode"])
            if stat.S_IMODE(os.lstat(d["path"]).st_mode) != d["mode"]:
                fsgate.chmod(d["path"], d["mode"])
            _set_owner(d)
        except OSError as exc:
            report.errors.append(f"cannot recreate {d['path']}/: {exc.strerror or exc}")


class _Sources:
    """Where a manifest's files come back from: its zip, its stash, and (opened only when
    needed) the index's wheel."""

    def __init__(
        self,
        manifest: Dict[str, Any],
        archive: Optional[Path],
        wheel: Optional[Callable[[Dict[str, Any]], Path]],
        report: RestoreReport,
    ) -> None:
        self.manifest, self.archive, self.wheel, self.report = manifest, archive, wheel, report
        self.zf: Optional[zipfile.ZipFile] = None
        if archive is not None and Path(archive).is_file():
            self.zf = zipfile.ZipFile(archive)
        self.held = set(self.zf.namelist()) if self.zf is not None else set()
        self.wz: Optional[zipfile.ZipFile] = None
        self.wnames: Dict[str, str] = {}
        self.wheel_error: Optional[str] = None

    def close(self) -> None:
        for z in (self.zf, self.wz):
            if z is not None:
                z.close()

    def put_back(self, entry: Dict[str, Any]) -> bool:
        """Write the file back; False when it was skipped (the wheel could not be had)."""
        kept = _kept_path(entry, self.archive)
        if entry["kind"] == "file" and kept is not None and os.path.lexists(kept):
            try:
                _write_back(entry, None, kept=kept)
                return True
            except OSError:
                if not entry.get("wheel_path"):
                    raise  # a damaged link with no other source: the caller reports it
        if (
            entry["kind"] == "file"
            and entry["path"].lstrip("/") not in self.held
            and entry.get("wheel_path")
        ):
            wz = self._wheel()
            if wz is None:
                return False
            _write_back(entry, wz, self.wnames[entry["wheel_path"]])
            return True
        _write_back(entry, self.zf)
        return True

    def _wheel(self) -> Optional[zipfile.ZipFile]:
        if self.wz is not None or self.wheel_error is not None:
            return self.wz
        if self.wheel is None:
            raise OSError("no backup holds it and no wheel of the index is recorded")
        try:
            self.wz = zipfile.ZipFile(self.wheel(self.manifest))
        except (OSError, zipfile.BadZipFile) as exc:
            self.wheel_error = str(exc)
            self.report.errors.append(self.wheel_error)
            return None
        self.wnames = _wheel_names(self.wz)
        return self.wz


def _fix_metadata(entry: Dict[str, Any]) -> None:
    """Mode, mtime and owner of a file whose content is already right."""
    if entry["kind"] == "file":
        st = os.lstat(entry["path"])
        if stat.S_IMODE(st.st_mode) != entry["mode"]:
            fsgate.chmod(entry["path"], entry["mode"])
        if st.st_mtime_ns != entry["mtime_ns"]:
            fsgate.utime(entry["path"], entry["mtime_ns"])
    _set_owner(entry)


def _restore_files(
    manifest: Dict[str, Any],
    archive: Optional[Path],
    wheel: Optional[Callable[[Dict[str, Any]], Path]],
    report: RestoreReport,
    guard: Optional[_Guard] = None,
) -> None:
    try:
        sources = _Sources(manifest, archive, wheel, report)
    except (OSError, zipfile.BadZipFile) as exc:
        report.errors.append(f"cannot read the backup {archive}: {exc}")
        return
    try:
        digests = _hashes(_same_size_files(manifest))
        for entry in manifest["files"]:
            if guard is not None and entry["path"] in guard.protect:
                continue  # changed since the apply (kept unless --force) or not the apply's
            try:
                if _matches(entry, digests.get(entry["path"])):
                    _fix_metadata(entry)
                elif sources.put_back(entry):
                    report.restored.append(entry["path"])
            except (OSError, KeyError, zipfile.BadZipFile) as exc:
                why = getattr(exc, "strerror", None) or exc
                report.errors.append(f"cannot restore {entry['path']}: {why}")
    finally:
        sources.close()


def restore(
    items: Sequence[Tuple[Dict[str, Any], Optional[Path]]],
    *,
    remove: Iterable[str] = (),
    wheel: Optional[Callable[[Dict[str, Any]], Path]] = None,
    protect: Iterable[str] = (),
) -> RestoreReport:
    """Put the manifests' files back exactly (see the module doc), then check them.

    `items`: (manifest, archive or None); `remove`: paths the apply added (files of the versions
    installed now) that no manifest holds; `wheel(manifest)`: the index's wheel of a manifest
    whose files are not all in its backup (fetched only when one is needed; raises OSError with
    the reason when it cannot be had); `protect`: paths never removed or written (what appeared
    after the apply, what changed since it: fixer.applier.threeway decides). Never raises for a
    single file: what fails is in `errors`, and what differs afterwards in `remaining`."""
    report = RestoreReport()
    guard = _Guard.of(protect)
    dirs = _sweep(items, remove, report, guard)  # 1. what the apply added
    _recreate_dirs(dirs, report, guard)  # 2. directories, shallowest first
    for manifest, archive in items:  # 3. files
        _restore_files(manifest, archive, wheel, report, guard)
    for manifest, _ in items:  # 4. check: every byte against the recorded hashes
        report.remaining.extend(check(manifest))
    return report


def _wheel_names(zf: zipfile.ZipFile) -> Dict[str, str]:
    """site-packages-relative path -> name in a wheel (`x.data/purelib/p` installs as `p`)."""
    out: Dict[str, str] = {}
    for n in zf.namelist():
        parts = n.split("/", 2)
        if len(parts) == 3 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
            out[parts[2]] = n
        else:
            out.setdefault(n, n)
    return out


def matches(entry: Dict[str, Any]) -> bool:
    """The path of a manifest entry holds exactly what the entry records (type, size, sha256;
    a symlink's target)."""
    return _matches(entry)


def leftovers_in(directories: Iterable[str]) -> List[str]:
    """pip's moved-aside entries (`~...`) directly inside `directories`."""
    out: List[str] = []
    for d in directories:
        try:
            out.extend(os.path.join(d, n) for n in sorted(os.listdir(d)) if is_leftover(n))
        except OSError:
            pass
    return out


__all__ = [
    "LINK_MIN",
    "MANIFEST_VERSION",
    "RestoreReport",
    "backup",
    "check",
    "dir_entry",
    "is_leftover",
    "leftovers_in",
    "matches",
    "record",
    "record_paths",
    "record_tree",
    "restore",
    "sha256_of",
    "stash_dir",
]
