"""`colab-cudnn-fix doctor`: the machine's GPU stack and what is wrong with it.

Exit codes: 0 healthy (or nothing to fix: no GPU and nothing installed that needs one),
1 problems found, 2 bad usage (e.g. --python that does not exist), 3 no GPU visible.
Overrides for offline use: COLAB_CUDNN_FIX_DRIVER, COLAB_CUDNN_FIX_CUDA, COLAB_CUDNN_FIX_GPU
(see fixer.detection.overrides).
"""

from __future__ import annotations

from typing import List, Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option
from fixer.api import doctor
from fixer.render.doctor import print_doctor_json


@command(app, "doctor")
@handle_errors()
def doctor_command(
    json: bool = option("json"),
    deep: bool = option("deep"),
    python: Optional[str] = option("python"),
    lock: Optional[str] = option("lock"),
    recipes: Optional[List[str]] = option("recipes"),
    environment: Optional[str] = option("environment"),
) -> None:
    """Show the GPU stack (GPU, driver, each framework's build vs the cuDNN it will load) and what is wrong."""
    result = doctor(python=python, deep=deep, lock=lock, recipes=recipes, environment=environment)
    if json:
        print_doctor_json(result.environment, result.findings, result.healthy, result.exit_code)
    else:
        result.show()
    raise typer.Exit(result.exit_code)
