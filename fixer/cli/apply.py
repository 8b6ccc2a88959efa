"""`colab-cudnn-fix apply`: detect -> diagnose -> resolve -> plan -> apply (journaled) -> verify.

Like pip it proceeds without asking (`--dry-run` shows the plan and stops, `--interactive`
asks first), so it works in a Colab `!` cell where there is no TTY.

Exit codes: 0 done, nothing to do, or healthy after the fix; 1 a step failed (the
environment was rolled back), another apply holds the lock, or the stack is still unhealthy
after applying; 2 bad usage or input (including a lock made for another machine); 3 no GPU
(a CPU/TPU runtime: nothing to repair, nothing changed).
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import typer

from ..errors import UsageError
from ._app import app
from ._common import handle_errors, make_intent, make_options
from .options import command, option

if TYPE_CHECKING:
    from ..model import CheckResult, Finding


@command(app, "apply")
@handle_errors()
def apply_command(
    dry_run: bool = option("dry_run"),
    yes: bool = option("yes"),
    interactive: bool = option("interactive"),
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    lock: Optional[str] = option("lock"),
    find_links: Optional[List[str]] = option("find_links"),
    no_index: bool = option("no_index"),
    index_mirror: Optional[List[str]] = option("index_mirror"),
    installer: str = option("installer"),
    root: Optional[str] = option("root"),
    restart: bool = option("restart"),
    environment: Optional[str] = option("environment"),
    recipes: Optional[List[str]] = option("recipes"),
    framework: Optional[List[str]] = option("framework"),
    torch: Optional[str] = option("torch"),
    tensorflow: Optional[str] = option("tensorflow"),
    jax: Optional[str] = option("jax"),
    cuda: Optional[str] = option("cuda"),
    cudnn_from: Optional[str] = option("cudnn_from"),
    keep: Optional[List[str]] = option("keep"),
    no_verify: bool = option("no_verify"),
    prepare_for_gpu: bool = option("prepare_for_gpu"),
    verbose: bool = option("verbose"),
    resume: bool = option("resume"),
) -> None:
    """Repair the GPU stack: run the plan's steps, journaled; roll back on any failure."""
    from ..apply import apply_plan
    from ..apply.colab import find_kernel
    from ..render import apply as render

    if resume:
        _resume(root, python, json, verbose, no_verify, recipes)
        return

    intent = make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = make_options(installer, find_links, no_index, index_mirror, root, restart)
    if dry_run and interactive:
        raise UsageError("--dry-run and --interactive exclude each other")
    if environment and not dry_run and not root:
        # another machine's plan is never run on this one; only into a --root sandbox (tests replay
        # recorded machines there)
        raise UsageError(f"--environment {environment}: that plan is for the machine the file describes, "
                         "not this one; add --dry-run to see it (apply changes only the machine it runs on)")

    if lock:
        env, plan, findings = _lock_plan(lock, python, environment, options)
        view = None
    else:
        from ..pipeline import blockers, gpu_wanted, plan_for

        view = plan_for(python=python, environment=environment, recipes=tuple(recipes or ()),
                        intent=intent, options=options, prepare_for_gpu=prepare_for_gpu)
        env, plan, findings = view.env, view.plan, tuple(view.plan.findings)
        if not prepare_for_gpu:
            _no_gpu(env, findings, json, wanted=gpu_wanted(env, intent))
        blocking = blockers(plan, prepare_for_gpu)
        if (blocking or plan.drift) and not dry_run:
            render.show_not_a_fix(plan, blocking, json)
            raise typer.Exit(1)
    target = (env.python.executable if env.python else None) or python or sys.executable
    if python:
        target = python

    if dry_run or plan.nothing_to_do:
        if plan.nothing_to_do:
            render.show_nothing_to_do(plan, json, findings)
        elif view is not None:
            from ..render import plan as plan_render

            plan_render.show(view, as_json=json)
        else:
            _show_lock_plan(plan, json)
        return
    if interactive and not yes:
        if view is not None:
            from ..render import plan as plan_render

            plan_render.show(view, as_json=False)
        else:
            _show_lock_plan(plan, False)
        if not typer.confirm("Apply these steps?", default=False):
            raise typer.Exit(1)

    result = apply_plan(plan, python=target, options=options, reporter=render.reporter_for(json, verbose))
    if result.awaiting_restart:
        # stopped before condacolab, which must run in the kernel: nothing to verify yet
        render.show_applied(result, as_json=json, plan=plan, restart={
            "verdict": "waiting for the kernel restart (condacolab)", "needed": True, "do": False,
            "message": f"Not finished: {result.resume}."})
        return
    checks: Tuple[CheckResult, ...] = ()
    findings_after: Tuple[Finding, ...] = ()
    verified_by = ""
    if not no_verify:
        checks, findings_after, verified_by = _verify(target, recipes, plan.stack.env_fixes)
    kernel = find_kernel()
    restart_info = _restart(kernel, plan, options.restart, env, json)
    render.show_applied(result, as_json=json, plan=plan, checks=checks, findings_after=findings_after,
                        verified_by=verified_by, restart=restart_info)
    if restart_info.get("do"):
        sys.stdout.flush()
        sys.stderr.flush()
        from ..apply.colab import restart_kernel

        restart_kernel(kernel)  # type: ignore[arg-type]
    unhealthy = any(f.severity == "error" for f in findings_after) or \
        any(c.status in ("failed", "crashed", "timeout") for c in checks)
    if unhealthy:
        raise typer.Exit(1)


def _resume(root: Optional[str], python: Optional[str], as_json: bool, verbose: bool, no_verify: bool,
            recipes: Optional[List[str]]) -> None:
    """`apply --resume`: go on with the apply that stopped for condacolab's kernel restart."""
    from .._paths import state_dir
    from ..apply.colab import find_kernel
    from ..apply.journal import Journal
    from ..apply.transaction import resume_apply
    from ..model import EnvFix, Plan, Stack, from_dict
    from ..render import apply as render

    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    root = os.path.abspath(root) if root else None
    last = Journal.last(state_dir(root))
    fixes = tuple(from_dict(EnvFix, f, "$.env_fixes") for f in (last.data.get("env_fixes", []) if last else []))
    result = resume_apply(root=root, python=python, reporter=render.reporter_for(as_json, verbose),
                          verify=not no_verify)
    target = python or (last.data["python"] if last else sys.executable)
    checks: Tuple[CheckResult, ...] = ()
    findings_after: Tuple[Finding, ...] = ()
    verified_by = ""
    if not no_verify:
        checks, findings_after, verified_by = _verify(target, recipes, fixes)
    plan = Plan(stack=Stack(env_fixes=fixes))
    render.show_applied(result, as_json=as_json, plan=plan, checks=checks, findings_after=findings_after,
                        verified_by=verified_by, restart=_restart(find_kernel(), plan, False, None, as_json))
    if any(f.severity == "error" for f in findings_after) or \
            any(c.status in ("failed", "crashed", "timeout") for c in checks):
        raise typer.Exit(1)


def _no_gpu(env: Any, findings: Sequence[Any], as_json: bool, wanted: bool = False) -> None:
    """A machine with no visible GPU (fixer.nogpu decides): nothing to repair. Say what to do
    and change nothing: exit 3 when something installed or asked for wants a GPU, else 0
    (--prepare-for-gpu, for a machine being set up for a GPU later, skips this)."""
    from ..nogpu import no_gpu
    from ..render.plan import show_no_gpu

    verdict = no_gpu(env, findings, wanted=wanted)
    if verdict is None:
        return
    show_no_gpu(verdict, as_json, command="apply")
    raise typer.Exit(verdict.exit_code)


def _lock_plan(lock_path: str, python: Optional[str], environment: Optional[str],
               options: Any) -> Tuple[Any, Any, Tuple[Finding, ...]]:
    from .. import lock as locking
    from ..apply.sources import find_uv

    lock = locking.read_lock(lock_path)
    if environment:
        from ..plan import load_environment

        env, _findings, _where = load_environment(environment)
    else:
        from ..detect import detect

        from ..detect import overrides_from_env

        env = detect(python, overrides=overrides_from_env(os.environ))
    locking.check_compatible(lock, env, lock_path)
    target = python or (env.python.executable if env.python else sys.executable)
    has_pip = _has_pip(target)
    tool = "uv" if options.installer == "uv" or (options.installer == "auto" and not has_pip and find_uv()) else "pip"
    apt_now: Dict[str, str] = {}
    for lib in env.libraries:
        if lib.origin == "apt" and lib.package:
            name, _, ver = lib.package.partition(" ")
            apt_now[name] = ver
    plan = locking.plan_from_lock(lock, python=target, options=options, installer=tool, apt_installed=apt_now)
    return env, plan, ()


def _has_pip(python: str) -> bool:
    from ..apply.snapshot import read_target

    return read_target(python).has("pip")


def _show_lock_plan(plan: Any, as_json: bool) -> None:
    from ..render import out, print_json
    from ..render.plan import command_text, plan_json

    if as_json:
        print_json(plan_json(plan))
        return
    console = out()
    for i, s in enumerate(plan.steps, 1):
        console.print(f"# {i}. {s.kind}: {s.summary}", style="dim", highlight=False, markup=False)
        console.print(command_text(s), highlight=False, markup=False, soft_wrap=True)


def _verify(python: str, recipes: Optional[List[str]],
            env_fixes: Sequence[Any] = ()) -> Tuple[Tuple[CheckResult, ...], Tuple[Finding, ...], str]:
    """The deepest check available: the GPU conv test (fixer.verify) when a GPU is there, and
    a fresh detect + diagnose of the result. Both run in the environment a new shell gets once
    the plan's loader fixes are in place (this process keeps its old LD_LIBRARY_PATH)."""
    from ..envfix import environ_after

    checks: Tuple[CheckResult, ...] = ()
    findings: Tuple[Finding, ...] = ()
    how: List[str] = []
    environ = environ_after(env_fixes, os.environ)
    try:
        from ..detect import detect, overrides_from_env
        from ..diagnose import diagnose
        from ..recipes import load

        env = detect(python, environ=environ, overrides=overrides_from_env(environ))
        findings = tuple(diagnose(env, load(tuple(recipes or ()))))
        how.append("detect + diagnose")
    except ImportError:
        env = None
    if env is not None and any(g.source != "override" for g in env.gpus):
        # a real GPU (not one named by COLAB_CUDNN_FIX_GPU for an offline plan): run the conv test
        try:
            from ..verify import verify

            checks = tuple(verify(python, env=env, environ=environ))
            how.append("GPU convolution check")
        except ImportError:
            pass
    return checks, findings, " + ".join(how) + (", in the environment of a new shell" if env_fixes else "")


def _restart(kernel: Any, plan: Any, wanted: bool, env: Any, as_json: bool) -> Dict[str, Any]:
    """Where the fix reached (fixer.apply.kernel.child_verdict: one home for these words) and
    whether --restart ends the kernel now."""
    from ..apply.kernel import child_verdict

    v = child_verdict(kernel, plan)
    needed = v.restart_needed or (kernel is None and bool(plan.restart_required))
    do = bool(needed and wanted and kernel is not None)
    message = v.message
    if do:
        message += "; restarting the notebook runtime now (--restart): the notebook reconnects by itself"
    elif v.todo:
        message += f". To do: {v.todo}"
    elif needed:
        message += ". To do: restart the notebook runtime so that it loads the fixed libraries"
    info: Dict[str, Any] = {"verdict": v.verdict, "needed": needed, "do": do, "message": message}
    if kernel is not None:
        info["kernel_pid"] = kernel.pid
    return info
