"""apply from inside the live process that will use the frameworks (a notebook kernel): fix
that process itself when it can, say exactly what to do when it cannot, and run condacolab in
the kernel with a resume after its restart. fixer.api.apply orchestrates; this module holds
the rules and the words.

Which process gets the fix (`fixes_this_process`): `fixer.apply()` called in a live IPython
kernel applies the plan's loader fixes to the kernel too; `this_process=True/False` overrides
that (True: a plain Python process that imports the frameworks next; False: treat the caller
as a child, like the CLI, which never fixes its own short-lived process).

Where the fix reaches (the verdict apply gives, checked on /proc/self/maps right before it is
shown, `process_verdict` / `recheck`):
- "fixed in this kernel": apply ran in the process, and every intended library is loaded in it
  by absolute path (fixer.planner.preload.fix_process, the same code the IPython startup file runs in
  new kernels) with no other copy of those sonames mapped; os.environ is fixed for the `!`
  cells and child processes it starts. No restart.
- "fixed for new processes": apply ran as a child (`!colab-cudnn-fix apply`), or the process
  already mapped another copy (a framework was imported, or LD_PRELOAD forced it in at start):
  new kernels, shells and processes get the fix; this kernel needs a restart (`--restart`, or
  fixer.apply(restart=True), ends it the way Colab's "Restart session" does).

Files and what reads them (said in README and in plan output):
- ~/.ipython/profile_default/startup/00-colab-cudnn-fix.py: every new IPython kernel (Colab's too);
- /etc/ld.so.conf.d/00-colab-cudnn-fix.conf + ldconfig: every new process, kernel, `!` cell;
- /etc/profile.d/colab-cudnn-fix.sh: login shells only (a terminal, `bash -l`); Colab's `!`
  cells and kernels never read it, so on Colab it only serves the terminal.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from fixer.system import fsgate
from fixer.system.paths import under_root
from fixer.planner.preload import ProcessFix, cudnn_family, fix_process, mapped_files, stray_copies
from fixer.model import EnvFix, Environment, Plan
from fixer.applier.colab import _LOADED
from fixer.planner import envsource as es

FIXED_IN_KERNEL = "fixed in this kernel"
FIXED_FOR_NEW = "fixed for new processes"


def in_live_kernel() -> bool:
    """This process is an IPython kernel (code runs in a notebook cell), not a `!` child."""
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:  # noqa: BLE001 - any failure means "not in a kernel"
        return False
    return shell is not None and getattr(shell, "kernel", None) is not None


def gpu_libraries_mapped(maps: str = "/proc/self/maps") -> Tuple[str, ...]:
    """GPU library files (cuDNN, a framework's native part) this process already mapped."""
    return tuple(p for p in mapped_files(maps) if _LOADED.search(p))


@dataclasses.dataclass(frozen=True)
class Targets:
    """What the loader fix loads into a process: cuDNN families (intended libcudnn.so.N paths),
    CUDA library files, and the environment changes."""

    cudnn: Tuple[str, ...] = ()
    files: Tuple[str, ...] = ()
    drop: Tuple[str, ...] = ()
    prepend: Tuple[str, ...] = ()
    preload_drop: Tuple[str, ...] = ()


def targets(env_after: Environment, fixes: Sequence[EnvFix], root: Optional[str] = None) -> Targets:
    """The copies a new process loads once the fix is in place (`env_after`: detect run in the
    environment a new shell gets), for every framework and cuDNN major, plus the fix's own
    preloads. Under --root the libraries the apply installed live in the sandbox."""
    cudnn: List[str] = []
    files: List[str] = []
    for fx in fixes:
        if fx.kind == "ipython-preload":
            (cudnn if "/libcudnn.so." in fx.value else files).append(fx.value)
        elif fx.kind == "ld-so-conf":
            for major in sorted(
                {ld.soname.rsplit(".", 1)[-1] for ld in env_after.loads if ld.library == "cudnn"}
            ):
                cudnn.append(f"{fx.value}/libcudnn.so.{major}")
    for ld in env_after.loads:
        if ld.library != "cudnn" or ld.consumer == "dlopen":
            continue
        path = ld.intended or ld.path
        if path and path not in cudnn:
            cudnn.append(os.path.join(os.path.dirname(path), ld.soname))

    def rooted(p: str) -> str:
        if root and not os.path.exists(p) and os.path.exists(under_root(p, root)):
            return str(under_root(p, root))
        if root and not os.path.exists(p) and os.path.isdir(under_root(os.path.dirname(p), root)):
            return str(under_root(p, root))
        return p

    return Targets(
        cudnn=tuple(dict.fromkeys(rooted(p) for p in cudnn)),
        files=tuple(dict.fromkeys(rooted(p) for p in files)),
        drop=tuple(f.value for f in fixes if f.kind == "ld-library-path-drop"),
        prepend=tuple(f.value for f in fixes if f.kind == "ld-library-path-add"),
        preload_drop=tuple(f.value for f in fixes if f.kind == "ld-preload-drop"),
    )


@dataclasses.dataclass(frozen=True)
class KernelVerdict:
    """Where the fix reached, checked on the process's own maps right before it is said."""

    verdict: str  # FIXED_IN_KERNEL or FIXED_FOR_NEW
    message: str
    todo: Optional[str] = None  # what the user must do, when anything
    loaded_before: Tuple[str, ...] = ()  # GPU libraries the process had mapped before
    process: Optional[ProcessFix] = None  # what the fix did to this process (apply ran in it)
    restart_needed: bool = False
    pid: Optional[int] = None  # the process the verdict is about, when apply ran in it
    family: Tuple[str, ...] = ()  # the library files the fix means that process to map
    stray: Tuple[
        Tuple[str, str], ...
    ] = ()  # (intended file, another copy of its soname the process maps)
    in_kernel: bool = False  # that process is a live IPython kernel (restart=True can restart it)

    @property
    def acted(self) -> bool:
        """The fix changed this process (loaded a library, or changed its environment)."""
        return bool(self.process and (self.process.loaded or self.process.environ))


TODO_RESTART = (
    "restart the runtime (Runtime → Restart session), or apply with restart=True / --restart"
)
TODO_RESTART_PROCESS = "start this Python process again (it keeps what it mapped until it ends)"


def fixes_this_process(this_process: Optional[bool] = None) -> bool:
    """The rule for `fixer.apply(this_process=...)`: does the calling process get the loader fix
    too? True/False say so; None (the default) means "when it is a live IPython kernel" (code in
    a notebook cell: the process that will import the frameworks). The CLI is never that
    process (a `!` cell is a child of the kernel), so it passes False."""
    return in_live_kernel() if this_process is None else bool(this_process)


def process_verdict(
    fix: ProcessFix,
    family: Sequence[str],
    mapped: Sequence[str],
    *,
    pid: int,
    loaded_before: Sequence[str] = (),
    kernel: bool = True,
) -> KernelVerdict:
    """The verdict for a process the fix ran in, from what it maps now (`mapped`, its
    /proc/self/maps files): "fixed in this kernel" only when every library the fix loaded (or
    found loaded) is mapped and no other copy of any intended soname is (stray_copies);
    otherwise "fixed for new processes" with why and what to do. Pure: the caller reads the maps."""
    real = {os.path.realpath(p) for p in mapped}
    missing = [p for p in fix.loaded + fix.already if os.path.realpath(p) not in real]
    stray = stray_copies(family, mapped)
    what = "this kernel" if kernel else "this process"
    if fix.complete and not missing and not stray:
        if fix.loaded or fix.already:
            where = ", ".join(sorted({os.path.dirname(p) for p in fix.loaded + fix.already}))
            how = f"the intended libraries are loaded in it by path ({where})"
        else:
            how = "it has not mapped another copy of the libraries the fix changed"
        return KernelVerdict(
            FIXED_IN_KERNEL,
            f"{FIXED_IN_KERNEL} ({what}, pid {pid}): {how}; import the frameworks "
            "now, no restart needed",
            loaded_before=tuple(loaded_before),
            process=fix,
            pid=pid,
            family=tuple(family),
            in_kernel=kernel,
        )
    why = (
        [
            f"{os.path.basename(a)}: LD_PRELOAD forced {a} into {what} at its start"
            if b.startswith("LD_PRELOAD")
            else f"{os.path.basename(a)}: {what} already mapped {b}"
            for a, b in fix.conflicts
        ]
        + [
            f"{os.path.basename(a)}: {what} maps {b}"
            for a, b in stray
            if (a, b) not in fix.conflicts
        ]
        + [f"{os.path.basename(a)}: {e}" for a, e in fix.failed]
        + [f"{os.path.basename(p)}: loaded but not mapped" for p in missing]
    )
    return KernelVerdict(
        FIXED_FOR_NEW,
        f"{FIXED_FOR_NEW} only: " + "; ".join(dict.fromkeys(why[:4])),
        todo=TODO_RESTART if kernel else TODO_RESTART_PROCESS,
        loaded_before=tuple(loaded_before),
        process=fix,
        restart_needed=True,
        pid=pid,
        family=tuple(family),
        stray=tuple(stray),
        in_kernel=kernel,
    )


def fix_this_process(
    env_after: Environment,
    fixes: Sequence[EnvFix],
    *,
    root: Optional[str] = None,
    load: bool = True,
    environ: Optional[Dict[str, str]] = None,
) -> KernelVerdict:
    """Apply the loader fix to this process (fixer.planner.preload.fix_process; `load`: the plan has
    loader fixes) and say where the fix reached, from this process's maps read right after."""
    before = gpu_libraries_mapped()
    t = targets(env_after, fixes, root)
    if load:
        result = fix_process(
            cudnn=t.cudnn,
            files=t.files,
            drop=t.drop,
            prepend=t.prepend,
            preload_drop=t.preload_drop,
            environ=environ,
        )
    else:
        result = ProcessFix()
    family = [p for main in t.cudnn for p in cudnn_family(main)] + list(t.files)
    return process_verdict(
        result,
        family,
        mapped_files(),
        pid=os.getpid(),
        loaded_before=before,
        kernel=in_live_kernel(),
    )


def recheck(v: KernelVerdict) -> KernelVerdict:
    """The same verdict checked again on this process's maps now (right before it is shown): a
    result shown later, after other code ran, still says only what is true."""
    if v.pid != os.getpid() or v.process is None:
        return v
    return process_verdict(
        v.process,
        v.family,
        mapped_files(),
        pid=v.pid,
        loaded_before=v.loaded_before,
        kernel=v.in_kernel,
    )


#: what a loader fix at each file reaches (fixer.planner.envsource names the kinds)
_VAR_DROPS = ("ld-preload-drop", "ld-library-path-drop")


def _file_reach(path: str) -> Tuple[str, ...]:
    """The process kinds that read a file an env-fix step writes."""
    if "/etc/profile.d/" in path:
        return (es.LOGIN_SHELLS,)
    if path.endswith("/etc/environment"):
        return (es.LOGIN_SESSIONS, es.LOGIN_SHELLS)
    if path.endswith("/kernel.json") or "/.ipython/" in path:
        return (es.NEW_KERNELS,)
    return ()


def plan_reach(plan: Plan) -> Tuple[str, ...]:
    """The process kinds for which every loader fix of `plan` holds once apply wrote its files:
    the intersection over the fixes of what each reaches. An LD_PRELOAD / LD_LIBRARY_PATH entry
    is gone for a kind only where a file that kind reads was fixed (our profile.d file, the
    kernel spec or /etc/environment that set it); an ld.so.conf.d entry reaches every new
    process once ldconfig runs (its step carries the ldconfig command); an IPython startup
    preload reaches new kernels. A plan without loader fixes reaches every new process."""
    fixes = plan.stack.env_fixes
    if not fixes:
        return (es.NEW_PROCESSES,)
    files = [(f, s.argv) for s in plan.steps if s.kind == "env-fix" for f in s.files]
    from_files = tuple(dict.fromkeys(k for f, _ in files for k in _file_reach(f)))
    ldconfig = any(argv and "ld.so.conf" in f for f, argv in files)
    order = (es.NEW_PROCESSES, es.NEW_KERNELS, es.LOGIN_SESSIONS, es.LOGIN_SHELLS)
    kinds = set(order)
    for fx in fixes:
        if fx.kind in _VAR_DROPS:
            reach = set(from_files) - {es.NEW_KERNELS} | (
                {es.NEW_KERNELS} if any(f.endswith("/kernel.json") for f, _ in files) else set()
            )
            if fx.kind == "ld-library-path-drop" and any("/.ipython/" in f for f, _ in files):
                reach.add(es.NEW_KERNELS)  # the startup file loads the intended copy by path
        elif fx.kind == "ld-so-conf":
            reach = set(order) if ldconfig else set()
        elif fx.kind == "ipython-preload":
            reach = {es.NEW_KERNELS}
        else:
            reach = set(from_files)
        kinds &= reach
    if es.NEW_PROCESSES in kinds:
        return tuple(order)
    return tuple(k for k in order if k in kinds)


def claims_of(text: str) -> Tuple[str, ...]:
    """The process kinds a verdict's words claim (the check run before a verdict is shown)."""
    head = text.split(" only", 1)[0].split(";", 1)[0].split(":", 1)[0]
    return tuple(
        k
        for k in (es.NEW_PROCESSES, es.NEW_KERNELS, es.LOGIN_SESSIONS, es.LOGIN_SHELLS)
        if k in head
    )


def scope_words(kinds: Sequence[str]) -> str:
    """ "fixed for new notebook kernels and new login shells only", checked: the words claim
    exactly `kinds` (claims_of)."""
    if not kinds:
        text = "not fixed for any process yet"
    elif es.NEW_PROCESSES in kinds:
        text = FIXED_FOR_NEW
    else:
        text = "fixed for " + " and ".join(kinds) + " only"
    if set(claims_of(text)) != (
        set(kinds) if es.NEW_PROCESSES not in kinds else {es.NEW_PROCESSES}
    ):
        raise AssertionError(f"verdict {text!r} does not say exactly {kinds}")
    return text


_KEEPS = (
    "the running kernel, its `!` cells and the processes they start keep the old "
    "{what} until the kernel restarts"
)
TODO_SOURCE = (
    "restart the runtime (Runtime → Restart session), or run `import fixer; fixer.apply()` in "
    "a cell: it fixes the kernel's own environment for the processes it starts"
)


def child_verdict(kernel: Any, plan: Plan) -> KernelVerdict:
    """apply ran as a child of a notebook kernel (`!colab-cudnn-fix apply`) or outside any: the
    kernel's own process cannot change from here. The verdict names the process kinds the
    plan's files reach (plan_reach), no more."""
    kinds = plan_reach(plan)
    label = scope_words(kinds)
    what = " and ".join(
        sorted(
            {
                "LD_PRELOAD" if f.kind == "ld-preload-drop" else "LD_LIBRARY_PATH"
                for f in plan.stack.env_fixes
                if f.kind in _VAR_DROPS
            }
        )
    )
    keeps = _KEEPS.format(what=what) if what else ""
    if kernel is None:
        if not plan.stack.env_fixes:
            return KernelVerdict(label, f"{label}: new shells, kernels and processes get the fix")
        return KernelVerdict(
            label,
            f"{label}"
            + (f"; {keeps.replace('running kernel', 'running shell or kernel')}" if keeps else ""),
            todo=TODO_SOURCE if keeps else None,
        )
    if kernel.loaded:
        return KernelVerdict(
            label,
            f"{label}: the notebook kernel (pid {kernel.pid}) already loaded "
            f"{os.path.basename(kernel.loaded[0])}",
            todo="restart the runtime (Runtime → Restart session), or rerun with --restart",
            loaded_before=tuple(kernel.loaded),
            restart_needed=True,
        )
    if plan.stack.env_fixes:
        return KernelVerdict(
            label,
            f"{label}: the notebook kernel (pid {kernel.pid}) has not loaded a "
            "GPU library yet, but it keeps its old loader settings"
            + (f"; {keeps}" if keeps else ""),
            todo="in a cell run `import fixer; fixer.apply()` before importing a framework (it "
            "fixes the kernel in place), or restart the runtime",
        )
    return KernelVerdict(
        label,
        f"{label}; the notebook kernel (pid {kernel.pid}) has not loaded a GPU "
        "library yet: import the frameworks now, no restart needed",
    )


# ---------------------------------------------------------------------------------------
# condacolab, inside the kernel
# ---------------------------------------------------------------------------------------


def run_condacolab(
    prefix: str,
    *,
    root: Optional[str] = None,
    installer_url: Optional[str] = None,
    sha256: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
) -> None:
    """condacolab.install() (Miniforge), or install_from_url(installer_url) when given, into
    `prefix` in THIS kernel; it ends the kernel (Colab starts a fresh one). With a --root
    sandbox, the one file condacolab writes outside the prefix and the working directory
    (/etc/ipython/ipython_config.py) goes into the sandbox too."""
    import builtins

    import condacolab  # type: ignore[import-not-found,import-untyped,unused-ignore]

    if root:
        real_open = builtins.open

        def sandboxed_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(file, str) and file.startswith("/etc/"):
                file = str(under_root(file, root))
                # the gate walks down from an existing root: the sandbox (its etc/ may not exist)
                with fsgate.allowed([root], why="condacolab in a --root sandbox"):
                    fsgate.make_dirs(os.path.dirname(file))
            return real_open(file, *args, **kwargs)

        condacolab.open = sandboxed_open
    if installer_url:
        condacolab.install_from_url(
            installer_url, prefix=prefix, env=dict(env or {}), sha256=sha256
        )
    else:
        condacolab.install(prefix=prefix, env=dict(env or {}))


__all__ = [
    "FIXED_FOR_NEW",
    "FIXED_IN_KERNEL",
    "KernelVerdict",
    "Targets",
    "child_verdict",
    "claims_of",
    "plan_reach",
    "scope_words",
    "fix_this_process",
    "fixes_this_process",
    "gpu_libraries_mapped",
    "in_live_kernel",
    "process_verdict",
    "recheck",
    "run_condacolab",
    "targets",
]
