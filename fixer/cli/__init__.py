"""Command-line interface. Thin: parse, build the API's typed values (fixer.model.Intent,
PlanOptions), call one public API function (fixer.api), render, map errors to exit codes.

Each command lives in its own module and registers itself on the shared typer app
(fixer.cli.commands); every option comes from the one options table (fixer.cli.table), made into
typer options by fixer.cli.options. The console script is fixer.cli.entry:console.
"""

from __future__ import annotations

from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    """Run one command (`argv`, default sys.argv[1:]) and return its exit code; tests call it."""
    # guard: fixer.cli.entry imports fixer.cli.output (this package first) before its Ctrl-C
    # guard; the CLI itself is imported inside it
    from fixer.cli.commands import main as run

    return run(argv)
