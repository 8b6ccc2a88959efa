"""colab-cudnn-fix: make the NVIDIA driver, CUDA runtime, cuDNN and PyTorch/TensorFlow/JAX agree.

The public API is one function per command, each returning a result with `.to_dict()` (the
command's --json payload), `.exit_code` and a rendering in notebooks (`_repr_html_`):

    fixer.doctor()            the machine's GPU stack and what is wrong with it
    fixer.plan()              the steps that would fix it, as exact commands (changes nothing)
    fixer.apply()             run them, journaled; rolled back on any failure
    fixer.verify()            GPU convolutions per framework, checked against the CPU
    fixer.explain(text)       why an error text happened, and the fix
    fixer.lock()              the resolved stack with hashes, written to a file
    fixer.rollback()          undo the last apply
    fixer.report()            a summary to paste into a bug report (redacted)
    fixer.debug()             everything the tool read, raw (redacted)
    fixer.recipes(action)     the recipe data: "list", "show" WHAT, "validate"
    fixer.fleet(action)       doctor on every GPU node of a Ray or Slurm cluster

plan, apply and lock take what to make work as an `Intent` (or its keywords: framework=, torch=,
tensorflow=, jax=, cuda=, cudnn_from=, keep=) and how to run the steps as `PlanOptions` (or
installer=, find_links=, no_index=, index_mirror=, root=, restart=).

The stages underneath are there too (fixer.detect(), fixer.diagnose(env, recipes),
fixer.resolve(env, intent, recipes), fixer.load_recipes()). `import fixer` stays cheap: the
functions, the model and the errors are imported on first use. No submodule of fixer has the
name of a public function (importing it would replace the function).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: `import typing` alone takes ~20 ms at start-up

if TYPE_CHECKING:  # imported on first use: fixer.model takes ~150 ms, and the CLI starts here
    from typing import Any, Dict, List, Optional, Tuple

    from fixer.api import (
        ApplyResult,
        CommandResult,
        DebugResult,
        DoctorResult,
        ExplainResult,
        FleetResult,
        LockResult,
        PlanResult,
        RecipesResult,
        ReportResult,
        RollbackResult,
        VerifyResult,
        apply,
        debug,
        doctor,
        explain,
        fleet,
        lock,
        plan,
        recipes,
        report,
        rollback,
        verify,
    )
    from fixer.detection import detect
    from fixer.explainer import diagnose_all as diagnose
    from fixer.errors import (
        FixerError,
        LockHeld,
        RecipeError,
        StepFailed,
        Unsatisfiable,
        UsageError,
    )
    from fixer.model import (
        Build,
        CheckResult,
        Environment,
        Finding,
        Intent,
        Plan,
        PlanOptions,
        Recipes,
        Stack,
        Step,
    )
    from fixer.recipebook import load as load_recipes
    from fixer.pipeline import resolve

_ERRORS = (
    "FixerError",
    "LockHeld",
    "RecipeError",
    "StepFailed",
    "Unsatisfiable",
    "UsageError",
)
_MODEL = (
    "Build",
    "CheckResult",
    "Environment",
    "Finding",
    "Intent",
    "Plan",
    "PlanOptions",
    "Recipes",
    "Stack",
    "Step",
)
_RESULTS = (
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
)

__version__ = "0.1.0"

#: The commands, and the stages for those who chain them by hand: name -> (module, function).
_API = {
    "doctor": ("fixer.api", "doctor"),
    "plan": ("fixer.api", "plan"),
    "apply": ("fixer.api", "apply"),
    "verify": ("fixer.api", "verify"),
    "explain": ("fixer.api", "explain"),
    "lock": ("fixer.api", "lock"),
    "rollback": ("fixer.api", "rollback"),
    "report": ("fixer.api", "report"),
    "debug": ("fixer.api", "debug"),
    "recipes": ("fixer.api", "recipes"),
    "fleet": ("fixer.api", "fleet"),
    "detect": ("fixer.detection", "detect"),
    "diagnose": ("fixer.explainer", "diagnose_all"),  # with doctor --deep's views classified
    "resolve": ("fixer.pipeline", "resolve"),
    "load_recipes": ("fixer.recipebook", "load"),
}

__all__ = ["__version__", *_API, *_RESULTS, *_MODEL, *_ERRORS]


def __getattr__(name: str) -> "Any":
    """The public functions, the model, the errors and the results, each imported on first use
    (no public name is also a submodule: the stages live in fixer.detection, fixer.diagnosis,
    fixer.resolver, fixer.planner, fixer.applier, fixer.verifier, fixer.explainer, fixer.lockfile,
    fixer.reporting and fixer.cluster)."""
    if name in _API:
        module, attr = _API[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if name in _ERRORS:
        return getattr(importlib.import_module("fixer.errors"), name)
    if name in _MODEL:
        return getattr(importlib.import_module("fixer.model"), name)
    if name in _RESULTS:
        return getattr(importlib.import_module("fixer.api"), name)
    raise AttributeError(f"module 'fixer' has no attribute {name!r}")


def __dir__() -> "List[str]":
    return list(__all__)
