"""colab-cudnn-fix: make the NVIDIA driver, CUDA runtime, cuDNN and PyTorch/TensorFlow/JAX agree.

The public API is one function per command, each returning a result with `.to_dict()` (the
command's --json payload), `.exit_code` and a rich rendering in notebooks:

    fixer.doctor()  fixer.plan()  fixer.apply()  fixer.verify()  fixer.explain(text)
    fixer.lock()    fixer.rollback()

The stages underneath are there too (fixer.detect(), fixer.diagnose(env, recipes),
fixer.resolve(env, intent, recipes), fixer.load_recipes()). `import fixer` stays cheap: the
functions, the model and the errors are imported on first use.
"""
from __future__ import annotations

import importlib
import sys
import types

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: `import typing` alone takes ~20 ms at start-up

if TYPE_CHECKING:  # imported on first use: fixer.model takes ~150 ms, and the CLI starts here
    from typing import Any, Dict, List, Optional, Tuple

    from .api import (ApplyResult, CommandResult, DoctorResult, ExplainResult, LockResult, PlanResult,
                      RollbackResult, VerifyResult, apply, doctor, explain, lock, plan, rollback, verify)
    from .detect import detect
    from .diagnose import diagnose
    from .errors import FixerError, LockHeld, NothingDetected, RecipeError, StepFailed, Unsatisfiable, UsageError
    from .model import Build, CheckResult, Environment, Finding, Intent, Plan, Recipes, Stack, Step
    from .recipes import load as load_recipes
    from .pipeline import resolve

_ERRORS = ("FixerError", "LockHeld", "NothingDetected", "RecipeError", "StepFailed", "Unsatisfiable", "UsageError")
_MODEL = ("Build", "CheckResult", "Environment", "Finding", "Intent", "Plan", "Recipes", "Stack", "Step")
_RESULTS = ("ApplyResult", "CommandResult", "DoctorResult", "ExplainResult", "LockResult", "PlanResult",
            "RollbackResult", "VerifyResult")

__version__ = "0.1.0"

#: The commands, and the stages for those who chain them by hand: name -> (module, function).
_API = {
    "doctor": ("fixer.api", "doctor"), "plan": ("fixer.api", "plan"), "apply": ("fixer.api", "apply"),
    "verify": ("fixer.api", "verify"), "explain": ("fixer.api", "explain"), "lock": ("fixer.api", "lock"),
    "rollback": ("fixer.api", "rollback"),
    "detect": ("fixer.detect", "detect"), "diagnose": ("fixer.diagnose", "diagnose"),
    "resolve": ("fixer.pipeline", "resolve"), "load_recipes": ("fixer.recipes", "load"),
}

__all__ = ["__version__", *_API, *_RESULTS, *_MODEL, *_ERRORS]


class _Function:
    """`fixer.plan`, `fixer.apply`, ...: the public function, which also answers attribute access
    for the submodule of the same name (fixer/plan.py, fixer/apply/, ...), so that
    `import fixer.apply.kernel`, `from fixer import lock` and a re-run `fixer.plan()` all work
    whichever was imported first. The function is imported on first call (`import fixer` stays
    cheap); the submodule on first attribute access."""

    __slots__ = ("_name", "_where")   # no instance __dict__: attributes set on it go to the module

    def __init__(self, name: str, module: str, attr: str) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_where", (module, attr))

    @property
    def __name__(self) -> str:
        return str(object.__getattribute__(self, "_name"))

    @property
    def __wrapped__(self) -> "Any":        # inspect.signature and help() follow it
        module, attr = object.__getattribute__(self, "_where")
        return getattr(importlib.import_module(module), attr)

    @property
    def __doc__(self) -> "Optional[str]":  # type: ignore[override]
        return str(self.__wrapped__.__doc__ or "")

    def __call__(self, *args: "Any", **kwargs: "Any") -> "Any":
        return self.__wrapped__(*args, **kwargs)

    def _module(self) -> types.ModuleType:
        return importlib.import_module(f"fixer.{object.__getattribute__(self, '_name')}")

    def __getattr__(self, name: str) -> "Any":
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(self._module(), name)

    def __setattr__(self, name: str, value: "Any") -> None:
        setattr(self._module(), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._module(), name)

    def __repr__(self) -> str:
        return f"<function fixer.{object.__getattribute__(self, '_name')}>"


class _Package(types.ModuleType):
    """Keeps `fixer.NAME` the public function when the submodule fixer.NAME is imported (the
    import system would otherwise replace the attribute with the module)."""

    def __setattr__(self, name: str, value: "Any") -> None:
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


if not TYPE_CHECKING:
    for _name, (_module, _attr) in _API.items():
        globals()[_name] = _Function(_name, _module, _attr)
    del _name, _module, _attr

sys.modules[__name__].__class__ = _Package


def __getattr__(name: str) -> "Any":
    if name in _ERRORS:
        return getattr(importlib.import_module("fixer.errors"), name)
    if name in _MODEL:
        return getattr(importlib.import_module("fixer.model"), name)
    if name in _RESULTS:
        return getattr(importlib.import_module("fixer.api"), name)
    raise AttributeError(f"module 'fixer' has no attribute {name!r}")


def __dir__() -> "List[str]":
    return list(__all__)
