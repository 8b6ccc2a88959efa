"""The shipped recipes, checked in fresh processes: they regenerate from data/ exactly, and loading
them does not import packaging."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers.paths import REPO as ROOT


def test_generated_files_are_current(shared_data):
    """recipes/*.toml are exactly what scripts/import_shared_data.py makes of the research data."""
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "import_shared_data.py"),
            "--check",
            "--data",
            str(shared_data),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_load_in_a_fresh_process_does_not_import_packaging():
    code = (
        "import sys; from fixer import recipebook; before = 'packaging' in sys.modules; recipebook.load(); "
        "print(before, 'packaging' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=str(ROOT), check=True
    )
    before, after = out.stdout.split()
    assert after == before, (
        "loading the shipped recipes must not need packaging (its regex fast path covers them)"
    )
