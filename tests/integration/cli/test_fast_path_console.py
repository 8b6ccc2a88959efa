"""The console script's entry (fixer._entry) takes the typer-free fast path: run in a fresh process,
since what is checked is which modules get imported."""
from __future__ import annotations

import json
import subprocess
import sys


def test_the_console_script_takes_the_fast_path_without_importing_typer(tmp_path):
    code = ("import sys, runpy; sys.argv=['colab-cudnn-fix','plan','--json','--environment','colab-2025-01-tf215'];\n"
            "from fixer._entry import main; rc = main();\n"
            "print('TYPER', any(m == 'typer' or m.startswith(('typer.', 'click', 'pydantic')) for m in sys.modules), rc,"
            " file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "TYPER False 0" in out.stderr, out.stderr[-2000:]
    assert json.loads(out.stdout)["command"] == "plan"
