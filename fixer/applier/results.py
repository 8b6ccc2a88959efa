"""What apply and rollback return (plain frozen dataclasses; `fixer.model.to_dict` serialises them).

Their JSON's version is fixer.model.APPLY_SCHEMA. They live here, not in fixer.model: doctor,
which never applies, does not pay for creating them (fixer.render.apply names them for type
checking only)."""

from __future__ import annotations

import dataclasses
from typing import Optional, Tuple


@dataclasses.dataclass(frozen=True)
class DistChange:
    name: str
    before: Optional[str]  # None: was not installed
    after: Optional[str]  # None: is not installed now


@dataclasses.dataclass(frozen=True)
class StepOutcome:
    kind: str
    summary: str
    argv: Tuple[str, ...] = ()
    rc: int = 0
    seconds: float = 0.0


@dataclasses.dataclass(frozen=True)
class ApplyResult:
    changed: bool  # False: nothing to do
    steps: Tuple[StepOutcome, ...] = ()
    distributions: Tuple[DistChange, ...] = ()
    files: Tuple[str, ...] = ()  # files written or removed (real paths, under --root)
    repaired: Tuple[str, ...] = ()  # files of distributions whose version did not change, rewritten
    journal: Optional[str] = None  # journal directory (rollback reads it)
    log: Optional[str] = None  # the log file with every command's output
    restart_required: bool = False
    notes: Tuple[str, ...] = ()
    seconds: float = 0.0
    awaiting_restart: bool = False  # stopped before a step that needs a fresh kernel (condacolab)
    resume: Optional[str] = None  # then: what to run to go on


@dataclasses.dataclass(frozen=True)
class RollbackResult:
    status: str  # "rolled-back", "nothing-to-do", "rollback-incomplete"
    journal: Optional[str] = None
    distributions: Tuple[DistChange, ...] = ()  # what the rollback changed (now -> restored)
    files: Tuple[str, ...] = ()  # env/config files restored or removed
    exact: bool = True  # checked: every version and every recorded file as before
    remaining: Tuple[str, ...] = ()  # differences left (status rollback-incomplete), one per line
    restored: Tuple[str, ...] = ()  # distribution files written back byte for byte
    removed: Tuple[str, ...] = ()  # files the apply had added (new versions, installer leftovers)
    checked_files: int = 0  # recorded files whose sha256 was checked after the restore
    unverified: Tuple[
        str, ...
    ] = ()  # distributions put back by version only (not recorded file by file)
    commands: Tuple[Tuple[str, ...], ...] = ()
    notes: Tuple[str, ...] = ()
