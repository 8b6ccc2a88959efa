"""`colab-cudnn-fix lock -o stack.lock.toml`: write the resolved stack with hashes.

Exit codes: 0 written; 1 no stack fits, or an index could not give a file's hash; 2 bad
usage or input.
"""
from __future__ import annotations

from typing import List, Optional

import typer

from ._app import app
from ._common import handle_errors, make_intent, make_options
from .options import command, option


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
    from .. import lock as locking
    from ..model import to_dict
    from ..render import out, print_json
    from ..pipeline import plan_for

    intent = make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = make_options("auto", find_links, no_index, index_mirror, None, False)
    view = plan_for(python=python, environment=environment, recipes=tuple(recipes or ()), intent=intent,
                      options=options)
    lock = locking.make_lock(view.env, view.plan.stack, options=options)
    path = locking.write_lock(lock, output)
    if json:
        print_json({"schema": 1, "path": str(path), "lock": to_dict(lock)})
        return
    console = out()
    console.print(f"wrote {path}: {len(lock.packages)} package(s) with hashes"
                  + (f", {len(lock.apt)} apt pin(s)" if lock.apt else "")
                  + (f", {len(lock.env_fixes)} loader fix(es)" if lock.env_fixes else ""), highlight=False)
    for p in lock.packages:
        console.print(f"  {p.name}=={p.version}  ({len(p.hashes)} hash{'es' if len(p.hashes) != 1 else ''})",
                      highlight=False)
    console.print(f"reproduce with: colab-cudnn-fix apply --lock {path}", style="dim", highlight=False)
