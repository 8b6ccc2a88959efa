"""The Python API on this machine: doctor, detect and verify start child processes (the probes,
the verify child), so these live here; tests/unit/test_api.py has the rest."""

from __future__ import annotations

import os

import pytest

import fixer
from tests.helpers.cli import cli_json


@pytest.fixture
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("COLAB_", "KAGGLE_", "CUDA_VISIBLE", "LD_PRELOAD")):
            monkeypatch.delenv(k, raising=False)
    return monkeypatch


def test_doctor_twice_equals_the_cli_payload(capsys, clean_env):
    a = fixer.doctor()
    b = fixer.doctor()
    code, payload = cli_json(capsys, "doctor")
    assert a.exit_code == b.exit_code == code == payload["exit_code"]
    # the same machine, read three times: the same findings
    assert a.to_dict()["findings"] == b.to_dict()["findings"] == payload["findings"]


def _untimed(value):
    """`value` without its measured durations (`seconds`, `*_seconds`, `phases`): the rest of a
    verify payload is a function of the machine, durations are not."""
    if isinstance(value, dict):
        return {
            k: _untimed(v) for k, v in value.items() if not (k.endswith("seconds") or k == "phases")
        }
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def test_verify_equals_the_cli_payload_and_its_errors_the_cli_error(capsys):
    from fixer.errors import FixerError, error_payload

    code, payload = cli_json(capsys, "verify", "--environment", "colab-2026-08")
    result = fixer.verify(environment="colab-2026-08")
    assert _untimed(result.to_dict()) == _untimed(payload) and result.exit_code == code
    code, payload = cli_json(capsys, "verify", "--python", "/nonexistent")
    with pytest.raises(FixerError) as exc:
        fixer.verify(python="/nonexistent")
    assert error_payload(exc.value, "verify") == payload and exc.value.exit_code == code == 2


def test_the_stages_run_twice_too():
    env = fixer.detect()
    assert type(fixer.detect()) is type(env)
    assert fixer.diagnose(env, fixer.load_recipes()) == fixer.diagnose(env, fixer.load_recipes())
