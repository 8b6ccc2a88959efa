"""Ctrl-C, said once: the children still running are killed and "interrupted" is one line on stderr
(one JSON object on stdout under --json, fixer/schemas/error.json); exit code 130."""

from __future__ import annotations

import sys
from typing import List, Sequence


def command_of(argv: Sequence[str]) -> str:
    """The command an argv names ('recipes show', 'doctor', or '' when none)."""
    words = [a for a in argv if not a.startswith("-")]
    if not words:
        return ""
    if words[0] in ("recipes", "fleet") and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0]


_REPORTED: List[bool] = []  # set once "interrupted" has been said (a second report would repeat it)


def interrupt_reported() -> bool:
    return bool(_REPORTED)


def report_interrupt(argv: Sequence[str]) -> int:
    """Kill the children still running, say "interrupted" (JSON under --json); exit code 130."""
    _REPORTED.append(True)
    # guard: fixer.cli.entry imports this module inside its Ctrl-C guard only when a Ctrl-C
    # came; what the report needs is imported then (the start may have stopped before them)
    from fixer.errors import interrupted
    from fixer.render import error_payload
    from fixer.system.proc import kill_live

    kill_live()
    exc = interrupted()
    if "--json" in argv:
        import json

        sys.stdout.write(json.dumps(error_payload(exc, command_of(argv)), indent=2) + "\n")
        sys.stdout.flush()
    else:
        sys.stderr.write("error: interrupted\n")
    return exc.exit_code
