"""`report` end to end: the real CLI in a child process on a bundled GPU-machine environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from fixer.reporting.report import REPORT_SCHEMA
from tests.helpers.paths import REPO


def cli(*args: str, home: str = "/opt/torch", user: str = "torch") -> subprocess.CompletedProcess:
    env = dict(os.environ, HOME=home, USER=user, LOGNAME=user, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "fixer", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_report_cli_markdown_html_json() -> None:
    """The GPU machine with its pip cuDNN hidden (a recorded doctor --json): the report names the
    cause, the copy that loads and why, and the fix; the home directory (/opt/torch there) is ~."""
    r = cli("report", "--environment", "h200-pip-cudnn-hidden")
    assert r.returncode == 0, r.stderr
    md = r.stdout
    assert "NVIDIA H200 (compute capability 9.0" in md and "580.159.04 (CUDA 13.0)" in md
    assert "| torch | torch 2.11.0+cu130 | CUDA 13.0, cuDNN 9.19.0 |" in md
    assert "9.14.0 from /lib/x86_64-linux-gnu/libcudnn.so.9 | found through ld.so.cache" in md
    assert "`cudnn-too-old`" in md and "fix: Reinstall the cuDNN wheel" in md
    assert "/opt/torch" not in md and "~/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib" in md
    raw = cli("report", "--environment", "h200-pip-cudnn-hidden", "--no-redact").stdout
    assert "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib" in raw
    page = cli("report", "--environment", "h200-pip-cudnn-hidden", "--html")
    assert (
        page.returncode == 0
        and page.stdout.startswith("<!doctype html>")
        and "cudnn-too-old" in page.stdout
    )
    assert "/opt/torch" not in page.stdout
    data = json.loads(cli("report", "--environment", "h200-pip-cudnn-hidden", "--json").stdout)
    assert (
        data["schema"] == REPORT_SCHEMA == 2 and data["redacted"] is True and data["exit_code"] == 1
    )
    assert data["cudnn_copies"] and all(
        c["package"] is None or set(c["package"]) == {"name", "version"}
        for c in data["cudnn_copies"]
    )  # schema 2: package is an object
    bad = cli("report", "--html", "--json")
    assert (
        bad.returncode == 2
        and "exclude each other" in bad.stdout + bad.stderr
        and "Traceback" not in bad.stderr
    )
