"""What every command shares: common options, the error boundary, intent options."""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import typer

from fixer.errors import FixerError
from fixer.render import write_json
from fixer.render import set_command
from fixer import render
from fixer.cli.interrupt import report_interrupt

F = TypeVar("F", bound=Callable[..., Any])


def handle_errors(json_flag: str = "json") -> Callable[[F], F]:
    """Turn a FixerError raised by the library into a rendered message and its exit code.
    Anything else is a bug: it propagates (with a traceback) so it gets reported."""

    def deco(fn: F) -> F:
        command = fn.__module__.rsplit(".", 1)[-1]
        if command == "recipes":
            command = "recipes " + fn.__name__.replace("_command", "")
        elif (
            command == "fleet"
        ):  # fleet_doctor -> "fleet doctor", fleet_lock_check -> "fleet lock-check"
            command = "fleet " + fn.__name__[len("fleet_") :].replace("_", "-")

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                set_command(command)
                return fn(*args, **kwargs)
            except FixerError as exc:
                render.error(exc, as_json=bool(kwargs.get(json_flag)), command=command)
                raise typer.Exit(exc.exit_code)
            except KeyboardInterrupt:
                report_interrupt([*command.split(), *(["--json"] if kwargs.get(json_flag) else [])])
                raise typer.Exit(130)

        return wrapper  # type: ignore[return-value]

    return deco


def write_result(result: Any, as_json: bool) -> int:
    """A result of the API on stdout (its --json payload, or its terminal rendering); its exit code."""
    if as_json:
        write_json(result.to_dict())
    else:
        result.show()
    return int(result.exit_code)
