"""`debug --json`: the raw inputs of detection, for maintainers (real CLI, this machine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from tests.helpers.paths import REPO


def test_debug_bundle_has_the_raw_inputs_and_no_secrets() -> None:
    env = dict(
        os.environ,
        PYTHONPATH=str(REPO),
        COLAB_CUDNN_FIX_GPU="Tesla T4:7.5",
        COLAB_CUDNN_FIX_DRIVER="550.54.15",
        COLAB_CUDNN_FIX_CUDA="12.4",
        COLAB_API_TOKEN="s3cret",
        LD_LIBRARY_PATH="/usr/local/nvidia/lib64",
    )
    r = subprocess.run(
        [sys.executable, "-m", "fixer", "debug", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == 1 and d["redacted"] is True
    assert d["environment_variables"]["COLAB_CUDNN_FIX_GPU"] == "Tesla T4:7.5"
    assert d["environment_variables"]["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64"
    assert "COLAB_API_TOKEN" not in d["environment_variables"] and "s3cret" not in r.stdout
    if os.path.exists("/etc/os-release"):
        assert d["files"]["/etc/os-release"] == Path("/etc/os-release").read_text()
    assert d["commands"]["nvidia-smi"]["argv"][0] == "nvidia-smi"
    assert (
        d["environment"]["gpus"][0]["name"] == "Tesla T4"
        and d["environment"]["driver"]["version"] == "550.54.15"
    )
    assert "native (NVML, libcuda)" in d["probes"] and d["plugins"] == {"found": [], "problems": []}
