"""`colab-cudnn-fix explain`: turn an error text into its likely cause, the evidence, the fix, and
(when the machine was detected) the plan that would apply it."""
from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional, Tuple

import typer

from ..errors import FixerError, UsageError
from ._app import app
from ._common import handle_errors
from .options import command, option

#: Version of the JSON written by `explain --json` (2: alternatives with their checks, benign,
#: windows, colab_no_gpu, frameworks).
EXPLAIN_SCHEMA = 2


def _stdin() -> Tuple[str, Optional[str]]:
    from ..explain.logtext import read_head_tail

    buf = getattr(sys.stdin, "buffer", None)
    if buf is not None:
        return read_head_tail(buf)
    import io

    return read_head_tail(io.BytesIO(sys.stdin.read().encode("utf-8", errors="replace")))


def read_text(text: Optional[str], file: Optional[str]) -> Tuple[str, Optional[str]]:
    """(the error text, a note when the middle of a long log was skipped) from the argument,
    --file, or stdin ('-'); UsageError when absent or empty."""
    from ..explain.logtext import read_log_file

    note: Optional[str] = None
    if text is not None and file is not None:
        raise UsageError("give the error text either as an argument or with --file, not both")
    if file is not None:
        if file == "-":
            data, note = _stdin()
        else:
            if not os.path.isfile(file):
                raise UsageError(f"--file {file}: no such file")
            try:
                data, note = read_log_file(file)
            except OSError as exc:
                raise UsageError(f"--file {file}: {exc.strerror or exc}")
    elif text == "-":
        data, note = _stdin()
    elif text is not None:
        data = text
    elif _stdin_is_piped():
        data, note = _stdin()
    else:
        raise UsageError("explain needs an error text: `explain 'TEXT'`, `explain --file LOG` or `... | explain -`")
    if not data.strip():
        raise UsageError("the error text is empty")
    return data, note


def _stdin_is_piped() -> bool:
    """stdin is a pipe or a file (not a terminal, not closed): `cmd 2>&1 | explain` reads it."""
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):  # no stdin, or a test's stand-in without a descriptor
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _plan_for(env: Any, recipes: Any, notes: List[str]) -> Any:
    """The plan that would fix the machine (resolve + make_plan), when those stages exist."""
    try:
        from ..model import Intent
        from ..plan import make_plan
        from ..resolve import resolve
    except ImportError:
        notes.append("no plan: the resolve/plan stages are not available")
        return None
    try:
        return make_plan(env, resolve(env, Intent(), recipes))
    except FixerError as exc:
        notes.append(f"no plan: {exc.message}")
        for c in getattr(exc, "clashes", ()) or ():
            notes.append(f"clash: {c}")
    return None


@command(app, "explain")
@handle_errors()
def explain_command(
    text: Optional[str] = typer.Argument(None, metavar="[TEXT | -]", help="The error text; '-' reads stdin."),
    file: Optional[str] = option("file"),
    no_detect: bool = option("no_detect"),
    json: bool = option("json"),
    python: Optional[str] = option("python"),
    recipes: Optional[List[str]] = option("recipes"),
    environment: Optional[str] = option("environment"),
) -> None:
    """Say why a GPU/cuDNN error happened: cause, evidence, fix (and the plan that applies it).
    Exit 0 when a cause was found, 1 when the text was not recognised, 2 for bad input, 3 when
    the machine is a Colab runtime without a GPU and the text says there is none."""
    from ..explain import analyze

    data, skipped = read_text(text, file)
    extra = list(recipes or [])
    env = None
    rec = None
    notes: List[str] = [skipped] if skipped else []
    if environment and no_detect:
        raise UsageError("--environment and --no-detect exclude each other")
    if environment:
        from ..pipeline import machine

        env = machine(python, environment)[0]
    elif not no_detect:
        try:
            from ..detect import detect
        except ImportError:
            notes.append("no detection: fixer.detect is not available")
        else:
            env = detect(python)
    if env is not None:
        from ..recipes import load

        rec = load(extra)
    result = analyze(data, env, rec, extra_dirs=extra)
    notes.extend(n for n in result.notes if n not in notes)
    plan = None
    if env is not None and rec is not None and any(f.id not in ("log-noise",) for f in result.findings):
        plan = _plan_for(env, rec, notes)
    code = 0 if result.recognised else 1
    if result.colab_no_gpu and result.findings and result.findings[0].id in ("gpu-missing", "driver-missing"):
        code = 3
    if json:
        from ..render import print_json

        body: Dict[str, Any] = {"schema": EXPLAIN_SCHEMA, "recognised": result.recognised,
                                "findings": result.findings, "rules": list(result.rules),
                                "alternatives": [{"id": f.id, "confidence": f.confidence,
                                                  "check": result.check_for(f.id)} for f in result.findings],
                                "ambiguous": result.ambiguous, "benign": result.benign, "windows": result.windows,
                                "frameworks": list(result.frameworks), "colab_no_gpu": result.colab_no_gpu,
                                "detected": env is not None, "plan": plan, "notes": notes}
        print_json(body)
    else:
        from ..render.explain import render_explain

        render_explain(result, plan, notes, detected=env is not None)
    raise typer.Exit(code)
