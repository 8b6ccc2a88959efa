"""`colab-cudnn-fix apply` (placeholder until its issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("apply")
def apply_command() -> None:
    """Not implemented yet."""
    typer.echo("apply: not implemented yet", err=True)
    raise typer.Exit(2)
