"""`colab-cudnn-fix apply`: detect -> diagnose -> resolve -> plan -> apply (journaled) -> verify.

Like pip it proceeds without asking (`--dry-run` shows the plan and stops, `--interactive`
asks first), so it works in a Colab `!` cell where there is no TTY.

Exit codes: 0 done, nothing to do, or healthy after the fix; 1 a step failed (the
environment was rolled back), another apply holds the lock, or the stack is still unhealthy
after applying; 2 bad usage or input (including a lock made for another machine, and --interactive with no
answer: standard input closed); 1 also when --interactive was answered no ("declined: nothing
changed"); 3 no GPU
(a CPU/TPU runtime: nothing to repair, nothing changed).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, List, Optional

import typer

from fixer.errors import UsageError
from fixer.cli._app import app
from fixer.cli._common import handle_errors, write_result
from fixer.cli.options import command, option
from fixer import api
from fixer.render import err

if TYPE_CHECKING:
    from fixer.api import ApplyResult


@command(app, "apply")
@handle_errors()
def apply_command(
    dry_run: bool = option("dry_run"),
    yes: bool = option("yes"),
    interactive: bool = option("interactive"),
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    lock: Optional[str] = option("lock"),
    find_links: Optional[List[str]] = option("find_links"),
    no_index: bool = option("no_index"),
    index_mirror: Optional[List[str]] = option("index_mirror"),
    installer: str = option("installer"),
    root: Optional[str] = option("root"),
    restart: bool = option("restart"),
    environment: Optional[str] = option("environment"),
    recipes: Optional[List[str]] = option("recipes"),
    framework: Optional[List[str]] = option("framework"),
    torch: Optional[str] = option("torch"),
    tensorflow: Optional[str] = option("tensorflow"),
    jax: Optional[str] = option("jax"),
    cuda: Optional[str] = option("cuda"),
    cudnn_from: Optional[str] = option("cudnn_from"),
    keep: Optional[List[str]] = option("keep"),
    no_verify: bool = option("no_verify"),
    prepare_for_gpu: bool = option("prepare_for_gpu"),
    verbose: bool = option("verbose"),
    resume: bool = option("resume"),
) -> None:
    """Repair the GPU stack: run the plan's steps, journaled; roll back on any failure."""
    # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
    from fixer.render import apply as render

    if dry_run and interactive:
        raise UsageError("--dry-run and --interactive exclude each other")
    intent = api.make_intent(framework, torch, tensorflow, jax, cuda, cudnn_from, keep)
    options = api.make_options(installer, find_links, no_index, index_mirror, root, restart)
    result = api.apply(
        intent,
        options,
        dry_run=dry_run,
        python=python,
        lock=lock,
        environment=environment,
        recipes=recipes,
        no_verify=no_verify,
        resume=resume,
        reporter=render.reporter_for(json, verbose),
        confirm=_confirm if (interactive and not yes) else None,
        prepare_for_gpu=prepare_for_gpu,
        this_process=False,
        restart_now=False,
    )
    if result.outcome == "declined":
        err().print("declined: nothing changed", highlight=False, markup=False)
        raise typer.Exit(result.exit_code)
    code = write_result(result, json)
    if result.restart.get("do"):
        sys.stdout.flush()
        sys.stderr.flush()
        result.restart_kernel()
    raise typer.Exit(code)


def _confirm(preview: "ApplyResult") -> bool:
    preview.show()
    return ask("Apply these steps?")


def ask(question: str) -> bool:
    """y/yes True, n/no or an empty answer False (the default), anything else asks again.

    Standard input at its end (closed, or `< /dev/null`) is no answer: a UsageError (exit 2,
    nothing changed), not the "interrupted" of click's confirm, which reads EOF as Ctrl-C
    (click/termui.py confirm: `except (KeyboardInterrupt, EOFError): raise Abort()`). Ctrl-C at
    the prompt stays an interrupt (exit 130)."""
    while True:
        sys.stdout.write(f"{question} [y/N]: ")
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            sys.stdout.write("\n")
            raise UsageError(
                "--interactive: no answer (standard input is closed); nothing changed",
                hint="answer y or n at the prompt, or pass --yes to apply without asking "
                "(--dry-run shows the plan)",
            )
        answer = line.strip().lower()
        if answer in ("y", "yes"):
            return True
        if answer in ("", "n", "no"):
            return False
