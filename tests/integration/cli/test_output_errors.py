"""Output that cannot be written ends with one line on stderr and exit 4 (fixer.cli.output), never a
traceback: a real pipe whose reader is gone (EPIPE) and a real full device (`> /dev/full`, ENOSPC),
for JSON and terminal output, small and large answers. A file the command itself fails to write
is not output: it stays the command's own error."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fixer.cli.output import OUTPUT_FAILED

ENV = dict(os.environ, COLAB_CUDNN_FIX_GPU="none", NO_COLOR="1")
CASES = [
    ["plan", "--json", "--environment", "colab-2025-01-tf215"],
    ["doctor", "--environment", "colab-2025-01-tf215"],
    ["recipes", "list", "--json"],
    ["--version"],
]


def _one_line(err: str) -> None:
    assert "Traceback" not in err and "Exception ignored" not in err, err[-2000:]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: could not write the output"), err


@pytest.mark.parametrize("argv", CASES)
def test_a_reader_that_goes_away_gets_one_line_and_exit_4(argv):
    proc = subprocess.Popen(
        [sys.executable, "-m", "fixer", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the answer is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == OUTPUT_FAILED, (argv, err[-2000:])
    _one_line(err)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", CASES)
def test_a_full_disk_gets_one_line_and_exit_4(argv):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "fixer", *argv],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
            timeout=120,
        )
    assert proc.returncode == OUTPUT_FAILED, (argv, proc.stderr[-2000:])
    _one_line(proc.stderr)


def test_the_exit_code_is_documented_in_the_help_and_the_readme():
    from fixer.cli.table import GENERAL_EXIT_CODES

    assert OUTPUT_FAILED in dict(GENERAL_EXIT_CODES)
    readme = open(os.path.join(os.path.dirname(__file__), "../../../README.md")).read()
    assert f"{OUTPUT_FAILED} the output could not be written" in " ".join(readme.split())
