"""verify() end to end with the real child in throw-away interpreters whose framework is a
stand-in module (a real torch/JAX needs a GPU: those runs are the `gpu` tests)."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from fixer.cli import main
from fixer.errors import UsageError
from fixer.verifier.checks import installed_frameworks, verify

CRASHING_TORCH = "import os\nos.abort()\n"
CPU_TORCH = """
__version__ = "2.5.1+cpu"
class version:
    cuda = None
"""


def test_unknown_framework_and_bad_interpreter_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="no framework 'tensorflw'"):
        verify(frameworks=("tensorflw",))
    with pytest.raises(UsageError, match="no such executable"):
        verify(str(tmp_path / "python"))
    with pytest.raises(UsageError, match="--timeout"):
        verify(timeout=0)


def test_nothing_installed_means_nothing_checked():
    assert installed_frameworks(sys.executable) == ()
    assert verify(sys.executable) == ()


def test_finds_the_installed_framework_without_importing_it(fake_venv):
    py = fake_venv("torch", CRASHING_TORCH)
    assert installed_frameworks(py) == (
        "torch",
    )  # find_spec only: the stand-in would abort on import


def test_a_framework_that_aborts_on_import_is_crashed(fake_venv):
    (r,) = verify(fake_venv("torch", CRASHING_TORCH), timeout=60)
    assert r.framework == "torch" and r.status == "crashed" and r.signal == "SIGABRT"


def test_a_cpu_only_torch_is_cpu_only_build(fake_venv):
    (r,) = verify(fake_venv("torch", CPU_TORCH), frameworks=("torch",), timeout=60)
    assert r.status == "failed" and r.findings[0].id == "cpu-only-build"
    assert r.version == "2.5.1+cpu" and r.import_seconds is not None


SLOW_TEARDOWN_TORCH = (
    CPU_TORCH
    + """
import atexit, time
atexit.register(time.sleep, 60)   # stands for a CUDA context, cuDNN handles and threads torn down at exit
"""
)


def test_the_frameworks_teardown_is_not_waited_for(fake_venv):
    # On the GPU machine torch's and JAX's exit cost about a second per check after every
    # result was written; the child leaves without it (the budget: < 3 s beyond the import).
    t = time.monotonic()
    (r,) = verify(fake_venv("torch", SLOW_TEARDOWN_TORCH), frameworks=("torch",), timeout=30)
    assert time.monotonic() - t < 15
    assert r.status == "failed" and r.findings[0].id == "cpu-only-build"  # not "timeout"


def test_cli_json_and_exit_code(fake_venv, capsys):
    code = main(["verify", "--json", "--python", fake_venv("torch", CPU_TORCH)])
    body = json.loads(capsys.readouterr().out)
    assert code == 1
    assert body["schema"] == 1 and body["passed"] is False
    assert body["results"][0]["findings"][0]["id"] == "cpu-only-build"


def test_cli_table(fake_venv, capsys):
    code = main(["verify", "--python", fake_venv("torch", CPU_TORCH)])
    out = capsys.readouterr().out
    assert code == 1 and "FAILED torch 2.5.1+cpu" in out and "cpu-only-build" in out


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["verify", "--framework", "caffe"], "'caffe' is not one of: torch"),
        (["verify", "--python", "/nonexistent/python"], "no such executable"),
        (["verify", "--timeout", "-1"], "--timeout"),
    ],
)
def test_cli_bad_input_exits_2(argv, msg, capsys):
    assert main(argv) == 2
    assert msg in capsys.readouterr().err


@pytest.mark.gpu
def test_gpu_machine_every_installed_framework_passes():
    results = verify()
    assert results, "no framework installed"
    for r in results:
        assert r.status == "passed", (r.framework, r.summary, r.findings, r.output[-2000:])
        assert r.cases and all(c["ok"] for c in r.cases)
        if r.framework != "cupy":  # CuPy 14 has no cuDNN module: its check is a GEMM
            assert r.cudnn_loaded and r.cudnn_built
        assert set(r.phases) >= {"startup", "import", "gpu_init", "first_conv", "checks", "exit"}
    # The time budget (< 3 s per framework beyond its import) is measured by a benchmark
    # script, not asserted here: scripts/device/verify_budget.sh.


ENV_TORCH = """
import os
raise ImportError("LD_LIBRARY_PATH=" + os.environ.get("LD_LIBRARY_PATH", "unset"))
"""


def test_the_children_run_in_the_environment_given(fake_venv, monkeypatch):
    # apply checks its result in the environment a new shell gets after its loader fixes
    # (fixer.planner.envfix.environ_after), not in its own, which still has the old LD_LIBRARY_PATH.
    from fixer.planner.envfix import environ_after
    from fixer.model import EnvFix

    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/local/cuda-12.1/lib64:/opt/keep")
    py = fake_venv("torch", ENV_TORCH)
    (before,) = verify(py, frameworks=("torch",), timeout=60)
    assert any(
        "LD_LIBRARY_PATH=/usr/local/cuda-12.1/lib64:/opt/keep" in e for e in before.errors
    ), before.errors
    after_env = environ_after(
        [EnvFix("ld-library-path-drop", "/usr/local/cuda-12.1/lib64")], os.environ
    )
    (after,) = verify(py, frameworks=("torch",), timeout=60, environ=after_env)
    assert any("LD_LIBRARY_PATH=/opt/keep" in e for e in after.errors), after.errors
