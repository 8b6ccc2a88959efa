"""The typer app with every command registered, and `main(argv)`, which runs one command and maps
click's own errors (usage errors, Ctrl-C at a prompt) to this tool's error output and exit codes."""

from __future__ import annotations

import functools
import sys
from typing import Any, List, Optional

import typer

from fixer.cli._app import app
from fixer.cli.interrupt import command_of, interrupt_reported, report_interrupt

# Importing the modules registers their commands.
from fixer.cli import doctor as _doctor  # noqa: F401,E402
from fixer.cli import plan as _plan  # noqa: F401,E402
from fixer.cli import apply as _apply  # noqa: F401,E402
from fixer.cli import verify as _verify  # noqa: F401,E402
from fixer.cli import explain as _explain  # noqa: F401,E402
from fixer.cli import lock as _lock  # noqa: F401,E402
from fixer.cli import recipes as _recipes  # noqa: F401,E402
from fixer.cli import rollback as _rollback  # noqa: F401,E402
from fixer.cli import report as _report  # noqa: F401,E402
from fixer.cli import fleet as _fleet  # noqa: F401,E402
from fixer.cli import debug as _debug  # noqa: F401,E402
from fixer.system.plugins import problems
from fixer.render import warning
from fixer.errors import FixerError, UsageError
from fixer.render import error


def _click_class(name: str) -> Any:
    """click's exception class `name`, from the click typer uses (its own copy in newer typer)."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


def main(argv: Optional[List[str]] = None) -> int:
    """Run one command; returns its exit code (tests call it with an argv list).

    A usage error (unknown option, bad choice) exits 2 with one line, and with --json it is one
    JSON object on stdout like any other error (fixer/schemas/error.json). Ctrl-C exits 130
    without a traceback. Broken plugins met on the way (fixer.system.plugins) are warning lines
    on stderr."""
    args = list(argv if argv is not None else sys.argv[1:])
    code = _run(args)

    if problems():
        for line in problems():
            warning(line)
    return code


@functools.lru_cache(maxsize=1)
def _command() -> Any:
    """typer's click command for `app` (built once: every command registers at import)."""
    import typer.main

    return typer.main.get_command(app)


def _run(args: List[str]) -> int:
    click_exception = _click_class("ClickException")
    try:
        rv = _command().main(args=args, prog_name="colab-cudnn-fix", standalone_mode=False)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except click_exception as exc:
        return _click_error(exc, args)
    except KeyboardInterrupt:
        return report_interrupt(args)
    except Exception as exc:  # noqa: BLE001 - click's Abort (Ctrl-C at a prompt) or typer's Exit
        name = type(exc).__name__
        if name == "Abort":
            return report_interrupt(args)
        if name == "Exit":
            return int(getattr(exc, "exit_code", 0) or 0)
        raise
    if rv == 130:
        # typer turns a Ctrl-C outside the commands' own boundary into a silent exit 130
        return 130 if interrupt_reported() else report_interrupt(args)
    return rv if isinstance(rv, int) else 0


def _click_error(exc: Any, args: List[str]) -> int:
    """A click error as this tool's one error line (or JSON object): usage errors exit 2 with a
    hint to the command's help; no command at all prints the top-level help, exit 2."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        sys.stdout.write(exc.format_message())
        return 2
    if isinstance(exc, _click_class("UsageError")):
        ctx = getattr(exc, "ctx", None)
        path = ctx.command_path if ctx is not None else "colab-cudnn-fix"
        err: FixerError = UsageError(exc.format_message(), hint=f"see `{path} --help`")
    else:
        err = FixerError(exc.format_message())
        err.exit_code = int(getattr(exc, "exit_code", 1))
    error(err, as_json="--json" in args, command=command_of(args))
    return err.exit_code
