"""`colab-cudnn-fix verify`: run the GPU checks (conv forward/backward against a CPU reference,
mapped cuDNN files and versions) per framework, each in a child process of the target."""

from __future__ import annotations

from typing import List, Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option
from fixer.api import verify
from fixer.render import err, out
from fixer.render import write_json


@command(app, "verify")
@handle_errors()
def verify_command(
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    framework: Optional[List[str]] = option("verify_framework"),
    timeout: float = option("timeout"),
    environment: Optional[str] = option("environment"),
) -> None:
    """Prove the GPU stack works: per framework, convs on the GPU checked against the CPU, and the
    cuDNN files really loaded. Exit 0 only when every framework passes."""
    # start-up: fixer.render.progress 0.2% alone, all small ones +4% (doctor --json, importtime)
    from fixer.render.progress import ConsoleBoard, checking_display

    # which frameworks it checks, while it checks them (stderr with --json: stdout is the JSON)
    board = ConsoleBoard(err() if json else out())
    checking = checking_display(board)

    try:
        result = verify(
            python=python,
            framework=framework,
            timeout=timeout,
            environment=environment,
            checking=checking,
        )
    finally:
        board.close()
    if json:
        write_json(result.to_dict())
    else:
        result.show()
    raise typer.Exit(result.exit_code)
