"""All terminal output: rich tables and JSON. No logic lives here.

Colour follows NO_COLOR / FORCE_COLOR and TTY detection (rich does both). Area renderers
live in submodules (render.doctor, render.plan, ...); the helpers below are shared.
"""
from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Optional

from ..errors import FixerError
from ..model import to_dict

if TYPE_CHECKING:
    from rich.console import Console

# rich is imported on first use: `doctor --json` and `plan --json` never need it (fast path).
_out: Optional["Console"] = None
_err: Optional["Console"] = None


def out() -> "Console":
    global _out
    if _out is None or _out.file is not sys.stdout:
        from rich.console import Console

        _out = Console(file=sys.stdout, highlight=False, soft_wrap=False)
    return _out


def err() -> "Console":
    global _err
    if _err is None or _err.file is not sys.stderr:
        from rich.console import Console

        _err = Console(file=sys.stderr, highlight=False)
    return _err


def print_json(value: Any) -> None:
    """Dataclasses or plain data as indented JSON on stdout (no colour, no wrapping)."""
    sys.stdout.write(json.dumps(to_dict(value), indent=2, sort_keys=False) + "\n")
    sys.stdout.flush()


def error(exc: FixerError, as_json: bool = False, command: str = "") -> None:
    """A library error: one red line on stderr (plus its hint), or a JSON object on stdout
    (fixer/schemas/error.json: the same shape for every command)."""
    if as_json:
        from ..errors import error_payload

        print_json(error_payload(exc, command))
        return
    from rich.markup import escape

    # soft_wrap: never break a line rich-side; a path or version cut in two can't be copied.
    console = err()
    console.print(f"[bold red]error:[/] {escape(exc.message)}", markup=True, highlight=False, soft_wrap=True)
    for attr, label in (("clashes", "clash"), ("ways_out", "way out")):
        for line in getattr(exc, attr, ()) or ():
            console.print(f"  [yellow]{label}:[/] {escape(line)}", soft_wrap=True)
    if exc.hint:
        console.print(f"[cyan]hint:[/] {escape(exc.hint)}", soft_wrap=True)


def warning(line: str) -> None:
    """One warning line on stderr (plain text: it must stay readable in logs and `!` cells)."""
    sys.stderr.write(f"warning: {line}\n")
    sys.stderr.flush()
