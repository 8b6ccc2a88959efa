"""`colab-cudnn-fix lock -o stack.lock.toml`: write the resolved stack with hashes.

Exit codes: 0 written; 1 no stack fits, or an index could not give a file's hash; 2 bad
usage or input.
"""

from __future__ import annotations

from typing import List, Optional

import typer

from fixer.cli._app import app
from fixer.cli._common import handle_errors, write_result
from fixer.cli.options import command, option
from fixer import api


@command(app, "lock")
@handle_errors()
def lock_command(
    output: str = option("output"),
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    environment: Optional[str] = option("environment"),
    recipes: Optional[List[str]] = option("recipes"),
    find_links: Optional[List[str]] = option("find_links"),
    no_index: bool = option("no_index"),
    index_mirror: Optional[List[str]] = option("index_mirror"),
    framework: Optional[List[str]] = option("framework"),
    torch: Optional[str] = option("torch"),
    tensorflow: Optional[str] = option("tensorflow"),
    jax: Optional[str] = option("jax"),
    cuda: Optional[str] = option("cuda"),
    cudnn_from: Optional[str] = option("cudnn_from"),
    keep: Optional[List[str]] = option("keep"),
) -> None:
    """Write the stack that fits this machine (exact versions, sha256 hashes, apt pins, loader fixes)."""
    intent = api.make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = api.make_options(find_links=find_links, no_index=no_index, index_mirror=index_mirror)
    result = api.lock(
        intent, options, output=output, python=python, environment=environment, recipes=recipes
    )
    raise typer.Exit(write_result(result, json))
