"""`colab-cudnn-fix explain`: turn an error text into its likely cause, the evidence, the fix, and
(when the machine was detected) the plan that would apply it."""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional

import typer

from ..errors import FixerError, UsageError
from ._app import app
from ._common import handle_errors
from .options import command, option

MAX_TEXT = 5_000_000


def read_text(text: Optional[str], file: Optional[str]) -> str:
    """The error text from the argument, --file, or stdin ('-'); UsageError when absent or empty."""
    if text is not None and file is not None:
        raise UsageError("give the error text either as an argument or with --file, not both")
    if file is not None:
        if file == "-":
            data = sys.stdin.read(MAX_TEXT)
        else:
            if not os.path.isfile(file):
                raise UsageError(f"--file {file}: no such file")
            try:
                with open(file, encoding="utf-8", errors="replace") as fh:
                    data = fh.read(MAX_TEXT)
            except OSError as exc:
                raise UsageError(f"--file {file}: {exc.strerror or exc}")
    elif text == "-":
        data = sys.stdin.read(MAX_TEXT)
    elif text is not None:
        data = text
    else:
        raise UsageError("explain needs an error text: `explain 'TEXT'`, `explain --file LOG` or `... | explain -`")
    if not data.strip():
        raise UsageError("the error text is empty")
    return data


@command(app, "explain")
@handle_errors()
def explain_command(
    text: Optional[str] = typer.Argument(None, metavar="[TEXT | -]", help="The error text; '-' reads stdin."),
    file: Optional[str] = option("file"),
    no_detect: bool = option("no_detect"),
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    recipes: Optional[List[str]] = option("recipes"),
) -> None:
    """Say why a GPU/cuDNN error happened: cause, evidence, fix (and the plan that applies it).
    Exit 0 when a cause was found, 1 when the text was not recognised, 2 for bad input."""
    from ..api import explain

    result = explain(read_text(text, file), detect=not no_detect, python=python, recipes=recipes)
    if json:
        from ..render import print_json

        print_json(result.to_dict())
    else:
        result.show()
    raise typer.Exit(result.exit_code)
