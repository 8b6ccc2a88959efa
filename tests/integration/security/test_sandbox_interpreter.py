"""`--root` is a sandbox: an apply or rollback whose interpreter lies outside it is refused (exit 2,
one line, nothing changed), whichever way the interpreter gets outside -- a venv beside the
sandbox, a folder inside the sandbox that links out, a step whose argv names another interpreter,
an interpreter a journal names, `--python` of a rollback. One rule decides it
(fixer.applier.prepare.sandbox_refusal); the dry run names the same refusal
(fixer.pipeline.apply_refusal). Real venvs, real pip; nothing outside them is touched."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.applier import apply_plan, rollback
from fixer.applier.journal import Journal
from fixer.cli import main
from fixer.errors import FixerError
from fixer.model import Plan, PlanOptions, Step
from fixer.system.fsgate import PathRefused
from fixer.system.paths import private_state_dir
from tests.helpers.examples import examples
from tests.helpers.paths import sandbox_python
from tests.helpers.pyindex import tree_of

pytestmark = pytest.mark.integration

#: Where the interpreter is, as seen from the sandbox: each an attack class.
PLACES = ("beside", "linked-folder", "step-argv", "linked-python")


def _world(tmp: Path, place: str) -> Tuple[Path, Path, str, str]:
    """(sandbox, outside, the interpreter apply is given, the interpreter the step runs)."""
    sandbox, outside = tmp / "root", tmp / "outside"
    sandbox.mkdir()
    outside.mkdir()
    foreign = sandbox_python(outside)
    if place == "beside":
        return sandbox, outside, foreign, foreign
    if place == "linked-folder":  # ROOT/venv -> OUTSIDE/venv
        os.symlink(outside / "venv", sandbox / "venv")
        python = str(sandbox / "venv" / "bin" / "python")
        return sandbox, outside, python, python
    if place == "step-argv":  # the target is inside, the step's installer runs the outside one
        return sandbox, outside, sandbox_python(sandbox), foreign
    # ROOT/bin/python -> the outside venv's interpreter: its prefix is outside
    (sandbox / "bin").mkdir()
    os.symlink(foreign, sandbox / "bin" / "python")
    return sandbox, outside, str(sandbox / "bin" / "python"), str(sandbox / "bin" / "python")


def _plan(step_python: str, name: str) -> Plan:
    step = Step(
        kind="pip-install",
        summary=f"install {name}",
        argv=(step_python, "-m", "pip", "install", "--no-deps", "--no-index", f"{name}==1.0"),
        packages=(f"{name}==1.0",),
    )
    return Plan(steps=(step,), python=step_python)


def _trees(*dirs: Path) -> Dict[str, Dict[str, str]]:
    return {str(d): tree_of(d) for d in dirs}


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    place=st.sampled_from(PLACES),
    name=st.sampled_from(["nvidia-cudnn-cu13", "pip", "torch"]),
)
def test_apply_with_an_interpreter_outside_the_sandbox_is_refused_and_changes_nothing(
    tmp_path_factory, place, name
):
    tmp = tmp_path_factory.mktemp("sandbox-interpreter")
    sandbox, outside, python, step_python = _world(tmp, place)
    before = _trees(outside)
    with pytest.raises(PathRefused) as refused:
        apply_plan(_plan(step_python, name), python=python, options=PlanOptions(root=str(sandbox)))
    assert "is outside the sandbox" in refused.value.message
    assert refused.value.exit_code == 2 and "\n" not in refused.value.message
    assert _trees(outside) == before
    journal_dir = private_state_dir(str(sandbox)) / "journal"
    assert not journal_dir.exists() or not any(journal_dir.iterdir())


def test_the_cli_refuses_it_with_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    """The real CLI on a real outside venv: apply and its dry run share the refusal."""
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "Tesla T4:7.5")
    sandbox, outside, python, _ = _world(tmp_path, "beside")
    before = _trees(outside, sandbox)
    code = main(["apply", "--root", str(sandbox), "--python", python, "--no-verify"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") <= 2 and "Traceback" not in err
    assert "outside the sandbox" in err or "outside the sandbox" in err.replace("\n", " ")
    assert _trees(outside)[str(outside)] == before[str(outside)]
    code = main(["apply", "--root", str(sandbox), "--python", python, "--dry-run", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert payload["refusal"]["type"] == "PathRefused" and payload["refusal"]["exit_code"] == 2
    assert "outside the sandbox" in payload["refusal"]["message"]


@pytest.mark.parametrize("how", ["--python", "journal"])
def test_rollback_refuses_an_interpreter_outside_the_sandbox(tmp_path, capsys, how):
    """A journal is untrusted input: the interpreter it names (or --python) must be inside."""
    sandbox, outside, _, foreign = _world(tmp_path, "beside")
    inside = sandbox_python(sandbox)
    state = private_state_dir(str(sandbox))
    named = foreign if how == "journal" else inside
    Journal.create(state, python=named, root=str(sandbox)).set(status="done")
    before = _trees(outside)
    argv = ["rollback", "--root", str(sandbox)] + (
        ["--python", foreign] if how == "--python" else []
    )
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert "outside the sandbox" in err.replace("\n", " ")
    assert _trees(outside) == before
    with pytest.raises(FixerError):
        rollback(root=str(sandbox), python=foreign)


@pytest.mark.parametrize("how", ["apply", "rollback"])
def test_an_interpreter_outside_the_sandbox_is_not_even_run(tmp_path, how):
    """Refused on its name alone: an outside "interpreter" that would leave a mark when run
    never runs (apply reads a target by running it; this one is refused first)."""
    sandbox, outside = tmp_path / "root", tmp_path / "outside"
    sandbox.mkdir()
    outside.mkdir()
    mark = tmp_path / "ran"
    fake = outside / "python"
    fake.write_text(f"#!/bin/sh\ntouch {mark}\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(PathRefused):
        if how == "apply":
            apply_plan(
                _plan(str(fake), "torch"), python=str(fake), options=PlanOptions(root=str(sandbox))
            )
        else:
            Journal.create(
                private_state_dir(str(sandbox)), python=str(fake), root=str(sandbox)
            ).set(status="done")
            rollback(root=str(sandbox))
    assert not mark.exists()
