"""`colab-cudnn-fix verify` (placeholder until its issue lands)."""
from __future__ import annotations

import typer

from ._app import app


@app.command("verify")
def verify_command() -> None:
    """Not implemented yet."""
    typer.echo("verify: not implemented yet", err=True)
    raise typer.Exit(2)
