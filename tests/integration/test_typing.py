"""`mypy` (strict, configured in pyproject.toml's [tool.mypy]) passes on the fixer package."""

import subprocess
import sys

import pytest
from tests.helpers.paths import REPO

pytest.importorskip("mypy")

ROOT = REPO


def test_mypy_strict_passes():
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    output = proc.stdout + proc.stderr
    print(output)
    assert proc.returncode == 0, f"mypy failed (exit {proc.returncode}):\n{output}"
