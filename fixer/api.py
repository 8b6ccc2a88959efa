"""The library's public functions, one per command: doctor, plan, apply, verify, explain, lock, rollback.

Each takes keyword arguments that mirror the command's options (`environment=`, `python=`,
`find_links=`, ...), runs the pipeline and returns a result object:

- `.to_dict()`: exactly the command's `--json` payload;
- `.exit_code`: the command's exit code;
- `.show()`: the command's terminal output (the CLI calls it), and `__rich__` / `_repr_html_`
  so that a notebook cell `fixer.doctor()` shows the same table as the CLI.

Errors are raised (fixer.errors: UsageError exit 2, Unsatisfiable exit 1, ...); the CLI turns
them into its error output. The orchestration lives here (apply with a lock file, the check
after apply, the restart decision), never in the CLI. Nothing here prints, except `.show()`
and, in a notebook kernel, apply's progress (one output of the cell, updated in place).
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
from fixer.model import (
    CheckResult,
    Environment,
    Finding,
    Intent,
    Plan,
    PlanOptions,
    PlannedMachine,
    Reporter,
    to_dict,
)
from fixer.model import FRAMEWORKS
from fixer.pipeline import examine
from fixer.diagnosis.nogpu import no_gpu
from fixer.pipeline import plan_for
from fixer.pipeline import check_request
from fixer.system.paths import state_dir
from fixer.pipeline import apply_refusal
from fixer.pipeline import gpu_wanted
from fixer.system.paths import under_root
from fixer.model import Stack
from fixer.detection import detect, overrides_from_env
from fixer.detection import detect as run_detect  # explain() has a parameter named detect
from fixer.pipeline import diagnosed
from fixer.recipebook import load
from fixer.model import VERIFIABLE
from fixer.model import to_dict as plain
from fixer.pipeline import check_target
from fixer.errors import FixerError
from fixer.pipeline import machine
from fixer.pipeline import resolve, simulated
from fixer import recipebook as rec
from fixer.render import json_payload
from fixer.render import write_json

from fixer import render
from fixer.render.doctor import doctor_json, render_doctor

if TYPE_CHECKING:
    from fixer.applier.results import ApplyResult as _Applied, RollbackResult as _RolledBack
    from fixer.errors import FixerError
    from fixer.applier.kernel import KernelVerdict
    from fixer.diagnosis.nogpu import NoGpu
    from fixer.explainer import Explanation

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
        return json_payload(self._payload(), self.command)

    def _payload(self) -> Dict[str, Any]:
        raise NotImplementedError

    def show(self) -> None:
        """The command's terminal output, through fixer.render."""
        raise NotImplementedError

    def _recorded(self) -> Any:
        return render.record(self.show)

    def __rich__(self) -> Any:
        from rich.text import Text

        return Text.from_ansi(self._recorded().export_text(styles=True))

    def _repr_html_(self) -> str:
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
    lock: Optional[str] = None  # doctor --lock FILE: the lock the machine was checked against

    def _payload(self) -> Dict[str, Any]:
        return doctor_json(self.environment, self.findings, self.healthy, self.exit_code)

    def show(self) -> None:
        render_doctor(
            self.environment,
            self.findings,
            self.healthy,
            self.exit_code,
            nothing_to_fix=self.nothing_to_fix,
            lock=self.lock,
        )

    def _repr_html_(self) -> str:
        # start-up: fixer.reporting.report +2% on doctor --json (python -X importtime)
        from fixer.reporting.report import doctor_html

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
        # start-up: fixer.render.plan 0.1% alone, all small ones +4% (doctor --json)
        from fixer.render.plan import no_gpu_json, plan_json

        if self.no_gpu is not None:
            return no_gpu_json(self.no_gpu, self.machine.plan)
        return plan_json(self.machine.plan)

    def show(self) -> None:
        # start-up: fixer.render.plan 0.1% alone, all small ones +4% (doctor --json)
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
    #: the dry run: why apply would refuse this plan (fixer.pipeline.apply_refusal), or None
    refusal: Optional["FixerError"] = None

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
            # start-up: fixer.applier.kernel +43% on doctor --json (python -X importtime)
            from fixer.applier.kernel import recheck

            return process_restart(recheck(self.process), self.restart_wanted)
        return self._restart or None

    def _payload(self) -> Dict[str, Any]:
        return dict(self._body(), exit_code=self.exit_code, refusal=self._refusal_json())

    def _body(self) -> Dict[str, Any]:
        # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
        from fixer.render import apply as render

        # start-up: fixer.render.plan 0.1% alone, all small ones +4% (doctor --json)
        from fixer.render.plan import plan_json

        if self.outcome == "no-gpu":
            # start-up: fixer.render.plan 0.1% alone, all small ones +4% (doctor --json)
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
        # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
        from fixer.render import apply as render

        if self.outcome == "no-gpu":
            # start-up: fixer.render.plan 0.1% alone, all small ones +4% (doctor --json)
            from fixer.render.plan import show_no_gpu

            show_no_gpu(self.no_gpu, as_json=False, command="apply")
        elif self.outcome in ("nothing-to-do", "restart-needed"):
            render.show_nothing_to_do(restart=self.restart_info())
            if self.refusal is not None:
                # start-up: fixer.render.plan 0.1% alone, all small ones +4% (doctor --json)
                from fixer.render.plan import show_refusal

                show_refusal(self.plan, self.refusal.message)
        elif self.outcome in ("dry-run", "declined"):
            show_plan(self.plan, self.machine, self.refusal)
        else:
            assert self.applied is not None
            render.show_applied(
                self.applied,
                checks=self.checks,
                findings_after=self.findings_after,
                verified_by=self.verified_by,
                restart=self.restart_info() or {},
            )

    def _refusal_json(self) -> Optional[Dict[str, Any]]:
        if self.refusal is None:
            return None
        return {
            "type": type(self.refusal).__name__,
            "message": self.refusal.message,
            "exit_code": self.refusal.exit_code,
        }

    def restart_kernel(self) -> None:
        """Restart the notebook kernel when restart=True / --restart asked for it and it is needed
        (after the result has been shown: the kernel this runs in may be the one restarted)."""
        info = self.restart_info()
        if info and info.get("do") and self._kernel is not None:
            # start-up: fixer.applier.colab +34% on doctor --json (python -X importtime)
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
        # start-up: fixer.render.verify 0.1% alone, all small ones +4% (doctor --json)
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
        # start-up: fixer.render.explain 0.0% alone, all small ones +4% (doctor --json)
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
        # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
        from fixer.render.apply import show_lock_written

        show_lock_written(self.lock, self.path)


@dataclasses.dataclass(repr=False)
class RollbackResult(CommandResult):
    """What `fixer.rollback()` returns: what was restored."""

    result: "_RolledBack"
    exit_code: int
    command: str = "rollback"

    def _payload(self) -> Dict[str, Any]:
        # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
        from fixer.render.apply import rollback_json

        return rollback_json(self.result)

    def show(self) -> None:
        # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
        from fixer.render.apply import show_rollback

        show_rollback(self.result, as_json=False)


def show_plan(
    plan: Plan, machine: Optional["PlannedMachine"], refusal: Optional["FixerError"] = None
) -> None:
    """A plan as `plan` shows it, closed by apply's decision about it (`refusal`); a plan from a
    lock file as its numbered commands."""
    # start-up: fixer.render.plan 0.1% alone, all small ones +4% (doctor --json)
    from fixer.render import plan as render

    if machine is not None:
        render.show(machine, refusal=refusal.message if refusal else None, decided=True)
    else:
        render.show_commands(plan)
        if refusal is not None:
            render.show_refusal(plan, refusal.message)


# ---------------------------------------------------------------------------------------
# option values -> model values (the checks every caller gets, CLI or not)
# ---------------------------------------------------------------------------------------


#: The keywords each typed value carries: API functions take the typed value (Intent, PlanOptions)
#: or these keywords, never both; the CLI builds the typed values from its options.
INTENT_KEYWORDS = ("framework", "torch", "tensorflow", "jax", "cuda", "cudnn_from", "keep")
OPTION_KEYWORDS = ("installer", "find_links", "no_index", "index_mirror", "root", "restart")

#: Where `lock` writes when no output is named (the CLI's -o default too).
DEFAULT_LOCK_FILE = "stack.lock.toml"


def typed_values(
    intent: Optional[Intent],
    options: Optional[PlanOptions],
    keywords: Mapping[str, Any],
    *,
    local_paths: bool = True,
) -> Tuple[Intent, PlanOptions]:
    """(Intent, PlanOptions) from the typed values a caller gave, or from their keywords
    (INTENT_KEYWORDS, OPTION_KEYWORDS), each checked by make_intent / make_options: a typed
    value gets the same checks as keywords. TypeError for an unknown keyword or a keyword given
    beside the typed value that carries it."""
    unknown = sorted(set(keywords) - set(INTENT_KEYWORDS) - set(OPTION_KEYWORDS))
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    for value, names, label in (
        (intent, INTENT_KEYWORDS, "intent"),
        (options, OPTION_KEYWORDS, "options"),
    ):
        both = [k for k in names if k in keywords]
        if value is not None and both:
            raise TypeError(f"give {label}= or its keywords ({', '.join(both)}=), not both")
    if intent is None:
        intent = make_intent(**{k: keywords[k] for k in INTENT_KEYWORDS if k in keywords})
    else:
        intent = _checked_intent(intent)
    if options is None:
        option_keywords = {k: keywords[k] for k in OPTION_KEYWORDS if k in keywords}
        options = make_options(**option_keywords, local_paths=local_paths)
    else:
        options = make_options(
            options.installer,
            options.find_links,
            options.no_index,
            [f"{a}={b}" for a, b in options.index_mirrors],
            options.root,
            options.restart,
            local_paths=local_paths,
        )
    return intent, options


def _checked_intent(intent: Intent) -> Intent:
    """A caller's Intent through make_intent's checks."""
    other = sorted(set(intent.versions) - {"torch", "tensorflow", "jax"})
    if other:
        raise UsageError(
            f"Intent.versions names {other[0]!r}: versions are given for "
            f"torch, tensorflow or jax (frameworks: {', '.join(FRAMEWORKS)})"
        )
    return make_intent(
        intent.frameworks,
        intent.versions.get("torch"),
        intent.versions.get("tensorflow"),
        intent.versions.get("jax"),
        intent.cuda,
        intent.cudnn_from,
        intent.keep,
    )


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
    if installer not in ("auto", "pip", "uv", "conda"):
        raise UsageError(f"--installer {installer!r}: choose auto, pip, uv or conda")
    links = _many(find_links)
    for d in links:
        if local_paths and not os.path.isdir(d) and "://" not in d:
            raise UsageError(f"--find-links {d}: no such directory")
    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    return PlanOptions(
        installer=installer,  # type: ignore[arg-type]
        find_links=tuple(os.path.abspath(d) if "://" not in d else d for d in links),
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
        lock=lock,
    )


# ---------------------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------------------


def plan(
    intent: Optional[Intent] = None,
    options: Optional[PlanOptions] = None,
    *,
    environment: Optional[str] = None,
    python: Optional[str] = None,
    recipes: Many = None,
    environ: Optional[Mapping[str, str]] = None,
    **keywords: Any,
) -> PlanResult:
    """The steps that make the machine's GPU stack consistent (`colab-cudnn-fix plan`). Changes
    nothing. What to make work is an `intent` (fixer.Intent) or its keywords (framework=,
    torch=, tensorflow=, jax=, cuda=, cudnn_from=, keep=); how the steps run is `options`
    (fixer.model.PlanOptions) or its keywords (installer=, find_links=, no_index=,
    index_mirror=, root=, restart=)."""
    intent, options = typed_values(intent, options, keywords, local_paths=not environment)
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


@dataclasses.dataclass(frozen=True)
class _Request:
    """One apply's settings, checked (apply's arguments, as one value for its phases)."""

    intent: Intent
    options: PlanOptions
    dry_run: bool = False
    python: Optional[str] = None
    lock: Optional[str] = None
    environment: Optional[str] = None
    recipes: Tuple[str, ...] = ()
    no_verify: bool = False
    reporter: Optional["Reporter"] = None
    confirm: Optional[Callable[["ApplyResult"], bool]] = None
    environ: Optional[Mapping[str, str]] = None
    prepare_for_gpu: bool = False
    this_process: bool = False
    condacolab_installer: Optional[str] = None


def apply(
    intent: Optional[Intent] = None,
    options: Optional[PlanOptions] = None,
    *,
    dry_run: bool = False,
    python: Optional[str] = None,
    lock: Optional[str] = None,
    environment: Optional[str] = None,
    recipes: Many = None,
    no_verify: bool = False,
    resume: bool = False,
    reporter: Optional["Reporter"] = None,
    confirm: Optional[Callable[["ApplyResult"], bool]] = None,
    environ: Optional[Mapping[str, str]] = None,
    prepare_for_gpu: bool = False,
    this_process: Optional[bool] = None,
    condacolab_installer: Optional[str] = None,
    restart_now: bool = True,
    **keywords: Any,
) -> ApplyResult:
    """Repair the GPU stack (`colab-cudnn-fix apply`): plan, run the steps journaled (rolled back
    on any failure), then check the result. `intent` / `options` (or their keywords, as for
    plan()) say what to make work and how. `confirm` is asked with the dry-run result before
    anything changes (the CLI's --interactive); `reporter` receives the progress.

    Refused before anything runs (the dry run says the same, apply_refusal): a plan for another
    machine (`environment`) without `dry_run`; with `root` (a sandbox for the tool's own files)
    apt and conda steps; a plan whose simulated result is not healthy (NotAFix, exit 1).

    In the process that will use the frameworks: `this_process` (default None: "this is a live
    IPython kernel", fixer.applier.kernel.fixes_this_process) applies the plan's loader fixes to
    the calling process too (the intended libraries loaded by absolute path, os.environ fixed
    for child processes), so a kernel that has not loaded a framework needs no restart; the
    verdict (`result.verdict`, `to_dict()["restart"]`) says "fixed in this kernel" or "fixed for
    new processes" with what to do, checked on /proc/self/maps. True forces it (a plain Python
    process that imports the frameworks next), False never touches the caller (as the CLI).

    restart=True restarts a notebook kernel that keeps another copy mapped, at the end (with
    `restart_now=False` the caller does it, by result.restart_kernel(), after showing the
    result: the CLI); resume=True goes on with the apply that stopped for condacolab's kernel
    restart (in a kernel a plain apply() picks that journal up by itself). In a kernel, a plan
    that needs condacolab runs condacolab.install() here (the kernel restarts);
    `condacolab_installer` installs Miniforge from that URL instead of the internet (a mirror,
    an air-gapped site, tests)."""
    # start-up: fixer.applier.kernel +43% on doctor --json (python -X importtime)
    from fixer.applier.kernel import fixes_this_process

    intent, options = typed_values(intent, options, keywords)
    check_request(environment=environment, dry_run=dry_run, lock=lock)
    request = _Request(
        intent=intent,
        options=options,
        dry_run=dry_run,
        python=python,
        lock=lock,
        environment=environment,
        recipes=_many(recipes),
        no_verify=no_verify,
        reporter=reporter,
        confirm=confirm,
        environ=environ,
        prepare_for_gpu=prepare_for_gpu,
        this_process=fixes_this_process(this_process),
        condacolab_installer=condacolab_installer,
    )
    if request.this_process and not dry_run and _awaiting_restart(options.root):
        resume = True
    result = _resume(request) if resume else _apply(request)
    if restart_now:
        result.restart_kernel()
    return result


def _awaiting_restart(root: Optional[str]) -> bool:
    """The last apply stopped for condacolab's kernel restart (its journal waits)."""
    # start-up: fixer.applier.journal +44% on doctor --json (python -X importtime)
    from fixer.applier.journal import Journal

    last = Journal.last(state_dir(root))
    return last is not None and last.status == "awaiting-restart"


def _apply(req: _Request) -> ApplyResult:
    """apply, with the check's bytecode warming beside it (_warm), stopped however apply ends."""
    # start-up: fixer.verifier.checks +12% on doctor --json (python -X importtime)
    from fixer.verifier.checks import finish_warm

    warm = _warm(req)
    try:
        return _apply_warming(req, warm)
    finally:
        finish_warm(warm, grace=0)


def _warm(req: _Request) -> Optional[Any]:
    """The bytecode warm-up for the check after a real apply (fixer.verifier.checks.warm_bytecode),
    started before detection so that it has the whole apply to run; None when nothing will be
    checked here."""
    # start-up: fixer.verifier.checks +12% on doctor --json (python -X importtime)
    from fixer.verifier.checks import warm_bytecode

    if req.dry_run or req.no_verify or req.environment:
        return None
    return warm_bytecode(req.python or sys.executable, req.environ)


def _apply_warming(req: _Request, warm: Optional[Any]) -> ApplyResult:
    """apply's phases: the plan (or an answer without one), the one refusal decision shared with
    the dry run, the confirmation, the journaled steps, and the check after."""
    # start-up: fixer.applier +30% on doctor --json (python -X importtime)
    from fixer.applier import apply_plan

    planned = _planned(req)
    if isinstance(planned, ApplyResult):
        return planned
    env, the_plan, findings, machine = planned
    target = req.python or (env.python.executable if env.python else None) or sys.executable
    refusal = apply_refusal(
        the_plan,
        root=req.options.root,
        prepare_for_gpu=req.prepare_for_gpu,
        python=env.python,
        executable=target,
    )
    if refusal is not None and not req.dry_run:
        raise refusal
    if the_plan.nothing_to_do:
        done = _nothing_to_do(req, env, the_plan, findings, machine)
        return dataclasses.replace(done, refusal=refusal)
    preview = ApplyResult(
        outcome="dry-run", plan=the_plan, findings=findings, machine=machine, refusal=refusal
    )
    if req.dry_run:
        return preview
    if req.confirm is not None and not req.confirm(preview):
        return dataclasses.replace(preview, outcome="declined", exit_code=1)
    reporter = req.reporter or _notebook_reporter()
    if reporter is not None:
        reporter.starting(the_plan)
    applied = apply_plan(the_plan, python=target, options=req.options, reporter=reporter)
    req = dataclasses.replace(req, reporter=reporter)
    done = ApplyResult(
        outcome="applied", plan=the_plan, findings=findings, machine=machine, applied=applied
    )
    if applied.awaiting_restart:
        return _awaiting_condacolab(req, done)
    return _checked(req, done, target, env, warm=warm)


def _notebook_reporter() -> Optional["Reporter"]:
    """In a notebook kernel, apply's progress as ONE output of the cell, updated in place
    (fixer.render.apply.notebook_reporter); elsewhere None (the library logs, never prints)."""
    # start-up: fixer.applier.kernel +43% on doctor --json (python -X importtime)
    from fixer.applier.kernel import in_live_kernel

    if not in_live_kernel():
        return None
    # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
    from fixer.render.apply import notebook_reporter

    return notebook_reporter()


def _planned(
    req: _Request,
) -> Union[ApplyResult, Tuple[Environment, Plan, Tuple[Finding, ...], Optional["PlannedMachine"]]]:
    """(machine, plan, findings, the planned machine) for apply, from the lock file or the
    pipeline; or the no-GPU answer when no GPU is visible (nothing changes)."""
    if req.lock:
        env, the_plan = _lock_plan(req.lock, req.python, req.environment, req.options, req.environ)
        return env, the_plan, (), None
    machine = plan_for(
        python=req.python,
        environment=req.environment,
        recipes=req.recipes,
        intent=req.intent,
        options=req.options,
        environ=req.environ,
        prepare_for_gpu=req.prepare_for_gpu,
        hash_records=True,  # apply's before-check: every wheel's library files by sha256
    )
    env, the_plan, findings = machine.env, machine.plan, tuple(machine.plan.findings)
    wanted = gpu_wanted(env, req.intent)
    verdict = None if req.prepare_for_gpu else no_gpu(env, findings, wanted=wanted)
    if verdict is not None:
        return ApplyResult(
            outcome="no-gpu",
            plan=the_plan,
            findings=findings,
            machine=machine,
            no_gpu=verdict,
            exit_code=verdict.exit_code,
        )
    return env, the_plan, findings, machine


def _nothing_to_do(
    req: _Request,
    env: Environment,
    the_plan: Plan,
    findings: Tuple[Finding, ...],
    machine: Optional["PlannedMachine"],
) -> ApplyResult:
    """The machine needs nothing; the process apply runs in may still map another copy (a wrong
    one loaded before, or the old file an earlier install replaced)."""
    if req.this_process and not req.dry_run:
        v = _fix_this_process(env, (), req.options.root, load=False)
        if v.restart_needed:
            return ApplyResult(
                outcome="restart-needed",
                plan=the_plan,
                findings=findings,
                machine=machine,
                process=v,
                restart_wanted=req.options.restart,
                exit_code=1,
                _kernel=_this_kernel(v),
            )
    return ApplyResult(outcome="nothing-to-do", plan=the_plan, findings=findings, machine=machine)


def _awaiting_condacolab(req: _Request, done: ApplyResult) -> ApplyResult:
    """Stopped before condacolab, which must run in the kernel: nothing to verify yet."""
    assert done.applied is not None
    if req.this_process:
        # start-up: fixer.applier.kernel +43% on doctor --json (python -X importtime)
        from fixer.applier.kernel import in_live_kernel, run_condacolab

        if in_live_kernel():
            # start-up: fixer.planner.conda 0.1% alone, all small ones +4% (doctor --json)
            from fixer.planner.conda import CONDACOLAB_PREFIX

            run_condacolab(
                str(under_root(CONDACOLAB_PREFIX, req.options.root)),
                root=req.options.root,
                installer_url=req.condacolab_installer,
            )
    return dataclasses.replace(
        done, _restart=waiting_for_condacolab(done.applied.resume or "", req.this_process)
    )


def _checked(
    req: _Request,
    done: ApplyResult,
    target: str,
    env: Optional[Environment],
    wanted: Optional[bool] = None,
    warm: Optional[Any] = None,
) -> ApplyResult:
    """The applied result with the check after it (unless no_verify) and where the fix reached:
    this process (this_process) or new processes (the CLI). `wanted`: whether a restart may be
    done (default: restart=True of the options). `warm`: the bytecode warm-up, given its last
    moments before the check starts (fixer.verifier.checks.finish_warm)."""
    # start-up: fixer.applier.colab +34% on doctor --json (python -X importtime)
    from fixer.applier.colab import find_kernel

    wanted = req.options.restart if wanted is None else wanted
    fixes = done.plan.stack.env_fixes
    env_after: Optional[Environment] = None
    if not req.no_verify:
        # start-up: fixer.verifier.checks +12% on doctor --json (python -X importtime)
        from fixer.verifier.checks import finish_warm

        finish_warm(warm)
        checks, findings_after, verified_by, env_after = check_after_apply(
            target,
            req.recipes,
            fixes,
            req.environ,
            checking=req.reporter.checking if req.reporter is not None else None,
            gpus=env.gpus if env is not None else None,
        )
        done = dataclasses.replace(
            done, checks=checks, findings_after=findings_after, verified_by=verified_by
        )
    done = dataclasses.replace(done, exit_code=1 if _unhealthy(done) else 0)
    if req.this_process:
        if req.environment and env is not None:
            env_after = env  # a described machine: its own model
        v = _fix_this_process(
            env_after or _detect_after(target, fixes, req.environ),
            fixes,
            req.options.root,
            load=bool(fixes),
        )
        return dataclasses.replace(done, process=v, restart_wanted=wanted, _kernel=_this_kernel(v))
    kernel = find_kernel()
    return dataclasses.replace(
        done,
        _restart=restart_decision(kernel, done.plan, wanted),
        _kernel=kernel,
    )


def _unhealthy(done: ApplyResult) -> bool:
    """What the check after apply found: an error finding, or a framework check that failed."""
    return any(f.severity == "error" for f in done.findings_after) or any(
        c.status in ("failed", "crashed", "timeout") for c in done.checks
    )


def _resume(req: _Request) -> ApplyResult:
    """`apply --resume`: go on with the apply that stopped for condacolab's kernel restart
    (`this_process`: and fix the calling process, the fresh kernel, with the journal's loader
    fixes), then check as after any apply."""
    # start-up: fixer.applier.journal +44% on doctor --json (python -X importtime)
    from fixer.applier.journal import Journal

    # start-up: fixer.applier.transaction +37% on doctor --json (python -X importtime)
    from fixer.applier.transaction import resume_apply as resume_transaction

    root = req.options.root
    last = Journal.last(state_dir(root))
    fixes = last.loader_fixes() if last else ()
    applied = resume_transaction(
        root=root, python=req.python, reporter=req.reporter, verify=not req.no_verify
    )
    target = req.python or (last.python if last else sys.executable) or sys.executable
    done = ApplyResult(outcome="applied", plan=Plan(stack=Stack(env_fixes=fixes)), applied=applied)
    # the restart that --restart asks for is the first apply's; the fresh kernel is not restarted
    return _checked(
        dataclasses.replace(req, environ=None, environment=None), done, target, None, wanted=False
    )


def _fix_this_process(
    env_after: Environment, fixes: Sequence[Any], root: Optional[str], load: bool
) -> "KernelVerdict":
    # start-up: fixer.applier.kernel +43% on doctor --json (python -X importtime)
    from fixer.applier.kernel import fix_this_process

    return fix_this_process(env_after, fixes, root=root, load=load)


def _this_kernel(v: "KernelVerdict") -> Any:
    """The process to end for restart=True: this one, when it is a live kernel (its manager starts
    a fresh one); a plain process cannot be restarted from inside."""
    if not v.in_kernel:
        return None
    # start-up: fixer.applier.colab +34% on doctor --json (python -X importtime)
    from fixer.applier.colab import KernelInfo

    return KernelInfo(pid=os.getpid(), cmdline="this kernel")


def _detect_after(
    python: str, fixes: Sequence[Any], environ: Optional[Mapping[str, str]] = None
) -> Environment:
    """The machine as a new process sees it once the loader fixes are in place."""
    # start-up: fixer.planner.envfix 0.6% alone, all small ones +4% (doctor --json)
    from fixer.planner.envfix import environ_after

    after = environ_after(fixes, os.environ if environ is None else environ)
    return detect(python, environ=after, overrides=overrides_from_env(after), hash_records=True)


def _lock_plan(
    lock_path: str,
    python: Optional[str],
    environment: Optional[str],
    options: PlanOptions,
    environ: Optional[Mapping[str, str]],
) -> Tuple[Environment, Plan]:
    """The plan that reproduces a lock file on this machine (or the one `environment` describes):
    the lock is the stack, planned by the one planner (make_plan)."""
    # start-up: fixer.lockfile +58% on doctor --json (python -X importtime)
    from fixer.lockfile import check_compatible, read_lock, stack_from_lock, without_written_fixes

    # start-up: fixer.planner.steps +4% on doctor --json (python -X importtime)
    from fixer.planner.steps import make_plan

    lock_file = read_lock(lock_path)
    if environment:
        # start-up: fixer.planner.steps +4% on doctor --json (python -X importtime)
        from fixer.planner.steps import load_environment

        env = load_environment(environment)[0]
    else:
        env = detect(
            python,
            overrides=overrides_from_env(os.environ if environ is None else environ),
            hash_records=True,  # apply's before-check, as without --lock
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
    checking: Optional[Callable[[Sequence[str]], None]] = None,
    gpus: Optional[Sequence[Any]] = None,
) -> Tuple[Tuple[CheckResult, ...], Tuple[Finding, ...], str, Environment]:
    """The deepest check available after apply: a fresh detect + diagnose, and the GPU conv test
    (fixer.verify) when a real GPU is there. Both run in the environment a new shell gets once
    the plan's loader fixes are in place (this process keeps its old LD_LIBRARY_PATH). Returns
    the checks, the findings, how it checked, and the machine it detected. `checking` hears
    which frameworks the GPU check runs, and () when it ended (Reporter.checking).

    `gpus`: the GPUs detected before apply (an apply changes none). Given, the conv test's
    children start at once and detect + diagnose run beside them, on a thread of this process
    (1.3 s of a 7.5 s check on a freshly started GPU machine); without, the test waits for the
    detection to say whether a real GPU is there."""
    from concurrent.futures import ThreadPoolExecutor

    # start-up: fixer.planner.envfix 0.6% alone, all small ones +4% (doctor --json)
    from fixer.planner.envfix import environ_after

    # start-up: fixer.verifier.checks +12% on doctor --json (python -X importtime)
    from fixer.verifier.checks import installed_frameworks, run_checks, verify as run_verify

    after = environ_after(env_fixes, os.environ if environ is None else environ)

    def detected() -> Tuple[Environment, Tuple[Finding, ...]]:
        env = detect(python, environ=after, overrides=overrides_from_env(after), hash_records=True)
        return env, diagnosed(env, load(tuple(recipes)))

    def real(found: Sequence[Any]) -> bool:
        # a real GPU (not one named by COLAB_CUDNN_FIX_GPU for an offline plan)
        return any(g.source != "override" for g in found)

    checks: Tuple[CheckResult, ...] = ()
    if gpus is not None:
        pool = ThreadPoolExecutor(1, thread_name_prefix="fixer-detect")
        try:
            running = pool.submit(detected)
            if real(gpus):
                names = installed_frameworks(python)
                checks = _with_checking(checking, names, run_checks, python, names, environ=after)
            env, findings = running.result()
        finally:
            pool.shutdown(wait=False)  # a Ctrl-C goes on at once (its children are killed)
    else:
        env, findings = detected()
        if real(env.gpus):
            checks = _with_checking(
                checking, _frameworks_of(env), run_verify, python, env=env, environ=after
            )
    how = ["detect + diagnose"] + (["GPU convolution check"] if checks else [])
    return (
        checks,
        findings,
        " + ".join(how) + (", in the environment of a new shell" if env_fixes else ""),
        env,
    )


def _frameworks_of(env: Environment) -> Tuple[str, ...]:
    """The frameworks verify checks on `env`: its detected ones, in VERIFIABLE order (the rule
    of fixer.verifier.checks.verify given an Environment); () when it found none (verify then
    asks the interpreter)."""
    names = {b.framework for b in env.frameworks}
    return tuple(f for f in VERIFIABLE if f in names)


def _with_checking(
    checking: Optional[Callable[[Sequence[str]], None]],
    names: Sequence[str],
    run: Callable[..., Sequence[CheckResult]],
    *args: Any,
    **kwargs: Any,
) -> Tuple[CheckResult, ...]:
    """run(*args, **kwargs), with `checking(names)` said before and `checking(())` after."""
    if checking is None:
        return tuple(run(*args, **kwargs))
    checking(tuple(names))
    try:
        return tuple(run(*args, **kwargs))
    finally:
        checking(())


def restart_decision(kernel: Any, the_plan: Plan, wanted: bool) -> Dict[str, Any]:
    """apply ran as a child (the CLI): where the fix reached (fixer.applier.kernel.child_verdict:
    one home for these words) and whether --restart ends the kernel now."""
    # start-up: fixer.applier.kernel +43% on doctor --json (python -X importtime)
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
    checking: Optional[Callable[[Sequence[str]], None]] = None,
) -> VerifyResult:
    """Per framework, convolutions on the GPU checked against the CPU and the cuDNN files really
    loaded, each in a child process of the target (`colab-cudnn-fix verify`). It runs this
    machine's frameworks: `environment` (a machine a file describes) is refused (UsageError).
    `checking` hears which frameworks are checked while the checks run, and () when they ended
    (the CLI shows it: fixer.render.progress.checking_text)."""
    # start-up: fixer.verifier.checks +12% on doctor --json (python -X importtime)
    from fixer.verifier.checks import passed, verify as run_verify

    check_target("verify", environment)
    board = None
    if checking is None:  # in a notebook kernel: said in ONE output, updated in place
        board = _notebook_board()
        checking = board.checking if board is not None else None
    names = _many(framework)
    if checking is not None and not names:
        names = _installed(python)
    try:
        results = _with_checking(
            checking, names, run_verify, python, frameworks=names, timeout=timeout
        )
    finally:
        if board is not None:
            board.close()
    ok = passed(results)
    return VerifyResult(results=results, passed=ok, exit_code=0 if ok else 1)


class _Board:
    """A notebook board (fixer.render.progress.NotebookBoard) and its `checking` callback."""

    def __init__(self) -> None:
        # start-up: fixer.render.progress 0.2% alone, all small ones +4% (doctor --json)
        from fixer.render.progress import NotebookBoard, checking_display

        self.board = NotebookBoard()
        self.checking = checking_display(self.board)

    def close(self) -> None:
        self.board.close()


def _notebook_board() -> Optional[_Board]:
    """In a notebook kernel, a board for verify's "checking ..." line; elsewhere None."""
    # start-up: fixer.applier.kernel +43% on doctor --json (python -X importtime)
    from fixer.applier.kernel import in_live_kernel

    return _Board() if in_live_kernel() else None


def _installed(python: Optional[str]) -> Tuple[str, ...]:
    """The frameworks verify would check in `python` (checks.installed_frameworks); () for a
    path that is no executable file (verify itself then says what is wrong with it)."""
    # start-up: fixer.verifier.checks +12% on doctor --json (python -X importtime)
    from fixer.verifier.checks import installed_frameworks

    target = python or sys.executable
    if not (os.path.isfile(target) and os.access(target, os.X_OK)):
        return ()
    return installed_frameworks(target)


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
    # start-up: fixer.explainer +12% on doctor --json (python -X importtime)
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
        env = machine(python, environment)[0]
    elif detect:
        env = run_detect(python)
    if env is not None:
        rec = load(extra)
    result = analyze(text, env, rec, extra_dirs=extra)
    notes.extend(n for n in result.notes if n not in notes)
    the_plan = None
    if env is not None and rec is not None and any(f.id != "log-noise" for f in result.findings):
        # start-up: fixer.planner.steps +4% on doctor --json (python -X importtime)
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
    intent: Optional[Intent] = None,
    options: Optional[PlanOptions] = None,
    *,
    output: str = DEFAULT_LOCK_FILE,
    python: Optional[str] = None,
    environment: Optional[str] = None,
    recipes: Many = None,
    environ: Optional[Mapping[str, str]] = None,
    **keywords: Any,
) -> LockResult:
    """Write the stack that fits the machine, with exact versions and hashes (`colab-cudnn-fix
    lock`). `intent` / `options` or their keywords, as for plan(); the options' index settings
    (find_links, no_index, index_mirror) say where the hashes are read."""
    # start-up: fixer.lockfile +58% on doctor --json (python -X importtime)
    from fixer.lockfile import make_lock, write_lock

    # start-up: fixer.lockfile.format +56% on doctor --json (python -X importtime)
    from fixer.lockfile.format import check_output

    check_output(output)  # before the machine is read or an index is asked
    intent, options = typed_values(intent, options, keywords)
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
    # start-up: fixer.applier +30% on doctor --json (python -X importtime)
    from fixer.applier import rollback as run_rollback

    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    result = run_rollback(
        root=os.path.abspath(root) if root else None, python=python, reporter=reporter, force=force
    )
    return RollbackResult(
        result=result, exit_code=1 if result.status == "rollback-incomplete" else 0
    )


# ---------------------------------------------------------------------------------------
# report, debug, recipes, fleet
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(repr=False)
class ReportResult(CommandResult):
    """What `fixer.report()` returns: the report (redacted unless redact=False); `.markdown()` and
    `.html()` are the texts `report` and `report --html` print."""

    report: Dict[str, Any]
    exit_code: int = 0
    command: str = "report"

    def _payload(self) -> Dict[str, Any]:
        return self.report

    def markdown(self) -> str:
        # start-up: fixer.render.report 0.4% alone, all small ones +4% (doctor --json)
        from fixer.render.report import markdown

        return markdown(self.report)

    def html(self) -> str:
        # start-up: fixer.render.report 0.4% alone, all small ones +4% (doctor --json)
        from fixer.render.report import html

        return html(self.report)

    def show(self) -> None:
        # start-up: fixer.render.report 0.4% alone, all small ones +4% (doctor --json)
        from fixer.render.report import print_report

        print_report(self.report, "markdown")

    def _repr_html_(self) -> str:
        return self.html()


@dataclasses.dataclass(repr=False)
class DebugResult(CommandResult):
    """What `fixer.debug()` returns: everything the tool read, raw (redacted unless redact=False)."""

    bundle: Dict[str, Any]
    exit_code: int = 0
    command: str = "debug"

    def _payload(self) -> Dict[str, Any]:
        return self.bundle

    def show(self) -> None:
        write_json(self.to_dict())


@dataclasses.dataclass(repr=False)
class RecipesResult(CommandResult):
    """What `fixer.recipes()` returns: the recipes listed, the records shown, or what validating
    them found (`command`: "recipes list", "recipes show" or "recipes validate")."""

    payload: Dict[str, Any]
    command: str = "recipes list"
    exit_code: int = 0
    _show: Optional[Callable[[], None]] = None

    def _payload(self) -> Dict[str, Any]:
        return self.payload

    def show(self) -> None:
        assert self._show is not None
        self._show()


@dataclasses.dataclass(repr=False)
class FleetResult(CommandResult):
    """What `fixer.fleet()` returns: every node's answer grouped by finding and by stack
    (`command`: "fleet doctor" or "fleet lock-check"); `.markdown()` is `--markdown`'s text."""

    summary: Dict[str, Any]
    command: str = "fleet doctor"
    exit_code: int = 0

    def _payload(self) -> Dict[str, Any]:
        return self.summary

    def markdown(self) -> str:
        # start-up: fixer.render.fleet 0.0% alone, all small ones +4% (doctor --json)
        from fixer.render.fleet import markdown

        return markdown(self.summary)

    def show(self) -> None:
        # start-up: fixer.render.fleet 0.0% alone, all small ones +4% (doctor --json)
        from fixer.render.fleet import render

        render(self.summary, "table")


def report(
    *,
    python: Optional[str] = None,
    environment: Optional[str] = None,
    lock: Optional[str] = None,
    recipes: Many = None,
    redact: bool = True,
    environ: Optional[Mapping[str, str]] = None,
) -> ReportResult:
    """A summary for bug reports (`colab-cudnn-fix report`): GPU, driver, each framework's build
    and GPU targets, the cuDNN that loads and why, and the findings; home and user paths
    redacted unless `redact=False`. Exit code 0: the verdict is inside."""
    # start-up: fixer.reporting.report +2% on doctor --json (python -X importtime)
    from fixer.reporting.report import Redaction, build_report

    r = examine(python, lock=lock, recipes=_many(recipes), environment=environment, environ=environ)
    value = build_report(
        r.env,
        r.findings,
        healthy=r.healthy,
        exit_code=r.exit_code,
        redaction=Redaction.for_machine(os.environ if environ is None else environ)
        if redact
        else None,
    )
    return ReportResult(report=value)


def debug(*, python: Optional[str] = None, redact: bool = True) -> DebugResult:
    """Everything the tool reads, raw (`colab-cudnn-fix debug --json`): the files detection
    parses, the environment variables it considers, command and probe outputs, the build
    targets, the plugins; home and user paths redacted unless `redact=False`."""
    # start-up: fixer.reporting.debug +4% on doctor --json (python -X importtime)
    from fixer.reporting.debug import bundle

    # start-up: fixer.reporting.report +2% on doctor --json (python -X importtime)
    from fixer.reporting.report import Redaction, redact as redacted

    value = bundle(python)
    if redact:
        value = redacted(value, Redaction.for_machine(os.environ))
    value["redacted"] = redact
    return DebugResult(bundle=value)


def recipes(
    action: str = "list", what: Optional[str] = None, *, recipes: Many = None
) -> RecipesResult:
    """The recipe data (`colab-cudnn-fix recipes ACTION [WHAT]`): action "list" (one line per
    framework, then the other tables), "show" (`what`: FRAMEWORK, FRAMEWORK==VERSION, or one
    of cudnn, drivers, gpus, colab) or "validate" (every recipe file checked; exit code 2 when
    a problem is found). `recipes`: extra recipe directories, as everywhere."""
    # start-up: fixer.render.recipes 0.1% alone, all small ones +4% (doctor --json)
    from fixer.render import recipes as render

    extra = _many(recipes)
    if action == "validate":
        errors = rec.validate(extra)
        try:
            files = [str(f) for f in rec.recipe_files(extra)]
        except Exception:  # a missing --recipes directory is already among the errors
            files = []
        return RecipesResult(
            command="recipes validate",
            payload=render.validation_json(errors, files),
            exit_code=2 if errors else 0,
            _show=lambda: render.validation(errors, files),
        )
    if action not in ("list", "show"):
        raise UsageError(f"recipes {action!r}: choose list, show or validate")
    loaded = rec.load(extra)
    if action == "list":
        return RecipesResult(
            command="recipes list",
            payload=render.summary_json(loaded),
            _show=lambda: render.summary(loaded),
        )
    if not what:
        raise UsageError(
            "recipes show needs WHAT: FRAMEWORK[==VERSION], cudnn, drivers, gpus or colab"
        )
    selection = rec.select(loaded, what)
    return RecipesResult(
        command="recipes show",
        payload=render.show_json(selection),
        _show=lambda: render.show(loaded, selection),
    )


def fleet(
    action: str = "doctor",
    *,
    ray: Optional[str] = None,
    slurm: Optional[str] = None,
    lock: Optional[str] = None,
    python: Optional[str] = None,
    timeout: float = 300.0,
) -> FleetResult:
    """doctor on every GPU node of a cluster, one report (`colab-cudnn-fix fleet ACTION`):
    action "doctor" groups the nodes by finding and by stack, "lock-check" (needs `lock`) by
    drift from the lock. One of `ray` (a Ray address: one task pinned to each GPU node; needs
    the [fleet] extra) or `slurm` (the directory a job array's per-node `doctor --json` files
    were written to; fixer.cluster.slurm.job_array_command writes that job array)."""
    # start-up: fixer.cluster 0.3% alone, all small ones +4% (doctor --json)
    from fixer.cluster import summarize

    if action not in ("doctor", "lock-check"):
        raise UsageError(f"fleet {action!r}: choose doctor or lock-check")
    if action == "lock-check" and not lock:
        raise UsageError("fleet lock-check needs --lock FILE (a lock file written by `lock`)")
    if action == "doctor" and lock:
        raise UsageError(
            "fleet doctor takes no lock file: the drift from one is fleet lock-check's"
        )
    if (ray is None) == (slurm is None):
        raise UsageError("give one of --ray ADDRESS or --slurm DIR")
    if slurm is not None:
        # start-up: fixer.cluster.slurm +1% on doctor --json (python -X importtime)
        from fixer.cluster import slurm as _slurm

        results = _slurm.read_results(slurm)
    else:
        # start-up: fixer.cluster.ray_runner +2% on doctor --json (python -X importtime)
        from fixer.cluster import ray_runner

        results, _alive = ray_runner.run(ray, python=python, lock=lock, timeout=timeout)  # type: ignore[arg-type]
        if not results:
            raise UsageError(f"--ray {ray}: the cluster has no alive node with a GPU resource")
    value = summarize(results, lock=lock)
    return FleetResult(command=f"fleet {action}", summary=value, exit_code=int(value["exit_code"]))


__all__ = [
    "ApplyResult",
    "CommandResult",
    "DebugResult",
    "DoctorResult",
    "ExplainResult",
    "FleetResult",
    "LockResult",
    "PlanResult",
    "RecipesResult",
    "ReportResult",
    "RollbackResult",
    "VerifyResult",
    "DEFAULT_LOCK_FILE",
    "INTENT_KEYWORDS",
    "OPTION_KEYWORDS",
    "apply",
    "debug",
    "doctor",
    "explain",
    "fleet",
    "lock",
    "make_intent",
    "make_options",
    "plan",
    "recipes",
    "report",
    "rollback",
    "typed_values",
    "verify",
]
