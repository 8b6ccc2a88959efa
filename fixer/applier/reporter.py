"""Progress hooks of apply and rollback. The library reports, the CLI renders.

The hooks are fixer.model.Reporter's; the default reporter here writes to stdlib logging;
fixer.render.apply has the rich one.
"""

from __future__ import annotations

import logging
from typing import Optional

from fixer.model import CommandResult, Reporter, Step

log = logging.getLogger("fixer.applier")


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
