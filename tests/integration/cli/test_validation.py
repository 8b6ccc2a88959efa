"""Bad input exits 2 with a message naming what is wrong, before anything is probed or changed;
and the commands that look at a machine all take --environment."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.system.versions import version_key
from fixer.cli import main
from fixer.recipebook import load
from fixer.rules import driver_cuda_mismatch
from tests.helpers.examples import examples

pytestmark = pytest.mark.smoke  # also run against the lowest dependency versions (.ci/run)

FLOORS = load().driver_floors
TOOLKITS = sorted(
    ((version_key(f.cuda), f) for f in FLOORS if f.cuda.count(".") == 1), key=lambda t: t[0]
)


def _err(capsys, argv, code=2):
    assert main(argv) == code, argv
    return " ".join(capsys.readouterr().err.split())


@given(st.tuples(st.integers(400, 700), st.integers(0, 200), st.integers(0, 99)))
@settings(max_examples=examples(300), deadline=None)
def test_a_driver_reports_exactly_one_toolkit_of_the_table(driver_parts):
    """For any driver at or above the oldest floor, of the table's toolkits exactly one is an
    acceptable answer of cuDriverGetVersion: the newest one whose floor the driver meets."""
    driver = ".".join(map(str, driver_parts))
    ok = [f.cuda for _k, f in TOOLKITS if driver_cuda_mismatch(driver, f.cuda, FLOORS) is None]
    met = [f.cuda for _k, f in TOOLKITS if version_key(f.min_driver) <= version_key(driver)]
    assert ok == met[-1:], (driver, ok)


def test_every_row_of_the_table_is_consistent_with_its_own_floor():
    for _k, f in TOOLKITS:
        assert driver_cuda_mismatch(f.min_driver, f.cuda, FLOORS) is None, f


@pytest.mark.parametrize(
    "env,message",
    [
        ({"COLAB_CUDNN_FIX_GPU": ":7.5"}, "has no GPU name"),
        (
            {"COLAB_CUDNN_FIX_DRIVER": "580.65.06", "COLAB_CUDNN_FIX_CUDA": "11.0"},
            "cannot report CUDA 11.0",
        ),
        (
            {"COLAB_CUDNN_FIX_DRIVER": "580.65.06", "COLAB_CUDNN_FIX_CUDA": "13.1"},
            "needs driver >= 590.44.01",
        ),
    ],
)
def test_bad_overrides_exit_2(env, message, capsys, monkeypatch):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for argv in (["doctor"], ["plan"]):
        assert message in _err(capsys, argv)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["plan", "--environment", "colab-2026-08", "--torch", ""], "--torch is empty"),
        (["plan", "--find-links", "/nonexistent"], "--find-links /nonexistent: no such directory"),
        (
            ["apply", "--dry-run", "--find-links", "/nonexistent"],
            "--find-links /nonexistent: no such directory",
        ),
        (
            ["lock", "--environment", "colab-2026-08", "--find-links", "/nonexistent"],
            "--find-links /nonexistent",
        ),
        (
            ["doctor", "--recipes", "/nonexistent-a", "--recipes", "/tmp"],
            "--recipes /nonexistent-a: not a directory",
        ),
        (["verify", "--python", "/bin/ls"], "--python /bin/ls: could not inspect it"),
        (["doctor", "--python", "/bin/ls"], "--python /bin/ls: could not inspect it"),
        (["explain", "--environment", "colab-2026-08", "--no-detect", "x"], "exclude each other"),
    ],
)
def test_bad_options_exit_2(argv, message, capsys):
    assert message in _err(capsys, argv)


def test_doctor_merges_several_recipe_dirs(tmp_path, capsys):
    """--recipes A --recipes B reads both (later wins per file): a broken file in A is found."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "torch.toml").write_text("[[build]\nframework = 'torch'\n")
    assert str(a / "torch.toml") in _err(
        capsys,
        ["doctor", "--environment", "colab-2026-08", "--recipes", str(a), "--recipes", str(b)],
    )


def test_doctor_and_explain_take_environment_and_verify_refuses_it(capsys):
    assert main(["doctor", "--environment", "colab-2025-01-tf215", "--json"]) == 1
    body = json.loads(capsys.readouterr().out)
    assert any(f["id"].startswith("cudnn") for f in body["findings"]), body["findings"]
    assert (
        main(
            [
                "explain",
                "--environment",
                "colab-2025-01-tf215",
                "--json",
                "Loaded runtime CuDNN library: 8.9.4 but source was compiled with: 9.3.0",
            ]
        )
        == 0
    )
    body = json.loads(capsys.readouterr().out)
    assert body["detected"] is True and body["plan"] is not None
    # verify runs this machine's frameworks: a described machine is refused
    code = main(["verify", "--environment", "colab-2025-01-tf215", "--json", "--timeout", "30"])
    body = json.loads(capsys.readouterr().out)
    assert code == 2 and "verify runs the frameworks" in body["error"]["message"]


def test_explain_reads_piped_stdin_without_dash():
    text = "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open shared object file"
    proc = subprocess.run(
        [sys.executable, "-m", "fixer", "explain", "--no-detect", "--json"],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["recognised"] is True
