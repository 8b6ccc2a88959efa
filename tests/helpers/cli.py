"""The CLI called in this process, for tests that compare it with the Python API."""

from __future__ import annotations

import json
from typing import Any, Dict, Tuple

import pytest

from fixer.cli import main


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Tuple[int, Dict[str, Any]]:
    """(exit code, the --json payload) of `colab-cudnn-fix ARGV --json`."""
    code = main([*argv, "--json"])
    out, _ = capsys.readouterr()
    return code, json.loads(out)
