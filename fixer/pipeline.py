"""The stages chained: a machine (detected, or described by a `doctor --json` file) to its plan.

The one place that does detect -> diagnose -> resolve -> plan, shared by `plan`,
`apply --dry-run`, `apply` and `lock`. Returns values; never prints.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Mapping, Optional, Tuple

from .errors import UsageError
from .model import Environment, Finding, Intent, Plan, PlanOptions, Recipes


@dataclasses.dataclass(frozen=True)
class PlannedMachine:
    """A plan together with the machine and the settings it was made for."""

    plan: Plan
    env: Environment
    intent: Intent
    options: PlanOptions
    where: str                              # "this machine", "bundled environment 'x'", a file
    recipe_dirs: Tuple[str, ...] = ()
    recipe_files: int = 0


def machine(python: Optional[str] = None, environment: Optional[str] = None,
            environ: Optional[Mapping[str, str]] = None) -> Tuple[Environment, Tuple[Finding, ...], str]:
    """(Environment, findings recorded with it, where it came from). `environment` is a
    `doctor --json` file or a bundled name; otherwise this machine is detected, honouring the
    COLAB_CUDNN_FIX_* overrides in `environ` (default: os.environ), as doctor does."""
    if environment:
        if python:
            raise UsageError("--python and --environment exclude each other: the file already names its interpreter")
        from .plan import load_environment

        return load_environment(environment)
    from .detect import detect, overrides_from_env

    env = detect(python, overrides=overrides_from_env(os.environ if environ is None else environ))
    return env, (), "this machine" + (f" ({python})" if python else "")


def plan_for(*, python: Optional[str] = None, environment: Optional[str] = None,
             recipes: Tuple[str, ...] = (), intent: Intent = Intent(),
             options: PlanOptions = PlanOptions(),
             environ: Optional[Mapping[str, str]] = None,
             prepare_for_gpu: bool = False) -> PlannedMachine:
    """Machine -> findings -> stack -> plan, simulated and diagnosed again (fixer.simulate):
    what the result would still show is on the plan (`after`, `manual`, `drift`). A machine
    with no visible GPU gets an empty plan carrying the gpu-missing finding (nothing can be
    repaired there), unless `prepare_for_gpu` says the machine is being set up for a GPU later."""
    from . import recipes as rec
    from .diagnose import diagnose

    if options.installer == "conda" and intent.cudnn_from is None:
        intent = dataclasses.replace(intent, cudnn_from="conda")   # conda installs what it can: cuDNN
    loaded = rec.load(recipes)
    env, _recorded, where = machine(python, environment, environ)
    findings = tuple(diagnose(env, loaded))
    plan = plan_machine(env, findings, intent, loaded, options, prepare_for_gpu=prepare_for_gpu)
    return PlannedMachine(plan=plan, env=env, intent=intent, options=options, where=where,
                          recipe_dirs=recipes, recipe_files=len(loaded.files))


def plan_machine(env: Environment, findings: Tuple[Finding, ...], intent: Intent, recipes: Recipes,
                 options: PlanOptions = PlanOptions(), *, prepare_for_gpu: bool = False) -> Plan:
    """resolve + make_plan + the simulation check, for a machine already diagnosed."""
    from .plan import make_plan
    from .resolve import resolve
    from .simulate import check_plan

    if no_gpu(env, findings) and not prepare_for_gpu:
        plan = Plan(findings=findings)
    else:
        plan = make_plan(env, resolve(env, intent, recipes), options, findings=findings)
    check = check_plan(env, plan, recipes)
    return dataclasses.replace(plan, after=check.after, manual=check.unfixed, drift=check.drift)


def no_gpu(env: Environment, findings: Tuple[Finding, ...] = ()) -> bool:
    """No NVIDIA GPU is visible here: nothing can be repaired (fixer.nogpu says what to tell)."""
    return not env.gpus or any(f.id == "gpu-missing" and f.severity == "error" for f in findings)


def gpu_wanted(env: Environment, intent: Intent) -> bool:
    """Something installed is a CUDA build, or the intent asks for a framework."""
    return any(f.is_cuda_build or (f.is_cuda_build is None and f.cuda) for f in env.frameworks) or \
        bool(intent.frameworks or intent.versions or intent.cuda or intent.cudnn_from)


def blockers(plan: Plan, prepare_for_gpu: bool = False) -> Tuple[Finding, ...]:
    """The findings that keep apply from running `plan`: what its simulated result still shows
    as an error or warning (the plan lists them under "cannot fix automatically"). With
    `prepare_for_gpu` the missing GPU itself is expected, not a blocker."""
    return tuple(f for f in plan.manual if not (prepare_for_gpu and f.id == "gpu-missing"))
