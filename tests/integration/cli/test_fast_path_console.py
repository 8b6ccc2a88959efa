"""The console script's entry (fixer.cli.entry) takes the typer-free fast path: run in a fresh process,
since what is checked is which modules get imported."""

from __future__ import annotations

import json
import subprocess
import sys


def test_the_console_script_takes_the_fast_path_without_importing_typer(tmp_path):
    code = (
        "import sys, runpy; sys.argv=['colab-cudnn-fix','plan','--json','--environment','colab-2025-01-tf215'];\n"
        "from fixer.cli.entry import main; rc = main();\n"
        "print('TYPER', any(m == 'typer' or m.startswith(('typer.', 'click', 'pydantic')) for m in sys.modules), rc,"
        " file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "TYPER False 0" in out.stderr, out.stderr[-2000:]
    assert json.loads(out.stdout)["command"] == "plan"


def test_the_console_exit_after_the_fast_path_loses_no_output_and_keeps_the_exit_code(tmp_path):
    """fixer.cli.entry.console skips the interpreter's finalization after the fast path: what it
    printed must be whole (stdout to a pipe and to a file, both block-buffered) and the exit code
    the command's own."""
    import fixer

    cases = [
        (
            ["plan", "--json", "--environment", "colab-2025-01-tf215"],
            fixer.plan(environment="colab-2025-01-tf215"),
        ),
        (
            ["doctor", "--json", "--environment", "colab-2025-01-tf215"],
            fixer.doctor(environment="colab-2025-01-tf215"),
        ),
        (
            ["plan", "--json", "--environment", "colab-2026-08-cpu"],
            fixer.plan(environment="colab-2026-08-cpu"),
        ),
    ]
    assert {r.exit_code for _, r in cases} == {0, 1, 3}
    for argv, expected in cases:
        piped = subprocess.run(
            [sys.executable, "-m", "fixer", *argv], capture_output=True, text=True, timeout=120
        )
        to_file = tmp_path / "out.json"
        with open(to_file, "w") as fh:
            code = subprocess.run(
                [sys.executable, "-m", "fixer", *argv], stdout=fh, timeout=120
            ).returncode
        for text, rc in ((piped.stdout, piped.returncode), (to_file.read_text(), code)):
            assert rc == expected.exit_code, (argv, rc, piped.stderr[-2000:])
            assert json.loads(text) == json.loads(json.dumps(expected.to_dict())), argv


def test_a_reader_that_goes_away_gets_exit_1_and_no_traceback():
    """`colab-cudnn-fix plan --json | head -c 0`: the pipe closes before anything is written. The
    fast path answers as click answers it for the full CLI: exit 1, nothing on stderr."""
    for argv in (
        ["plan", "--json", "--environment", "colab-2025-01-tf215"],
        ["doctor", "--json", "--environment", "colab-2025-01-tf215"],
        ["recipes", "list", "--json"],
    ):
        proc = subprocess.Popen(
            [sys.executable, "-m", "fixer", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the answer is written
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 1, (argv, err[-2000:])
        assert "Traceback" not in err and "Exception ignored" not in err, (argv, err[-2000:])
