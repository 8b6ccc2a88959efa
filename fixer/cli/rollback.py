"""`colab-cudnn-fix rollback`: undo the last apply from its journal (also after a crash).

Exit codes: 0 rolled back (every version and every recorded file checked), or nothing to roll
back (running it twice is harmless); 1 the rollback could not restore everything (what differs
is listed; the journal stays), or another apply holds the lock; 2 the journal is damaged
(`--force` restores from what it still holds).
"""
from __future__ import annotations

from typing import Optional

import typer

from ._app import app
from ._common import JSON_OPTION, handle_errors
from .apply import ROOT_OPTION


@app.command("rollback")
@handle_errors()
def rollback_command(
    root: Optional[str] = ROOT_OPTION,
    python: Optional[str] = typer.Option(None, "--python", metavar="PATH",
                                         help="Target interpreter (default: the one the last apply changed)."),
    json: bool = JSON_OPTION,
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show every line the installers print."),
    force: bool = typer.Option(False, "--force",
                               help="Restore from a damaged journal: whatever it still holds (recorded files, "
                                    "backups, the list of distributions before)."),
) -> None:
    """Put back exactly what the last apply changed: package versions, files, apt pins."""
    import os

    from ..apply import rollback
    from ..errors import UsageError
    from ..render import apply as render

    if root is not None and not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    result = rollback(root=os.path.abspath(root) if root else None, python=python,
                      reporter=render.reporter_for(json, verbose), force=force)
    render.show_rollback(result, json)
    if result.status == "rollback-incomplete":
        raise typer.Exit(1)
