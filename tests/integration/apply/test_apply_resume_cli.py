"""An apply whose plan needs condacolab, run from outside the kernel: it stops before condacolab
(which must run inside the kernel), journals where to go on, and `apply --resume` (the real CLI)
finishes once conda is there -- the whole apply still one transaction (`rollback` undoes both
parts). The interpreter lives inside the --root sandbox, as --root requires. The plan is made
and started at the stage level (fixer.pipeline.plan_for + fixer.applier.apply_plan): the CLI
refuses `--environment` without --dry-run and conda steps under --root
(fixer.pipeline.apply_refusal), so only the stages can run this flow in a sandbox."""

from __future__ import annotations

import json
import subprocess

import pytest

from fixer.applier import apply_plan
from fixer.cli import main
from fixer.errors import UsageError
from fixer.model import Intent, PlanOptions
from fixer.pipeline import plan_for
from tests.integration.apply.test_kernel_condacolab import (
    FAKE_INSTALLER,
    _environment,
    _kernel_venv,
)
from tests.helpers.stublibs import build_cudnn_copy, cc


@pytest.mark.skipif(cc() is None, reason="no C compiler to build the stub cuDNN")
def test_stops_before_condacolab_then_cli_resume_finishes_and_rollback_undoes_it(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "Tesla T4:7.5")
    sandbox = tmp_path / "root"
    sandbox.mkdir()
    python = _kernel_venv(sandbox)
    env_file = _environment(tmp_path, python)
    options = PlanOptions(root=str(sandbox))
    plan = plan_for(
        environment=str(env_file), intent=Intent(cudnn_from="conda"), options=options
    ).plan
    applied = apply_plan(plan, python=str(python), options=options, verify=False)
    assert applied.awaiting_restart is True
    assert "condacolab.install()" in " ".join(applied.notes) and "--resume" in (
        applied.resume or ""
    )
    # a second apply refuses and says how to go on; nothing runs
    with pytest.raises(UsageError, match="waits for a kernel restart") as refused:
        apply_plan(plan, python=str(python), options=options, verify=False)
    assert "--resume" in (refused.value.hint or "")
    # what condacolab.install() does to the prefix (the real thing runs in the kernel: see
    # test_kernel_condacolab), here by running the same installer
    payload = build_cudnn_copy(tmp_path / "payload", "8.9.7")
    installer = tmp_path / "installer.sh"
    installer.write_text(FAKE_INSTALLER.replace("PAYLOAD", str(payload)))
    subprocess.run(
        ["bash", str(installer), "-bfp", str(sandbox / "usr/local")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    code = main(["apply", "--resume", "--root", str(sandbox), "--no-verify", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["result"]["awaiting_restart"] is False
    assert (sandbox / "usr/local/conda-meta/cudnn-8.9.7.29.json").is_file()
    conf = sandbox / "etc/ld.so.conf.d/00-colab-cudnn-fix.conf"
    assert conf.read_text().splitlines()[1:] == ["/usr/local/lib"]
    assert main(["rollback", "--root", str(sandbox)]) == 0
    assert not conf.exists()
