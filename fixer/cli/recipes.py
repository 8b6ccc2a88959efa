"""`colab-cudnn-fix recipes list|show|validate`: look at and check the recipe data."""

from __future__ import annotations

from typing import List, Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors, write_result
from fixer.cli.options import CONTEXT, Group, command, option
from fixer import api

recipes_app = typer.Typer(
    name="recipes",
    no_args_is_help=True,
    add_completion=False,
    cls=Group,
    context_settings=dict(CONTEXT),
    help="List, show and validate the recipes (builds, cuDNN releases, driver floors, GPUs, Colab images).",
)
app.add_typer(recipes_app, name="recipes")

TARGET_ARGUMENT = typer.Argument(
    ...,
    metavar="WHAT",
    help="FRAMEWORK or FRAMEWORK==VERSION (a prefix like torch==2.5 matches 2.5.x), or one of: cudnn, drivers, gpus, colab.",
)


@command(recipes_app, "list")
@handle_errors()
def list_command(
    recipes: Optional[List[str]] = option("recipes"), json: bool = option("json")
) -> None:
    """One line per framework: versions, variants and builds; then the other tables."""
    raise typer.Exit(write_result(api.recipes("list", recipes=recipes), json))


@command(recipes_app, "show")
@handle_errors()
def show_command(
    what: str = TARGET_ARGUMENT,
    recipes: Optional[List[str]] = option("recipes"),
    json: bool = option("json"),
) -> None:
    """The builds of a framework (optionally one version) as a table, or another table."""
    raise typer.Exit(write_result(api.recipes("show", what, recipes=recipes), json))


@command(recipes_app, "validate")
@handle_errors()
def validate_command(
    recipes: Optional[List[str]] = option("recipes"), json: bool = option("json")
) -> None:
    """Check every recipe file; print each problem as FILE:LINE. Exit 2 if there is any."""
    raise typer.Exit(write_result(api.recipes("validate", recipes=recipes), json))
