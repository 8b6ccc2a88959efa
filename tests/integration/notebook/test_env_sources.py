"""Where a loader variable of a real Jupyter kernel comes from (fixer.planner.envsource), with
kernels started by jupyter_client as jupyter_server starts them (JPY_SESSION_NAME in their
environment: jupyter_server SessionManager.get_kernel_env):

- a `%env LD_PRELOAD=...` line the notebook ran: found in the kernel's os.environ but not in
  what it started with (/proc/<pid>/environ): an "in-process" source, said with the exact step
  (`fixer.apply()` in the kernel, or restart); the notebook file the kernel names holds the
  line, and its fixed text, run in a new kernel, no longer sets it;
- a value the kernel was started with (a spec's env): a "kernel-environ" source read from
  /proc/<pid>/environ, said with the step (restart, or `fixer.apply()` in a cell)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Dict, Iterator, Tuple

import pytest

from fixer.planner import envsource as es
from tests.helpers.kernels import run_cell

jupyter_client = pytest.importorskip("jupyter_client")
pytestmark = pytest.mark.integration

BAD = "/opt/other-cudnn/lib/libcudnn_adv.so.9"
KEEP = "/opt/lib/libjemalloc.so.2"
REPO = str(Path(__file__).resolve().parents[3])


def _notebook(path: Path) -> None:
    cell = lambda src: {  # noqa: E731
        "cell_type": "code",
        "execution_count": None,
        "metadata": {},
        "outputs": [],
        "source": src,
    }
    nb = {
        "cells": [
            cell(["import os\n"]),
            cell([f"%env LD_PRELOAD={KEEP}:{BAD}\n", "x = 1"]),
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(nb, indent=1))


def _start(tmp: Path, name: str, env: Dict[str, str]) -> Tuple[object, object]:
    spec = tmp / "jupyter" / "kernels" / name
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": name, "language": "python"})
    )
    km = jupyter_client.KernelManager(kernel_name=name)
    km.kernel_spec_manager.kernel_dirs = [str(tmp / "jupyter" / "kernels")]
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    km.start_kernel(cwd=str(tmp), env={**base, "PYTHONPATH": REPO, **env})
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


@pytest.fixture
def kernels(tmp_path: Path) -> Iterator[list]:
    started: list = []
    yield started
    for km, kc in started:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _cells(nb_text: str) -> str:
    return "\n".join(
        "".join(c["source"]) for c in json.loads(nb_text)["cells"] if c["cell_type"] == "code"
    )


def test_a_notebook_env_line_is_found_in_the_kernel_and_fixed_in_the_notebook(tmp_path, kernels):
    nb = tmp_path / "work" / "train.ipynb"
    nb.parent.mkdir()
    _notebook(nb)
    km, kc = _start(tmp_path, "nb", {"JPY_SESSION_NAME": str(nb)})
    kernels.append((km, kc))
    pid = km.provisioner.process.pid
    run_cell(kc, _cells(nb.read_text()))  # the user ran the notebook: %env set it
    out = run_cell(
        kc,
        "import json, os\nfrom fixer.planner import envsource as es\n"
        f"d = [('LD_PRELOAD', {BAD!r})]\n"
        "p = es.process_sources(d, os.environ, started_with=es.read_environ('self'))\n"
        "f = es.find_sources(d, environ=dict(os.environ))\n"
        "print('OUT ' + json.dumps({'proc': [(s.kind, s.pid) for s in p], "
        "'notes': es.process_notes(p), 'files': [(s.kind, s.path, s.fixed) for s in f], "
        "'pid': os.getpid()}))\n",
    )
    res = json.loads(out.split("OUT ", 1)[1])
    assert res["pid"] == pid
    # set after the start: os.environ holds it, /proc/<pid>/environ does not
    assert BAD not in (es.read_environ(pid) or {}).get("LD_PRELOAD", "")
    assert res["proc"] == [["in-process", pid]]
    assert "fixer.apply()" in res["notes"][0] and f"pid {pid}" in res["notes"][0]
    notebooks = [f for f in res["files"] if f[0] == "notebook"]
    assert [f[1] for f in notebooks] == [str(nb)]
    fixed = notebooks[0][2]
    assert BAD not in fixed and KEEP in fixed
    # the fixed notebook, run in a new kernel, no longer sets it (and keeps the other entry)
    nb.write_text(fixed)
    km2, kc2 = _start(tmp_path, "nb2", {"JPY_SESSION_NAME": str(nb)})
    kernels.append((km2, kc2))
    run_cell(kc2, _cells(nb.read_text()))
    now = run_cell(kc2, "import os\nprint('ENV ' + os.environ.get('LD_PRELOAD', ''))\n")
    value = now.split("ENV ", 1)[1].strip()
    assert BAD not in value and KEEP in value


def test_a_value_the_kernel_started_with_is_said_with_the_step(tmp_path, kernels):
    km, kc = _start(tmp_path, "spec", {"LD_PRELOAD": f"{KEEP}:{BAD}"})
    kernels.append((km, kc))
    pid = km.provisioner.process.pid
    run_cell(kc, "x = 1\n")
    started = es.read_environ(pid)
    assert started is not None and BAD in started.get("LD_PRELOAD", "")
    found = es.process_sources(
        [("LD_PRELOAD", BAD)], os.environ, kernel_pid=pid, kernel_environ=started
    )
    assert [(s.kind, s.pid) for s in found] == [("kernel-environ", pid)]
    (note,) = es.process_notes(found)
    assert f"pid {pid}" in note and "restart the runtime" in note and "fixer.apply()" in note
