"""`explain` with detection: it reads this machine (child processes) and does not fail without a GPU."""

from __future__ import annotations

import json

from fixer.cli import main

TEXT = (
    "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found "
    "runtime version (9, 14, 0)."
)


def test_with_detection_does_not_fail_on_a_machine_without_gpu(capsys):
    code = main(["explain", "--json", TEXT])
    body = json.loads(capsys.readouterr().out)
    assert code == 0 and body["detected"] is True
    assert body["findings"][0]["id"] in ("cudnn-too-old", "cudnn-shadowed")
