"""`colab-cudnn-fix report`: the GPU stack as markdown (or HTML) to paste into a bug report.

Home and user paths are redacted by path component unless --no-redact (fixer.reporting.report).
No framework is imported: it is doctor's detection, rendered for people who did not see the
machine.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option
from fixer import api
from fixer.errors import UsageError
from fixer.render import write_json


@command(app, "report")
@handle_errors()
def report_command(
    html: bool = option("html"),
    json: bool = option("json"),
    no_redact: bool = option("no_redact"),
    python: Optional[str] = option("python"),
    environment: Optional[str] = option("environment"),
    lock: Optional[str] = option("lock"),
    recipes: Optional[List[str]] = option("recipes"),
) -> None:
    """A summary for bug reports: GPU, driver, each framework's build and GPU targets, the cuDNN that
    loads and why, and the findings; home and user paths redacted."""
    # start-up: fixer.render.report 0.4% alone, all small ones +4% (doctor --json, importtime)
    from fixer.render.report import print_report

    if html and json:
        raise UsageError("--html and --json exclude each other: choose one output")
    result = api.report(
        python=python, environment=environment, lock=lock, recipes=recipes, redact=not no_redact
    )
    if json:
        write_json(result.to_dict())
    else:
        print_report(result.report, "html" if html else "markdown")
    raise typer.Exit(result.exit_code)
