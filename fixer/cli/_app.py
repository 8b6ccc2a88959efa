"""The typer application object; command modules register on it."""
from __future__ import annotations

import typer

app = typer.Typer(
    name="colab-cudnn-fix",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Detect, diagnose and repair the NVIDIA driver / CUDA / cuDNN / framework stack.",
)
