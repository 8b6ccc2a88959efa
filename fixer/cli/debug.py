"""`colab-cudnn-fix debug --json`: everything the tool read, raw (fixer.reporting.debug), for maintainers."""

from __future__ import annotations

from typing import Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option
from fixer import api
from fixer.render import write_json


@command(app, "debug")
@handle_errors()
def debug_command(
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    no_redact: bool = option("no_redact"),
) -> None:
    """Everything the tool reads, raw: the files detection parses, the environment variables it considers,
    command and probe outputs, the build targets, the plugins; JSON (home and user paths redacted)."""
    result = api.debug(python=python, redact=not no_redact)
    write_json(result.to_dict())
    raise typer.Exit(result.exit_code)
