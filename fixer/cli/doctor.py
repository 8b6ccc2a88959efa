"""`colab-cudnn-fix doctor`: the machine's GPU stack and what is wrong with it.

Exit codes: 0 healthy (or nothing to fix: no GPU and nothing installed that needs one),
1 problems found, 2 bad usage (e.g. --python that does not exist), 3 no GPU visible.
Overrides for offline use: COLAB_CUDNN_FIX_DRIVER, COLAB_CUDNN_FIX_CUDA, COLAB_CUDNN_FIX_GPU
(see fixer.detect.overrides).
"""
from __future__ import annotations

import os
import threading
from typing import Optional, Sequence, Tuple

import typer

from ..errors import UsageError
from ..model import Environment, Finding, Recipes
from ._app import app
from ._common import handle_errors
from .options import command, option


def exit_code_for(env: Environment, findings: Sequence[Finding]) -> Tuple[int, bool, bool]:
    """(exit code, healthy, nothing_to_fix)."""
    from ..diagnose import is_healthy

    if any(f.id == "gpu-missing" and f.severity == "error" for f in findings):
        return 3, False, False
    healthy = is_healthy(findings)
    return (0 if healthy else 1), healthy, healthy and not env.gpus


def doctor_findings(env: Environment, recipes: Recipes, lock: Optional[str] = None) -> Tuple[Finding, ...]:
    """Diagnosis plus, with a lock file, its drift check (fixer.lock.check_drift)."""
    from ..diagnose import SEVERITY_ORDER, diagnose

    findings = list(diagnose(env, recipes))
    if lock:
        try:
            from ..lock import check_drift
        except (ImportError, AttributeError):
            raise UsageError("--lock needs the lock feature (fixer.lock.check_drift), which is not available")
        findings += list(check_drift(lock, env))
        findings.sort(key=lambda f: SEVERITY_ORDER[f.severity])
    return tuple(findings)


class _RecipesLoader(threading.Thread):
    """Loads the recipes while detection waits on its child processes."""

    def __init__(self, extra: Sequence[str]) -> None:
        super().__init__(daemon=True)
        self.extra = tuple(extra)
        self.value: Optional[Recipes] = None
        self.exc: Optional[BaseException] = None

    def run(self) -> None:
        try:
            from .. import recipes as _recipes

            self.value = _recipes.load(extra_dirs=self.extra)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
            self.exc = exc

    def get(self) -> Recipes:
        self.join()
        if self.exc is not None:
            raise self.exc
        assert self.value is not None
        return self.value


@command(app, "doctor")
@handle_errors()
def doctor_command(
    json: bool = option("json"),
    deep: bool = option("deep"),
    python: Optional[str] = option("python"),
    lock: Optional[str] = option("lock"),
    recipes: Optional[str] = option("recipes"),
) -> None:
    """Show the GPU stack (GPU, driver, each framework's build vs the cuDNN it will load) and what is wrong."""
    from ..detect import detect, overrides_from_env

    if recipes is not None and not os.path.isdir(recipes):
        raise UsageError(f"--recipes {recipes}: not a directory")
    overrides = overrides_from_env(os.environ)
    loader = _RecipesLoader([recipes] if recipes else [])
    loader.start()
    env = detect(python, deep=deep, overrides=overrides)
    recipe_set = loader.get()
    from ..detect.colab_image import annotate

    env = annotate(env, recipe_set.colab_images)
    findings = doctor_findings(env, recipe_set, lock)
    code, healthy, nothing = exit_code_for(env, findings)
    if json:
        from ..render.doctor import print_doctor_json

        print_doctor_json(env, findings, healthy, code)
    else:
        from ..render.doctor import render_doctor

        render_doctor(env, findings, healthy, code, nothing_to_fix=nothing)
    raise typer.Exit(code)
