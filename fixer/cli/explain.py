"""`colab-cudnn-fix explain`: turn an error text into its likely cause, the evidence, the fix, and
(when the machine was detected) the plan that would apply it."""

from __future__ import annotations

import os
import sys
from typing import List, Optional, Tuple

import typer

from fixer.errors import UsageError
from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option
from fixer.api import explain
from fixer.render import write_json


def _stdin() -> Tuple[str, Optional[str]]:
    # start-up: fixer.explainer.logtext +13% on doctor --json (python -X importtime)
    from fixer.explainer.logtext import read_head_tail

    buf = getattr(sys.stdin, "buffer", None)
    if buf is not None:
        return read_head_tail(buf)
    import io

    return read_head_tail(io.BytesIO(sys.stdin.read().encode("utf-8", errors="replace")))


def read_text(text: Optional[str], file: Optional[str]) -> Tuple[str, Optional[str]]:
    """(the error text, a note when the middle of a long log was skipped) from the argument,
    --file, or stdin ('-'); UsageError when absent or empty."""
    # start-up: fixer.explainer.logtext +13% on doctor --json (python -X importtime)
    from fixer.explainer.logtext import read_log_file

    note: Optional[str] = None
    if text is not None and file is not None:
        raise UsageError("give the error text either as an argument or with --file, not both")
    if file is not None:
        if file == "-":
            data, note = _stdin()
        else:
            if not os.path.isfile(file):
                raise UsageError(f"--file {file}: no such file")
            try:
                data, note = read_log_file(file)
            except OSError as exc:
                raise UsageError(f"--file {file}: {exc.strerror or exc}")
    elif text == "-":
        data, note = _stdin()
    elif text is not None:
        data = text
    elif _stdin_is_piped():
        data, note = _stdin()
    else:
        raise UsageError(
            "explain needs an error text: `explain 'TEXT'`, `explain --file LOG` or `... | explain -`"
        )
    if not data.strip():
        raise UsageError("the error text is empty")
    return data, note


def _stdin_is_piped() -> bool:
    """stdin is a pipe or a file (not a terminal, not closed): `cmd 2>&1 | explain` reads it."""
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (
        OSError,
        ValueError,
        AttributeError,
    ):  # no stdin, or a test's stand-in without a descriptor
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


@command(app, "explain")
@handle_errors()
def explain_command(
    text: Optional[str] = typer.Argument(
        None, metavar="[TEXT | -]", help="The error text; '-' reads stdin."
    ),
    file: Optional[str] = option("file"),
    no_detect: bool = option("no_detect"),
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    recipes: Optional[List[str]] = option("recipes"),
    environment: Optional[str] = option("environment"),
) -> None:
    """Say why a GPU/cuDNN error happened: cause, evidence, fix (and the plan that applies it).
    Exit 0 when a cause was found, 1 when the text was not recognised, 2 for bad input, 3 when
    the machine is a Colab runtime without a GPU and the text says there is none."""
    data, skipped = read_text(text, file)
    result = explain(
        data,
        detect=not no_detect,
        python=python,
        recipes=recipes,
        environment=environment,
        read_note=skipped,
    )
    if json:
        write_json(result.to_dict())
    else:
        result.show()
    raise typer.Exit(result.exit_code)
