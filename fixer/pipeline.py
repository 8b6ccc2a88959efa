"""The stages chained: a machine (detected, or described by a `doctor --json` file) to its plan.

The one place that does detect -> diagnose -> resolve -> plan, shared by `plan`,
`apply --dry-run`, `apply` and `lock`. Returns values; never prints.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Mapping, Optional, Tuple

from .errors import UsageError
from .model import Environment, Finding, Intent, Plan, PlanOptions


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
             environ: Optional[Mapping[str, str]] = None) -> PlannedMachine:
    """Machine -> findings -> stack -> plan. A machine with no visible GPU gets an empty plan
    carrying the gpu-missing finding (nothing can be repaired there)."""
    from . import recipes as rec
    from .diagnose import diagnose
    from .plan import make_plan
    from .resolve import resolve

    if options.installer == "conda" and intent.cudnn_from is None:
        intent = dataclasses.replace(intent, cudnn_from="conda")   # conda installs what it can: cuDNN
    loaded = rec.load(recipes)
    env, _recorded, where = machine(python, environment, environ)
    findings = tuple(diagnose(env, loaded))
    if not env.gpus and any(f.id == "gpu-missing" and f.severity == "error" for f in findings):
        plan = Plan(findings=findings)
    else:
        plan = make_plan(env, resolve(env, intent, loaded), options, findings=findings)
    return PlannedMachine(plan=plan, env=env, intent=intent, options=options, where=where,
                          recipe_dirs=recipes, recipe_files=len(loaded.files))
