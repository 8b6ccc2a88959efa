"""`colab-cudnn-fix plan`: what apply would do, as exact commands. Changes nothing.

Exit codes: 0 a plan (or "nothing to do"), 1 no stack fits (the clashes and the nearest
ways out are printed), 2 bad input (an unknown version, --cuda 99, a malformed
--environment file, a broken recipe file).
"""

from __future__ import annotations

from typing import List, Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors, write_result
from fixer.cli.options import command, option
from fixer import api


@command(app, "plan")
@handle_errors()
def plan_command(
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    environment: Optional[str] = option("environment"),
    recipes: Optional[List[str]] = option("recipes"),
    framework: Optional[List[str]] = option("framework"),
    torch: Optional[str] = option("torch"),
    tensorflow: Optional[str] = option("tensorflow"),
    jax: Optional[str] = option("jax"),
    cuda: Optional[str] = option("cuda"),
    cudnn_from: Optional[str] = option("cudnn_from"),
    keep: Optional[List[str]] = option("keep"),
    installer: str = option("installer"),
    find_links: Optional[List[str]] = option("find_links"),
    no_index: bool = option("no_index"),
    index_mirror: Optional[List[str]] = option("index_mirror"),
) -> None:
    """Show the steps that make this machine's GPU stack consistent, as exact commands."""
    intent = api.make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = api.make_options(
        installer, find_links, no_index, index_mirror, local_paths=not environment
    )
    result = api.plan(intent, options, python=python, environment=environment, recipes=recipes)
    raise typer.Exit(write_result(result, json))
