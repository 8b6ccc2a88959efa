"""`colab-cudnn-fix recipes` (placeholder until its issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("recipes")
def recipes_command() -> None:
    """Not implemented yet."""
    typer.echo("recipes: not implemented yet", err=True)
    raise typer.Exit(2)
