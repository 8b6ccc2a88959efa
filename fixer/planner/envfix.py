"""Loader fixes: make the intended cuDNN copy load, in new shells, new processes and notebook kernels.

Three files, each small, marked with MARKER on its first line, written atomically, and
removed by rollback (the journal backs up whatever was there before):

- a shell env file, /etc/profile.d/colab-cudnn-fix.sh: rewrites LD_LIBRARY_PATH without the
  entries that put another cuDNN first (and optionally puts the intended directory first);
- an /etc/ld.so.conf.d/00-colab-cudnn-fix.conf entry naming the intended directory, then
  `ldconfig` (only as root on the real system; in a --root sandbox ldconfig is skipped);
- an IPython startup file, ~/.ipython/profile_default/startup/00-colab-cudnn-fix.py, that
  fixes os.environ["LD_LIBRARY_PATH"] for child processes and ctypes-loads the intended
  cuDNN with RTLD_GLOBAL before any framework is imported, so the kernel's later
  dlopen("libcudnn.so.9") finds the copy already loaded.

`env_fix_steps` turns the stack's EnvFix values into plan Steps (kind "env-fix", files,
content): the one place that decides what these files say. This module is pure (no I/O);
fixer.applier.envfix writes the files (atomically, under --root) and runs ldconfig.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from fixer.system.paths import split_ld_preload, under_root
from fixer.errors import UsageError
from fixer.model import EnvFix, Step

MARKER = "# colab-cudnn-fix: managed file (written by `colab-cudnn-fix apply`, removed by `colab-cudnn-fix rollback`)"

ENV_FILE = "/etc/profile.d/colab-cudnn-fix.sh"
LD_SO_CONF = "/etc/ld.so.conf.d/00-colab-cudnn-fix.conf"
IPYTHON_STARTUP = "~/.ipython/profile_default/startup/00-colab-cudnn-fix.py"


def _check_dir(value: str, what: str) -> str:
    if not value.startswith("/") or ":" in value or "\n" in value:
        raise UsageError(f"{what}: {value!r} must be an absolute directory without ':' or newlines")
    return os.path.normpath(value)


def _check_file(value: str, what: str) -> str:
    if not value.startswith("/") or ":" in value or " " in value or "\n" in value:
        raise UsageError(
            f"{what}: {value!r} must be an absolute path without ':', spaces or newlines"
        )
    return os.path.normpath(value)


def env_file_content(
    drop: Sequence[str], prepend: Sequence[str] = (), preload_drop: Sequence[str] = ()
) -> str:
    """POSIX sh that rewrites LD_LIBRARY_PATH (entries in `drop` removed, `prepend` put first)
    and LD_PRELOAD (entries in `preload_drop` removed)."""
    drop = [_check_dir(d, "LD_LIBRARY_PATH entry to drop") for d in drop]
    prepend = [_check_dir(d, "LD_LIBRARY_PATH entry to add") for d in prepend]
    preload_drop = [_check_file(p, "LD_PRELOAD entry to drop") for p in preload_drop]
    skip = ":" + ":".join(drop + prepend) + ":"
    first = ":".join(prepend)
    preload_lines = []
    if preload_drop:
        preload_lines = [
            "# Drops LD_PRELOAD entries that force another cuDNN into every process.",
            f"_ccf_skip={shlex.quote(':' + ':'.join(preload_drop) + ':')}",
            "_ccf_new=",
            "for _ccf_d in $(printf '%s' \"${LD_PRELOAD:-}\" | tr ': ' '  '); do",
            '  case "$_ccf_skip" in *":$_ccf_d:"*) ;; *) _ccf_new="${_ccf_new:+$_ccf_new:}$_ccf_d";; esac',
            "done",
            'if [ -n "$_ccf_new" ]; then export LD_PRELOAD="$_ccf_new"; else unset LD_PRELOAD; fi',
            "unset _ccf_skip _ccf_new _ccf_d",
        ]
    if not drop and not prepend:
        return "\n".join([MARKER, *preload_lines, ""])
    return "\n".join(
        [
            MARKER,
            *preload_lines,
            "# Drops LD_LIBRARY_PATH entries that put another cuDNN, or older CUDA libraries, ahead of the frameworks' own.",
            f"_ccf_skip={shlex.quote(skip)}",
            f"_ccf_new={shlex.quote(first)}",
            "_ccf_ifs=$IFS; IFS=:",
            "for _ccf_d in ${LD_LIBRARY_PATH:-}; do",
            '  case "$_ccf_skip" in *":$_ccf_d:"*|*":${_ccf_d%/}:"*) ;; *) [ -n "$_ccf_d" ] && _ccf_new="${_ccf_new:+$_ccf_new:}$_ccf_d";; esac',
            "done",
            "IFS=$_ccf_ifs",
            'if [ -n "$_ccf_new" ]; then export LD_LIBRARY_PATH="$_ccf_new"; else unset LD_LIBRARY_PATH; fi',
            "unset _ccf_skip _ccf_new _ccf_d _ccf_ifs",
            "",
        ]
    )


def environ_after(fixes: Sequence[EnvFix], environ: Mapping[str, str]) -> Dict[str, str]:
    """The environment a new shell gets once the env file of `fixes` is in place: what apply's
    own checks run under (the process that ran apply keeps its old LD_LIBRARY_PATH). The same
    rules as env_file_content's shell code (a test runs both and compares)."""
    drop = {os.path.normpath(f.value) for f in fixes if f.kind == "ld-library-path-drop"}
    prepend = [os.path.normpath(f.value) for f in fixes if f.kind == "ld-library-path-add"]
    preload_drop = {os.path.normpath(f.value) for f in fixes if f.kind == "ld-preload-drop"}
    out = dict(environ)
    if drop or prepend:
        skip = drop | set(prepend)
        keep = [
            d
            for d in out.get("LD_LIBRARY_PATH", "").split(":")
            if d and d not in skip and (d[:-1] if d.endswith("/") else d) not in skip
        ]
        value = ":".join(prepend + keep)
        if value:
            out["LD_LIBRARY_PATH"] = value
        else:
            out.pop("LD_LIBRARY_PATH", None)
    if preload_drop:
        keep = [p for p in split_ld_preload(out.get("LD_PRELOAD")) if p not in preload_drop]
        if keep:
            out["LD_PRELOAD"] = ":".join(keep)
        else:
            out.pop("LD_PRELOAD", None)
    return out


def ld_so_conf_content(dirs: Sequence[str]) -> str:
    dirs = [_check_dir(d, "ld.so.conf.d directory") for d in dirs]
    return "\n".join([MARKER, *dirs, ""])


#: Preload order for CUDA libraries named by path: a library's dependencies first, or loading it
#: would find them by soname through the kernel's old LD_LIBRARY_PATH (cuBLAS needs cuBLASLt).
_PRELOAD_ORDER = ("libcudart", "libnvrtc", "libnvJitLink", "libcublasLt", "libcublas")


def _preload_rank(path: str) -> int:
    base = os.path.basename(path).split(".so")[0]
    return _PRELOAD_ORDER.index(base) if base in _PRELOAD_ORDER else len(_PRELOAD_ORDER)


def ipython_startup_content(
    cudnn_dir: Optional[str],
    drop: Sequence[str] = (),
    prepend: Sequence[str] = (),
    files: Sequence[str] = (),
    cudnn: Sequence[str] = (),
) -> str:
    """Python run by IPython at kernel start: the same fix `fixer.apply()` applies to a live
    kernel (fixer.planner.preload.fix_process, the one home of that code): LD_LIBRARY_PATH fixed for
    children, the framework's own CUDA libraries (`files`) and the intended cuDNN (`cudnn`:
    libcudnn.so.N paths, or the directory `cudnn_dir`) loaded by path, globally, dependencies
    first. It imports fixer from where this copy of the tool lives when the kernel's own
    interpreter cannot, and does nothing (no error) when neither works."""
    mains = [_check_file(c, "cuDNN library to preload") for c in cudnn]
    if cudnn_dir and not mains:
        mains = [_check_dir(cudnn_dir, "cuDNN directory to preload")]
    drop = [_check_dir(d, "LD_LIBRARY_PATH entry to drop") for d in drop]
    prepend = [_check_dir(d, "LD_LIBRARY_PATH entry to add") for d in prepend]
    files = sorted(
        dict.fromkeys(_check_file(f, "library to preload") for f in files), key=_preload_rank
    )
    home = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return "\n".join(
        [
            MARKER,
            '"""Loads the intended CUDA libraries and cuDNN before any framework does (RTLD_GLOBAL: a later',
            'dlopen by soname reuses the copy already loaded). The code is fixer.planner.preload.fix_process."""',
            "",
            "def _colab_cudnn_fix():",
            "    import sys",
            "    try:",
            "        from fixer.planner.preload import fix_process",
            "    except ImportError:",
            f"        sys.path.append({home!r})",
            "        try:",
            "            from fixer.planner.preload import fix_process",
            "        except ImportError:",
            "            return",
            "        finally:",
            f"            sys.path.remove({home!r})",
            f"    fix_process(cudnn={tuple(mains)!r}, files={tuple(files)!r}, drop={tuple(drop)!r}, prepend={tuple(prepend)!r})",
            "",
            "",
            "try:",
            "    _colab_cudnn_fix()",
            "finally:",
            "    del _colab_cudnn_fix",
            "",
        ]
    )


def expand_home(path: str, home: Optional[str] = None) -> str:
    if path.startswith("~/"):
        return os.path.join(home or os.path.expanduser("~"), path[2:])
    return path


def _as_dir(value: str) -> str:
    """An ipython-preload fix names the intended libcudnn.so.N (or its directory): the directory."""
    return os.path.dirname(value) if re.search(r"/libcudnn[^/]*\.so(\.\d+)*$", value) else value


def _is_other_library(value: str) -> bool:
    """An ipython-preload value naming a CUDA library file other than cuDNN (libcublas.so.12)."""
    return bool(re.search(r"/lib[^/]+\.so(\.\d+)*$", value)) and not re.search(
        r"/libcudnn[^/]*\.so", value
    )


def env_fix_steps(
    fixes: Sequence[EnvFix],
    *,
    cudnn_dir: Optional[str] = None,
    home: Optional[str] = None,
    is_root: Optional[bool] = None,
    root: Optional[str] = None,
) -> Tuple[Step, ...]:
    """The Steps that carry out `fixes` (Stack.env_fixes). Paths are the real ones; apply moves
    them under --root. `cudnn_dir`: the intended cuDNN directory (default: an ipython-preload
    or ld-so-conf fix's value). `is_root`: may write /etc files (default: running as root, or a
    --root sandbox, where /etc is the sandbox's). The ld.so.conf.d step carries the ldconfig
    command that apply will run (none in a sandbox or when not root). With `root`, the files are
    named inside the sandbox, as apply will write them."""
    if is_root is None:
        is_root = bool(root) or (hasattr(os, "geteuid") and os.geteuid() == 0)
    drop = [f.value for f in fixes if f.kind == "ld-library-path-drop"]
    add = [f.value for f in fixes if f.kind == "ld-library-path-add"]
    conf = [f.value for f in fixes if f.kind == "ld-so-conf"]
    preload = [
        _as_dir(f.value)
        for f in fixes
        if f.kind == "ipython-preload" and not _is_other_library(f.value)
    ]
    cudnn_dir = cudnn_dir or (preload[0] if preload else (conf[0] if conf else None))
    why: Dict[str, str] = {f.kind: f.why for f in fixes if f.why}
    steps: List[Step] = []
    env_step = _env_file_step(fixes, drop, add, is_root)
    if env_step is not None:
        steps.append(env_step)
    if conf and is_root:
        steps.append(_ld_so_conf_step(conf, why, root))
    preload_files = sorted(
        dict.fromkeys(
            f.value for f in fixes if f.kind == "ipython-preload" and _is_other_library(f.value)
        ),
        key=_preload_rank,
    )
    if preload or preload_files or drop or add:
        steps.append(_ipython_step(fixes, cudnn_dir, drop, add, preload_files, why, home))
    if root:
        steps = [
            dataclasses.replace(s, files=tuple(str(under_root(f, root)) for f in s.files))
            for s in steps
        ]
    return tuple(steps)


def _env_file_step(
    fixes: Sequence[EnvFix], drop: Sequence[str], add: Sequence[str], is_root: bool
) -> Optional[Step]:
    preload_drop = [f.value for f in fixes if f.kind == "ld-preload-drop"]
    env_files = [f.value for f in fixes if f.kind == "env-file"]
    if not (drop or add or preload_drop or env_files):
        return None
    path = env_files[0] if env_files else ENV_FILE
    if not is_root and path.startswith("/etc/"):
        return None
    what = [
        f"LD_LIBRARY_PATH without {', '.join(drop)}" if drop else "",
        f"{', '.join(add)} first" if add else "",
        f"LD_PRELOAD without {', '.join(preload_drop)}" if preload_drop else "",
    ]
    return Step(
        kind="env-fix",
        summary=f"write {path} (new login shells, e.g. a terminal; notebook kernels and Colab's `!` cells never read it): "
        + "; ".join(w for w in what if w),
        files=(path,),
        content=env_file_content(drop, add, preload_drop),
    )


def _ld_so_conf_step(conf: Sequence[str], why: Mapping[str, str], root: Optional[str]) -> Step:
    argv = () if root or not (hasattr(os, "geteuid") and os.geteuid() == 0) else ("ldconfig",)
    return Step(
        kind="env-fix",
        summary=f"write {LD_SO_CONF} ({', '.join(conf)})"
        + (" and run ldconfig" if argv else "; ldconfig runs later (not root, or a sandbox)")
        + (f": {why['ld-so-conf']}" if "ld-so-conf" in why else ""),
        argv=argv,
        files=(LD_SO_CONF,),
        content=ld_so_conf_content(conf),
    )


def _ipython_step(
    fixes: Sequence[EnvFix],
    cudnn_dir: Optional[str],
    drop: Sequence[str],
    add: Sequence[str],
    preload_files: Sequence[str],
    why: Mapping[str, str],
    home: Optional[str],
) -> Step:
    preload_mains = [
        f.value
        for f in fixes
        if f.kind == "ipython-preload"
        and not _is_other_library(f.value)
        and re.search(r"/libcudnn\.so\.\d+$", f.value)
    ]
    path = expand_home(IPYTHON_STARTUP, home)
    what = (
        [f"{', '.join(os.path.basename(f) for f in preload_files)} by path"]
        if preload_files
        else []
    ) + ([f"cuDNN from {cudnn_dir}"] if cudnn_dir else [])
    does = (
        f"preload {' and '.join(what)} in new kernels"
        if what
        else "fix LD_LIBRARY_PATH in new kernels"
    )
    return Step(
        kind="env-fix",
        summary=f"write {path}: {does}"
        + (f" ({why['ipython-preload']})" if "ipython-preload" in why else ""),
        files=(path,),
        content=ipython_startup_content(cudnn_dir, drop, add, preload_files, preload_mains),
    )
