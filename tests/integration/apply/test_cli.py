"""`colab-cudnn-fix apply` and `rollback` end to end: real detect, diagnose, resolve and plan on a
venv with stand-in wheels (torch with the real NEEDED/RPATH layout, cuDNN stubs), installs from
an index on 127.0.0.1 reached through --index-mirror, all files in a --root sandbox. The GPU
and driver are the true edge: given with the COLAB_CUDNN_FIX_* overrides."""

from __future__ import annotations

import json

import pytest

from fixer.cli import main
from tests.helpers.pyindex import cuda_runtime_wheel, cudnn_wheel, freeze_of, torch_wheel

from tests.integration.apply.conftest import CUDNN_OLD, TORCH, state, uv_install
from tests.helpers.paths import REPO

pytestmark = pytest.mark.integration


@pytest.fixture
def gpu_machine(monkeypatch):
    monkeypatch.setenv("COLAB_CUDNN_FIX_DRIVER", "580.159.04")
    monkeypatch.setenv("COLAB_CUDNN_FIX_CUDA", "13.0")
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "NVIDIA H200:9.0")
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)


@pytest.fixture
def native_broken(venv, index, tmp_path):
    """torch 2.11 cu130 (with libtorch_cuda.so) + cudart, and cuDNN 9.14 where torch pins 9.19."""
    w = tmp_path / "native"
    index.add(
        torch_wheel(
            w,
            TORCH,
            native=True,
            requires=["nvidia-cudnn-cu13==9.19.0.56", "nvidia-cuda-runtime==13.0.96"],
        ),
        cuda_runtime_wheel(w),
        cudnn_wheel(w, "9.28.1.4"),
    )
    uv_install(
        venv,
        index,
        f"torch=={TORCH}",
        "nvidia-cuda-runtime==13.0.96",
        f"nvidia-cudnn-cu13=={CUDNN_OLD}",
    )
    return venv


def _apply(python, index, sandbox, *extra):
    return main(
        [
            "apply",
            "--python",
            python,
            "--index-mirror",
            f"https://pypi.org/simple={index.url.rstrip('/')}",
            "--root",
            str(sandbox),
            *extra,
        ]
    )


def test_apply_repairs_then_nothing_to_do_then_rollback(
    gpu_machine, native_broken, index, sandbox, capsys
):
    assert main(["doctor", "--python", native_broken]) == 1
    before = state(native_broken, sandbox)
    capsys.readouterr()

    assert _apply(native_broken, index, sandbox, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    from tests.integration.cli.test_json_contract import validate

    validate(report, "apply")  # the applied outcome has the one shape
    assert report["outcome"] == "applied"
    assert report["changed"] is True and report["findings_after"] == []
    assert report["verified_by"] == "detect + diagnose"
    changed = {c["name"]: (c["before"], c["after"]) for c in report["result"]["distributions"]}
    assert changed["nvidia-cudnn-cu13"][0] == CUDNN_OLD
    assert set(changed) == {"nvidia-cudnn-cu13"}  # torch itself was left alone
    assert main(["doctor", "--python", native_broken]) == 0

    capsys.readouterr()
    assert _apply(native_broken, index, sandbox, "--json") == 0  # the same intent again
    assert json.loads(capsys.readouterr().out)["nothing_to_do"] is True

    assert main(["rollback", "--root", str(sandbox), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rollback"]["exact"] is True
    assert state(native_broken, sandbox) == before
    assert main(["rollback", "--root", str(sandbox)]) == 0
    assert "Nothing to roll back" in capsys.readouterr().out


def test_dry_run_changes_nothing(gpu_machine, native_broken, index, sandbox, capsys):
    before = state(native_broken, sandbox)
    assert _apply(native_broken, index, sandbox, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "nvidia-cudnn-cu13==" in out and "nothing has been changed" in out
    assert state(native_broken, sandbox) == before
    assert not (sandbox / "var").exists()


def test_plain_progress_lines_without_a_tty(gpu_machine, native_broken, index, sandbox, capsys):
    assert _apply(native_broken, index, sandbox) == 0
    out = capsys.readouterr().out
    assert "[1/" in out and "\x1b[" not in out  # a Colab `!` cell: no escape codes
    assert "healthy (detect + diagnose)" in out
    assert "undo with `colab-cudnn-fix rollback`" in " ".join(out.split())


def test_cpu_runtime_is_a_clear_no_op(monkeypatch, venv, index, sandbox, capsys):
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "none")
    assert main(["apply", "--python", venv, "--root", str(sandbox)]) == 0  # nothing wants a GPU
    assert "no nvidia gpu on this" in " ".join(capsys.readouterr().out.split()).lower()
    uv_install(venv, index, f"torch=={TORCH}", f"nvidia-cudnn-cu13=={CUDNN_OLD}")
    before = freeze_of(venv)
    assert main(["apply", "--python", venv, "--root", str(sandbox)]) == 3  # a CUDA torch, no GPU
    assert "nothing was changed" in " ".join(capsys.readouterr().out.split())
    assert freeze_of(venv) == before and [p.name for p in sandbox.iterdir()] == ["venv"]


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--installer", "pip3"], "--installer"),
        (["--find-links", "/nonexistent/wheels"], "--find-links"),
        (["--index-mirror", "nonsense"], "--index-mirror"),
        (["--dry-run", "--interactive"], "exclude each other"),
    ],
)
def test_bad_usage_exits_2(venv, sandbox, capsys, args, needle):
    assert main(["apply", "--python", venv, "--root", str(sandbox), *args]) == 2
    assert needle in capsys.readouterr().err
    assert [p.name for p in sandbox.iterdir()] == ["venv"]  # nothing but the venv it holds


def test_restart_ends_the_notebook_kernel_that_loaded_cudnn(
    gpu_machine, native_broken, index, sandbox, tmp_path
):
    """A `!colab-cudnn-fix apply --restart` cell: the kernel (an ancestor with cuDNN mapped) is
    ended after the repair, as Colab's "Restart session" does."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap

    from tests.helpers.stublibs import build_cudnn_copy

    lib = build_cudnn_copy(tmp_path / "kernel-cudnn", "9.14.0")
    repo = REPO
    argv = [
        sys.executable,
        "-m",
        "fixer",
        "apply",
        "--python",
        native_broken,
        "--root",
        str(sandbox),
        "--restart",
        "--index-mirror",
        f"https://pypi.org/simple={index.url.rstrip('/')}",
    ]
    kernel = textwrap.dedent(f"""
        import ctypes, subprocess, sys
        ctypes.CDLL({str(lib / "libcudnn.so.9")!r}, mode=ctypes.RTLD_GLOBAL)
        out = subprocess.run({argv!r}, capture_output=True, text=True, cwd={str(repo)!r})
        print("KERNEL SURVIVED", out.returncode, out.stdout, out.stderr, flush=True)
    """)
    proc = subprocess.run(
        ["sh", "-c", 'exec "$0" -c "$1" ipykernel_launcher -f kernel.json', sys.executable, kernel],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
    )
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    assert "KERNEL SURVIVED" not in proc.stdout
    assert "nvidia-cudnn-cu13" in freeze_of(native_broken) and f"=={CUDNN_OLD}" not in freeze_of(
        native_broken
    )


def test_interactive_asks_and_a_no_changes_nothing(gpu_machine, native_broken, index, sandbox):
    from typer.testing import CliRunner

    from fixer.cli.commands import app

    before = state(native_broken, sandbox)
    args = [
        "apply",
        "--interactive",
        "--python",
        native_broken,
        "--root",
        str(sandbox),
        "--index-mirror",
        f"https://pypi.org/simple={index.url.rstrip('/')}",
    ]
    result = CliRunner().invoke(app, args, input="n\n")
    assert result.exit_code == 1
    assert "Apply these steps?" in result.output and "nvidia-cudnn-cu13==" in result.output
    assert "declined: nothing changed" in result.output
    assert state(native_broken, sandbox) == before
    # standard input at its end: no answer, a usage error (exit 2), not "interrupted" (130)
    result = CliRunner().invoke(app, args, input="")
    assert result.exit_code == 2, result.output
    assert "no answer (standard input is closed); nothing changed" in result.output
    assert "interrupted" not in result.output
    assert state(native_broken, sandbox) == before
    result = CliRunner().invoke(app, args, input="y\n")
    assert result.exit_code == 0, result.output
    assert main(["doctor", "--python", native_broken]) == 0
