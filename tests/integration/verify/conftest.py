"""Fixtures for the verify tests: stand-in child scripts (crash, hang, garbage, success) and
throw-away interpreters whose `torch` is a stand-in module."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Callable

import pytest

MARK = "@@fixer-verify@@ "


def record(event: str, **fields) -> str:
    """One protocol line, as the real child writes it."""
    return MARK + json.dumps(dict(event=event, **fields))


@pytest.fixture
def stand_in(tmp_path: Path) -> Callable[[str], str]:
    """Write a stand-in child script (body is Python; `emit(event, **f)` prints a record)."""

    def make(body: str, name: str = "child.py") -> str:
        p = tmp_path / name
        p.write_text(
            "import json, os, signal, sys, time\n"
            f"MARK = {MARK!r}\n"
            "def emit(event, **f):\n"
            "    f['event'] = event\n"
            "    sys.stdout.write(MARK + json.dumps(f) + '\\n'); sys.stdout.flush()\n"
            + textwrap.dedent(body)
        )
        return str(p)

    return make


@pytest.fixture(scope="session")
def fake_venv(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], str]:
    """A real venv (no pip) whose site-packages gets a stand-in package; returns its python."""
    made = {}

    def make(package: str, source: str) -> str:
        key = (package, source)
        if key in made:
            return made[key]
        root = tmp_path_factory.mktemp(f"venv-{package}")
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120
        )
        sp = next((root / "lib").glob("python3*/site-packages"))
        (sp / package).mkdir()
        (sp / package / "__init__.py").write_text(textwrap.dedent(source))
        made[key] = str(root / "bin" / "python")
        return made[key]

    return make
