"""`colab-cudnn-fix rollback` (placeholder until the apply issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("rollback")
def rollback_command() -> None:
    """Not implemented yet."""
    typer.echo("rollback: not implemented yet", err=True)
    raise typer.Exit(2)
