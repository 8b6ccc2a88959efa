"""A journal is input. Under --root, `apply --resume` runs only what stays inside the sandbox: a
journal waiting for a kernel restart whose remaining steps were rewritten (an apt step that runs
a program of the writer's, a conda step whose program lies outside) is refused with exit 2, one
line, and nothing of it runs (fixer.applier.transaction._refuse_system_steps)."""

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


@pytest.mark.skipif(cc() is None, reason="no C compiler to build the stub cuDNN")
@pytest.mark.parametrize("kind", ["apt-install", "conda-install"])
def test_a_rewritten_journal_runs_nothing_outside_the_sandbox(tmp_path, monkeypatch, capsys, kind):
    sandbox, journal = _waiting(tmp_path, monkeypatch)
    mark = tmp_path / "outside" / "MARK"
    mark.parent.mkdir()
    resume = journal.data["resume"]
    hostile = dict(resume["steps"][resume["next"]])
    hostile.update(kind=kind, argv=["/usr/bin/touch", str(mark)], packages=["x"], pip=None)
    resume["steps"] = (
        resume["steps"][: resume["next"]] + [hostile] + resume["steps"][resume["next"] :]
    )
    journal.save()
    code = main(["apply", "--resume", "--root", str(sandbox), "--no-verify"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "outside the sandbox" in err and "Traceback" not in err
    assert not mark.exists()
    assert Journal.latest(state_dir(str(sandbox))).status == "awaiting-restart"
