"""`colab-cudnn-fix plan`: what apply would do, as exact commands. Changes nothing.

Exit codes: 0 a plan (or "nothing to do"), 1 no stack fits (the clashes and the nearest
ways out are printed), 2 bad input (an unknown version, --cuda 99, a malformed
--environment file, a broken recipe file).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import typer

from ..errors import UsageError

from ._app import app
from ._common import (
    CUDA_OPTION,
    CUDNN_FROM_OPTION,
    FRAMEWORK_OPTION,
    JAX_OPTION,
    JSON_OPTION,
    KEEP_OPTION,
    PYTHON_OPTION,
    RECIPES_OPTION,
    TENSORFLOW_OPTION,
    TORCH_OPTION,
    handle_errors,
    make_intent,
)

ENVIRONMENT_OPTION = typer.Option(
    None, "--environment", metavar="FILE|NAME",
    help="Plan for the machine a `doctor --json` file describes, or a bundled example "
         "(colab-2026-08, colab-2025-01-tf215, h200-healthy, h200-pip-cudnn-hidden).",
)
INSTALLER_OPTION = typer.Option("auto", "--installer", help="pip, uv, conda or auto (uv when the target has it).")
FIND_LINKS_OPTION = typer.Option(None, "--find-links", metavar="DIR", help="Local wheelhouse (repeatable).")
NO_INDEX_OPTION = typer.Option(False, "--no-index", help="Use no package index (only --find-links).")
MIRROR_OPTION = typer.Option(None, "--index-mirror", metavar="FROM=TO", help="Rewrite an index URL prefix (repeatable).")


def parse_mirrors(values: Optional[List[str]]) -> Tuple[Tuple[str, str], ...]:
    out = []
    for v in values or ():
        src, sep, dst = v.partition("=")
        if not sep or not src or not dst:
            raise UsageError(f"--index-mirror {v!r}: expected FROM=TO, e.g. "
                             "https://download.pytorch.org/whl=http://127.0.0.1:8080/whl")
        out.append((src, dst))
    return tuple(out)


@app.command("plan")
@handle_errors()
def plan_command(
    json: bool = JSON_OPTION,
    python: Optional[str] = PYTHON_OPTION,
    environment: Optional[str] = ENVIRONMENT_OPTION,
    recipes: Optional[List[str]] = RECIPES_OPTION,
    framework: Optional[List[str]] = FRAMEWORK_OPTION,
    torch: Optional[str] = TORCH_OPTION,
    tensorflow: Optional[str] = TENSORFLOW_OPTION,
    jax: Optional[str] = JAX_OPTION,
    cuda: Optional[str] = CUDA_OPTION,
    cudnn_from: Optional[str] = CUDNN_FROM_OPTION,
    keep: Optional[List[str]] = KEEP_OPTION,
    installer: str = INSTALLER_OPTION,
    find_links: Optional[List[str]] = FIND_LINKS_OPTION,
    no_index: bool = NO_INDEX_OPTION,
    index_mirror: Optional[List[str]] = MIRROR_OPTION,
) -> None:
    """Show the steps that make this machine's GPU stack consistent, as exact commands."""
    from ..model import PlanOptions
    from ..render import plan as render

    intent = make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    if installer not in ("auto", "pip", "uv", "conda"):
        raise UsageError(f"--installer {installer!r}: choose auto, pip, uv or conda")
    options = PlanOptions(installer=installer, find_links=tuple(find_links or ()), no_index=no_index,  # type: ignore[arg-type]
                          index_mirrors=parse_mirrors(index_mirror))
    from ..pipeline import plan_for

    result = plan_for(python=python, environment=environment, recipes=tuple(recipes or ()),
                      intent=intent, options=options)
    from ..nogpu import no_gpu

    verdict = no_gpu(result.env, result.plan.findings)
    if verdict is not None and verdict.exit_code and result.plan.nothing_to_do:
        render.show_no_gpu(verdict, json, result.plan)
        raise typer.Exit(verdict.exit_code)
    render.show(result, as_json=json)
