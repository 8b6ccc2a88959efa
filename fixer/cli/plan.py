"""`colab-cudnn-fix plan` (placeholder until its issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("plan")
def plan_command() -> None:
    """Not implemented yet."""
    typer.echo("plan: not implemented yet", err=True)
    raise typer.Exit(2)
