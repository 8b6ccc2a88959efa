"""The fault suite: every fault at every exact point ends, after `colab-cudnn-fix rollback`, in a
byte-identical machine, or in a refusal that changed nothing. Never a traceback.

Target: a venv with a torch stand-in and nvidia-cudnn-cu13 9.14 (real compiled stub libraries plus
a 64 KiB file, so that a file-size limit bites), from a local index on 127.0.0.1. The plan writes
two loader-fix files into the --root sandbox, then upgrades cuDNN to 9.19 with real pip (or uv).
Fault points and actions: tests/helpers/faults.py.

Fingerprint (before the apply, after the rollback): `pip freeze --all`, and every directory (mode),
file (sha256, mode) and symlink (target) of the whole venv and of the sandbox. The one exclusion is
the sandbox's var/ tree, where the journal itself lives (it has to outlast the apply to be a journal).
Regenerated .pyc files, empty directories and uv's files all count.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Dict, Iterator, Tuple

import pytest

from fixer.applier.envfix import env_fix_steps
from fixer.model import EnvFix, Plan, to_dict
from tests.helpers.faults import APPLY_DRIVER, JOURNAL_POINTS, SITECUSTOMIZE, differences, fingerprint, uv_fault
from tests.helpers.pyindex import PackageIndex, cudnn_wheel, freeze_of, torch_wheel

from .conftest import CUDNN_GOOD, CUDNN_OLD, TORCH, _make_venv, copy_venv, pip_step, uv_step
from tests.helpers.paths import REPO

pytestmark = pytest.mark.integration

ACTIONS = ("SIGKILL", "SIGTERM", "SIGINT", "readonly", "fsize")
SIGNALS = ("SIGKILL", "SIGTERM", "SIGINT")
PIP_POINTS = ("pip-start", "pip-after-uninstall", "pip-mid-extract", "pip-before-cleanup", "pip-exit")
UV_POINTS = ("uv-after-uninstall", "uv-mid-install", "uv-exit")
FIXES = (EnvFix(kind="ld-library-path-drop", value="/usr/lib/x86_64-linux-gnu"),
         EnvFix(kind="ipython-preload", value="/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib"))

#: Journal writes before anything on the machine changes: a signal or a full disk there must end in a
#: refusal that changed nothing (read-only answers like a full disk there: one OSError from the write).
_EARLY = ("create", "before", "manifest", "applying")
CASES = ([("journal", p, a) for p in JOURNAL_POINTS
          for a in (("SIGKILL", "SIGTERM", "fsize") if p in _EARLY else ACTIONS)]
         + [("pip", p, a) for p in PIP_POINTS for a in ACTIONS]
         + [("uv", p, a) for p in UV_POINTS for a in SIGNALS])


@pytest.fixture(scope="module")
def fault_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackageIndex]:
    d = tmp_path_factory.mktemp("fault-wheels")
    wheels = [cudnn_wheel(d, CUDNN_OLD, cuda_major=13, padding=64 << 10),
              cudnn_wheel(d, CUDNN_GOOD, cuda_major=13, padding=64 << 10),
              torch_wheel(d, TORCH, requires=[f"nvidia-cudnn-cu13=={CUDNN_GOOD}"])]
    with PackageIndex(tmp_path_factory.mktemp("fault-index")) as ix:
        ix.add(*wheels)
        yield ix


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, fault_index: PackageIndex) -> Tuple[Path, str, Dict[str, str]]:
    """The broken venv, made once; each case copies it (copytree keeps mtimes, so .pyc stay valid)."""
    venv = _make_venv(tmp_path_factory.mktemp("fault-template") / "venv", True)
    python = str(venv / "bin" / "python")
    env = _installer_env(tmp_path_factory.mktemp("fault-cache"))
    subprocess.run([python, "-m", "pip", "install", "--no-deps", "--index-url", fault_index.url,
                    f"torch=={TORCH}", f"nvidia-cudnn-cu13=={CUDNN_OLD}"], check=True, capture_output=True, env=env,
                   timeout=300)
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    subprocess.run([python, "-c", "import sitecustomize"], check=True, env=env)      # its .pyc, once
    subprocess.run([python, "-m", "pip", "--version"], check=True, capture_output=True, env=env)
    empty = tmp_path_factory.mktemp("empty-root")
    os.chmod(empty, 0o755)
    freeze, fp = _state(venv, empty)
    return venv, freeze, fp      # every case starts from a byte-identical copy: its state is this one


def _installer_env(cache: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_", "CCF_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1",
               PIP_CACHE_DIR=str(cache / "pip"), UV_NO_CONFIG="1", UV_CACHE_DIR=str(cache / "uv"),
               UV_LINK_MODE="copy", TMPDIR=str(cache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def _state(venv: Path, sandbox: Path) -> Tuple[str, Dict[str, str]]:
    return (freeze_of(venv / "bin" / "python"),
            fingerprint(("venv", venv), ("root", sandbox), skip=("root/var",)))


@pytest.mark.parametrize("kind, point, action", CASES, ids=[f"{p}-{a}" for _, p, a in CASES])
def test_fault_then_rollback_is_byte_identical(kind, point, action, template, fault_index, tmp_path):
    venv = tmp_path / "venv"
    copy_venv(template[0], venv)
    python = str(venv / "bin" / "python")
    sandbox = tmp_path / "root"
    sandbox.mkdir()
    os.chmod(sandbox, 0o755)
    env = _installer_env(tmp_path / "cache")
    env["PYTHONPATH"] = str(REPO)
    freeze_before, before = template[1], template[2]

    step = uv_step(python, fault_index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}") if kind == "uv" else \
        pip_step(python, fault_index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}")
    plan = Plan(steps=(*env_fix_steps(FIXES, home="/root", is_root=True), step), python=python,
                installer="uv" if kind == "uv" else "pip")
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(to_dict(plan)))
    mark = tmp_path / "fault.mark"
    env.update(CCF_FAULT=f"{point}:{action}", CCF_FAULT_MARK=str(mark))
    proc = subprocess.Popen([sys.executable, "-c", APPLY_DRIVER, str(plan_file), python, str(sandbox)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=str(REPO))
    fired: list = []
    stop = threading.Event()
    if kind == "uv":
        site = next((venv / "lib").glob("python3*/site-packages"))
        watcher = threading.Thread(target=uv_fault, daemon=True, args=(
            site, point, action, proc.pid, f"nvidia_cudnn_cu13-{CUDNN_OLD}.dist-info",
            f"nvidia_cudnn_cu13-{CUDNN_GOOD}.dist-info", fired, stop))
        watcher.start()
    try:
        out, _ = proc.communicate(timeout=180)
    finally:
        stop.set()
    assert "Traceback" not in out and "TRACEBACK" not in out, out
    if kind == "uv":
        assert fired, f"the watcher never saw {point}:\n{out}"
    else:
        assert mark.is_file(), f"the fault point {point} was never reached:\n{out}"

    env_rb = {k: v for k, v in env.items() if not k.startswith("CCF_")}
    rb = subprocess.run([sys.executable, "-m", "fixer", "rollback", "--root", str(sandbox), "--json"],
                        capture_output=True, text=True, env=env_rb, cwd=str(REPO), timeout=180)
    assert "Traceback" not in rb.stdout + rb.stderr, rb.stdout + rb.stderr
    assert rb.returncode == 0, f"apply said:\n{out}\nrollback said:\n{rb.stdout}{rb.stderr}"
    report = json.loads(rb.stdout)["rollback"]
    assert report["status"] in ("rolled-back", "nothing-to-do"), report
    assert report["status"] == "nothing-to-do" or report["exact"], report

    freeze_after, after = _state(venv, sandbox)
    assert freeze_after == freeze_before
    diff = differences(before, after)
    assert diff == [], "\n".join([f"apply said: {out[-2000:]}", f"rollback: {report}"] + diff[:40])
