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
from ._common import handle_errors
from .options import command, option


@command(app, "rollback")
@handle_errors()
def rollback_command(
    root: Optional[str] = option("root"),
    python: Optional[str] = option("python"),
    json: bool = option("json"),
    verbose: bool = option("verbose"),
    force: bool = option("force"),
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
