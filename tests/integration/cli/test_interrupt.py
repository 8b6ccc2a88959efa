"""Ctrl-C is clean at every moment of the tool's own code: a real SIGINT, while it starts
(imports) and while it waits on a probe child, ends it with exit 130 and one line, never a
traceback, and no child left running. (Before the console script reaches fixer's first line,
CPython's own start-up can still print its KeyboardInterrupt: that is outside the package.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

ENV = dict(os.environ, COLAB_CUDNN_FIX_GPU="none", PYTHONUNBUFFERED="1")


#: Runs the console script's two lines, after arranging for a real SIGINT to hit the process
#: at a chosen moment of its start: when it first imports module TARGET (a deterministic point,
#: unlike a sleep). The handler then runs inside that import, as a user's Ctrl-C would.
INTERRUPT_AT_IMPORT = """
import os, signal, sys
TARGET = sys.argv.pop(1)
class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == TARGET:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Hook())
from fixer.cli.entry import main
sys.exit(main())
"""

# from the first import of the tool to the renderer that prints the answer
START_UP = [
    (m, argv)
    for argv in (("doctor", "--json"),)
    for m in (
        "fixer.cli.commands",
        "typer",
        "fixer.model",
        "fixer.cli.table",
        "fixer.cli.options",
        "fixer.cli.doctor",
        "fixer.api",
        "fixer.detection",
        "fixer.system.proc",
        "fixer.diagnosis.findings",
        "fixer.render",
    )
]


@pytest.mark.parametrize("module,argv", START_UP)
def test_ctrl_c_during_start_up_exits_130_without_a_traceback(module, argv, tmp_path):
    script = tmp_path / "entry.py"
    script.write_text(INTERRUPT_AT_IMPORT)
    proc = subprocess.run(
        [sys.executable, str(script), module, *argv],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert proc.returncode == 130, (module, proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr and "KeyboardInterrupt" not in proc.stderr, proc.stderr
    body = json.loads(proc.stdout)  # --json: the interruption is one JSON object too
    assert body["exit_code"] == 130 and body["error"]["message"] == "interrupted", body


def test_ctrl_c_during_a_probe_kills_the_probe_child(tmp_path):
    pidfile = tmp_path / "probe.pid"
    slow = tmp_path / "python3"  # a target "interpreter" whose probe hangs
    slow.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec sleep 60\n")
    slow.chmod(0o755)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fixer", "doctor", "--python", str(slow)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not pidfile.exists() or not pidfile.read_text().strip():  # the probe really runs
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    child = int(pidfile.read_text())
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "Traceback" not in err and err.strip().endswith("interrupted"), err
    with pytest.raises(ProcessLookupError):  # the probe child is gone, not orphaned
        for _ in range(50):
            os.kill(child, 0)
            time.sleep(0.02)
