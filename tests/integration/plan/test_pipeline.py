"""`plan` detects the machine the same way `doctor` and `apply` do: COLAB_CUDNN_FIX_* overrides
are honoured (one pipeline for every command)."""

import json

from fixer.cli import main
from fixer.model import Intent
from fixer.pipeline import plan_for


def test_plan_honours_the_no_gpu_override(capsys, monkeypatch):
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "none")
    assert main(["plan", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["plan"]["nothing_to_do"] is True
    assert [f["id"] for f in body["plan"]["findings"]] == ["gpu-missing"] or body["plan"][
        "findings"
    ] == []


def test_plan_for_a_bundled_machine_keeps_torch_and_reinstalls_only_cudnn():
    planned = plan_for(environment="h200-pip-cudnn-hidden", intent=Intent())
    installs = [s for s in planned.plan.steps if s.kind == "pip-install"]
    assert [s.packages for s in installs] == [("nvidia-cudnn-cu13==9.19.0.56",)]
    assert planned.where.startswith("bundled environment")
