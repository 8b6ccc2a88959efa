"""`colab-cudnn-fix rollback`: undo the last apply from its journal (also after a crash).

Exit codes: 0 rolled back (every version and every recorded file checked), or nothing to roll
back (running it twice is harmless); 1 the rollback could not restore everything (what differs
is listed; the journal stays), or another apply holds the lock; 2 the journal is damaged
(`--force` restores from what it still holds).
"""

from __future__ import annotations

from typing import Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option
from fixer.api import rollback
from fixer.render import write_json


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
    # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
    from fixer.render import apply as render

    result = rollback(
        root=root, python=python, force=force, reporter=render.reporter_for(json, verbose)
    )
    if json:
        write_json(result.to_dict())
    else:
        result.show()
    raise typer.Exit(result.exit_code)
