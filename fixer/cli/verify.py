"""`colab-cudnn-fix verify`: run the GPU checks (conv forward/backward against a CPU reference,
mapped cuDNN files and versions) per framework, each in a child process of the target."""
from __future__ import annotations

from typing import List, Optional

import typer

from ._app import app
from ._common import handle_errors
from .options import command, option

#: Version of the JSON written by `verify --json`.
VERIFY_SCHEMA = 1


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
    from ..verify import passed, verify

    env = None
    if environment:
        from ..pipeline import machine

        # the machine a doctor --json file describes: its frameworks are the ones checked, here
        env = machine(environment=environment)[0]
    results = verify(python, frameworks=tuple(framework or ()), timeout=timeout, env=env)
    ok = passed(results)
    if json:
        from ..render import print_json

        print_json({"schema": VERIFY_SCHEMA, "passed": ok, "results": results})
    else:
        from ..render.verify import render_verify

        render_verify(results)
    raise typer.Exit(0 if ok else 1)
