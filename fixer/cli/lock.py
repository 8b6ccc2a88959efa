"""`colab-cudnn-fix lock` (placeholder until its issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("lock")
def lock_command() -> None:
    """Not implemented yet."""
    typer.echo("lock: not implemented yet", err=True)
    raise typer.Exit(2)
