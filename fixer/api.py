"""The library's public functions, one per command: doctor, plan, apply, verify, explain, lock, rollback.

Each takes keyword arguments that mirror the command's options (`environment=`, `python=`,
`find_links=`, ...), runs the pipeline and returns a result object:

- `.to_dict()`: exactly the command's `--json` payload;
- `.exit_code`: the command's exit code;
- `.show()`: the command's terminal output (the CLI calls it), and `__rich__` / `_repr_html_`
  so that a notebook cell `fixer.doctor()` shows the same table as the CLI.

Errors are raised (fixer.errors: UsageError exit 2, Unsatisfiable exit 1, ...); the CLI turns
them into its error output. The orchestration lives here (apply with a lock file, the check
after apply, the restart decision), never in the CLI. Nothing here prints, except `.show()`.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from fixer.errors import UsageError
from fixer.model import CheckResult, Environment, Finding, to_dict

if TYPE_CHECKING:
    from fixer.model import (
        Intent,
        Plan,
        PlanOptions,
    )  # imported where used: doctor never plans (fixer.model)
    from fixer.applier.kernel import KernelVerdict
    from fixer.applier.reporter import Reporter
    from fixer.applier.results import ApplyResult as _Applied, RollbackResult as _RolledBack
    from fixer.diagnosis.nogpu import NoGpu
    from fixer.explainer import Explanation
    from fixer.pipeline import PlannedMachine

Many = Union[str, Sequence[str], None]

#: Versions of the JSON payloads (the documented schemas).
VERIFY_SCHEMA = 1
#: `explain --json` (2: alternatives with their checks, benign, windows, colab_no_gpu, frameworks).
EXPLAIN_SCHEMA = 2
LOCK_SCHEMA = 1


def _many(v: Many) -> Tuple[str, ...]:
    """A repeatable option given as one string or a sequence."""
    if v is None:
        return ()
    return (v,) if isinstance(v, str) else tuple(v)


# ---------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------


class CommandResult:
    """What a command returns: its JSON payload, its exit code and its rendering."""

    command: str = ""
    exit_code: int = 0

    def to_dict(self) -> Dict[str, Any]:
        """The command's `--json` payload, in its one documented shape (render.json_payload)."""
        from fixer.render import json_payload

        return json_payload(self._payload(), self.command)

    def _payload(self) -> Dict[str, Any]:
        raise NotImplementedError

    def show(self) -> None:
        """The command's terminal output, through fixer.render."""
        raise NotImplementedError

    def _recorded(self) -> Any:
        from fixer import render

        return render.record(self.show)

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text.from_ansi(self._recorded().export_text(styles=True))

    def _repr_html_(self) -> str:
        from fixer import render

        return render.recorded_html(self._recorded())

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.command}: exit {self.exit_code}>"


@dataclasses.dataclass(repr=False)
class DoctorResult(CommandResult):
    """What `fixer.doctor()` returns: the machine, its findings and the verdict."""

    environment: Environment
    findings: Tuple[Finding, ...]
    healthy: bool
    nothing_to_fix: bool
    exit_code: int
    command: str = "doctor"

    def _payload(self) -> Dict[str, Any]:
        from fixer.render.doctor import doctor_json

        return doctor_json(self.environment, self.findings, self.healthy, self.exit_code)

    def show(self) -> None:
        from fixer.render.doctor import render_doctor

        render_doctor(
            self.environment,
            self.findings,
            self.healthy,
            self.exit_code,
            nothing_to_fix=self.nothing_to_fix,
        )

    def _repr_html_(self) -> str:
        from fixer.render.report import doctor_html

        return doctor_html(self.environment, self.findings, self.healthy, self.exit_code)


@dataclasses.dataclass(repr=False)
class PlanResult(CommandResult):
    """`no_gpu`: the verdict (fixer.diagnosis.nogpu) when no GPU is visible and the plan has nothing to do."""

    machine: "PlannedMachine"
    no_gpu: Optional["NoGpu"] = None
    exit_code: int = 0
    command: str = "plan"

    @property
    def plan(self) -> Plan:
        return self.machine.plan

    def _payload(self) -> Dict[str, Any]:
        from fixer.render.plan import no_gpu_json, plan_json

        if self.no_gpu is not None:
            return no_gpu_json(self.no_gpu, self.machine.plan)
        return plan_json(self.machine.plan)

    def show(self) -> None:
        from fixer.render import plan as render

        if self.no_gpu is not None:
            render.show_no_gpu(self.no_gpu, as_json=False, plan=self.machine.plan)
        else:
            render.show(self.machine)


@dataclasses.dataclass(repr=False)
class ApplyResult(CommandResult):
    """outcome: what happened on the machine: "no-gpu", "nothing-to-do", "dry-run", "declined",
    "applied", or "restart-needed" (the machine needed no change, but the process apply ran in
    maps another copy of a library the stack needs: only a restart helps).

    `process`: the verdict about the calling process when apply ran in it (fixer.apply() in a
    notebook kernel, or this_process=True); it is checked again on /proc/self/maps each time the
    result is shown (`restart_info`). `nothing_to_do` is True only when nothing was changed or
    is needed, on the machine or in that process; then no "fixed ..." verdict is given."""

    outcome: str
    plan: Plan
    findings: Tuple[Finding, ...] = ()
    machine: Optional["PlannedMachine"] = None  # None for a plan from a lock file
    applied: Optional["_Applied"] = None
    checks: Tuple[CheckResult, ...] = ()
    findings_after: Tuple[Finding, ...] = ()
    verified_by: str = ""
    no_gpu: Optional["NoGpu"] = None
    exit_code: int = 0
    command: str = "apply"
    process: Optional["KernelVerdict"] = None
    restart_wanted: bool = False
    _restart: Dict[str, Any] = dataclasses.field(
        default_factory=dict
    )  # apply as a child: restart_decision
    _kernel: Any = None

    @property
    def restart(self) -> Dict[str, Any]:
        """The `restart` object of the JSON ({} when there is no verdict): restart_info()."""
        return self.restart_info() or {}

    @property
    def nothing_to_do(self) -> bool:
        """Nothing changed and nothing is needed: no step changed the machine, the in-process fix
        loaded nothing and changed no variable, and no restart is needed."""
        if self.outcome not in ("nothing-to-do", "applied"):
            return self.outcome == "no-gpu"
        if self.applied is not None and (self.applied.changed or self.applied.awaiting_restart):
            return False
        return self.process is None or not (self.process.acted or self.process.restart_needed)

    @property
    def verdict(self) -> Optional[str]:
        """Where the fix reached ("fixed in this kernel", "fixed for new processes", ...), or
        None when there was nothing to do."""
        info = self.restart_info()
        return info["verdict"] if info else None

    def restart_info(self) -> Optional[Dict[str, Any]]:
        """The `restart` object of the JSON: the verdict, whether a restart is needed and done,
        and what to do. For the process apply ran in, the verdict is checked again on its maps
        now; None when nothing was done or needed (never a "fixed" verdict next to that)."""
        if self.outcome not in ("applied", "restart-needed") or self.nothing_to_do:
            return None
        if self.process is not None:
            from fixer.applier.kernel import recheck

            return process_restart(recheck(self.process), self.restart_wanted)
        return self._restart or None

    def _payload(self) -> Dict[str, Any]:
        return dict(self._body(), exit_code=self.exit_code)

    def _body(self) -> Dict[str, Any]:
        from fixer.render import apply as render
        from fixer.render.plan import plan_json

        if self.outcome == "no-gpu":
            from fixer.render.plan import no_gpu_json

            return no_gpu_json(self.no_gpu, command="apply")
        if self.outcome in ("nothing-to-do", "restart-needed"):
            return render.nothing_to_do_json(
                self.plan,
                self.findings,
                outcome=self.outcome,
                nothing_to_do=self.nothing_to_do,
                restart=self.restart_info(),
            )
        if self.outcome in ("dry-run", "declined"):
            return plan_json(self.plan)
        assert self.applied is not None
        return render.applied_json(
            self.applied,
            plan=self.plan,
            checks=self.checks,
            findings_after=self.findings_after,
            verified_by=self.verified_by,
            restart=self.restart_info(),
            nothing_to_do=self.nothing_to_do,
        )

    def show(self) -> None:
        from fixer.render import apply as render

        if self.outcome == "no-gpu":
            from fixer.render.plan import show_no_gpu

            show_no_gpu(self.no_gpu, as_json=False, command="apply")
        elif self.outcome in ("nothing-to-do", "restart-needed"):
            render.show_nothing_to_do(restart=self.restart_info())
        elif self.outcome in ("dry-run", "declined"):
            show_plan(self.plan, self.machine)
        else:
            assert self.applied is not None
            render.show_applied(
                self.applied,
                checks=self.checks,
                findings_after=self.findings_after,
                verified_by=self.verified_by,
                restart=self.restart_info() or {},
            )

    def restart_kernel(self) -> None:
        """Restart the notebook kernel when restart=True / --restart asked for it and it is needed
        (after the result has been shown: the kernel this runs in may be the one restarted)."""
        info = self.restart_info()
        if info and info.get("do") and self._kernel is not None:
            from fixer.applier.colab import restart_kernel

            restart_kernel(self._kernel)


@dataclasses.dataclass(repr=False)
class VerifyResult(CommandResult):
    """What `fixer.verify()` returns: one CheckResult per framework, and whether all passed."""

    results: Tuple[CheckResult, ...]
    passed: bool
    exit_code: int
    command: str = "verify"

    def _payload(self) -> Dict[str, Any]:
        return {"schema": VERIFY_SCHEMA, "passed": self.passed, "results": to_dict(self.results)}

    def show(self) -> None:
        from fixer.render.verify import render_verify

        render_verify(self.results)


@dataclasses.dataclass(repr=False)
class ExplainResult(CommandResult):
    """What `fixer.explain()` returns: the explanation of the text and, with detection, the plan."""

    explanation: "Explanation"
    plan: Optional[Plan]
    notes: Tuple[str, ...]
    detected: bool
    exit_code: int
    command: str = "explain"

    @property
    def findings(self) -> Tuple[Finding, ...]:
        return self.explanation.findings

    def _payload(self) -> Dict[str, Any]:
        r = self.explanation
        return {
            "schema": EXPLAIN_SCHEMA,
            "recognised": r.recognised,
            "findings": to_dict(r.findings),
            "rules": list(r.rules),
            "alternatives": [
                {"id": f.id, "confidence": f.confidence, "check": r.check_for(f.id)}
                for f in r.findings
            ],
            "ambiguous": r.ambiguous,
            "benign": r.benign,
            "windows": r.windows,
            "frameworks": list(r.frameworks),
            "colab_no_gpu": r.colab_no_gpu,
            "detected": self.detected,
            "plan": to_dict(self.plan),
            "notes": list(self.notes),
        }

    def show(self) -> None:
        from fixer.render.explain import render_explain

        render_explain(self.explanation, self.plan, self.notes, detected=self.detected)


@dataclasses.dataclass(repr=False)
class LockResult(CommandResult):
    """What `fixer.lock()` returns: the lock and the file it was written to."""

    lock: Any
    path: str
    exit_code: int = 0
    command: str = "lock"

    def _payload(self) -> Dict[str, Any]:
        return {"schema": LOCK_SCHEMA, "path": self.path, "lock": to_dict(self.lock)}

    def show(self) -> None:
        from fixer.render.apply import show_lock_written

        show_lock_written(self.lock, self.path)


@dataclasses.dataclass(repr=False)
class RollbackResult(CommandResult):
    """What `fixer.rollback()` returns: what was restored."""

    result: "_RolledBack"
    exit_code: int
    command: str = "rollback"

    def _payload(self) -> Dict[str, Any]:
        from fixer.render.apply import rollback_json

        return rollback_json(self.result)

    def show(self) -> None:
        from fixer.render.apply import show_rollback

        show_rollback(self.result, as_json=False)


def show_plan(plan: Plan, machine: Optional["PlannedMachine"]) -> None:
    """A plan as `plan` shows it; a plan from a lock file as its numbered commands."""
    if machine is not None:
        from fixer.render import plan as render

        render.show(machine)
    else:
        from fixer.render.plan import show_commands

        show_commands(plan)


# ---------------------------------------------------------------------------------------
# option values -> model values (the checks every caller gets, CLI or not)
# ---------------------------------------------------------------------------------------


def make_intent(
    framework: Many = None,
    torch: Optional[str] = None,
    tensorflow: Optional[str] = None,
    jax: Optional[str] = None,
    cuda: Optional[str] = None,
    cudnn_from: Optional[str] = None,
    keep: Many = None,
) -> Intent:
    """Intent options -> Intent, checking their form (not yet against recipes)."""
    from fixer.model import FRAMEWORKS, Intent

    frameworks = _many(framework)
    for f in frameworks:
        if f not in FRAMEWORKS:
            raise UsageError(
                f"unknown framework {f!r} (--framework): choose from {', '.join(FRAMEWORKS)}"
            )
    versions: Dict[str, str] = {}
    for name, value in (("torch", torch), ("tensorflow", tensorflow), ("jax", jax)):
        if value is not None:
            from packaging.version import InvalidVersion, Version

            if not value.strip():
                raise UsageError(
                    f"--{name} is empty: give a version like 2.5.1, or leave the option out"
                )
            try:
                Version(value)
            except InvalidVersion:
                raise UsageError(f"--{name} {value!r} is not a version number")
            versions[name] = value
            if name not in frameworks and frameworks:
                frameworks = frameworks + (name,)
    if cuda is not None:
        parts = cuda.split(".")
        if not (1 <= len(parts) <= 2 and all(p.isdigit() for p in parts)):
            raise UsageError(f"--cuda {cuda!r} is not a CUDA version like 12.6")
    if cudnn_from is not None and cudnn_from not in ("pip", "apt", "conda"):
        raise UsageError(f"--cudnn-from {cudnn_from!r}: choose pip, apt or conda")
    return Intent(
        frameworks=frameworks,
        versions=versions,
        cuda=cuda,
        cudnn_from=cudnn_from,  # type: ignore[arg-type]
        keep=_many(keep),
    )


def parse_mirrors(values: Many) -> Tuple[Tuple[str, str], ...]:
    """--index-mirror FROM=TO values -> (FROM, TO) pairs."""
    out = []
    for v in _many(values):
        src, sep, dst = v.partition("=")
        if not sep or not src or not dst:
            raise UsageError(
                f"--index-mirror {v!r}: expected FROM=TO, e.g. "
                "https://download.pytorch.org/whl=http://127.0.0.1:8080/whl"
            )
        out.append((src, dst))
    return tuple(out)


def make_options(
    installer: str = "auto",
    find_links: Many = None,
    no_index: bool = False,
    index_mirror: Many = None,
    root: Optional[str] = None,
    restart: bool = False,
    local_paths: bool = True,
) -> PlanOptions:
    """The source and installer options as PlanOptions. `local_paths`: the --find-links
    directories are on this machine (not so for `plan --environment`, a plan for another one)."""
    from fixer.model import PlanOptions

    if installer not in ("auto", "pip", "uv", "conda"):
        raise UsageError(f"--installer {installer!r}: choose auto, pip, uv or conda")
    links = _many(find_links)
    for d in links:
        if local_paths and not os.path.isdir(d) and "://" not in d:
            raise UsageError(f"--find-links {d}: no such directory")
    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    return PlanOptions(
        installer=installer,
        find_links=tuple(
            os.path.abspath(d) if "://" not in d else d  # type: ignore[arg-type]
            for d in links
        ),
        no_index=no_index,
        index_mirrors=parse_mirrors(index_mirror),
        root=os.path.abspath(root) if root else None,
        restart=restart,
    )


# ---------------------------------------------------------------------------------------
# doctor
# ---------------------------------------------------------------------------------------


def doctor(
    *,
    python: Optional[str] = None,
    deep: bool = False,
    lock: Optional[str] = None,
    recipes: Many = None,
    environment: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> DoctorResult:
    """The machine's GPU stack and what is wrong with it (`colab-cudnn-fix doctor`), or of the
    machine a `doctor --json` file describes (`environment`). COLAB_CUDNN_FIX_* overrides are
    read from `environ` (default: os.environ)."""
    from fixer.pipeline import examine

    r = examine(
        python,
        deep=deep,
        lock=lock,
        recipes=_many(recipes),
        environ=environ,
        environment=environment,
    )
    return DoctorResult(
        environment=r.env,
        findings=r.findings,
        healthy=r.healthy,
        nothing_to_fix=r.nothing_to_fix,
        exit_code=r.exit_code,
    )


# ---------------------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------------------


def plan(
    *,
    environment: Optional[str] = None,
    python: Optional[str] = None,
    recipes: Many = None,
    framework: Many = None,
    torch: Optional[str] = None,
    tensorflow: Optional[str] = None,
    jax: Optional[str] = None,
    cuda: Optional[str] = None,
    cudnn_from: Optional[str] = None,
    keep: Many = None,
    installer: str = "auto",
    find_links: Many = None,
    no_index: bool = False,
    index_mirror: Many = None,
    environ: Optional[Mapping[str, str]] = None,
) -> PlanResult:
    """The steps that make the machine's GPU stack consistent (`colab-cudnn-fix plan`). Changes nothing."""
    from fixer.diagnosis.nogpu import no_gpu
    from fixer.pipeline import plan_for

    intent = make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = make_options(
        installer, find_links, no_index, index_mirror, local_paths=not environment
    )
    machine = plan_for(
        python=python,
        environment=environment,
        recipes=_many(recipes),
        intent=intent,
        options=options,
        environ=environ,
    )
    verdict = no_gpu(machine.env, machine.plan.findings)
    if verdict is not None and verdict.exit_code and machine.plan.nothing_to_do:
        return PlanResult(machine, no_gpu=verdict, exit_code=verdict.exit_code)
    return PlanResult(machine)


# ---------------------------------------------------------------------------------------
# apply
# ---------------------------------------------------------------------------------------


def apply(
    *,
    dry_run: bool = False,
    python: Optional[str] = None,
    lock: Optional[str] = None,
    find_links: Many = None,
    no_index: bool = False,
    index_mirror: Many = None,
    installer: str = "auto",
    root: Optional[str] = None,
    restart: bool = False,
    environment: Optional[str] = None,
    recipes: Many = None,
    framework: Many = None,
    torch: Optional[str] = None,
    tensorflow: Optional[str] = None,
    jax: Optional[str] = None,
    cuda: Optional[str] = None,
    cudnn_from: Optional[str] = None,
    keep: Many = None,
    no_verify: bool = False,
    resume: bool = False,
    reporter: Optional["Reporter"] = None,
    confirm: Optional[Callable[["ApplyResult"], bool]] = None,
    environ: Optional[Mapping[str, str]] = None,
    prepare_for_gpu: bool = False,
    this_process: Optional[bool] = None,
    condacolab_installer: Optional[str] = None,
) -> ApplyResult:
    """Repair the GPU stack (`colab-cudnn-fix apply`): plan, run the steps journaled (rolled back
    on any failure), then check the result. `confirm` is asked with the dry-run result before
    anything changes (the CLI's --interactive); `reporter` receives the progress.

    In the process that will use the frameworks: `this_process` (default None: "this is a live
    IPython kernel", fixer.applier.kernel.fixes_this_process) applies the plan's loader fixes to
    the calling process too (the intended libraries loaded by absolute path, os.environ fixed
    for child processes), so a kernel that has not loaded a framework needs no restart; the
    verdict (`result.verdict`, `to_dict()["restart"]`) says "fixed in this kernel" or "fixed for
    new processes" with what to do, checked on /proc/self/maps. True forces it (a plain Python
    process that imports the frameworks next), False never touches the caller (as the CLI).

    restart=True restarts a notebook kernel that keeps another copy mapped, at the end;
    resume=True goes on with the apply that stopped for condacolab's kernel restart (in a kernel
    a plain apply() picks that journal up by itself). In a kernel, a plan that needs condacolab
    runs condacolab.install() here (the kernel restarts); `condacolab_installer` installs
    Miniforge from that URL instead of the internet (a mirror, an air-gapped site, tests)."""
    from fixer.applier.kernel import fixes_this_process

    in_process = fixes_this_process(this_process)
    if in_process and not resume and not dry_run and _awaiting_restart(root):
        resume = True
    if resume:
        result = resume_apply(
            root=root,
            python=python,
            no_verify=no_verify,
            recipes=recipes,
            reporter=reporter,
            this_process=in_process,
            restart=restart,
        )
    else:
        result = _apply(
            dry_run=dry_run,
            python=python,
            lock=lock,
            find_links=find_links,
            no_index=no_index,
            index_mirror=index_mirror,
            installer=installer,
            root=root,
            restart=restart,
            environment=environment,
            recipes=recipes,
            framework=framework,
            torch=torch,
            tensorflow=tensorflow,
            jax=jax,
            cuda=cuda,
            cudnn_from=cudnn_from,
            keep=keep,
            no_verify=no_verify,
            reporter=reporter,
            confirm=confirm,
            environ=environ,
            prepare_for_gpu=prepare_for_gpu,
            this_process=in_process,
            condacolab_installer=condacolab_installer,
        )
    result.restart_kernel()
    return result


def _awaiting_restart(root: Optional[str]) -> bool:
    """The last apply stopped for condacolab's kernel restart (its journal waits)."""
    from fixer.system.paths import state_dir
    from fixer.applier.journal import Journal

    if root is not None and not os.path.isdir(root):
        return False
    last = Journal.last(state_dir(os.path.abspath(root) if root else None))
    return last is not None and last.status == "awaiting-restart"


def _apply(
    *,
    dry_run: bool,
    python: Optional[str],
    lock: Optional[str],
    find_links: Many,
    no_index: bool,
    index_mirror: Many,
    installer: str,
    root: Optional[str],
    restart: bool,
    environment: Optional[str],
    recipes: Many,
    framework: Many,
    torch: Optional[str],
    tensorflow: Optional[str],
    jax: Optional[str],
    cuda: Optional[str],
    cudnn_from: Optional[str],
    keep: Many,
    no_verify: bool,
    reporter: Optional["Reporter"],
    confirm: Optional[Callable[["ApplyResult"], bool]],
    environ: Optional[Mapping[str, str]],
    prepare_for_gpu: bool = False,
    this_process: bool = False,
    condacolab_installer: Optional[str] = None,
) -> ApplyResult:
    """apply without the final kernel restart (the CLI shows the result first). Safe by default
    (issue 10): another machine's plan (--environment) runs only into a --root sandbox, else it is
    a dry run; no visible GPU changes nothing unless `prepare_for_gpu`; a plan whose simulated
    result is not healthy is refused (NotAFix, exit 1), naming what the user must do.
    `this_process`: apply runs in the process that will use the frameworks (see apply)."""
    from fixer.applier import apply_plan
    from fixer.applier.colab import find_kernel
    from fixer.diagnosis.nogpu import no_gpu

    if environment and not dry_run and not root:
        raise UsageError(
            f"--environment {environment}: that plan is for the machine the file describes, "
            "not this one; add --dry-run to see it (apply changes only the machine it runs on)"
        )
    intent = make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = make_options(installer, find_links, no_index, index_mirror, root, restart)
    machine: Optional["PlannedMachine"] = None
    if lock:
        env, the_plan = _lock_plan(lock, python, environment, options, environ)
        findings: Tuple[Finding, ...] = ()
    else:
        from fixer.pipeline import blockers, gpu_wanted, plan_for

        machine = plan_for(
            python=python,
            environment=environment,
            recipes=_many(recipes),
            intent=intent,
            options=options,
            environ=environ,
            prepare_for_gpu=prepare_for_gpu,
        )
        env, the_plan, findings = machine.env, machine.plan, tuple(machine.plan.findings)
        verdict = None if prepare_for_gpu else no_gpu(env, findings, wanted=gpu_wanted(env, intent))
        if verdict is not None:
            return ApplyResult(
                outcome="no-gpu",
                plan=the_plan,
                findings=findings,
                machine=machine,
                no_gpu=verdict,
                exit_code=verdict.exit_code,
            )
        blocking = blockers(the_plan, prepare_for_gpu)
        if (blocking or the_plan.drift) and not dry_run:
            from fixer.errors import NotAFix

            raise NotAFix(blocking, the_plan.drift)
    target = python or (env.python.executable if env.python else None) or sys.executable
    if the_plan.nothing_to_do:
        if this_process and not dry_run:
            # the machine needs nothing; this process may still map another copy (a wrong one
            # loaded before, or the old file an earlier install replaced)
            v = _fix_this_process(env, (), options.root, load=False)
            if v.restart_needed:
                return ApplyResult(
                    outcome="restart-needed",
                    plan=the_plan,
                    findings=findings,
                    machine=machine,
                    process=v,
                    restart_wanted=options.restart,
                    exit_code=1,
                    _kernel=_this_kernel(v),
                )
        return ApplyResult(
            outcome="nothing-to-do", plan=the_plan, findings=findings, machine=machine
        )
    preview = ApplyResult(outcome="dry-run", plan=the_plan, findings=findings, machine=machine)
    if dry_run:
        return preview
    if confirm is not None and not confirm(preview):
        return dataclasses.replace(preview, outcome="declined", exit_code=1)
    applied = apply_plan(the_plan, python=target, options=options, reporter=reporter)
    if applied.awaiting_restart:
        # stopped before condacolab, which must run in the kernel: nothing to verify yet
        if this_process:
            from fixer.applier.kernel import in_live_kernel, run_condacolab

            if in_live_kernel():
                from fixer.system.paths import under_root
                from fixer.planner.conda import CONDACOLAB_PREFIX

                run_condacolab(
                    str(under_root(CONDACOLAB_PREFIX, options.root)),
                    root=options.root,
                    installer_url=condacolab_installer,
                )
        return ApplyResult(
            outcome="applied",
            plan=the_plan,
            findings=findings,
            machine=machine,
            applied=applied,
            _restart=waiting_for_condacolab(applied.resume or "", this_process),
        )
    checks: Tuple[CheckResult, ...] = ()
    findings_after: Tuple[Finding, ...] = ()
    verified_by = ""
    env_after: Optional[Environment] = None
    if not no_verify:
        checks, findings_after, verified_by, env_after = check_after_apply(
            target, _many(recipes), the_plan.stack.env_fixes, environ
        )
    unhealthy = any(f.severity == "error" for f in findings_after) or any(
        c.status in ("failed", "crashed", "timeout") for c in checks
    )
    if this_process:
        if environment:
            env_after = env  # a described machine (into a --root sandbox): its own model
        fixes = the_plan.stack.env_fixes
        v = _fix_this_process(
            env_after or _detect_after(target, fixes, environ),
            fixes,
            options.root,
            load=bool(fixes),
        )
        return ApplyResult(
            outcome="applied",
            plan=the_plan,
            findings=findings,
            machine=machine,
            applied=applied,
            checks=checks,
            findings_after=findings_after,
            verified_by=verified_by,
            process=v,
            restart_wanted=options.restart,
            exit_code=1 if unhealthy else 0,
            _kernel=_this_kernel(v),
        )
    kernel = find_kernel()
    return ApplyResult(
        outcome="applied",
        plan=the_plan,
        findings=findings,
        machine=machine,
        applied=applied,
        checks=checks,
        findings_after=findings_after,
        verified_by=verified_by,
        _restart=restart_decision(kernel, the_plan, options.restart),
        exit_code=1 if unhealthy else 0,
        _kernel=kernel,
    )


def _fix_this_process(
    env_after: Environment, fixes: Sequence[Any], root: Optional[str], load: bool
) -> "KernelVerdict":
    from fixer.applier.kernel import fix_this_process

    return fix_this_process(env_after, fixes, root=root, load=load)


def _this_kernel(v: "KernelVerdict") -> Any:
    """The process to end for restart=True: this one, when it is a live kernel (its manager starts
    a fresh one); a plain process cannot be restarted from inside."""
    if not v.in_kernel:
        return None
    from fixer.applier.colab import KernelInfo

    return KernelInfo(pid=os.getpid(), cmdline="this kernel")


def _detect_after(
    python: str, fixes: Sequence[Any], environ: Optional[Mapping[str, str]] = None
) -> Environment:
    """The machine as a new process sees it once the loader fixes are in place."""
    from fixer.detection import detect, overrides_from_env
    from fixer.planner.envfix import environ_after

    after = environ_after(fixes, os.environ if environ is None else environ)
    return detect(python, environ=after, overrides=overrides_from_env(after))


def resume_apply(
    *,
    root: Optional[str],
    python: Optional[str],
    no_verify: bool,
    recipes: Many,
    reporter: Optional["Reporter"],
    this_process: bool = False,
    restart: bool = False,
) -> ApplyResult:
    """`apply --resume`: go on with the apply that stopped for condacolab's kernel restart
    (`this_process`: and fix the calling process, the fresh kernel, with the journal's loader fixes)."""
    from fixer.system.paths import state_dir
    from fixer.applier.colab import find_kernel
    from fixer.applier.journal import Journal
    from fixer.applier.transaction import resume_apply as resume_transaction
    from fixer.model import EnvFix, Plan, Stack, from_dict

    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    root = os.path.abspath(root) if root else None
    last = Journal.last(state_dir(root))
    fixes = tuple(
        from_dict(EnvFix, f, "$.env_fixes")
        for f in (last.data.get("env_fixes", []) if last else [])
    )
    applied = resume_transaction(root=root, python=python, reporter=reporter, verify=not no_verify)
    target = python or (last.data["python"] if last else sys.executable)
    checks: Tuple[CheckResult, ...] = ()
    findings_after: Tuple[Finding, ...] = ()
    verified_by = ""
    env_after: Optional[Environment] = None
    if not no_verify:
        checks, findings_after, verified_by, env_after = check_after_apply(
            target, _many(recipes), fixes
        )
    the_plan = Plan(stack=Stack(env_fixes=fixes))
    unhealthy = any(f.severity == "error" for f in findings_after) or any(
        c.status in ("failed", "crashed", "timeout") for c in checks
    )
    if this_process:
        v = _fix_this_process(
            env_after or _detect_after(target, fixes), fixes, root, load=bool(fixes)
        )
        return ApplyResult(
            outcome="applied",
            plan=the_plan,
            applied=applied,
            checks=checks,
            findings_after=findings_after,
            verified_by=verified_by,
            process=v,
            restart_wanted=restart,
            exit_code=1 if unhealthy else 0,
            _kernel=_this_kernel(v),
        )
    return ApplyResult(
        outcome="applied",
        plan=the_plan,
        applied=applied,
        checks=checks,
        findings_after=findings_after,
        verified_by=verified_by,
        _restart=restart_decision(find_kernel(), the_plan, False),
        exit_code=1 if unhealthy else 0,
    )


def _lock_plan(
    lock_path: str,
    python: Optional[str],
    environment: Optional[str],
    options: PlanOptions,
    environ: Optional[Mapping[str, str]],
) -> Tuple[Environment, Plan]:
    """The plan that reproduces a lock file on this machine (or the one `environment` describes):
    the lock is the stack, planned by the one planner (make_plan)."""
    from fixer.lockfile import check_compatible, read_lock, stack_from_lock, without_written_fixes
    from fixer.planner.steps import make_plan

    lock_file = read_lock(lock_path)
    if environment:
        from fixer.planner.steps import load_environment

        env = load_environment(environment)[0]
    else:
        from fixer.detection import detect, overrides_from_env

        env = detect(
            python, overrides=overrides_from_env(os.environ if environ is None else environ)
        )
    check_compatible(lock_file, env, lock_path)
    if python and env.python and env.python.executable != python:
        env = dataclasses.replace(env, python=dataclasses.replace(env.python, executable=python))
    the_plan = make_plan(env, stack_from_lock(lock_file, env), options)
    return env, without_written_fixes(the_plan, options.root)


def check_after_apply(
    python: str,
    recipes: Sequence[str],
    env_fixes: Sequence[Any] = (),
    environ: Optional[Mapping[str, str]] = None,
) -> Tuple[Tuple[CheckResult, ...], Tuple[Finding, ...], str, Environment]:
    """The deepest check available after apply: a fresh detect + diagnose, and the GPU conv test
    (fixer.verify) when a real GPU is there. Both run in the environment a new shell gets once
    the plan's loader fixes are in place (this process keeps its old LD_LIBRARY_PATH). Returns
    the checks, the findings, how it checked, and the machine it detected."""
    from fixer.detection import detect, overrides_from_env
    from fixer.diagnosis.findings import diagnose
    from fixer.planner.envfix import environ_after
    from fixer.recipebook import load
    from fixer.verifier.checks import verify as run_verify

    after = environ_after(env_fixes, os.environ if environ is None else environ)
    env = detect(python, environ=after, overrides=overrides_from_env(after))
    findings = tuple(diagnose(env, load(tuple(recipes))))
    how = ["detect + diagnose"]
    checks: Tuple[CheckResult, ...] = ()
    if any(g.source != "override" for g in env.gpus):
        # a real GPU (not one named by COLAB_CUDNN_FIX_GPU for an offline plan): run the conv test
        checks = tuple(run_verify(python, env=env, environ=after))
        how.append("GPU convolution check")
    return (
        checks,
        findings,
        " + ".join(how) + (", in the environment of a new shell" if env_fixes else ""),
        env,
    )


def restart_decision(kernel: Any, the_plan: Plan, wanted: bool) -> Dict[str, Any]:
    """apply ran as a child (the CLI): where the fix reached (fixer.applier.kernel.child_verdict:
    one home for these words) and whether --restart ends the kernel now."""
    from fixer.applier.kernel import child_verdict

    v = child_verdict(kernel, the_plan)
    needed = v.restart_needed or (kernel is None and bool(the_plan.restart_required))
    todo = v.todo or (
        "restart the notebook runtime so that it loads the fixed libraries" if needed else None
    )
    info = _restart_info(
        v, needed=needed, do=bool(needed and wanted and kernel is not None), todo=todo
    )
    if kernel is not None:
        info["kernel_pid"] = kernel.pid
    return info


def process_restart(v: "KernelVerdict", wanted: bool) -> Dict[str, Any]:
    """apply ran in the process that uses the frameworks: the verdict about it (checked on its
    maps), and whether restart=True ends it now (only a live kernel: its manager starts a new one)."""
    from fixer.model import to_dict as plain

    info = _restart_info(
        v,
        needed=v.restart_needed,
        do=bool(v.restart_needed and wanted and v.in_kernel),
        todo=v.todo,
        this_process=True,
    )
    info["pid"] = v.pid
    info["process"] = dict(
        plain(v.process) if v.process else {},
        stray=[list(x) for x in v.stray],
        mapped_before=list(v.loaded_before),
    )
    return info


def waiting_for_condacolab(resume: str, this_process: bool) -> Dict[str, Any]:
    """The verdict while the apply waits for condacolab's kernel restart."""
    return {
        "verdict": "waiting for the kernel restart (condacolab)",
        "needed": True,
        "do": False,
        "message": f"Not finished: {resume}.",
        "todo": resume,
        "this_process": this_process,
    }


def _restart_info(
    v: "KernelVerdict", *, needed: bool, do: bool, todo: Optional[str], this_process: bool = False
) -> Dict[str, Any]:
    message = v.message
    if do:
        message += (
            "; restarting the notebook runtime now (restart): the notebook reconnects by itself"
        )
    elif todo:
        message += f". To do: {todo}"
    return {
        "verdict": v.verdict,
        "needed": needed,
        "do": do,
        "message": message,
        "todo": todo,
        "this_process": this_process,
    }


# ---------------------------------------------------------------------------------------
# verify, explain, lock, rollback
# ---------------------------------------------------------------------------------------


def verify(
    *,
    python: Optional[str] = None,
    framework: Many = None,
    timeout: float = 120.0,
    environment: Optional[str] = None,
) -> VerifyResult:
    """Per framework, convolutions on the GPU checked against the CPU and the cuDNN files really
    loaded, each in a child process of the target (`colab-cudnn-fix verify`). `environment`: a
    `doctor --json` file whose frameworks are the ones checked, here."""
    from fixer.verifier.checks import passed, verify as run_verify

    env = None
    if environment:
        from fixer.pipeline import machine

        env = machine(environment=environment)[0]
    results = tuple(run_verify(python, frameworks=_many(framework), timeout=timeout, env=env))
    ok = passed(results)
    return VerifyResult(results=results, passed=ok, exit_code=0 if ok else 1)


def explain(
    text: str,
    *,
    detect: bool = True,
    python: Optional[str] = None,
    recipes: Many = None,
    environment: Optional[str] = None,
    read_note: Optional[str] = None,
) -> ExplainResult:
    """Why a GPU/cuDNN error happened: cause, evidence, fix, and (when the machine is detected)
    the plan that applies it (`colab-cudnn-fix explain`). Exit code 0 a cause found, 1 not
    recognised, 3 a Colab runtime without a GPU where the text says there is none. `read_note`:
    what reading the text skipped (the middle of a long log), kept with the notes."""
    from fixer.errors import FixerError
    from fixer.explainer import analyze

    if not text or not text.strip():
        raise UsageError("the error text is empty")
    extra = list(_many(recipes))
    env = None
    rec = None
    notes: List[str] = [read_note] if read_note else []
    if environment and not detect:
        raise UsageError("--environment and --no-detect exclude each other")
    if environment:
        from fixer.pipeline import machine

        env = machine(python, environment)[0]
    elif detect:
        from fixer.detection import detect as run_detect

        env = run_detect(python)
    if env is not None:
        from fixer.recipebook import load

        rec = load(extra)
    result = analyze(text, env, rec, extra_dirs=extra)
    notes.extend(n for n in result.notes if n not in notes)
    the_plan = None
    if env is not None and rec is not None and any(f.id != "log-noise" for f in result.findings):
        from fixer.model import Intent
        from fixer.pipeline import resolve, simulated
        from fixer.planner.steps import make_plan

        try:
            the_plan = simulated(env, make_plan(env, resolve(env, Intent(), rec)), rec)
        except FixerError as exc:
            notes.append(f"no plan: {exc.message}")
            for c in getattr(exc, "clashes", ()) or ():
                notes.append(f"clash: {c}")
    code = 0 if result.recognised else 1
    if (
        result.colab_no_gpu
        and result.findings
        and result.findings[0].id in ("gpu-missing", "driver-missing")
    ):
        code = 3
    return ExplainResult(
        explanation=result,
        plan=the_plan,
        notes=tuple(notes),
        detected=env is not None,
        exit_code=code,
    )


def lock(
    *,
    output: str = "colab-cudnn-fix.lock.toml",
    python: Optional[str] = None,
    environment: Optional[str] = None,
    recipes: Many = None,
    find_links: Many = None,
    no_index: bool = False,
    index_mirror: Many = None,
    framework: Many = None,
    torch: Optional[str] = None,
    tensorflow: Optional[str] = None,
    jax: Optional[str] = None,
    cuda: Optional[str] = None,
    cudnn_from: Optional[str] = None,
    keep: Many = None,
    environ: Optional[Mapping[str, str]] = None,
) -> LockResult:
    """Write the stack that fits the machine, with exact versions and hashes (`colab-cudnn-fix lock`)."""
    from fixer.lockfile import make_lock, write_lock
    from fixer.pipeline import plan_for

    intent = make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = make_options("auto", find_links, no_index, index_mirror, None, False)
    machine = plan_for(
        python=python,
        environment=environment,
        recipes=_many(recipes),
        intent=intent,
        options=options,
        environ=environ,
    )
    lock_file = make_lock(machine.env, machine.plan.stack, options=options)
    path = write_lock(lock_file, output)
    return LockResult(lock=lock_file, path=str(path))


def rollback(
    *,
    root: Optional[str] = None,
    python: Optional[str] = None,
    force: bool = False,
    reporter: Optional["Reporter"] = None,
) -> RollbackResult:
    """Put back exactly what the last apply changed (`colab-cudnn-fix rollback`); `force`
    restores from what a damaged journal still holds."""
    from fixer.applier import rollback as run_rollback

    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    result = run_rollback(
        root=os.path.abspath(root) if root else None, python=python, reporter=reporter, force=force
    )
    return RollbackResult(
        result=result, exit_code=1 if result.status == "rollback-incomplete" else 0
    )


__all__ = [
    "ApplyResult",
    "CommandResult",
    "DoctorResult",
    "ExplainResult",
    "LockResult",
    "PlanResult",
    "RollbackResult",
    "VerifyResult",
    "apply",
    "doctor",
    "explain",
    "lock",
    "plan",
    "rollback",
    "verify",
]
