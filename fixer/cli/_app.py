"""The typer application object; command modules register on it (through options.command)."""

from __future__ import annotations

import typer

from fixer.cli.options import CONTEXT, Group, option
from fixer import __version__

app = typer.Typer(
    name="colab-cudnn-fix",
    cls=Group,
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings=dict(CONTEXT),
    help="Detect, diagnose and repair the NVIDIA driver / CUDA / cuDNN / framework stack.",
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit(0)


@app.callback()
def _top(version: bool = option("version", callback=_print_version, is_eager=True)) -> None:
    """Detect, diagnose and repair the NVIDIA driver / CUDA / cuDNN / framework stack."""
