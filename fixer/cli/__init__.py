"""Command-line interface. Thin: parse, call one library function, render, map errors to exit codes.

Each command lives in its own module and registers itself on the shared app; every option
comes from the one options table (fixer.cli.options).
"""

from __future__ import annotations

import sys
from typing import Any, List, Optional, Sequence, Tuple

import typer

from fixer.cli.entry import command_of
from fixer.cli._app import app

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


def _click_class(name: str) -> Any:
    """click's exception class `name`, from the click typer uses (its own copy in newer typer)."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


def main(argv: Optional[List[str]] = None) -> int:
    """Console entry point. Returns the exit code (tests call it with an argv list).

    A usage error (unknown option, bad choice) exits 2; with --json it is one JSON object on
    stdout like any other error (fixer/schemas/error.json). Ctrl-C exits 130 without a traceback.
    Broken plugins met on the way (fixer.system.plugins) are warning lines on stderr."""
    code = _main(argv)
    from fixer.system.plugins import problems

    if problems():
        from fixer.render import warning

        for line in problems():
            warning(line)
    return code


#: typer's click command for `app`, with the registrations it was built from.
_BUILT: List[Tuple[Tuple[int, ...], Any]] = []


def _command() -> Any:
    """The click command of `app`. `app(...)` would rebuild it from the registered functions on
    every call (about 20 ms: typer reads every signature); it is built again only when a
    command or group was registered since."""
    import typer.main

    stamp = (len(app.registered_commands), len(app.registered_groups), id(app.registered_callback))
    if not _BUILT or _BUILT[0][0] != stamp:
        _BUILT[:] = [(stamp, typer.main.get_command(app))]
    return _BUILT[0][1]


def _main(argv: Optional[List[str]] = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    usage_error = _click_class("UsageError")
    click_exception = _click_class("ClickException")
    import typer.main

    if sys.excepthook != typer.main.except_hook:  # as app(...) does; pretty exceptions are off
        sys.excepthook = typer.main.except_hook
    try:
        rv = _command()(args=args, prog_name="colab-cudnn-fix", standalone_mode=False)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    except usage_error as exc:
        from fixer.errors import UsageError

        if (
            type(exc).__name__ == "NoArgsIsHelpError"
        ):  # no command given: the help, as a usage error
            sys.stdout.write(exc.format_message())
            return 2
        from fixer.render import error

        ctx = getattr(exc, "ctx", None)
        hint = (
            f"see `{ctx.command_path} --help`"
            if ctx is not None
            else "see `colab-cudnn-fix --help`"
        )
        error(
            UsageError(exc.format_message(), hint=hint),
            as_json="--json" in args,
            command=command_of(args),
        )
        return 2
    except click_exception as exc:
        from fixer.errors import FixerError
        from fixer.render import error

        err = FixerError(exc.format_message())
        err.exit_code = int(getattr(exc, "exit_code", 1))
        error(err, as_json="--json" in args, command=command_of(args))
        return err.exit_code
    except KeyboardInterrupt:
        return _interrupted(args)
    except Exception as exc:  # noqa: BLE001 - click's Abort (Ctrl-C at a prompt) or typer's Exit
        name = type(exc).__name__
        if name == "Abort":
            return _interrupted(args)
        if name == "Exit":
            return int(getattr(exc, "exit_code", 0) or 0)
        raise
    if rv == 130:
        from fixer.cli.entry import interrupt_reported

        # typer turns a Ctrl-C outside the commands' own boundary into a silent exit 130
        return 130 if interrupt_reported() else _interrupted(args)
    if isinstance(rv, int):
        return rv
    return 0


def _interrupted(args: Sequence[str]) -> int:
    from fixer.cli.entry import report_interrupt

    return report_interrupt(args)


__all__ = ["app", "main"]
