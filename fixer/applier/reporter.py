"""Progress hooks of apply and rollback. The library reports, the CLI renders.

The default reporter writes to stdlib logging; fixer.render.apply has the rich one.
"""

from __future__ import annotations

import logging
from typing import Optional, Sequence

from fixer.model import Plan, Step
from fixer.applier.runner import CommandResult

log = logging.getLogger("fixer.applier")


class Reporter:
    """Base class with no-op hooks; subclass and override what you need."""

    def starting(self, plan: Plan) -> None:
        """`plan` is about to run (its download total: `plan.download`)."""

    def phase(self, text: str) -> None:
        """A stage of the transaction: journaling, backing up, rolling back, verifying."""

    def step_started(self, index: int, total: int, step: Step) -> None:
        """Step `index` (1-based) of `total` is about to run."""

    def step_output(self, index: int, line: str) -> None:
        """One line printed by the step's command."""

    def step_finished(self, index: int, step: Step, result: CommandResult) -> None:
        """The step ended (rc 0 or not)."""

    def note(self, text: str) -> None:
        """Something a person should read (a skipped action, a restart notice)."""

    def checking(self, frameworks: Sequence[str]) -> None:
        """The check after apply runs these frameworks' GPU checks now; () when they ended."""


class LoggingReporter(Reporter):
    """Writes progress to the `fixer.applier` logger."""

    def phase(self, text: str) -> None:
        log.info("%s", text)

    def step_started(self, index: int, total: int, step: Step) -> None:
        log.info("[%d/%d] %s", index, total, step.summary)
        if step.argv:
            log.debug("  $ %s", " ".join(step.argv))

    def step_output(self, index: int, line: str) -> None:
        log.debug("  %s", line)

    def step_finished(self, index: int, step: Step, result: CommandResult) -> None:
        if result.rc == 0:
            log.info("[%d] done in %.1f s", index, result.seconds)
        else:
            log.error("[%d] failed (exit %d)", index, result.rc)

    def note(self, text: str) -> None:
        log.warning("%s", text)


def default_reporter(reporter: Optional[Reporter]) -> Reporter:
    return reporter if reporter is not None else LoggingReporter()
