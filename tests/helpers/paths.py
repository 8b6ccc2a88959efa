"""Where things are, for tests in either tree: the checkout and the recorded test data."""

from __future__ import annotations

from pathlib import Path

#: The checkout (the folder holding pyproject.toml).
REPO = Path(__file__).resolve().parents[2]
#: Recorded real outputs (tests/data): GPU machine runs, fatbins.
DATA = REPO / "tests" / "data"


_TEMPLATE: list = []


def sandbox_python(root: Path, name: str = "venv") -> str:
    """An interpreter inside the --root sandbox `root`: a venv of this test run's Python without
    pip (copied from one made once per process). An apply or rollback under --root refuses an
    interpreter outside the sandbox (fixer.applier.prepare.sandbox_refusal), so a test that
    applies there needs its own; one whose plan runs no installer can use this."""
    import atexit
    import shutil
    import subprocess
    import sys
    import tempfile

    if not _TEMPLATE:
        base = Path(tempfile.mkdtemp(prefix="sandbox-python-"))
        atexit.register(shutil.rmtree, base, True)
        venv = base / "venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300
        )
        _TEMPLATE.append(venv)
    dest = Path(root) / name
    shutil.copytree(_TEMPLATE[0], dest, symlinks=True)
    return str(dest / "bin" / "python")
