"""Check plugins cannot break the tool. Real plugin distributions, built as
wheels here and installed by real pip into a throw-away venv, each doing what a buggy or hostile
check can: `sys.exit(0)` (once made a broken machine's doctor exit 0), `raise KeyboardInterrupt`,
`sys.exit` at import, printing onto stdout (once corrupted `--json`), and sleeping past the
deadline. Each is reported as a warning and skipped; the exit code and the JSON verdict are the
ones the same command gives without plugins, and stdout is one JSON document."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import Dict

import pytest

from tests.helpers.pyindex import build_wheel
from tests.integration.plugins.test_plugins import run

HOSTILE = """
import sys
import time

from fixer.model import Finding


def exits(env, recipes):
    sys.exit(0)


def interrupts(env, recipes):
    raise KeyboardInterrupt


def chatty(env, recipes):
    print("NOT JSON {")
    print("garbage on stderr", file=sys.stderr)
    return [Finding(id="log-noise", severity="info", title="chatty plugin ran")]


def sleepy(env, recipes):
    time.sleep(3600)
    return []
"""

EXITS_ON_IMPORT = "import sys\nsys.exit(3)\n"


@pytest.fixture(scope="module")
def hostile_venv(tmp_path_factory) -> Dict[str, str]:
    root = tmp_path_factory.mktemp("hostile-plugins")
    wheel = build_wheel(
        root / "wheels",
        "ccf-hostile",
        "1.0",
        {
            "ccf_hostile/__init__.py": "",
            "ccf_hostile/checks.py": HOSTILE,
            "ccf_hostile/at_import.py": EXITS_ON_IMPORT,
        },
        entry_points="[colab_cudnn_fix.checks]\n"
        "exits = ccf_hostile.checks:exits\n"
        "interrupts = ccf_hostile.checks:interrupts\n"
        "chatty = ccf_hostile.checks:chatty\n"
        "sleepy = ccf_hostile.checks:sleepy\n"
        "at-import = ccf_hostile.at_import:check\n",
    )
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            py,
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        check=True,
    )
    return {"python": py}


@pytest.mark.parametrize("environment", ["h200-pip-cudnn-hidden", "h200-healthy"])
def test_hostile_check_plugins_change_neither_exit_code_nor_verdict(
    hostile_venv, environment
) -> None:
    plain = run(sys.executable, "doctor", "--environment", environment, "--json")
    t0 = time.monotonic()
    got = run(hostile_venv["python"], "doctor", "--environment", environment, "--json")
    seconds = time.monotonic() - t0
    assert got.returncode == plain.returncode, got.stderr
    doc, base = json.loads(got.stdout), json.loads(plain.stdout)  # stdout: one JSON document
    assert doc["healthy"] == base["healthy"] and doc.get("exit_code") == base.get("exit_code")
    ids = lambda d: sorted(f["id"] for f in d["findings"])  # noqa: E731
    assert ids(doc) == sorted(ids(base) + ["log-noise"])  # only the well-behaved chatty finding
    err = got.stderr
    assert "Traceback" not in err
    assert "check plugin 'exits' of ccf_hostile 1.0 failed: SystemExit: 0; skipped" in err
    assert "check plugin 'interrupts' of ccf_hostile 1.0 failed: KeyboardInterrupt" in err
    assert "check plugin 'at-import' of ccf_hostile 1.0 failed: SystemExit: 3" in err
    assert "check plugin 'sleepy' of ccf_hostile 1.0 did not answer within 10 s; skipped" in err
    assert "NOT JSON" not in got.stdout and "garbage on stderr" not in err
    assert seconds < 60


def test_report_json_stays_one_document(hostile_venv) -> None:
    got = run(hostile_venv["python"], "report", "--environment", "h200-healthy", "--json")
    assert got.returncode == 0, got.stderr
    value = json.loads(got.stdout)
    assert any(f["title"] == "chatty plugin ran" for f in value["findings"])
