"""colab-cudnn-fix: make the NVIDIA driver, CUDA runtime, cuDNN and PyTorch/TensorFlow/JAX agree.

The pipeline, each stage a function of the previous stage's value:

    detect() -> Environment -> diagnose() -> [Finding]
    resolve(Environment, Intent, Recipes) -> Stack      (raises Unsatisfiable)
    plan(Environment, Stack) -> Plan                    (dry run stops here)
    apply(Plan) -> result, journaled and rolled back on failure
    verify(...) -> [CheckResult]
    lock(...)

Stage functions are imported lazily so that `import fixer` stays cheap.
"""
from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: `import typing` alone takes ~20 ms at start-up

if TYPE_CHECKING:  # imported on first use: fixer.model takes ~150 ms, and the CLI starts here
    from typing import Any, List

    from .errors import FixerError, LockHeld, NothingDetected, RecipeError, StepFailed, Unsatisfiable, UsageError
    from .model import Build, CheckResult, Environment, Finding, Intent, Plan, Recipes, Stack, Step

_ERRORS = ("FixerError", "LockHeld", "NothingDetected", "RecipeError", "StepFailed", "Unsatisfiable", "UsageError")
_MODEL = ("Build", "CheckResult", "Environment", "Finding", "Intent", "Plan", "Recipes", "Stack", "Step")

__version__ = "0.1.0"

_LAZY = {
    "detect": ("fixer.detect", "detect"),
    "diagnose": ("fixer.diagnose", "diagnose"),
    "load_recipes": ("fixer.recipes", "load"),
    "resolve": ("fixer.resolve", "resolve"),
    "plan": ("fixer.plan", "make_plan"),
    "apply": ("fixer.apply", "apply_plan"),
    "rollback": ("fixer.apply", "rollback"),
    "verify": ("fixer.verify", "verify"),
    "explain": ("fixer.explain", "explain"),
    "lock": ("fixer.lock", "make_lock"),
}

__all__ = [
    "__version__",
    "Build", "CheckResult", "Environment", "Finding", "Intent", "Plan", "Recipes", "Stack", "Step",
    "FixerError", "LockHeld", "NothingDetected", "RecipeError", "StepFailed", "Unsatisfiable", "UsageError",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name in _ERRORS:
        return getattr(importlib.import_module("fixer.errors"), name)
    if name in _MODEL:
        return getattr(importlib.import_module("fixer.model"), name)
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'fixer' has no attribute {name!r}")


def __dir__() -> List[str]:
    return list(__all__)
