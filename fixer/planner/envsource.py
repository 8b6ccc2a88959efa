"""Where a loader variable (LD_PRELOAD, LD_LIBRARY_PATH) comes from, and the fix at that place.

A fix written to /etc/profile.d reaches login shells only: Jupyter kernels, Colab's `!` cells
and every process they start inherit the kernel's environment, which comes from elsewhere.
So for each entry a loader fix drops, this module finds the files that put it there, and
writes the same file without it (an env-fix step: apply journals the file like any other and
rollback restores it byte for byte):

- a kernel spec's `env` (jupyter_client starts the kernel with the spec's env over the server's
  environment). The directories are jupyter_core.paths.jupyter_path("kernels") (jupyter_core
  5.9.1, jupyter_core/paths.py: $JUPYTER_PATH entries first; then the user's data directory
  ($JUPYTER_DATA_DIR, else $XDG_DATA_HOME/jupyter, else ~/.local/share/jupyter) and the
  environment's sys.prefix/share/jupyter (ENV_JUPYTER_PATH), in either order; then
  SYSTEM_JUPYTER_PATH, /usr/local/share/jupyter and /usr/share/jupyter on Linux). Every
  kernel.json there whose env sets the variable with the entry is fixed (a shadowed one
  included: which one a server uses depends on its own environment);
- /etc/environment (pam_env(8): read at login by PAM, `KEY=VALUE` lines, an optional
  `export ` prefix and quotes; pam_env.c readenv), for login sessions and what they start;
- a script under /etc/profile.d that assigns the variable (sourced by login shells in glob
  order, so another script after ours would set it again): the assignment without the entry.

What no file can fix is said, not written: the running kernel's own environment
(/proc/<kernel pid>/environ, read at its exec) and a value set inside the process after it
started (IPython's `%env VAR=value` sets os.environ of the kernel: it shows in os.environ but
not in /proc/self/environ). The kernel keeps it until it restarts, or until `fixer.apply()`
run in it removes it from os.environ (fixer.planner.preload.fix_process).

Pure apart from reading the files named (under --root when given); never writes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import stat
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from fixer.model import Environment
from fixer.planner.envfix import ENV_FILE
from fixer.system.paths import split_ld_preload, under_root

#: the process kinds a fix at each place reaches (what a verdict may name)
LOGIN_SHELLS = "new login shells"
LOGIN_SESSIONS = "new login sessions"
NEW_KERNELS = "new notebook kernels"
NEW_PROCESSES = "new processes"

PROFILE_D = "/etc/profile.d"
ETC_ENVIRONMENT = "/etc/environment"
SYSTEM_JUPYTER_PATH = ("/usr/local/share/jupyter", "/usr/share/jupyter")
NOTEBOOK_LIMIT = 64 << 20  # a notebook with its saved outputs; a bigger one is not rewritten

_EXPORT = re.compile(r"^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


@dataclasses.dataclass(frozen=True)
class Source:
    """One place that sets loader variables with entries a fix drops."""

    kind: str  # "kernel-spec", "notebook", "etc-environment", "profile-d", "kernel-environ",
    #            "in-process"
    drops: Tuple[Tuple[str, str], ...]  # (variable, entry) it sets
    path: str = ""  # the file (as on the machine, not under --root); "" for a process
    fixed: Optional[str] = None  # the file's content without them (None: no file fix)
    pid: Optional[int] = None

    @property
    def reaches(self) -> Tuple[str, ...]:
        """The process kinds that get the fixed value once the file is written."""
        return {
            "kernel-spec": (NEW_KERNELS,),
            "notebook": (NEW_KERNELS,),
            "etc-environment": (LOGIN_SESSIONS, LOGIN_SHELLS),
            "profile-d": (LOGIN_SHELLS,),
        }.get(self.kind, ())


def _entries(variable: str, value: str) -> List[str]:
    if variable == "LD_PRELOAD":
        return split_ld_preload(value)
    return [p for p in value.split(":") if p]


def _without(variable: str, value: str, entry: str) -> str:
    """The value without `entry` (paths compared normalised), joined the way it was."""
    want = os.path.normpath(entry)
    sep = " " if variable == "LD_PRELOAD" and ":" not in value and " " in value.strip() else ":"
    return sep.join(p for p in _entries(variable, value) if os.path.normpath(p) != want)


def _has(variable: str, value: str, entry: str) -> bool:
    want = os.path.normpath(entry)
    return any(os.path.normpath(p) == want for p in _entries(variable, value))


def kernel_dirs(
    environ: Mapping[str, str], prefix: Optional[str], home: Optional[str]
) -> List[str]:
    """jupyter_core.paths.jupyter_path("kernels") for a process with `environ` and sys.prefix
    `prefix` (see the module's note; both orders of user and environment are searched)."""
    out: List[str] = []
    if environ.get("JUPYTER_PATH"):
        out += [p.rstrip("/") for p in environ["JUPYTER_PATH"].split(":") if p]
    if environ.get("JUPYTER_DATA_DIR"):
        out.append(environ["JUPYTER_DATA_DIR"])
    else:
        xdg = environ.get("XDG_DATA_HOME") or (os.path.join(home, ".local/share") if home else "")
        if xdg:
            out.append(os.path.join(xdg, "jupyter"))
    if prefix:
        out.append(os.path.join(prefix, "share/jupyter"))
    out += list(SYSTEM_JUPYTER_PATH)
    return [os.path.join(d, "kernels") for d in dict.fromkeys(out) if d.startswith("/")]


def _read(path: str, root: Optional[str], limit: int = 1 << 20) -> Optional[str]:
    """A regular file's text (not through a symlink; at most `limit` bytes), else None. Opened
    without blocking (a FIFO planted in its place would wait for a writer forever) and read only
    when fstat says it is a regular file."""
    real = str(under_root(path, root))
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return None
            data = f.read(limit + 1)
    except OSError:
        return None
    if len(data) > limit:
        return None
    return data.decode("utf-8", "replace")


def _listdir(path: str, root: Optional[str]) -> List[str]:
    real = str(under_root(path, root))
    try:
        if os.path.islink(real) or not os.path.isdir(real):
            return []
        return sorted(os.listdir(real))
    except OSError:
        return []


def _fix_spec(text: str, variable: str, entry: str) -> Optional[str]:
    """A kernel.json without `entry` in env[variable] (the key dropped when nothing is left,
    `env` dropped when empty); None when it does not hold it."""
    try:
        spec = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than json can parse
        return None
    env = spec.get("env") if isinstance(spec, dict) else None
    value = env.get(variable) if isinstance(env, dict) else None
    if not isinstance(env, dict) or not isinstance(value, str) or not _has(variable, value, entry):
        return None
    left = _without(variable, value, entry)
    new_env = {k: v for k, v in env.items() if k != variable}
    if left:
        new_env[variable] = left
    new_spec = {k: v for k, v in spec.items() if k != "env"}
    if new_env:
        new_spec["env"] = new_env
    return json.dumps(new_spec, indent=1) + "\n"


def _fix_assignments(text: str, variable: str, entry: str, quoted_only: bool) -> Optional[str]:
    """`text` with every `[export ]VARIABLE=value` line that holds `entry` rewritten without it
    (the line dropped when nothing is left). None when no line holds it. Shell expansions in a
    value are kept as they are; an entry is matched as a whole path."""
    lines = text.splitlines(keepends=True)
    changed = False
    out: List[str] = []
    for line in lines:
        m = _EXPORT.match(line.rstrip("\n"))
        if not m or m.group(2) != variable:
            out.append(line)
            continue
        raw = m.group(3).strip()
        quote = raw[0] if raw[:1] in ("'", '"') and raw.endswith(raw[0]) and len(raw) > 1 else ""
        value = raw[1:-1] if quote else raw
        if (quoted_only and not quote and " " in value) or not _has(variable, value, entry):
            out.append(line)
            continue
        changed = True
        left = _without(variable, value, entry)
        if left:
            out.append(f"{m.group(1)}{variable}={quote}{left}{quote}\n")
    return "".join(out) if changed else None


def _fixed(
    kind: str, text: str, drops: Sequence[Tuple[str, str]]
) -> Tuple[Optional[str], List[Tuple[str, str]]]:
    """`text` with every (variable, entry) of `drops` it holds taken out, and which it held."""
    held: List[Tuple[str, str]] = []
    for variable, entry in drops:
        if kind == "kernel-spec":
            new = _fix_spec(text, variable, entry)
        elif kind == "notebook":
            new = _fix_notebook(text, variable, entry)
        else:
            new = _fix_assignments(text, variable, entry, quoted_only=kind == "profile-d")
        if new is not None:
            text = new
            held.append((variable, entry))
    return (text if held else None), held


def _candidates(dirs: Sequence[str], root: Optional[str], own: str) -> List[Tuple[str, str]]:
    """(kind, path) of every file that may set a loader variable."""
    out = [
        ("kernel-spec", os.path.join(d, name, "kernel.json"))
        for d in dirs
        for name in _listdir(d, root)
        if not os.path.islink(under_root(os.path.join(d, name), root))  # a spec dir is not a link
    ]
    out.append(("etc-environment", ETC_ENVIRONMENT))
    out += [
        ("profile-d", os.path.join(PROFILE_D, name))
        for name in _listdir(PROFILE_D, root)
        if name.endswith(".sh") and os.path.join(PROFILE_D, name) != own
    ]
    return out


def read_environ(pid: object, proc: str = "/proc") -> Optional[Dict[str, str]]:
    """/proc/<pid>/environ: the environment a process was started with."""
    text = _read(f"{proc}/{pid}/environ", None)
    if text is None:
        return None
    out: Dict[str, str] = {}
    for item in text.split("\0"):
        key, sep, value = item.partition("=")
        if sep and key:
            out[key] = value
    return out


def process_sources(
    drops: Sequence[Tuple[str, str]],
    environ: Mapping[str, str],
    *,
    kernel_pid: Optional[int] = None,
    kernel_environ: Optional[Mapping[str, str]] = None,
    started_with: Optional[Mapping[str, str]] = None,
) -> List[Source]:
    """What no file fixes: the running kernel's own environment (`kernel_environ`, its
    /proc/<pid>/environ), and a value this process set after it started (`environ` holds the
    entry, `started_with`, its /proc/self/environ, does not: %env or os.environ)."""
    out: List[Source] = []
    if kernel_environ is not None:
        held = tuple((v, e) for v, e in drops if _has(v, kernel_environ.get(v, ""), e))
        if held:
            out.append(Source("kernel-environ", held, pid=kernel_pid))
    if started_with is not None:
        held = tuple(
            (v, e)
            for v, e in drops
            if _has(v, environ.get(v, ""), e) and not _has(v, started_with.get(v, ""), e)
        )
        if held:
            out.append(Source("in-process", held, pid=os.getpid()))
    return out


#: IPython's %env magic (IPython/core/magics/osm.py, OSMagics.env, IPython 8.x): `%env VAR=value`
#: or `%env VAR value` sets os.environ[VAR] in the kernel; a `$name`/`{expr}` in the value is
#: expanded by IPython first (kept here as written: only a literal entry is matched)
_ENV_MAGIC = re.compile(r"^(\s*%env\s+)([A-Za-z_][A-Za-z0-9_]*)(\s*=\s*|\s+)(.*?)(\s*)$")


def notebook_path(environ: Mapping[str, str]) -> Optional[str]:
    """The notebook a kernel runs: JPY_SESSION_NAME, which jupyter_server puts into every
    kernel's environment (jupyter_server/services/sessions/sessionmanager.py, v2.x,
    SessionManager.get_kernel_env: {**os.environ, "JPY_SESSION_NAME": path}); its `!` cells and
    the processes they start inherit it. An .ipynb path only (Colab's is its Drive id: no file)."""
    path = environ.get("JPY_SESSION_NAME", "")
    if not path.endswith(".ipynb"):
        return None
    if not path.startswith("/"):
        home = environ.get("HOME", "")
        path = os.path.join(home, path) if home.startswith("/") else ""
    return os.path.normpath(path) if path else None


def _fix_magic_line(line: str, variable: str, entry: str) -> Optional[str]:
    """A `%env VARIABLE=value` line without `entry` ("" when nothing is left), else None."""
    body = line[:-1] if line.endswith("\n") else line
    m = _ENV_MAGIC.match(body)
    if not m or m.group(2) != variable:
        return None
    raw = m.group(4)
    quote = raw[0] if raw[:1] in ("'", '"') and raw.endswith(raw[0]) and len(raw) > 1 else ""
    value = raw[1:-1] if quote else raw
    if not _has(variable, value, entry):
        return None
    left = _without(variable, value, entry)
    end = "\n" if line.endswith("\n") else ""
    return f"{m.group(1)}{variable}{m.group(3)}{quote}{left}{quote}{end}" if left else ""


def _fix_notebook(text: str, variable: str, entry: str) -> Optional[str]:
    """An .ipynb without `entry` in its code cells' `%env VARIABLE=...` lines (a line left
    empty is dropped), written as nbformat writes (nbformat/v4/nbjson.py, nbformat 5.x:
    indent=1, sort_keys=True, ensure_ascii=False, a final newline); None when none holds it."""
    try:
        nb = json.loads(text)
    except ValueError:
        return None
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        return None
    changed = False
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source")
        lines = src.splitlines(keepends=True) if isinstance(src, str) else src
        if not isinstance(lines, list) or not all(isinstance(x, str) for x in lines):
            continue
        out: List[str] = []
        for line in lines:
            new = _fix_magic_line(line, variable, entry)
            changed |= new is not None
            if new is None:
                out.append(line)
            elif new:
                out.append(new)
        cell["source"] = "".join(out) if isinstance(src, str) else out
    if not changed:
        return None
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def find_sources(
    drops: Sequence[Tuple[str, str]],
    *,
    environ: Mapping[str, str],
    root: Optional[str] = None,
    prefix: Optional[str] = None,
    home: Optional[str] = None,
    own: str = "",
) -> List[Source]:
    """Every file (kernel specs, /etc/environment, profile.d scripts other than `own`, the
    notebook the kernel runs: notebook_path) that sets a (variable, entry) of `drops`, each
    with its content without all of them."""
    out: List[Source] = []
    candidates = _candidates(kernel_dirs(environ, prefix, home), root, own)
    notebook = notebook_path(environ)
    if notebook:
        candidates.append(("notebook", notebook))
    for kind, path in candidates:
        text = _read(path, root, NOTEBOOK_LIMIT if kind == "notebook" else 1 << 20)
        if text is None:
            continue
        fixed, held = _fixed(kind, text, drops)
        if fixed is not None:
            out.append(Source(kind, tuple(held), path, fixed))
    return out


def sources_for(env: Any, fixes: Sequence[Any], root: Optional[str]) -> List[Source]:
    """The files on this machine (under --root) that set an entry the loader `fixes` (EnvFix
    values) drop; what make_plan turns into steps (fixer.planner.steps.source_steps)."""
    drops = [
        ("LD_PRELOAD" if f.kind == "ld-preload-drop" else "LD_LIBRARY_PATH", f.value)
        for f in fixes
        if f.kind in ("ld-preload-drop", "ld-library-path-drop")
    ]
    if not drops:
        return []
    prefix = env.python.prefix if env.python else None
    files = find_sources(
        drops, environ=env.env, root=root, prefix=prefix, home=home_of(env), own=ENV_FILE
    )
    if root:  # a sandbox: no process of it runs here
        return files
    pid = env.runtime.kernel_pid
    return files + process_sources(
        drops,
        os.environ,
        kernel_pid=pid,
        kernel_environ=read_environ(pid) if pid and pid != os.getpid() else None,
        started_with=read_environ("self") if pid == os.getpid() else None,
    )


def process_notes(sources: Sequence[Source]) -> List[str]:
    """What no file fixes, said with the exact step: the running kernel's own environment (set
    at its start) and a value set inside it after it started (%env, os.environ)."""
    out: List[str] = []
    for s in sources:
        what = ", ".join(f"{v}={e}" for v, e in s.drops)
        if s.kind == "kernel-environ":
            out.append(
                f"the running notebook kernel (pid {s.pid}) was started with {what}: no file "
                "changes a running process; restart the runtime (Runtime → Restart session), or "
                "run `import fixer; fixer.apply()` in a cell (it takes it out of the kernel's "
                "os.environ, for the processes the kernel starts)"
            )
        elif s.kind == "in-process":
            out.append(
                f"this kernel (pid {s.pid}) set {what} after it started (%env or os.environ): "
                "run `import fixer; fixer.apply()` in a cell of this kernel (it takes it out of "
                "os.environ), or restart the runtime; the notebook's own %env line is fixed in "
                "its file when the kernel names it (JPY_SESSION_NAME)"
            )
    return out


def reach(sources: Sequence[Source], wrote_profile: bool) -> Tuple[str, ...]:
    """The process kinds for which a dropped entry is gone once these files are written (and
    our own profile.d file, `wrote_profile`). Only kinds every source of it allows: an entry
    that a kernel spec and /etc/environment both set is gone for new kernels only when the
    spec is fixed, which it is (every source found is fixed)."""
    kinds: List[str] = [LOGIN_SHELLS] if wrote_profile else []
    for s in sources:
        kinds += s.reaches
    return tuple(dict.fromkeys(kinds))


__all__ = [
    "ETC_ENVIRONMENT",
    "LOGIN_SESSIONS",
    "LOGIN_SHELLS",
    "NEW_KERNELS",
    "NEW_PROCESSES",
    "PROFILE_D",
    "Source",
    "find_sources",
    "kernel_dirs",
    "notebook_path",
    "process_notes",
    "process_sources",
    "reach",
    "sources_for",
    "read_environ",
]


def home_of(env: Environment) -> str:
    """The home directory of the user a plan is for: /root on Colab and Kaggle (their kernels run
    as root), this user's elsewhere."""
    if env.runtime.kind in ("colab", "kaggle"):
        return "/root"
    return os.path.expanduser("~")
