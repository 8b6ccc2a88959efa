"""Error types. Each carries the exit code the CLI maps it to (docs/design.md, Conventions).

0 healthy or done, 1 problems found or a step failed (rolled back), 2 bad usage or bad
input, 3 nothing could be detected (no GPU).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple


class FixerError(Exception):
    """Base class: a message a user can read, and the exit code it maps to."""

    exit_code: int = 1

    def __init__(self, message: str, *, hint: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(FixerError):
    """Bad usage or bad input (a flag, a file, an environment description). Exit 2."""

    exit_code = 2


class RecipeError(UsageError):
    """A recipe file is malformed or contradicts itself. Names file and line. Exit 2."""

    def __init__(
        self,
        message: str,
        *,
        path: Optional[str] = None,
        line: Optional[int] = None,
        hint: Optional[str] = None,
    ) -> None:
        where = ""
        if path:
            where = f"{path}:{line}: " if line else f"{path}: "
        super().__init__(where + message, hint=hint)
        self.path = path
        self.line = line


class Unsatisfiable(FixerError):
    """No stack satisfies every constraint. Exit 1. `conflicts` (fixer.model.Clash) and
    `relaxations` (fixer.model.WayOut) are the resolver's data; `clashes` and `ways_out` say
    them in words (made by fixer.render.conflicts, the one place that does, for whoever raises
    this: fixer.pipeline)."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        frameworks: Sequence[str],
        conflicts: Sequence[Any] = (),
        relaxations: Sequence[Any] = (),
        clashes: Sequence[str] = (),
        ways_out: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.frameworks = tuple(frameworks)
        self.conflicts = tuple(conflicts)
        self.relaxations = tuple(relaxations)
        self.clashes: Tuple[str, ...] = tuple(clashes)
        self.ways_out: Tuple[str, ...] = tuple(ways_out)


class NotAFix(FixerError):
    """apply refuses a plan whose simulated result still has errors or warnings (or is not the
    stack it chose): nothing was changed. The message names what the user must do. Exit 1."""

    exit_code = 1

    def __init__(self, cannot_fix: Sequence[Any], drift: Sequence[str] = ()) -> None:
        lines = [
            f"{f.id}: {f.title}" + (f" -- what to do: {f.fix}" if f.fix else "") for f in cannot_fix
        ]
        lines += [f"plan clash: {d}" for d in drift]
        super().__init__(
            "not applied: this plan would not leave the machine healthy; nothing was changed. "
            "Cannot fix automatically: " + "; ".join(lines)
        )
        self.cannot_fix = tuple(cannot_fix)
        self.drift = tuple(drift)


class StepFailed(FixerError):
    """A plan step failed; the environment was rolled back. Keeps the command and its output. Exit 1."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        argv: Sequence[str] = (),
        output: str = "",
        rolled_back: bool = True,
        cause: Optional[BaseException] = None,
    ) -> None:
        super().__init__(message)
        self.argv = tuple(argv)
        self.output = output
        self.rolled_back = rolled_back
        self.cause = cause


class LockHeld(FixerError):
    """Another apply holds the lock (names who). Exit 1."""

    exit_code = 1


class JournalDamaged(UsageError):
    """A journal on disk cannot be read (truncated, checksum mismatch, missing fields). Names the
    file and what is wrong. Exit 2; `rollback --force` works from what is still readable."""

    def __init__(
        self, message: str, *, path: Optional[str] = None, hint: Optional[str] = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.path = path


class JournalWriteFailed(FixerError):
    """The journal (or a backup) could not be written: disk full, file-size limit, read-only state
    directory. Raised before anything on the machine changes. Exit 1."""

    exit_code = 1


class NoSpace(FixerError):
    """Not enough free disk for the backups and the downloads the plan needs. Nothing changed. Exit 1."""

    exit_code = 1


def interrupted() -> FixerError:
    """Ctrl-C (exit 130, as a shell reports a process ended by SIGINT)."""
    exc = FixerError("interrupted")
    exc.exit_code = 130
    return exc
