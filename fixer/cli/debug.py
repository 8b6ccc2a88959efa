"""`colab-cudnn-fix debug --json`: everything the tool read, raw (fixer.reporting.debug), for maintainers."""

from __future__ import annotations

from typing import Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option


@command(app, "debug")
@handle_errors()
def debug_command(
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    no_redact: bool = option("no_redact"),
) -> None:
    """Everything the tool reads, raw: the files detection parses, the environment variables it considers,
    command and probe outputs, the build targets, the plugins; JSON (home and user paths redacted)."""
    import os

    from fixer.reporting.debug import bundle
    from fixer.render import json_payload, write_json
    from fixer.reporting.report import Redaction, redact

    value = bundle(python)
    if not no_redact:
        value = redact(value, Redaction.for_machine(os.environ))
    value["redacted"] = not no_redact
    write_json(json_payload(value, "debug"))
    raise typer.Exit(0)
