"""colab-cudnn-fix: make the NVIDIA driver, CUDA runtime, cuDNN and PyTorch/TensorFlow/JAX agree.

The public API is one function per command, each returning a result with `.to_dict()` (the
command's --json payload), `.exit_code` and a rich rendering in notebooks:

    fixer.doctor()  fixer.plan()  fixer.apply()  fixer.verify()  fixer.explain(text)
    fixer.lock()    fixer.rollback()

The stages underneath (fixer.detect.detect, fixer.diagnose.diagnose, fixer.resolve.resolve,
fixer.plan.make_plan, ...) are importable from their modules. `import fixer` stays cheap: the
functions import their stages when called.
"""
from __future__ import annotations

import sys
import types
from typing import Any, List

from .api import (
    ApplyResult,
    CommandResult,
    DoctorResult,
    ExplainResult,
    LockResult,
    PlanResult,
    RollbackResult,
    VerifyResult,
    apply,
    doctor,
    explain,
    lock,
    plan,
    rollback,
    verify,
)
from .errors import (
    FixerError,
    LockHeld,
    NothingDetected,
    RecipeError,
    StepFailed,
    Unsatisfiable,
    UsageError,
)
from .model import (
    Build,
    CheckResult,
    Environment,
    Finding,
    Intent,
    Plan,
    Recipes,
    Stack,
    Step,
)

__version__ = "0.1.0"

_API = ("doctor", "plan", "apply", "verify", "explain", "lock", "rollback")

__all__ = [
    "__version__", *_API,
    "ApplyResult", "CommandResult", "DoctorResult", "ExplainResult", "LockResult", "PlanResult", "RollbackResult",
    "VerifyResult",
    "Build", "CheckResult", "Environment", "Finding", "Intent", "Plan", "Recipes", "Stack", "Step",
    "FixerError", "LockHeld", "NothingDetected", "RecipeError", "StepFailed", "Unsatisfiable", "UsageError",
]


class _Package(types.ModuleType):
    """The package keeps its public functions: importing the submodule of the same name
    (fixer.plan, fixer.apply, fixer.verify, fixer.explain, fixer.lock) would otherwise replace
    `fixer.plan` the function with the module, and a second call `fixer.plan()` would fail
    (a re-run notebook cell). The submodules stay importable by their dotted names."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _API and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def __dir__() -> List[str]:
    return list(__all__)
