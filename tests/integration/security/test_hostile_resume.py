"""A journal is input. Under --root, `apply --resume` runs only what stays inside the sandbox: a
journal waiting for a kernel restart whose remaining steps were rewritten (an apt step that runs
a program of the writer's, a conda step whose program lies outside) is refused with exit 2, one
line, and nothing of it runs (fixer.applier.stepcheck.resume_refusal): a step that reaches outside,
and one whose command is not what the planner writes for its recorded inputs."""

from __future__ import annotations

import pytest

from fixer.applier import apply_plan
from fixer.applier.journal import Journal
from fixer.cli import main
from fixer.model import Intent, PlanOptions
from fixer.pipeline import plan_for
from fixer.system.paths import state_dir
from tests.helpers.stublibs import cc
from tests.integration.apply.test_kernel_condacolab import _environment, _kernel_venv


def _waiting(tmp_path, monkeypatch):
    """A real apply stopped before condacolab, in a sandbox: (sandbox, its journal)."""
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "Tesla T4:7.5")
    sandbox = tmp_path / "root"
    sandbox.mkdir()
    python = _kernel_venv(sandbox)
    options = PlanOptions(root=str(sandbox))
    plan = plan_for(
        environment=str(_environment(tmp_path, python)),
        intent=Intent(cudnn_from="conda"),
        options=options,
    ).plan
    assert apply_plan(plan, python=str(python), options=options, verify=False).awaiting_restart
    journal = Journal.latest(state_dir(str(sandbox)))
    assert journal is not None and journal.status == "awaiting-restart"
    return sandbox, journal


def _touch(python, mark):
    return [str(python), "-c", f"open({str(mark)!r}, 'w').close()"]


#: (kind, packages, argv of a step a journal's writer adds, what the refusal says). The first two
#: reach outside the sandbox (fixer.applier.stepcheck.root_refusal); the others stay inside it, run
#: the target's own interpreter, and are refused because the planner never writes that command for
#: that step (stepcheck.foreign): condacolab's `python -c` with other code, a pip step that runs code.
HOSTILE = {
    "apt-install": (
        "apt-install",
        ["x"],
        lambda py, mark: ["/usr/bin/touch", str(mark)],
        "outside the sandbox",
    ),
    "conda-install": (
        "conda-install",
        ["x"],
        lambda py, mark: ["/usr/bin/touch", str(mark)],
        "outside the sandbox",
    ),
    "condacolab-code": ("conda-install", ["condacolab"], _touch, "the planner never writes"),
    "pip-code": ("pip-install", ["condacolab"], _touch, "the planner never writes"),
    "env-fix-command": ("env-fix", [], _touch, "the planner never writes"),
    "cleanup-command": ("cleanup", [], _touch, "the planner never writes"),
}


@pytest.mark.skipif(cc() is None, reason="no C compiler to build the stub cuDNN")
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_rewritten_journal_runs_nothing_the_planner_did_not_write(
    tmp_path, monkeypatch, capsys, case
):
    sandbox, journal = _waiting(tmp_path, monkeypatch)
    kind, packages, argv, says = HOSTILE[case]
    mark = tmp_path / "outside" / "MARK"
    mark.parent.mkdir()
    resume = journal.data["resume"]
    hostile = dict(resume["steps"][resume["next"]])
    hostile.update(kind=kind, argv=argv(journal.python, mark), packages=packages)
    if kind != "pip-install":
        hostile["pip"] = None
    resume["steps"] = (
        resume["steps"][: resume["next"]] + [hostile] + resume["steps"][resume["next"] :]
    )
    journal.save()
    code = main(["apply", "--resume", "--root", str(sandbox), "--no-verify"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert says in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error")]) <= 1, err
    assert not mark.exists()
    assert Journal.latest(state_dir(str(sandbox))).status == "awaiting-restart"
