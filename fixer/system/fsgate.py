"""The one gate for every change the tool makes to the file system (docs/design.md, "Safety model").

Every write, remove, chmod, chown, rename, mkdir and symlink of the tool goes through a function of
this module; a test walks the code (tests/unit/test_fsgate_only.py) so that no other module calls
an os/shutil/pathlib mutator. The gate:

- allows a path only under a registered root: the target environment's directories (its prefix
  and the site directories of its distributions, registered by the apply/rollback that changes
  it: `allowed(...)`), the tool's private directories (state and cache: `private_dir`, checked
  for owner and mode on every use) and the exact system files a loader fix names (`allowed(files=)`);
- walks from that root to the path one component at a time with dir fds and O_NOFOLLOW, so a
  symlink planted anywhere below the root (a package directory replaced by a link to /etc) is
  refused, never followed; the last component is acted on itself (a symlink is replaced or
  removed, never written through);
- refuses a path with a `..` component, and RECORD rows that are absolute or leave the
  environment (`record_row`).

A refusal raises PathRefused: a UsageError (exit 2 before anything changed) that is also an
OSError, so a restore that meets one lists it as a failure of that one path.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator, List, Optional, Sequence, Tuple, Union

from fixer.errors import UsageError

StrPath = Union[str, "os.PathLike[str]"]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_NEW_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class PathRefused(UsageError, OSError):
    """A change the gate does not allow: outside every allowed root, through a symlink, a `..`
    component, a RECORD row naming a file outside the environment, or a state directory that is
    not private. Exit 2; an OSError to the code that was about to change one path."""

    def __init__(self, message: str, *, path: str = "", hint: Optional[str] = None) -> None:
        UsageError.__init__(self, message, hint=hint)
        self.filename = path

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class Root:
    """A directory (or, with `exact`, one file) the tool may change, as given and as resolved."""

    path: str
    real: str
    exact: bool = False
    why: str = ""


_roots: List[Root] = []


def _norm(path: StrPath) -> str:
    raw = os.fspath(path)
    if not raw or "\0" in raw:
        raise PathRefused(f"{raw!r}: not a path", path=raw)
    if ".." in raw.split(os.sep):
        raise PathRefused(f"{raw}: a `..` component is never followed", path=raw)
    return os.path.normpath(os.path.abspath(raw))


def _root(path: StrPath, exact: bool, why: str) -> Root:
    p = _norm(path)
    if exact:
        real = os.path.join(os.path.realpath(os.path.dirname(p)), os.path.basename(p))
    else:
        real = os.path.realpath(p)
    return Root(path=p, real=real, exact=exact, why=why)


def register(path: StrPath, *, exact: bool = False, why: str = "") -> Root:
    """Allow changes under `path` (or to the one file `path`, with `exact`) for the rest of the
    process: the tool's own private directories."""
    root = _root(path, exact, why)
    if root not in _roots:
        _roots.append(root)
    return root


@contextlib.contextmanager
def allowed(
    dirs: Sequence[StrPath] = (), files: Sequence[StrPath] = (), why: str = ""
) -> Iterator[Tuple[Root, ...]]:
    """Allow changes under `dirs` and to exactly `files` while the block runs (an apply or a
    rollback registers its target environment and the loader-fix files of its plan)."""
    added = [_root(d, False, why) for d in dirs] + [_root(f, True, why) for f in files]
    _roots.extend(added)
    try:
        yield tuple(added)
    finally:
        for r in added:
            _roots.remove(r)


def within(root: StrPath, path: StrPath) -> bool:
    """Whether `path` is `root` or lies below it, both with every symlink of theirs that exists
    resolved (a venv inside a sandbox whose folder links out is outside)."""
    r = os.path.realpath(os.fspath(root))
    p = os.path.realpath(os.path.abspath(os.fspath(path)))
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)


def outside_root(
    root: Optional[StrPath], places: Sequence[Tuple[str, str]]
) -> Optional[PathRefused]:
    """The refusal for the first of `places` ((what, directory) pairs: an interpreter's folder,
    its prefix, the site directories of what a plan changes) not `within` the --root sandbox;
    None when all are (or without --root). An installer run in that interpreter changes its
    prefix, which --root cannot confine."""
    if root is None:
        return None
    for what, path in places:
        if "\0" in path or not within(root, path):
            return PathRefused(
                f"--root {os.fspath(root)}: {what} {path!r} is outside the sandbox; --root "
                "confines every change to that directory, so the interpreter and the packages "
                "the plan changes must live there; nothing was changed",
                path=path,
                hint="create the environment under the --root directory, or drop --root to "
                "change this machine",
            )
    return None


def roots() -> Tuple[Root, ...]:
    return tuple(_roots)


def _locate(path: StrPath) -> Tuple[str, List[str]]:
    """(the root directory to open, the components below it) for an allowed path."""
    p = _norm(path)
    best: Optional[Tuple[str, List[str]]] = None
    for root in _roots:
        for base in (root.path, root.real):
            if root.exact:
                if p == base:
                    return _anchor(root.real)
                continue
            if p == base:
                cand = (os.path.dirname(root.real), [os.path.basename(root.real)])
            elif p.startswith(base.rstrip(os.sep) + os.sep):
                cand = (root.real, p[len(base.rstrip(os.sep)) + 1 :].split(os.sep))
            else:
                continue
            if best is None or len(cand[1]) < len(best[1]):
                best = cand
    if best is None:
        raise PathRefused(
            f"{p}: outside what this run may change (the target environment, the tool's state "
            "directory and the loader-fix files of the plan); nothing was written there",
            path=p,
        )
    return best


def _anchor(file: str) -> Tuple[str, List[str]]:
    """An allowed single file: its nearest existing ancestor directory, and the components below
    it (a loader-fix file in a --root sandbox whose /etc/profile.d does not exist yet)."""
    anchor = os.path.dirname(file)
    while not os.path.isdir(anchor) and anchor != os.path.dirname(anchor):
        anchor = os.path.dirname(anchor)
    return anchor, os.path.relpath(file, anchor).split(os.sep)


def _walk(base: str, parts: Sequence[str], create: int = -1) -> Tuple[int, List[str]]:
    """An fd of the directory `base`/parts, opened component by component without following a
    symlink; with `create` >= 0, missing directories are made with that mode. Returns the fd
    and the directories created (shallowest first)."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    made: List[str] = []
    here = base
    try:
        for part in parts:
            here = os.path.join(here, part)
            try:
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if create < 0:
                    raise
                os.mkdir(part, create, dir_fd=fd)
                made.append(here)
                nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise PathRefused(
                        f"{here}: a symlink or not a directory; the tool does not follow it",
                        path=here,
                    ) from None
                raise
            os.close(fd)
            fd = nxt
    except BaseException:
        os.close(fd)
        raise
    return fd, made


@contextlib.contextmanager
def _parent(path: StrPath, create: int = -1) -> Iterator[Tuple[int, str, List[str]]]:
    base, parts = _locate(path)
    fd, made = _walk(base, parts[:-1], create)
    try:
        yield fd, parts[-1], made
    finally:
        os.close(fd)


# -- reading without following -----------------------------------------------------------------


def lstat(path: StrPath) -> Optional[os.stat_result]:
    """The path's own status (None when missing), reached without following a symlink on the way;
    PathRefused when a directory above it is a symlink."""
    try:
        with _parent(path) as (fd, name, _):
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def read_bytes(path: StrPath) -> bytes:
    """A regular file's bytes, opened with O_NOFOLLOW below an allowed root."""
    with _parent(path) as (dfd, name, _):
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    with os.fdopen(fd, "rb") as f:
        return f.read()


# -- changes ---------------------------------------------------------------------------------


def make_dirs(path: StrPath, mode: int = 0o755) -> List[str]:
    """Create `path` and its missing parents (below its root); returns the directories made,
    shallowest first (the journal keeps them: rollback removes them again when empty)."""
    base, parts = _locate(path)
    fd, made = _walk(base, parts, mode)
    os.close(fd)
    return made


@contextlib.contextmanager
def atomic_file(
    path: StrPath, mode: int = 0o644, *, mtime_ns: Optional[int] = None, durable: bool = True
) -> Iterator[IO[bytes]]:
    """Write `path` through a fresh temporary file in its directory (O_EXCL|O_NOFOLLOW, a random
    name), fsynced, given `mode` (and `mtime_ns`), then renamed over the path: a symlink there is
    replaced, never written through. Missing parents are created 0755."""
    with _parent(path, create=0o755) as (dfd, name, _):
        tmp = f".{name[:64]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, _NEW_FLAGS, 0o600, dir_fd=dfd)
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
                f.flush()
                os.fchmod(f.fileno(), mode)
                if mtime_ns is not None:
                    os.utime(f.fileno(), ns=(mtime_ns, mtime_ns))
                if durable:
                    os.fsync(f.fileno())
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        if durable:
            with contextlib.suppress(OSError):
                os.fsync(dfd)


def write_bytes(path: StrPath, data: bytes, mode: int = 0o644, *, durable: bool = True) -> None:
    """`atomic_file` with the whole content at once."""
    with atomic_file(path, mode, durable=durable) as f:
        f.write(data)


def append_text(path: StrPath, text: str, mode: int = 0o600) -> None:
    """Append to a log file (created `mode`, never through a symlink)."""
    with _parent(path, create=0o700) as (dfd, name, _):
        fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, mode, dir_fd=dfd)
    with os.fdopen(fd, "a", encoding="utf-8") as f:
        f.write(text)


def create_new(path: StrPath, mode: int = 0o600) -> int:
    """A write descriptor of a new file at `path` (O_CREAT|O_EXCL|O_NOFOLLOW: never an existing
    file, never through a symlink); the caller closes it."""
    with _parent(path, create=0o700) as (dfd, name, _):
        return os.open(name, _NEW_FLAGS, mode, dir_fd=dfd)


def fchmod(fd: int, mode: int) -> None:
    """Set the mode of a file this process opened through the gate (create_new)."""
    os.fchmod(fd, mode)


def open_lock(path: StrPath, mode: int = 0o600) -> int:
    """A read-write descriptor of a lock file (created `mode`; never through a symlink)."""
    with _parent(path, create=0o700) as (dfd, name, _):
        fd = os.open(
            name,
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
            mode,
            dir_fd=dfd,
        )
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
            raise PathRefused(
                f"the lock file {path} is not a private file of this user "
                f"(mode {stat.S_IMODE(st.st_mode):o}, uid {st.st_uid}); refused",
                path=str(path),
            )
    except BaseException:
        os.close(fd)
        raise
    return fd


def symlink(target: str, path: StrPath) -> None:
    """Make `path` a symlink to `target` (atomically replacing what is there)."""
    with _parent(path, create=0o755) as (dfd, name, _):
        tmp = f".{name[:64]}.{secrets.token_hex(6)}.tmp"
        os.symlink(target, tmp, dir_fd=dfd)
        try:
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise


def _rmtree_at(dfd: int, name: str) -> None:
    fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
    try:
        for entry in os.scandir(fd):
            if entry.is_dir(follow_symlinks=False):
                _rmtree_at(fd, entry.name)
            else:
                os.unlink(entry.name, dir_fd=fd)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dfd)


def remove(path: StrPath) -> bool:
    """Remove a file, a symlink (not its target) or a whole directory tree (walked by fds,
    never through a symlink). Returns whether anything was there."""
    with _parent(path) as (dfd, name, _):
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        if stat.S_ISDIR(st.st_mode):
            _rmtree_at(dfd, name)
        else:
            os.unlink(name, dir_fd=dfd)
        return True


def remove_empty_dir(path: StrPath) -> bool:
    """rmdir: only an empty directory goes. Returns whether it went."""
    try:
        with _parent(path) as (dfd, name, _):
            os.rmdir(name, dir_fd=dfd)
            return True
    except FileNotFoundError:
        return False
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            return False
        raise


def chmod(path: StrPath, mode: int) -> None:
    """Change the mode of a file or directory itself (a symlink has none: refused)."""
    with _parent(path) as (dfd, name, _):
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRefused(f"{path}: a symlink; its mode is not changed", path=str(path))
            raise
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def chown(path: StrPath, uid: int, gid: int) -> None:
    """Change the owner of the path itself (a symlink's own owner, not its target's)."""
    with _parent(path) as (dfd, name, _):
        os.chown(name, uid, gid, dir_fd=dfd, follow_symlinks=False)


def utime(path: StrPath, mtime_ns: int) -> None:
    with _parent(path) as (dfd, name, _):
        os.utime(name, ns=(mtime_ns, mtime_ns), dir_fd=dfd, follow_symlinks=False)


def rename(src: StrPath, dst: StrPath) -> None:
    """Rename `src` to `dst` (replacing it), both below allowed roots, neither followed."""
    with _parent(src) as (sfd, sname, _), _parent(dst, create=0o755) as (dfd, dname, _):
        os.replace(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd)


def link(src: StrPath, dst: StrPath) -> None:
    """A hard link `dst` to the file `src` (not followed if it is a symlink)."""
    with _parent(src) as (sfd, sname, _), _parent(dst, create=0o700) as (dfd, dname, _):
        os.link(sname, dname, src_dir_fd=sfd, dst_dir_fd=dfd, follow_symlinks=False)


# -- private directories -----------------------------------------------------------------------


def private_dir(path: StrPath, *, what: str = "state directory") -> Path:
    """Create `path` 0700 when missing, then check that it is private: a real directory (not a
    symlink), owned by the current effective user, not writable by group or others. Registered
    as an allowed root. PathRefused (exit 2) otherwise, naming what is wrong."""
    p = _norm(path)
    try:
        os.makedirs(p, mode=0o700, exist_ok=True)
    except FileExistsError:
        pass  # a symlink or a file there: the checks below name it
    except OSError as exc:
        raise PathRefused(f"cannot create the {what} {p}: {exc.strerror or exc}", path=p)
    st = os.lstat(p)
    hint = f"remove or fix {p} (it must be a directory of yours, mode 0700)"
    if stat.S_ISLNK(st.st_mode):
        raise PathRefused(f"the {what} {p} is a symlink; refused", path=p, hint=hint)
    if not stat.S_ISDIR(st.st_mode):
        raise PathRefused(f"the {what} {p} is not a directory", path=p, hint=hint)
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise PathRefused(
            f"the {what} {p} belongs to uid {st.st_uid}, not to this user (uid {os.geteuid()}); "
            "refused",
            path=p,
            hint=hint,
        )
    if st.st_mode & 0o022:
        raise PathRefused(
            f"the {what} {p} is writable by others (mode {stat.S_IMODE(st.st_mode):o}); refused",
            path=p,
            hint=hint,
        )
    register(p, why=what)
    return Path(p)


def temp_dir(prefix: str = "colab-cudnn-fix-") -> Path:
    """A fresh private directory (tempfile.mkdtemp: O_EXCL, 0700), allowed for this process."""
    d = tempfile.mkdtemp(prefix=prefix)
    register(d, why="temporary directory")
    return Path(d)


# -- RECORD rows -------------------------------------------------------------------------------


def record_rows(text: str) -> List[Tuple[str, str, str]]:
    """A RECORD's rows as (path, hash, size): the CSV that the wheel format's RECORD is (PEP 376;
    pip reads it with csv.reader and takes the first column as the path:
    pip/_internal/metadata/base.py, _iter_declared_entries_from_record, pip 23.2). A missing
    column is empty and columns past the third are ignored, as pip's first-column reading does.
    Each line is read on its own, so that a line that is not CSV (Python < 3.11's "line contains
    NUL") is skipped instead of ending the file; a path holding a line break, which no installer
    writes, is read as two broken rows. The one reader of RECORD rows: detection, apply and
    rollback, and the index copy."""
    rows: List[Tuple[str, str, str]] = []
    for line in text.split("\n"):
        try:
            row = next(csv.reader([line]), [])
        except csv.Error:
            continue
        if row:
            row += ["", ""]
            rows.append((row[0], row[1], row[2]))
    return rows


def record_row(site: str, row: str, prefixes: Sequence[str]) -> str:
    """The file a RECORD row names, as an absolute path; PathRefused for a row that is absolute,
    or whose `..` steps leave every one of `prefixes` (the environment's prefix and site
    directory). pip writes rows relative to the site directory and reaches scripts and data
    with `..` (`../../../bin/tool`: pip/_internal/operations/install/wheel.py,
    _fs_to_record_path, pip 23.2), and removes only rows inside sys.prefix
    (pip/_internal/req/req_uninstall.py, UninstallPathSet._permitted / `Would not remove
    (outside of prefix)`); absolute rows never come from an installer."""
    if not row or "\0" in row or os.path.isabs(row) or row.startswith(("~", "\\")):
        raise PathRefused(f"RECORD row {row!r} in {site}: absolute; refused", path=row)
    full = os.path.normpath(os.path.join(site, row))
    if ".." in row.replace("\\", "/").split("/"):
        if not any(full.startswith(os.path.normpath(p) + os.sep) for p in prefixes if p):
            raise PathRefused(
                f"RECORD row {row!r} in {site}: leaves the environment ({full}); refused", path=row
            )
    return full


__all__ = [
    "PathRefused",
    "Root",
    "allowed",
    "append_text",
    "atomic_file",
    "chmod",
    "chown",
    "create_new",
    "fchmod",
    "link",
    "lstat",
    "make_dirs",
    "open_lock",
    "private_dir",
    "read_bytes",
    "record_row",
    "record_rows",
    "register",
    "remove",
    "remove_empty_dir",
    "rename",
    "roots",
    "symlink",
    "temp_dir",
    "utime",
    "write_bytes",
]
