"""`colab-cudnn-fix explain` (placeholder until its issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("explain")
def explain_command() -> None:
    """Not implemented yet."""
    typer.echo("explain: not implemented yet", err=True)
    raise typer.Exit(2)
