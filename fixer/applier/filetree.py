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
    backup(manifest, archive)                    the bytes of those files, compressed (zip)
    check(manifest)                              what differs now, one line each ([] when identical)
    restore([(manifest, archive)], remove=...)   removes what the apply added (the new version's
                                                 files, pip's `~` leftovers, anything new in the
                                                 recorded directories), writes back every file that
                                                 differs (bytes, mode, mtime), then check()s

Modification times are restored too: a `.pyc` records its source's mtime, and Python would
rewrite one whose source looks newer. The functions only read and write files; they never run
an installer. fixer.applier.transaction calls them; other tests (generated damage) can too.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import os
import shutil
import stat
import zipfile
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

from fixer.applier.journal import unlink_quietly

MANIFEST_VERSION = 1

#: pip's AdjacentTempDirectory names start with "~" (req_uninstall.StashedUninstallPathSet).
LEFTOVER_PREFIX = "~"

_CHUNK = 1 << 22


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


def record_paths(dist_info: str) -> List[str]:
    """Absolute paths of the files a .dist-info's RECORD lists, plus the compiled caches of
    its .py files (which pip removes with them), existing ones only, sorted."""
    di = Path(dist_info)
    site = di.parent
    paths: Set[str] = set()
    record = di / "RECORD"
    rows: List[str] = []
    if record.is_file():
        with open(record, newline="", encoding="utf-8", errors="replace") as f:
            rows = [row[0] for row in csv.reader(f) if row]
    else:  # no RECORD (damaged install): at least the dist-info itself
        rows = [f"{di.name}/{p.name}" for p in di.iterdir()] if di.is_dir() else []
    for rel in rows:
        p = os.path.normpath(rel if os.path.isabs(rel) else os.path.join(site, rel))
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
    if stat.S_ISLNK(st.st_mode):
        return {"path": path, "kind": "symlink", "target": os.readlink(path)}
    entry: Dict[str, Any] = {
        "path": path,
        "kind": "file",
        "size": st.st_size,
        "mode": stat.S_IMODE(st.st_mode),
        "mtime_ns": st.st_mtime_ns,
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
    return {"path": path, "mode": stat.S_IMODE(st.st_mode), "entries": sorted(os.listdir(path))}


def record(
    dist_info: str, *, name: str = "", version: str = "", hashes: bool = True
) -> Dict[str, Any]:
    """The manifest of the distribution whose metadata directory is `dist_info` (see module doc)."""
    di = os.path.normpath(str(dist_info))
    site = os.path.dirname(di)
    files = record_paths(di)
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


def backup(
    manifest: Dict[str, Any], archive: Path, *, compresslevel: int = 1, skip_wheel: bool = False
) -> int:
    """Write the bytes of the manifest's files into a zip at `archive` (deflate, level 1: cuDNN's
    libraries shrink by about half at a fraction of the time level 6 takes). Each file is read
    once, hashed on the way, and checked against the manifest. Returns the archive's size.
    `skip_wheel`: leave out the files the index's wheel supplies (`wheel_path`, see indexcopy)."""
    archive = Path(archive)
    tmp = archive.with_name(archive.name + ".part")
    try:
        with zipfile.ZipFile(
            tmp, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=compresslevel, allowZip64=True
        ) as zf:
            for entry in manifest["files"]:
                if entry["kind"] != "file" or (skip_wheel and entry.get("wheel_path")):
                    continue
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
                entry.setdefault("sha256", h.hexdigest())
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, archive)
    except BaseException:
        unlink_quietly(tmp)
        raise
    return archive.stat().st_size


# ---------------------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------------------


def check(manifest: Dict[str, Any], *, leftovers: bool = True) -> List[str]:
    """Every way the files differ from the manifest now, one line each; [] means byte-identical
    (content, mode, symlink target), no file missing, nothing added to its directories."""
    out: List[str] = []
    for entry in manifest["files"]:
        p = entry["path"]
        if not os.path.lexists(p):
            out.append(f"{p}: missing")
            continue
        st = os.lstat(p)
        if entry["kind"] == "symlink":
            if not stat.S_ISLNK(st.st_mode):
                out.append(f"{p}: not a symlink (was -> {entry['target']})")
            elif os.readlink(p) != entry["target"]:
                out.append(f"{p}: symlink -> {os.readlink(p)} (was -> {entry['target']})")
            continue
        if not stat.S_ISREG(st.st_mode):
            out.append(f"{p}: not a regular file")
            continue
        if st.st_size != entry["size"] or sha256_of(p) != entry["sha256"]:
            out.append(f"{p}: content differs (sha256)")
        if stat.S_IMODE(st.st_mode) != entry["mode"]:
            out.append(f"{p}: mode {stat.S_IMODE(st.st_mode):o} (was {entry['mode']:o})")
    recorded = {e["path"] for e in manifest["files"]}
    for d in manifest["dirs"]:
        path = d["path"]
        if not os.path.isdir(path):
            out.append(f"{path}/: directory missing")
            continue
        now = set(os.listdir(path))
        for name in sorted(now - set(d["entries"])):
            out.append(
                f"{os.path.join(path, name)}: {'leftover of an interrupted installer' if is_leftover(name) else 'not there before'}"
            )
        for name in sorted(set(d["entries"]) - now):
            full = os.path.join(path, name)
            if full not in recorded:
                out.append(f"{full}: missing (not a file of the distribution: cannot be restored)")
        mode = stat.S_IMODE(os.lstat(path).st_mode)
        if mode != d["mode"]:
            out.append(f"{path}/: mode {mode:o} (was {d['mode']:o})")
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


def _remove(path: str, report: RestoreReport) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        else:
            return
        report.removed.append(path)
    except OSError as exc:
        report.errors.append(f"cannot remove {path}: {exc.strerror or exc}")


def _matches(entry: Dict[str, Any]) -> bool:
    p = entry["path"]
    try:
        st = os.lstat(p)
    except OSError:
        return False
    if entry["kind"] == "symlink":
        return stat.S_ISLNK(st.st_mode) and os.readlink(p) == entry["target"]
    return (
        stat.S_ISREG(st.st_mode) and st.st_size == entry["size"] and sha256_of(p) == entry["sha256"]
    )


def _write_back(
    entry: Dict[str, Any], zf: Optional[zipfile.ZipFile], arcname: Optional[str] = None
) -> None:
    p = entry["path"]
    parent = os.path.dirname(p)
    tmp = os.path.join(parent, f".ccf-restore-{os.getpid()}-{os.path.basename(p)}")
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    try:
        if entry["kind"] == "symlink":
            os.symlink(entry["target"], tmp)
        else:
            if zf is None:
                raise OSError(f"no backup holds {p}")
            h = hashlib.sha256()
            with zf.open(arcname or p.lstrip("/")) as fin, open(tmp, "wb") as fout:
                for chunk in iter(lambda: fin.read(_CHUNK), b""):
                    h.update(chunk)
                    fout.write(chunk)
                fout.flush()
                os.fsync(fout.fileno())
            if h.hexdigest() != entry["sha256"]:
                raise OSError(f"the backup of {p} is damaged (sha256 differs)")
            os.chmod(tmp, entry["mode"])
            os.utime(tmp, ns=(entry["mtime_ns"], entry["mtime_ns"]))
        os.replace(tmp, p)
    except BaseException:
        unlink_quietly(tmp)
        raise


def restore(
    items: Sequence[Tuple[Dict[str, Any], Optional[Path]]],
    *,
    remove: Iterable[str] = (),
    wheel: Optional[Callable[[Dict[str, Any]], Path]] = None,
) -> RestoreReport:
    """Put the manifests' files back exactly (see the module doc), then check them.

    `items`: (manifest, archive or None); `remove`: paths the apply added (files of the versions
    installed now) that no manifest holds; `wheel(manifest)`: the index's wheel of a manifest
    whose files are not all in its archive (fetched only when one is needed; raises OSError with
    the reason when it cannot be had). Never raises for a single file: what fails is in
    `errors`, and what differs afterwards in `remaining`."""
    report = RestoreReport()
    keep: Set[str] = set()
    for manifest, _ in items:
        keep.update(e["path"] for e in manifest["files"])
        keep.update(d["path"] for d in manifest["dirs"])
    # 1. what the apply added: the new versions' files, then anything new in the recorded directories
    #    (pip's `~` copies, files a killed extraction left), deepest directories first
    for path in sorted(set(remove) - keep, key=lambda p: (-p.count(os.sep), p)):
        _remove(path, report)
    dirs = sorted(
        {d["path"]: d for m, _ in items for d in m["dirs"]}.values(),
        key=lambda d: d["path"].count(os.sep),
    )
    for d in reversed(dirs):
        if not os.path.isdir(d["path"]):
            continue
        listed = set(d["entries"])
        for name in sorted(set(os.listdir(d["path"])) - listed):
            _remove(os.path.join(d["path"], name), report)
    # 2. directories, shallowest first
    for d in dirs:
        try:
            if os.path.lexists(d["path"]) and not os.path.isdir(d["path"]):
                os.unlink(d["path"])
            os.makedirs(d["path"], exist_ok=True)
            if stat.S_IMODE(os.lstat(d["path"]).st_mode) != d["mode"]:
                os.chmod(d["path"], d["mode"])
        except OSError as exc:
            report.errors.append(f"cannot recreate {d['path']}/: {exc.strerror or exc}")
    # 3. files
    for manifest, archive in items:
        zf: Optional[zipfile.ZipFile] = None
        wz: Optional[zipfile.ZipFile] = None
        wnames: Dict[str, str] = {}
        wheel_error: Optional[str] = None
        try:
            if archive is not None and Path(archive).is_file():
                zf = zipfile.ZipFile(archive)
            held = set(zf.namelist()) if zf is not None else set()
            for entry in manifest["files"]:
                try:
                    if _matches(entry):
                        if entry["kind"] == "file":
                            st = os.lstat(entry["path"])
                            if stat.S_IMODE(st.st_mode) != entry["mode"]:
                                os.chmod(entry["path"], entry["mode"])
                            if st.st_mtime_ns != entry["mtime_ns"]:
                                os.utime(entry["path"], ns=(entry["mtime_ns"], entry["mtime_ns"]))
                        continue
                    if (
                        entry["kind"] == "file"
                        and entry["path"].lstrip("/") not in held
                        and entry.get("wheel_path")
                    ):
                        if wheel_error is not None:
                            continue
                        if wz is None:
                            if wheel is None:
                                raise OSError(
                                    "no backup holds it and no wheel of the index is recorded"
                                )
                            try:
                                wz = zipfile.ZipFile(wheel(manifest))
                            except (OSError, zipfile.BadZipFile) as exc:
                                wheel_error = str(exc)
                                report.errors.append(wheel_error)
                                continue
                            wnames = _wheel_names(wz)
                        _write_back(entry, wz, wnames[entry["wheel_path"]])
                    else:
                        _write_back(entry, zf)
                    report.restored.append(entry["path"])
                except (OSError, KeyError, zipfile.BadZipFile) as exc:
                    report.errors.append(
                        f"cannot restore {entry['path']}: {getattr(exc, 'strerror', None) or exc}"
                    )
        except (OSError, zipfile.BadZipFile) as exc:
            report.errors.append(f"cannot read the backup {archive}: {exc}")
        finally:
            if zf is not None:
                zf.close()
            if wz is not None:
                wz.close()
    # 4. check
    for manifest, _ in items:
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
    "MANIFEST_VERSION",
    "RestoreReport",
    "backup",
    "check",
    "dir_entry",
    "is_leftover",
    "leftovers_in",
    "record",
    "record_paths",
    "restore",
    "sha256_of",
]
