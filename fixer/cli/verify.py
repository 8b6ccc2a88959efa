"""`colab-cudnn-fix verify`: run the GPU checks (conv forward/backward against a CPU reference,
mapped cuDNN files and versions) per framework, each in a child process of the target."""
from __future__ import annotations

from typing import List, Optional

import typer

from ._app import app
from ._common import JSON_OPTION, PYTHON_OPTION, handle_errors

#: Version of the JSON written by `verify --json`.
VERIFY_SCHEMA = 1


@app.command("verify")
@handle_errors()
def verify_command(
    json: bool = JSON_OPTION,
    python: Optional[str] = PYTHON_OPTION,
    framework: Optional[List[str]] = typer.Option(
        None, "--framework", metavar="NAME",
        help="Check only this framework (repeatable: torch, tensorflow, jax, cupy). Default: those installed."),
    timeout: float = typer.Option(120.0, "--timeout", metavar="S", help="Seconds each framework's check may take."),
) -> None:
    """Prove the GPU stack works: per framework, convs on the GPU checked against the CPU, and the
    cuDNN files really loaded. Exit 0 only when every framework passes."""
    from ..verify import passed, verify

    results = verify(python, frameworks=tuple(framework or ()), timeout=timeout)
    ok = passed(results)
    if json:
        from ..render import print_json

        print_json({"schema": VERIFY_SCHEMA, "passed": ok, "results": results})
    else:
        from ..render.verify import render_verify

        render_verify(results)
    raise typer.Exit(0 if ok else 1)
