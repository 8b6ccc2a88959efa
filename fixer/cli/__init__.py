"""Command-line interface. Thin: parse, call one library function, render, map errors to exit codes.

Each command lives in its own module and registers itself on the shared app.
"""
from __future__ import annotations

import sys
from typing import List, Optional

from ._app import app

# Importing the modules registers their commands.
from . import doctor as _doctor  # noqa: F401,E402
from . import plan as _plan  # noqa: F401,E402
from . import apply as _apply  # noqa: F401,E402
from . import verify as _verify  # noqa: F401,E402
from . import explain as _explain  # noqa: F401,E402
from . import lock as _lock  # noqa: F401,E402
from . import recipes as _recipes  # noqa: F401,E402
from . import rollback as _rollback  # noqa: F401,E402


def main(argv: Optional[List[str]] = None) -> int:
    """Console entry point. Returns the exit code (tests call it with an argv list)."""
    try:
        app(args=argv if argv is not None else sys.argv[1:], prog_name="colab-cudnn-fix", standalone_mode=True)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        return 1
    return 0


__all__ = ["app", "main"]
