"""The stages chained: a machine (detected, or described by a `doctor --json` file) to its plan.

The one place that does detect -> diagnose -> resolve -> plan, shared by `plan`,
`apply --dry-run`, `apply` and `lock`. Returns values; never prints.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Tuple

from fixer import recipebook as rec
from fixer.detection import detect, overrides_from_env
from fixer.detection.colab_image import annotate
from fixer.diagnosis.checkplugins import run_checks
from fixer.diagnosis.findings import SEVERITY_ORDER, diagnose, is_healthy
from fixer.errors import FixerError, NotAFix, UsageError
from fixer.model import Environment, Finding, Intent, Plan, PlanOptions, PlannedMachine, Recipes

if TYPE_CHECKING:
    from fixer.model import PythonEnv, Stack


def diagnosed(env: Environment, recipes: Recipes) -> Tuple[Finding, ...]:
    """diagnose(); when doctor --deep saw a framework fail to import, fixer.explainer.diagnose_all
    (the explainer reads each import error). The same findings either way: without a failed
    import, view_findings adds none."""
    if not any(v.error for v in env.runtime_views):
        return diagnose(env, recipes)
    # start-up: fixer.explainer +12% on doctor --json (python -X importtime); only a failed
    # --deep import needs it
    from fixer.explainer import diagnose_all

    return diagnose_all(env, recipes)


def machine(
    python: Optional[str] = None,
    environment: Optional[str] = None,
    environ: Optional[Mapping[str, str]] = None,
    *,
    hash_records: bool = False,
) -> Tuple[Environment, Tuple[Finding, ...], str]:
    """(Environment, findings recorded with it, where it came from). `environment` is a
    `doctor --json` file or a bundled name; otherwise this machine is detected, honouring the
    COLAB_CUDNN_FIX_* overrides in `environ` (default: os.environ), as doctor does; with
    `hash_records` (apply) each wheel's library files are hashed against its RECORD."""
    if environment:
        if python:
            raise UsageError(
                "--python and --environment exclude each other: the file already names its interpreter"
            )
        # start-up: fixer.planner.steps +4% on doctor --json (python -X importtime)
        from fixer.planner.steps import load_environment

        return load_environment(environment)

    env = detect(
        python,
        overrides=overrides_from_env(os.environ if environ is None else environ),
        hash_records=hash_records,
    )
    return env, (), "this machine" + (f" ({python})" if python else "")


def plan_for(
    *,
    python: Optional[str] = None,
    environment: Optional[str] = None,
    recipes: Tuple[str, ...] = (),
    intent: Optional[Intent] = None,
    options: Optional[PlanOptions] = None,
    environ: Optional[Mapping[str, str]] = None,
    prepare_for_gpu: bool = False,
    hash_records: bool = False,
) -> PlannedMachine:
    """Machine -> findings -> stack -> plan, simulated and diagnosed again (fixer.planner.simulate):
    what the result would still show is on the plan (`after`, `manual`, `drift`). A machine
    with no visible GPU gets an empty plan carrying the gpu-missing finding (nothing can be
    repaired there), unless `prepare_for_gpu` says the machine is being set up for a GPU later.
    `intent` and `options` default to Intent() and PlanOptions()."""
    intent = Intent() if intent is None else intent
    options = PlanOptions() if options is None else options
    if options.installer == "conda" and intent.cudnn_from is None:
        intent = dataclasses.replace(
            intent, cudnn_from="conda"
        )  # conda installs what it can: cuDNN
    env, where, loaded = _machine_and_recipes(python, environment, environ, hash_records, recipes)
    findings = diagnosed(env, loaded)
    plan = plan_machine(
        env,
        findings,
        intent,
        loaded,
        options,
        prepare_for_gpu=prepare_for_gpu,
        live=not environment,
    )
    return PlannedMachine(
        plan=plan,
        env=env,
        intent=intent,
        options=options,
        where=where,
        recipe_dirs=recipes,
        recipe_files=len(loaded.files),
    )


def _machine_and_recipes(
    python: Optional[str],
    environment: Optional[str],
    environ: Optional[Mapping[str, str]],
    hash_records: bool,
    recipe_dirs: Tuple[str, ...],
) -> Tuple[Environment, str, Recipes]:
    """machine() and the recipes, parsed on a thread beside it: detection spends much of its
    time waiting on its GPU probe child, and parsing the recipes is pure Python (on the GPU
    machine, 30 ms of `plan --json` each: scripts/device/doctor_timeline.py --plan). A recipe
    error is reported before a machine error, as when the two ran one after the other."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="fixer-recipes") as pool:
        loading = pool.submit(rec.load, recipe_dirs)
        try:
            env, _recorded, where = machine(python, environment, environ, hash_records=hash_records)
        finally:
            loaded = loading.result()
    return env, where, loaded


def resolve(
    env: Environment, intent: Intent, recipes: Recipes, *, reporter: Optional[Any] = None
) -> Stack:
    """The stack this machine should run (fixer.resolver.resolve), with its failures as the
    library's errors: Unsatisfiable (exit 1) carrying the clashes and the ways out as data,
    UsageError (exit 2) for an intent the recipes cannot mean."""
    # start-up: fixer.resolver +5% on doctor --json (python -X importtime)
    from fixer.resolver import BadIntent, NoStack, resolve as solve

    try:
        return solve(env, intent, recipes, reporter=reporter)
    except NoStack as exc:
        # start-up: fixer.render.conflicts 0.1% alone, all small ones +4% (doctor --json)
        from fixer.render.conflicts import unsatisfiable

        raise unsatisfiable(exc.frameworks, exc.clashes, exc.ways_out) from None
    except BadIntent as exc:
        raise UsageError(str(exc)) from None


def plan_machine(
    env: Environment,
    findings: Tuple[Finding, ...],
    intent: Intent,
    recipes: Recipes,
    options: Optional[PlanOptions] = None,
    *,
    prepare_for_gpu: bool = False,
    live: bool = False,
) -> Plan:
    """resolve + make_plan + the simulation check, for a machine already diagnosed (`options`:
    PlanOptions() by default). `live`: `env` is this machine (under options.root), so the
    files that set a loader variable a fix drops are read and fixed there too
    (fixer.planner.envsource); never for a described machine."""
    # start-up: fixer.planner.steps +4% on doctor --json (python -X importtime)
    from fixer.planner.steps import make_plan

    options = PlanOptions() if options is None else options
    if no_gpu(env, findings) and not prepare_for_gpu:
        plan = Plan(findings=findings)
    else:
        # start-up: fixer.planner.envsource 0.3% alone, all small ones +4% (doctor --json)
        from fixer.planner.envsource import sources_for

        stack = resolve(env, intent, recipes)
        sources = sources_for(env, stack.env_fixes, options.root) if live else []
        plan = make_plan(env, stack, options, findings=findings, sources=sources)
    return simulated(env, plan, recipes)


def simulated(env: Environment, plan: Plan, recipes: Recipes) -> Plan:
    """The plan with what its simulation shows (fixer.planner.simulate): what the result would still
    show (`after`, `manual`, `drift`) and each step's download, dependencies included."""
    # start-up: fixer.planner.simulate +2% on doctor --json (python -X importtime)
    from fixer.planner.simulate import check_plan, priced

    check = check_plan(env, plan, recipes)
    return dataclasses.replace(
        priced(plan, check.downloads), after=check.after, manual=check.unfixed, drift=check.drift
    )


def no_gpu(env: Environment, findings: Tuple[Finding, ...] = ()) -> bool:
    """No NVIDIA GPU is visible here: nothing can be repaired (fixer.diagnosis.nogpu says what to tell)."""
    return not env.gpus or any(f.id == "gpu-missing" and f.severity == "error" for f in findings)


def gpu_wanted(env: Environment, intent: Intent) -> bool:
    """Something installed is a CUDA build, or the intent asks for a framework."""
    return any(
        f.is_cuda_build or (f.is_cuda_build is None and f.cuda) for f in env.frameworks
    ) or bool(intent.frameworks or intent.versions or intent.cuda or intent.cudnn_from)


def blockers(plan: Plan, prepare_for_gpu: bool = False) -> Tuple[Finding, ...]:
    """The findings that keep apply from running `plan`: what its simulated result still shows
    as an error or warning (the plan lists them under "cannot fix automatically"). With
    `prepare_for_gpu` the missing GPU itself is expected, not a blocker."""
    return tuple(f for f in plan.manual if not (prepare_for_gpu and f.id == "gpu-missing"))


@dataclasses.dataclass(frozen=True)
class Examined:
    """What `doctor` found: the machine, its findings and the verdict (one place decides it)."""

    env: Environment
    findings: Tuple[Finding, ...]
    exit_code: int
    healthy: bool
    nothing_to_fix: bool


def exit_code_for(env: Environment, findings: Sequence[Finding]) -> Tuple[int, bool, bool]:
    """(exit code, healthy, nothing_to_fix)."""
    if any(f.id == "gpu-missing" and f.severity == "error" for f in findings):
        return 3, False, False
    healthy = is_healthy(findings)
    return (0 if healthy else 1), healthy, healthy and not env.gpus


def doctor_findings(
    env: Environment, recipes: Recipes, lock: Optional[str] = None
) -> Tuple[Finding, ...]:
    """Diagnosis, the check plugins' findings (fixer.system.plugins) and, with a lock file, its drift
    check (fixer.lockfile.check_drift)."""
    findings = list(diagnosed(env, recipes)) + list(run_checks(env, recipes))
    findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])
    if lock:
        # start-up: fixer.lockfile +58% on doctor --json (python -X importtime)
        from fixer.lockfile import check_drift

        findings += list(check_drift(lock, env))
        findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])
    return tuple(findings)


class _RecipesLoader(threading.Thread):
    """Loads the recipes while detection waits on its child processes."""

    def __init__(self, extra: Sequence[str]) -> None:
        super().__init__(daemon=True)
        self.extra = tuple(extra)
        self.value: Optional[Recipes] = None
        self.exc: Optional[BaseException] = None

    def run(self) -> None:
        try:
            self.value = rec.load(extra_dirs=self.extra)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            self.exc = exc

    def get(self) -> Recipes:
        self.join()
        if self.exc is not None:
            raise self.exc
        assert self.value is not None
        return self.value


def examine(
    python: Optional[str] = None,
    *,
    deep: bool = False,
    lock: Optional[str] = None,
    recipes: Sequence[str] = (),
    environ: Optional[Mapping[str, str]] = None,
    environment: Optional[str] = None,
) -> Examined:
    """detect -> diagnose (+ lock drift) -> verdict: `doctor`, `report` and `fleet` share it.
    Honours the COLAB_CUDNN_FIX_* overrides in `environ` (default: os.environ). `environment`
    (a `doctor --json` file or a bundled name) replaces detection and is diagnosed afresh."""

    for d in recipes:
        if not os.path.isdir(d):
            raise UsageError(f"--recipes {d}: not a directory")
    check_target("doctor", environment, deep)
    if environment and python:
        raise UsageError(
            "--environment excludes --python: the file describes a machine that is not probed"
        )
    environ = os.environ if environ is None else environ
    loader = _RecipesLoader(recipes)
    loader.start()
    if environment:
        env = machine(environment=environment, environ=environ)[0]
    else:
        env = detect(python, deep=deep, overrides=overrides_from_env(environ), environ=environ)
    recipe_set = loader.get()
    env = annotate(env, recipe_set.colab_images)
    findings = doctor_findings(env, recipe_set, lock)
    code, healthy, nothing = exit_code_for(env, findings)
    return Examined(
        env=env, findings=findings, exit_code=code, healthy=healthy, nothing_to_fix=nothing
    )


# ---------------------------------------------------------------------------------------
# what apply may do: --environment never changes a machine, --root is a sandbox
# ---------------------------------------------------------------------------------------


def check_request(*, environment: Optional[str], dry_run: bool, lock: Optional[str]) -> None:
    """The option contract apply checks before anything is read: a plan for the machine a
    `doctor --json` file describes is never run here, whatever --root says (UsageError, exit 2)."""
    if environment and not dry_run:
        raise UsageError(
            f"--environment {environment}: that plan is for the machine the file describes, "
            "not this one; add --dry-run to see it (apply changes only the machine it runs on)"
        )


def check_target(command: str, environment: Optional[str], deep: bool = False) -> None:
    """verify and `doctor --deep` run the frameworks of this machine: a machine a file describes
    cannot be checked so (UsageError, exit 2)."""
    if environment and (command == "verify" or deep):
        what = "verify" if command == "verify" else "doctor --deep"
        raise UsageError(
            f"--environment {environment}: {what} runs the frameworks of the machine it runs on, "
            "and the file describes another one; run it there"
        )


def apply_refusal(
    plan: Plan,
    *,
    root: Optional[str],
    prepare_for_gpu: bool = False,
    python: Optional["PythonEnv"] = None,
    executable: str = "",
) -> Optional[FixerError]:
    """The one decision whether apply runs `plan`, as the error apply raises (None: it runs).
    The dry run reports it, apply raises it before any step; nothing else decides it.

    - With `root` (a sandbox for the tool's own files) apt and conda steps are refused: they
      change the package manager's database and prefix, which --root cannot confine
      (UsageError, exit 2); so is an interpreter outside the sandbox (`python` as detection
      saw it, `executable` the one apply runs): its folder, its prefix and the site directories
      of what the plan changes must lie inside (fixer.applier.prepare.sandbox_refusal, which
      apply asks again on the interpreter's own answer before anything changes).
    - A plan whose simulated result still shows an error or warning (`blockers`) or is not the
      stack it chose (`drift`) is refused (NotAFix, exit 1)."""
    if root is not None:
        # start-up: fixer.applier +30% on doctor --json (python -X importtime)
        from fixer.applier.prepare import sandbox_refusal
        from fixer.applier.snapshot import snapshot_of_env
        from fixer.applier.stepcheck import root_refusal

        system = root_refusal(root, plan.steps)  # the one --root rule; resume asks it too
        if system is not None:
            return system

        outside = sandbox_refusal(plan.steps, snapshot_of_env(python, executable), root)
        if outside is not None:
            return outside
    blocking = blockers(plan, prepare_for_gpu)
    if blocking or plan.drift:
        return NotAFix(blocking, plan.drift)
    return None
