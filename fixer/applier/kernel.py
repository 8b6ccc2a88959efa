"""apply from inside a live notebook kernel: fix the kernel itself when it can, say exactly
what to do when it cannot, and run condacolab in the kernel with a resume after its restart.

Where the fix reaches (the verdict apply gives):
- "fixed in this kernel": apply runs in the kernel (`fixer.applier.kernel.apply_here()` in a
  cell), the kernel had not mapped a GPU library yet, and every intended library is now loaded
  by absolute path in it (fixer._preload.fix_process, the same code the IPython startup file
  runs in new kernels); os.environ is fixed for the `!` cells and child processes it starts.
- "fixed for new processes": apply runs as a child (`!colab-cudnn-fix apply`), or the kernel
  already mapped another copy (a framework was imported, or LD_PRELOAD forced it in at start):
  new kernels, shells and processes get the fix; this kernel needs a restart (`--restart`, or
  apply_here(restart=True), ends it the way Colab's "Restart session" does).

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
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .._paths import under_root
from .._preload import ProcessFix, fix_process, mapped_files
from ..model import EnvFix, Environment, Plan, PlanOptions
from .colab import _LOADED
from .results import ApplyResult
from .runner import Runner

FIXED_IN_KERNEL = "fixed in this kernel"
FIXED_FOR_NEW = "fixed for new processes"


def in_live_kernel() -> bool:
    """This process is an IPython kernel (code runs in a notebook cell), not a `!` child."""
    ipython = sys.modules.get("IPython")
    if ipython is None or "ipykernel" not in sys.modules:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:   # noqa: BLE001 - any failure means "not in a kernel"
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
            for major in sorted({ld.soname.rsplit(".", 1)[-1] for ld in env_after.loads if ld.library == "cudnn"}):
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
    """Where the fix reached, checked on this process's own maps right before it is said."""

    verdict: str                              # FIXED_IN_KERNEL or FIXED_FOR_NEW
    message: str
    todo: Optional[str] = None                # what the user must do, when anything
    loaded_before: Tuple[str, ...] = ()       # GPU libraries the kernel had mapped before
    process: Optional[ProcessFix] = None
    restart_needed: bool = False


def fix_this_kernel(env_after: Environment, fixes: Sequence[EnvFix], *, root: Optional[str] = None,
                    environ: Optional[Dict[str, str]] = None) -> KernelVerdict:
    """Apply the loader fix to this process (a live kernel) and say where the fix reached."""
    before = gpu_libraries_mapped()
    t = targets(env_after, fixes, root)
    result = fix_process(cudnn=t.cudnn, files=t.files, drop=t.drop, prepend=t.prepend,
                         preload_drop=t.preload_drop, environ=environ)
    mapped = set(os.path.realpath(p) for p in mapped_files())
    wanted = [p for p in result.loaded + result.already]
    really = all(os.path.realpath(p) in mapped for p in wanted)     # checked right before we say it
    if result.complete and really:
        what = ", ".join(sorted({os.path.dirname(p) for p in wanted})) or "nothing to load"
        return KernelVerdict(FIXED_IN_KERNEL, f"{FIXED_IN_KERNEL}: the intended libraries are loaded in it by path "
                             f"({what}); import the frameworks now, no restart needed",
                             loaded_before=before, process=result)
    why = [f"{os.path.basename(a)}: this kernel already mapped {b}" for a, b in result.conflicts] + \
          [f"{os.path.basename(a)}: {e}" for a, e in result.failed]
    return KernelVerdict(FIXED_FOR_NEW, f"{FIXED_FOR_NEW} only: " + "; ".join(why[:3]),
                         todo="restart the runtime (Runtime → Restart session), or apply with restart=True / --restart",
                         loaded_before=before, process=result, restart_needed=True)


def child_verdict(kernel: Any, plan: Plan) -> KernelVerdict:
    """apply ran as a child of a notebook kernel (`!colab-cudnn-fix apply`) or outside any: the
    kernel's own process cannot change from here."""
    if kernel is None:
        return KernelVerdict(FIXED_FOR_NEW, f"{FIXED_FOR_NEW}: new shells, kernels and processes get the fix")
    if kernel.loaded:
        return KernelVerdict(FIXED_FOR_NEW, f"{FIXED_FOR_NEW}: the notebook kernel (pid {kernel.pid}) already loaded "
                             f"{os.path.basename(kernel.loaded[0])}",
                             todo="restart the runtime (Runtime → Restart session), or rerun with --restart",
                             loaded_before=tuple(kernel.loaded), restart_needed=True)
    if plan.stack.env_fixes:
        return KernelVerdict(FIXED_FOR_NEW, f"{FIXED_FOR_NEW}: the notebook kernel (pid {kernel.pid}) has not loaded a "
                             "GPU library yet, but it keeps its old loader settings",
                             todo="in a cell run `import fixer.applier.kernel as k; k.apply_here()` before importing a "
                                  "framework (it fixes the kernel in place), or restart the runtime")
    return KernelVerdict(FIXED_FOR_NEW, f"{FIXED_FOR_NEW}; the notebook kernel (pid {kernel.pid}) has not loaded a GPU "
                         "library yet: import the frameworks now, no restart needed")


# ---------------------------------------------------------------------------------------
# condacolab, inside the kernel
# ---------------------------------------------------------------------------------------


def run_condacolab(prefix: str, *, root: Optional[str] = None, installer_url: Optional[str] = None,
                   sha256: Optional[str] = None, env: Optional[Mapping[str, str]] = None) -> None:
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
                os.makedirs(os.path.dirname(file), exist_ok=True)
            return real_open(file, *args, **kwargs)

        condacolab.open = sandboxed_open
    if installer_url:
        condacolab.install_from_url(installer_url, prefix=prefix, env=dict(env or {}), sha256=sha256)
    else:
        condacolab.install(prefix=prefix, env=dict(env or {}))


# ---------------------------------------------------------------------------------------
# the API
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class KernelApplyResult:
    """What apply_here did: the apply result, where the fix reached, and what to do next."""

    apply: Any                                 # fixer.applier.ApplyResult (None when nothing to do)
    kernel: Optional[KernelVerdict]
    nothing_to_do: bool = False
    awaiting_restart: bool = False             # condacolab is restarting the kernel
    exit_code: int = 0

    @property
    def verdict(self) -> str:
        if self.awaiting_restart:
            return "waiting for the kernel restart (condacolab)"
        return self.kernel.verdict if self.kernel else FIXED_FOR_NEW

    def to_dict(self) -> Dict[str, Any]:
        from ..model import to_dict

        return {"schema": 1, "verdict": self.verdict, "nothing_to_do": self.nothing_to_do,
                "awaiting_restart": self.awaiting_restart, "exit_code": self.exit_code,
                "kernel": to_dict(self.kernel) if self.kernel else None,
                "apply": to_dict(self.apply) if self.apply is not None else None}

    def __str__(self) -> str:
        lines = [self.verdict if not self.kernel else self.kernel.message]
        if self.kernel and self.kernel.todo:
            lines.append("to do: " + self.kernel.todo)
        if self.apply is not None and self.apply.resume:
            lines.append("then: " + self.apply.resume)
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


def apply_here(*, resume: bool = False, restart: bool = False, python: Optional[str] = None,
               environment: Optional[str] = None, root: Optional[str] = None, installer: str = "auto",
               framework: Sequence[str] = (), cudnn_from: Optional[str] = None, keep: Sequence[str] = (),
               find_links: Sequence[str] = (), no_index: bool = False,
               condacolab_installer_url: Optional[str] = None, condacolab_sha256: Optional[str] = None,
               this_process: Optional[bool] = None, reporter: Any = None,
               runner: Optional[Runner] = None) -> KernelApplyResult:
    """apply, called in a notebook cell: plan and apply as the CLI does, then fix this kernel
    in place when it has not loaded a GPU library yet. A plan that needs condacolab stops
    before it (journaled), runs condacolab.install() here (the kernel restarts), and goes on
    with `apply_here(resume=True)` (or `!colab-cudnn-fix apply --resume`); a plain apply_here()
    after the restart picks the journal up too. `this_process` (default: running in a kernel)
    applies the loader fix to the calling process itself (a plain Python process too)."""
    from .._paths import state_dir
    from ..model import EnvFix as _EnvFix, Intent, from_dict
    from ..pipeline import plan_for
    from .journal import Journal
    from .transaction import apply_plan, resume_apply

    last = Journal.last(state_dir(root))
    if not resume and last is not None and last.status == "awaiting-restart":
        resume = True
    if resume:
        resumed = resume_apply(root=root, python=python, reporter=reporter, runner=runner)
        fixes = tuple(from_dict(_EnvFix, f, "$.env_fixes") for f in (last.data.get("env_fixes", []) if last else []))
        env_after = _detect_after(python or (last.data["python"] if last else sys.executable), fixes)
        return _finish_in_kernel(resumed, fixes, env_after, root, restart, this_process=this_process)
    options = PlanOptions(installer=installer, find_links=tuple(find_links), no_index=no_index,  # type: ignore[arg-type]
                          root=root, restart=restart)
    intent = Intent(frameworks=tuple(framework), cudnn_from=cudnn_from, keep=tuple(keep))  # type: ignore[arg-type]
    view = plan_for(python=python, environment=environment, intent=intent, options=options)
    plan = view.plan
    from ..nogpu import no_gpu

    verdict = no_gpu(view.env, plan.findings)
    if verdict is not None and plan.nothing_to_do:
        return KernelApplyResult(apply=None, kernel=KernelVerdict(FIXED_FOR_NEW, verdict.message, todo=verdict.hint),
                                 nothing_to_do=True, exit_code=verdict.exit_code)
    target = python or (view.env.python.executable if view.env.python else sys.executable)
    result: Optional[ApplyResult] = None
    if not plan.nothing_to_do:
        result = apply_plan(plan, python=target, options=options, reporter=reporter, runner=runner)
        if result.awaiting_restart:
            if in_live_kernel():
                from ..conda import CONDACOLAB_PREFIX

                run_condacolab(str(under_root(CONDACOLAB_PREFIX, root)), root=root,
                               installer_url=condacolab_installer_url, sha256=condacolab_sha256)
            return KernelApplyResult(apply=result, kernel=None, awaiting_restart=True)
    env_after = _detect_after(target, plan.stack.env_fixes) if environment is None else view.env
    return _finish_in_kernel(result, plan.stack.env_fixes, env_after, root, restart,
                             nothing_to_do=plan.nothing_to_do, this_process=this_process)


def _detect_after(python: str, fixes: Sequence[EnvFix]) -> Environment:
    from ..detection import detect, overrides_from_env
    from ..envfix import environ_after

    environ = environ_after(fixes, os.environ)
    return detect(python, environ=environ, overrides=overrides_from_env(environ))


def _finish_in_kernel(result: Optional[ApplyResult], fixes: Sequence[EnvFix], env_after: Environment,
                      root: Optional[str], restart: bool, nothing_to_do: bool = False,
                      this_process: Optional[bool] = None) -> KernelApplyResult:
    from .colab import find_kernel, restart_kernel

    if this_process if this_process is not None else in_live_kernel():
        kv = fix_this_kernel(env_after, fixes, root=root)
        if kv.restart_needed and restart and in_live_kernel():
            from .colab import KernelInfo

            restart_kernel(KernelInfo(pid=os.getpid(), cmdline="this kernel"))
    else:
        kernel = find_kernel()
        from ..model import Plan as _Plan, Stack

        kv = child_verdict(kernel, _Plan(stack=Stack(env_fixes=tuple(fixes))))
    return KernelApplyResult(apply=result, kernel=kv, nothing_to_do=nothing_to_do)


__all__ = ["FIXED_FOR_NEW", "FIXED_IN_KERNEL", "KernelApplyResult", "KernelVerdict", "Targets", "apply_here",
           "child_verdict", "fix_this_kernel", "gpu_libraries_mapped", "in_live_kernel", "run_condacolab", "targets"]
