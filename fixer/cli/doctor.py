"""`colab-cudnn-fix doctor` (placeholder until its issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("doctor")
def doctor_command() -> None:
    """Not implemented yet."""
    typer.echo("doctor: not implemented yet", err=True)
    raise typer.Exit(2)
