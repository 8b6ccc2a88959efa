"""Apply a plan as a transaction (journal, rollback, lock), fix the loader, handle notebook kernels.

    apply_plan(plan, python=..., options=PlanOptions(...)) -> ApplyResult   (raises StepFailed after rollback)
    rollback(root=None, python=None) -> RollbackResult

Modules: transaction (apply_plan, rollback), journal, filelock, runner (the subprocess edge),
snapshot (what the target has installed), wheelbuild (repack installed distributions),
sources (index options, restore commands), envfix (loader fixes), colab (kernel detection,
restart), reporter (logging progress), results (return values). Their progress hooks are
fixer.model.Reporter's.
"""

from __future__ import annotations

from fixer.applier.reporter import LoggingReporter
from fixer.applier.runner import run_command
from fixer.applier.results import ApplyResult, DistChange, RollbackResult, StepOutcome
from fixer.model import APPLY_SCHEMA, CommandResult, Reporter
from fixer.applier.transaction import apply_plan, rollback

__all__ = [
    "APPLY_SCHEMA",
    "ApplyResult",
    "CommandResult",
    "DistChange",
    "LoggingReporter",
    "Reporter",
    "RollbackResult",
    "StepOutcome",
    "apply_plan",
    "rollback",
    "run_command",
]
