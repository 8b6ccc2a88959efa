"""Faults at exact points of an apply, for tests/integration/apply/test_faults.py.

Three kinds of fault point:

- the tool's own journal writes: `APPLY_DRIVER` runs apply_plan in a child process with
  fixer.applier.journal.atomic_write wrapped; it fires at the first write that matches the point
  (see JOURNAL_POINTS), before that write happens.
- pip's internals: `SITECUSTOMIZE` is placed in the target venv's site-packages; in a
  `python -m pip` process of that venv it wraps pip's main (start, exit),
  UninstallPathSet.remove (after-uninstall: the old copy is moved aside under `~` names),
  ZipBackedFile.save (mid-extract: the third file of the new wheel) and UninstallPathSet.commit
  (before-cleanup: the new copy is in place, the `~` copy not yet deleted).
- uv (a Rust binary, nothing to hook): a watcher polls the target's site-packages and fires when it
  observes the point (the old dist-info gone; new files without their RECORD; the RECORD written).

Actions, named by CCF_FAULT="<point>:<action>":
    SIGKILL, SIGTERM, SIGINT   sent to the apply process (from pip: its parent, which started it).
                               pip then waits in the hook, so that the apply's reaction (stopping
                               it, or the kernel's PR_SET_PDEATHSIG after a SIGKILL) reaches it
                               exactly at that point.
    readonly                   from that point on, writes fail with EROFS: in pip, every write under
                               the target's prefix; in the apply, every journal write.
    fsize                      RLIMIT_FSIZE is lowered to FSIZE_LIMIT bytes from that point on (a real
                               limit: the kernel answers EFBIG, and child processes inherit it).

When a point fires, the hook appends a line to $CCF_FAULT_MARK, so a test knows the fault hit.
"""
from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Dict, Tuple

FSIZE_LIMIT = 4096

SITECUSTOMIZE = r'''
# test fault hook (tests/helpers/faults.py): inert unless CCF_FAULT names a pip point
import os, sys
_spec = os.environ.get("CCF_FAULT", "")
if _spec.startswith("pip-") and sys.argv[:1] == ["-m"]:
    import errno, signal, time
    _point, _, _action = _spec.partition(":")
    _mark = os.environ.get("CCF_FAULT_MARK")
    _prefix = sys.prefix

    def _readonly():
        import builtins, shutil
        under = lambda p: isinstance(p, (str, bytes, os.PathLike)) and \
            os.path.abspath(os.fsdecode(p)).startswith(_prefix + os.sep)

        def deny(p):
            raise OSError(errno.EROFS, "Read-only file system", os.fsdecode(p) if p is not None else None)

        real_open = builtins.open
        def ro_open(file, mode="r", *a, **k):
            if any(c in mode for c in "wax+") and under(file):
                deny(file)
            return real_open(file, mode, *a, **k)
        builtins.open = ro_open
        real_os_open = os.open
        def ro_os_open(path, flags, *a, **k):
            if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT) and (under(path) or k.get("dir_fd") is not None):
                deny(path)
            return real_os_open(path, flags, *a, **k)
        os.open = ro_os_open
        for name in ("rename", "replace", "renames", "unlink", "remove", "rmdir", "mkdir", "makedirs",
                     "symlink", "link", "chmod", "utime"):
            real = getattr(os, name)
            def wrapped(*a, _real=real, **k):
                if (a and under(a[0])) or k.get("dir_fd") is not None:
                    deny(a[0] if a else None)
                return _real(*a, **k)
            setattr(os, name, wrapped)

    def _fire():
        if _mark:
            with open(_mark, "a") as f:
                f.write(_spec + "\n")
        if _action in ("SIGKILL", "SIGTERM", "SIGINT"):
            os.kill(os.getppid(), getattr(signal, _action))
            time.sleep(60)         # stopped here by the apply (or by PR_SET_PDEATHSIG)
        elif _action == "readonly":
            _readonly()
        elif _action == "fsize":
            import resource
            resource.setrlimit(resource.RLIMIT_FSIZE, (%(fsize)d, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

    try:
        if _point in ("pip-start", "pip-exit"):
            import pip._internal.cli.main as _m
            _orig_main = _m.main
            def _main(*a, **k):
                if _point == "pip-start":
                    _fire()
                rc = _orig_main(*a, **k)
                if _point == "pip-exit":
                    _fire()
                return rc
            _m.main = _main
        elif _point in ("pip-after-uninstall", "pip-before-cleanup"):
            from pip._internal.req import req_uninstall as _u
            if _point == "pip-after-uninstall":
                _orig_remove = _u.UninstallPathSet.remove
                def _remove(self, *a, **k):
                    r = _orig_remove(self, *a, **k)
                    _fire()
                    return r
                _u.UninstallPathSet.remove = _remove
            else:
                _orig_commit = _u.UninstallPathSet.commit
                def _commit(self, *a, **k):
                    _fire()
                    return _orig_commit(self, *a, **k)
                _u.UninstallPathSet.commit = _commit
        elif _point == "pip-mid-extract":
            from pip._internal.operations.install import wheel as _w
            _orig_save = _w.ZipBackedFile.save
            _count = [0]
            def _save(self, *a, **k):
                _count[0] += 1
                if _count[0] == 3:
                    _fire()
                return _orig_save(self, *a, **k)
            _w.ZipBackedFile.save = _save
    except Exception as exc:        # a pip without that internal: the test sees no mark and fails
        sys.stderr.write("fault hook not installed: %%r\n" %% (exc,))
''' % {"fsize": FSIZE_LIMIT}

#: Journal points: the first journal write (atomic_write in fixer.applier.journal) that matches.
JOURNAL_POINTS = ("create", "before", "manifest", "applying", "step-running", "child", "step-done", "done")

APPLY_DRIVER = r'''
import errno, json, os, signal, sys, traceback
# under a file-size limit, CPython's .pyc writer keeps a short write (FileIO.write is one write(2))
# and replaces the cache with a truncated file: never write caches from the faulted process
sys.dont_write_bytecode = True
from pathlib import Path
from fixer.applier import apply_plan, journal as _j
from fixer.errors import FixerError
from fixer.model import Plan, PlanOptions, from_dict

spec = os.environ.get("CCF_FAULT", "")
point, _, action = spec.partition(":")
mark = os.environ.get("CCF_FAULT_MARK")
state = {"fired": False}

def matches(path, data):
    name = Path(path).name
    if point == "before":
        return name == "before.json"
    if point == "manifest":
        return Path(path).parent.name == "manifests"
    if name != "journal.json":
        return False
    d = json.loads(data)
    steps = [s.get("status") for s in d.get("steps", [])]
    if point == "create":
        return d.get("status") == "prepared" and not steps
    if point == "applying":
        return d.get("status") == "applying" and all(s == "pending" for s in steps)
    if point == "step-running":
        return d.get("status") == "applying" and steps[-1:] == ["running"] and not d.get("child")
    if point == "child":
        return bool(d.get("child")) and steps[-1:] == ["running"]
    if point == "step-done":
        return d.get("status") == "applying" and steps and all(s == "done" for s in steps)
    if point == "done":
        return d.get("status") == "done"
    return False

_orig = _j.atomic_write
def atomic_write(path, data, mode=None):
    if state["fired"] and action == "readonly":
        raise OSError(errno.EROFS, "Read-only file system", str(path))
    if not state["fired"] and matches(path, data):
        state["fired"] = True
        if mark:
            with open(mark, "a") as f:
                f.write(spec + "\n")
        if action in ("SIGKILL", "SIGTERM", "SIGINT"):
            os.kill(os.getpid(), getattr(signal, action))
        elif action == "readonly":
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        elif action == "fsize":
            import resource
            resource.setrlimit(resource.RLIMIT_FSIZE, (__FSIZE__, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return _orig(path, data, mode)
if point in JOURNAL_POINTS:
    _j.atomic_write = atomic_write

plan = from_dict(Plan, json.loads(open(sys.argv[1]).read()))
try:
    apply_plan(plan, python=sys.argv[2], options=PlanOptions(root=sys.argv[3]))
except FixerError as exc:
    print("ERROR", type(exc).__name__, exc.exit_code, exc.message, flush=True)
    sys.exit(exc.exit_code)
except BaseException:
    print("TRACEBACK", flush=True)
    traceback.print_exc()
    sys.exit(99)
print("DONE", flush=True)
'''.replace("JOURNAL_POINTS", repr(JOURNAL_POINTS)).replace("__FSIZE__", str(FSIZE_LIMIT))


def fingerprint(*trees: Tuple[str, Path], skip: Tuple[str, ...] = ()) -> Dict[str, str]:
    """Every directory (with its mode), file (sha256 and mode) and symlink (target) under each
    (label, root). Nothing is left out except the paths in `skip` (label-relative prefixes)."""
    out: Dict[str, str] = {}
    for label, root in trees:
        root = Path(root)
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = os.path.relpath(dirpath, root)
            key = f"{label}/{rel_dir}" if rel_dir != "." else label
            if any(key == s or key.startswith(s + "/") for s in skip):
                dirnames[:] = []
                continue
            out[key + "/"] = f"dir {stat.S_IMODE(os.lstat(dirpath).st_mode):o}"
            for name in sorted(filenames) + sorted(d for d in dirnames if os.path.islink(os.path.join(dirpath, d))):
                p = os.path.join(dirpath, name)
                k = f"{key}/{name}"
                if any(k == s or k.startswith(s + "/") for s in skip):
                    continue
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    out[k] = "-> " + os.readlink(p)
                else:
                    with open(p, "rb") as f:
                        out[k] = f"{hashlib.sha256(f.read()).hexdigest()} {stat.S_IMODE(st.st_mode):o}"
    return out


def differences(a: Dict[str, str], b: Dict[str, str]) -> list:
    """Lines naming what differs between two fingerprints."""
    lines = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            lines.append(f"{k}: {a.get(k, '(absent)')} -> {b.get(k, '(absent)')}")
    return lines


# -- uv: file-system points, observed with inotify -------------------------------------------------

IN_CLOSE_WRITE, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x8, 0x80, 0x100, 0x200


class Inotify:
    """Linux inotify through ctypes (the stdlib has no binding): the exact file-system events."""

    def __init__(self) -> None:
        import ctypes

        self._libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")

    def watch(self, path: Path, mask: int) -> int:
        return int(self._libc.inotify_add_watch(self.fd, os.fsencode(str(path)), mask))

    def events(self, timeout: float) -> list:
        """[(wd, mask, name)] that arrived within `timeout` seconds."""
        import select
        import struct

        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return []
        try:
            buf = os.read(self.fd, 65536)
        except BlockingIOError:
            return []
        out, i = [], 0
        while i + 16 <= len(buf):
            wd, mask, _cookie, length = struct.unpack_from("iIII", buf, i)
            name = buf[i + 16:i + 16 + length].split(b"\0", 1)[0].decode()
            out.append((wd, mask, name))
            i += 16 + length
        return out

    def close(self) -> None:
        os.close(self.fd)


def child_of(pid: int, name: str, timeout: float = 60.0) -> int:
    """The pid of the process called `name` whose parent is `pid` (waits for it to start)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    raw = f.read().decode("ascii", "replace")
            except OSError:
                continue
            comm = raw[raw.index("(") + 1:raw.rindex(")")]
            if comm == name and int(raw[raw.rindex(")") + 2:].split()[1]) == pid:
                return int(entry)
        time.sleep(0.001)
    return 0


def uv_fault(site: Path, point: str, action: str, apply_pid: int, old: str, new: str, fired: list,
             stop: "object") -> None:
    """Watch `site` for uv's file-system point; at the event, freeze uv (SIGSTOP), send `action`
    to the apply, then let uv go on (SIGCONT) so that it meets the apply's reaction at that point.

    uv-after-uninstall: the old .dist-info directory is deleted (uv removes it last);
    uv-mid-install:     the new .dist-info directory is created (uv links the package files first,
                        writes RECORD last);
    uv-exit:            the new RECORD is in place."""
    import signal as _signal

    ino = Inotify()
    try:
        ino.watch(site, IN_CREATE | IN_DELETE | IN_MOVED_TO)
        uv = child_of(apply_pid, "uv")
        new_wd = -1
        while not getattr(stop, "is_set")():
            hit = False
            for wd, mask, name in ino.events(0.05):
                if point == "uv-after-uninstall" and mask & IN_DELETE and name == old:
                    hit = True
                elif point == "uv-mid-install" and mask & IN_CREATE and name == new:
                    hit = True
                elif point == "uv-exit" and mask & IN_CREATE and name == new and new_wd < 0:
                    new_wd = ino.watch(site / new, IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE)
                    hit = (site / new / "RECORD").exists()
                elif point == "uv-exit" and wd == new_wd and name == "RECORD" and mask & (IN_CLOSE_WRITE | IN_MOVED_TO):
                    hit = True
            if hit:
                if uv:
                    try:
                        os.kill(uv, _signal.SIGSTOP)
                    except ProcessLookupError:
                        uv = 0
                fired.append(point)
                os.kill(apply_pid, getattr(_signal, action))
                if uv:
                    try:
                        os.kill(uv, _signal.SIGCONT)
                    except ProcessLookupError:
                        pass
                return
    finally:
        ino.close()
