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
- uv (a Rust binary, nothing to hook in Python): `UV_STOP_SHIM`, preloaded into uv, stops uv with
  SIGSTOP right after the file-system call that is the point (start: its first file in the target;
  after-uninstall: the old dist-info removed; mid-install: the first new package file created;
  exit); `uv_fault` sees it stopped, applies the fault, and continues it.

Actions, named by CCF_FAULT="<point>:<action>":
    SIGKILL, SIGTERM, SIGINT   sent to the apply process (from pip: its parent, which started it).
                               pip then waits in the hook (uv: stays stopped until the signal is
                               sent), so that the apply's reaction (stopping it, or the kernel's
                               PR_SET_PDEATHSIG after a SIGKILL) reaches it exactly at that point.
    SIGKILL-linger             (pip only) SIGKILL to the apply, and pip outlives it: the SIGINT the
                               kernel sends it (PR_SET_PDEATHSIG) does not end it; it goes on
                               unwinding (as pip moving a 500 MB copy on a slow disk would) until
                               the next SIGINT, the rollback's. This forces the window where the
                               rollback meets the killed apply's installer still running, which the
                               plain SIGKILL hits about once in 20 runs at best (pip is usually gone
                               before the rollback has started).
    readonly                   from that point on, writes fail with EROFS: in pip, every write under
                               the target's prefix; in uv, the same, from the kernel (the target is
                               bind-mounted read-only in uv's own mount namespace); in the apply,
                               every journal write.
    fsize                      RLIMIT_FSIZE is lowered to FSIZE_LIMIT bytes from that point on (a real
                               limit: the kernel answers EFBIG, or stops uv with SIGXFSZ, and child
                               processes inherit it; for uv, set on the frozen process with prlimit).

When a point fires, the hook appends a line to $CCF_FAULT_MARK (the uv shim creates it), so a test
knows the fault hit.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Dict, Optional, Tuple

FSIZE_LIMIT = 4096

SITECUSTOMIZE = r"""
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
        if _action in ("SIGKILL", "SIGTERM", "SIGINT", "SIGKILL-linger"):
            # SIGINT held until inside the try: the apply's answer (or the kernel's PR_SET_PDEATHSIG
            # SIGINT) can come back before the next line runs
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            os.kill(os.getppid(), getattr(signal, _action.partition("-")[0]))
            try:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
                time.sleep(60)     # stopped here by the apply (or by PR_SET_PDEATHSIG)
            except KeyboardInterrupt:
                if _action != "SIGKILL-linger":
                    raise
                if _mark:
                    with open(_mark, "a") as f:
                        f.write("lingering\n")
                time.sleep(60)     # still running when the rollback starts: its SIGINT ends this
                raise
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
""" % {"fsize": FSIZE_LIMIT}

#: Journal points: the first journal write (atomic_write in fixer.applier.journal) that matches.
JOURNAL_POINTS = (
    "create",
    "before",
    "manifest",
    "applying",
    "step-running",
    "child",
    "step-done",
    "done",
)

APPLY_DRIVER = r"""
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
""".replace("JOURNAL_POINTS", repr(JOURNAL_POINTS)).replace("__FSIZE__", str(FSIZE_LIMIT))


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
            for name in sorted(filenames) + sorted(
                d for d in dirnames if os.path.islink(os.path.join(dirpath, d))
            ):
                p = os.path.join(dirpath, name)
                k = f"{key}/{name}"
                if any(k == s or k.startswith(s + "/") for s in skip):
                    continue
                st = os.lstat(p)
                if stat.S_ISLNK(st.st_mode):
                    out[k] = "-> " + os.readlink(p)
                else:
                    with open(p, "rb") as f:
                        out[k] = (
                            f"{hashlib.sha256(f.read()).hexdigest()} {stat.S_IMODE(st.st_mode):o}"
                        )
    return out


def differences(a: Dict[str, str], b: Dict[str, str]) -> list:
    """Lines naming what differs between two fingerprints."""
    lines = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            lines.append(f"{k}: {a.get(k, '(absent)')} -> {b.get(k, '(absent)')}")
    return lines


# -- uv: exact points through a preloaded shim -----------------------------------------------------

#: An LD_PRELOAD library for uv (a Rust binary: no Python hook; it calls glibc's file functions,
#: as `nm -D uv` shows). Inert unless the process is named "uv" and CCF_UV_STOP is set; then,
#: once, right after the first call that does what CCF_UV_STOP names, uv stops itself with SIGSTOP
#: (all its threads), exactly there. `uv_fault` sees it stopped, applies the fault, continues it.
#: It creates $CCF_FAULT_MARK first (O_EXCL: the first uv of a case stops, a rollback's uv does not).
#:     removed:PATH   the directory PATH was removed (rmdir, unlinkat AT_REMOVEDIR)
#:     under:PREFIX   a file under PREFIX was created (open with O_CREAT)
#:     exit           uv is exiting (the library's destructor: after uv's main returned)
UV_STOP_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { REMOVED = 1, UNDER, EXITING };
static int kind, fired;
static char target[PATH_MAX];

__attribute__((constructor)) static void ccf_init(void) {
    const char *spec = getenv("CCF_UV_STOP");
    if (!spec || strcmp(program_invocation_short_name, "uv") != 0) return;
    if (!strncmp(spec, "removed:", 8)) kind = REMOVED;
    else if (!strncmp(spec, "under:", 6)) kind = UNDER;
    else if (!strcmp(spec, "exit")) kind = EXITING;
    const char *colon = strchr(spec, ':');
    if (colon) snprintf(target, sizeof target, "%s", colon + 1);
}

static void ccf_stop(void) {
    if (__atomic_exchange_n(&fired, 1, __ATOMIC_SEQ_CST)) return;
    /* once per case, not once per process: the rollback may run uv again with the same environment */
    const char *mark = getenv("CCF_FAULT_MARK");
    if (mark) {
        int (*real_open)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
        int fd = real_open(mark, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) return;
        close(fd);
    }
    /* to this thread: it enters the group stop before it returns (kill(getpid()) would let the main
       thread take the signal, later, and this one would go on working meanwhile) */
    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGSTOP);
}

__attribute__((destructor)) static void ccf_fini(void) { if (kind == EXITING) ccf_stop(); }

static void ccf_check(int k, int dirfd, const char *path) {
    if (kind != k || fired || !path) return;
    int saved = errno;
    char base[PATH_MAX] = "", full[2 * PATH_MAX + 2];
    if (path[0] != '/') {
        if (dirfd == AT_FDCWD) {
            if (!getcwd(base, sizeof base)) base[0] = 0;
        } else {
            char link[64];
            snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
            ssize_t n = readlink(link, base, sizeof base - 1);
            base[n > 0 ? n : 0] = 0;
        }
        snprintf(full, sizeof full, "%s/%s", base, path);
    } else {
        snprintf(full, sizeof full, "%s", path);
    }
    if (k == UNDER ? strncmp(full, target, strlen(target)) == 0 : strcmp(full, target) == 0) ccf_stop();
    errno = saved;
}

#define REAL(name) static __typeof__(name) *real; if (!real) real = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

static mode_t ccf_mode(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_AT(fn, dirfd_expr, ...)                                   \
    REAL(fn);                                                         \
    va_list ap; va_start(ap, flags); mode_t mode = ccf_mode(flags, ap); va_end(ap); \
    int r = real(__VA_ARGS__, flags, mode);                           \
    if (r >= 0 && (flags & O_CREAT)) ccf_check(UNDER, dirfd_expr, path); \
    return r;

int open(const char *path, int flags, ...) { OPEN_AT(open, AT_FDCWD, path) }
int open64(const char *path, int flags, ...) { OPEN_AT(open64, AT_FDCWD, path) }
int openat(int dirfd, const char *path, int flags, ...) { OPEN_AT(openat, dirfd, dirfd, path) }
int openat64(int dirfd, const char *path, int flags, ...) { OPEN_AT(openat64, dirfd, dirfd, path) }

int rmdir(const char *path) {
    REAL(rmdir); int r = real(path); if (r == 0) ccf_check(REMOVED, AT_FDCWD, path); return r;
}
int unlinkat(int dirfd, const char *path, int flags) {
    REAL(unlinkat); int r = real(dirfd, path, flags);
    if (r == 0 && (flags & AT_REMOVEDIR)) ccf_check(REMOVED, dirfd, path);
    return r;
}
"""


def build_uv_stop_shim(out_dir: Path) -> Path:
    """Compile UV_STOP_SHIM into `out_dir` (with the C compiler the stub libraries use)."""
    import subprocess

    from tests.helpers.stublibs import cc

    compiler = cc()
    if compiler is None:
        raise RuntimeError("no C compiler (cc/gcc) found to build the uv stop shim")
    out_dir.mkdir(parents=True, exist_ok=True)
    src, lib = out_dir / "uvstop.c", out_dir / "libuvstop.so"
    src.write_text(UV_STOP_SHIM)
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", "-o", str(lib), str(src), "-ldl"],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return lib


def uv_stop_spec(point: str, venv: Path, site: Path, old: str) -> str:
    """CCF_UV_STOP for a uv point (see uv_fault)."""
    venv, site = Path(os.path.realpath(venv)), Path(os.path.realpath(site))
    return {
        "uv-start": f"under:{venv}/",
        "uv-after-uninstall": f"removed:{site / old}",
        "uv-mid-install": f"under:{site / 'nvidia'}/",
        "uv-exit": "exit",
    }[point]


def _proc_state(pid: int) -> str:
    """The state letter of /proc/PID/stat ("T": stopped), "" when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
    except OSError:
        return ""
    return raw[raw.rindex(")") + 2 :].split()[0]


def child_of(pid: int, name: str, timeout: float = 60.0) -> int:
    """The pid of the process called `name` whose parent is `pid` (waits for it to start); 0 if none
    came, or `pid` ended first."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _proc_state(pid) not in ("", "Z"):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    raw = f.read().decode("ascii", "replace")
            except OSError:
                continue
            comm = raw[raw.index("(") + 1 : raw.rindex(")")]
            if comm == name and int(raw[raw.rindex(")") + 2 :].split()[1]) == pid:
                return int(entry)
        time.sleep(0.005)
    return 0


def mount_namespace_argv() -> Tuple[Optional[Tuple[str, ...]], str]:
    """(the command prefix that runs uv in a mount namespace of its own, "") so that `readonly` can
    mount the target read-only for uv alone; or (None, why this machine does not allow it: the
    test then skips those cases saying so).

    Root: `unshare -m`. Not root: `unshare -rm`, a user namespace too, in which this user is root
    (what an unprivileged CI runner can do where the kernel allows unprivileged user namespaces;
    Ubuntu >= 23.10 may forbid them through AppArmor, kernel.apparmor_restrict_unprivileged_userns).
    The probe does exactly what a case does: starts a process under the prefix, then mounts a
    directory read-only inside that process's namespaces from outside (_mount_readonly), and
    checks that it is read-only there and still writable here."""
    import shutil
    import subprocess
    import tempfile
    import time

    missing = [tool for tool in ("unshare", "nsenter", "mount") if not shutil.which(tool)]
    if missing:
        return None, f"no {', '.join(missing)} on PATH"
    prefix = ("unshare", "-m", "--propagation", "private") + (() if os.geteuid() == 0 else ("-r",))
    try:
        with tempfile.TemporaryDirectory(prefix="ccf-ro-probe-") as d:
            holder = subprocess.Popen(
                [*prefix, "--", "sleep", "60"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            try:
                why = ""
                for _ in range(500):  # until it runs in namespaces of its own (or unshare failed)
                    if holder.poll() is not None:
                        why = f"{' '.join(prefix)}: {(holder.stderr.read() if holder.stderr else '').strip()}"
                        break
                    try:
                        if os.readlink(f"/proc/{holder.pid}/ns/mnt") != os.readlink(
                            "/proc/self/ns/mnt"
                        ):
                            break
                    except OSError:
                        pass
                    time.sleep(0.01)
                if not why:
                    why = _mount_readonly(holder.pid, Path(d))
                if not why:
                    Path(d, "still-writable-here").write_text("")
            finally:
                holder.kill()
                holder.wait()
    except (OSError, subprocess.SubprocessError) as exc:
        why = f"{type(exc).__name__}: {exc}"
    if why:
        return None, (
            "this machine does not let uv run in a mount namespace of its own "
            f"({' '.join(prefix)}), so the target cannot be made read-only for uv alone: {why} "
            "(not root: unprivileged user namespaces are needed; the kernel answers EPERM where they "
            "are forbidden, e.g. kernel.apparmor_restrict_unprivileged_userns=1, and ENOSPC where "
            "user.max_user_namespaces is reached)"
        )
    return prefix + ("--",), ""


def _mount_readonly(pid: int, path: Path, env: Optional[Dict[str, str]] = None) -> str:
    """Bind-mount `path` read-only over itself inside the mount namespace of process `pid` (never in
    ours). Returns "" when done, else why not. Not root: joins `pid`'s user namespace too (where
    this user is root) keeping its own credentials: `unshare -r` denied setgroups(2) there, so
    nsenter's default switch to uid/gid 0 would fail."""
    import subprocess

    try:
        if os.readlink(f"/proc/{pid}/ns/mnt") == os.readlink("/proc/self/ns/mnt"):
            return f"pid {pid} shares this mount namespace: not mounting anything"
    except OSError as exc:
        return f"pid {pid}: {exc}"
    enter = (
        ["nsenter", "-t", str(pid), "-m"]
        + ([] if os.geteuid() == 0 else ["-U", "--preserve-credentials"])
        + ["--"]
    )
    for args in (
        ["mount", "--bind", str(path), str(path)],
        ["mount", "-o", "remount,bind,ro", str(path)],
    ):
        proc = subprocess.run(enter + args, capture_output=True, text=True, timeout=30, env=env)
        if proc.returncode != 0:
            return f"{' '.join(args)}: {proc.stderr.strip()}"
    with open(f"/proc/{pid}/mountinfo") as f:
        if not any(
            line.split()[4] == str(path) and "ro" in line.split()[5].split(",") for line in f
        ):
            return f"{path} is not read-only in the mount namespace of pid {pid}"
    return ""


def uv_fault(
    venv: Path,
    site: Path,
    point: str,
    action: str,
    apply_pid: int,
    old: str,
    new: str,
    fired: list,
    stop: "object",
    env: Optional[Dict[str, str]] = None,
) -> None:
    """uv runs with UV_STOP_SHIM preloaded and CCF_UV_STOP=uv_stop_spec(point): it stops itself
    (SIGSTOP) exactly at the point; this watcher sees it stopped, applies the fault, then continues
    it (SIGCONT), so that uv meets the fault exactly there.

    uv-start:           uv created its first file in the target (today the temporary file it renames
                        to its lock, `<venv>/.lock`), after asking the interpreter and before
                        resolving and downloading: no distribution has changed yet;
    uv-after-uninstall: uv removed the old .dist-info directory (the last of the old version);
    uv-mid-install:     uv created the first package file of the new version (under nvidia/: the new
                        .dist-info is there, the other package files and INSTALLER are still to come);
    uv-exit:            uv is exiting, all done (its main returned).

    Actions: SIGKILL/SIGTERM/SIGINT go to the apply (uv is continued only after it was sent, so it
    meets the apply's reaction at the point); `readonly` bind-mounts the whole target read-only
    over itself in uv's own mount namespace (uv must run under mount_namespace_argv()): from then
    on the kernel answers uv's writes there with EROFS, while the apply and its rollback see the
    target writable, as with pip's hook; `fsize` lowers uv's RLIMIT_FSIZE to FSIZE_LIMIT with
    prlimit(2) (the kernel then stops uv with SIGXFSZ at its first write past that size: uv is a
    Rust binary and does not ignore it, as Python does).

    `env`: the environment of the commands it runs (this runs in a thread: never os.environ, which
    the main thread may be changing). `fired` gets one dict: the point, what the target held when uv was stopped (old / new
    .dist-info, the new INSTALLER (uv writes it after the package files), files under nvidia/), and `error` (why the fault could not be applied,
    "" when it was)."""
    import resource
    import signal as _signal
    import time

    uv = child_of(apply_pid, "uv")
    if not uv:
        return
    while _proc_state(uv) != "T":
        if getattr(stop, "is_set")() or not _proc_state(uv):
            return
        time.sleep(0.002)
    nvidia = site / "nvidia"
    seen = {
        "point": point,
        "old": (site / old).exists(),
        "new": (site / new).exists(),
        "installer": (site / new / "INSTALLER").exists(),
        "files": nvidia.is_dir() and any(files for _, _, files in os.walk(nvidia)),
        "error": "",
    }
    try:
        if action in ("SIGKILL", "SIGTERM", "SIGINT"):
            os.kill(apply_pid, getattr(_signal, action))
        elif action == "readonly":
            seen["error"] = _mount_readonly(uv, venv, env)
        elif action == "fsize":
            hard = resource.prlimit(uv, resource.RLIMIT_FSIZE)[1]
            resource.prlimit(uv, resource.RLIMIT_FSIZE, (FSIZE_LIMIT, hard))
    except Exception as exc:  # the test reports it; uv must not stay stopped
        seen["error"] = f"{action}: {type(exc).__name__}: {exc}"
    finally:
        fired.append(seen)
        try:
            os.kill(uv, _signal.SIGCONT)
        except ProcessLookupError:
            pass


#: What the target holds when uv stops at each point (see uv_fault): the old .dist-info, the new
#: .dist-info, its INSTALLER, files under nvidia/ (the package's own directory).
UV_POINT_STATE = {
    "uv-start": (True, False, False, True),
    "uv-after-uninstall": (False, False, False, False),
    "uv-mid-install": (False, True, False, True),
    "uv-exit": (False, True, True, True),
}
