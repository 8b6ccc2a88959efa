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
    from fixer.errors import FixerError
    from fixer.render import error_payload

    code, payload = cli_json(capsys, "verify", "--timeout", "30")
    result = fixer.verify(timeout=30)
    assert _untimed(result.to_dict()) == _untimed(payload) and result.exit_code == code
    for kwargs, argv in (
        ({"python": "/nonexistent"}, ["--python", "/nonexistent"]),
        ({"environment": "colab-2026-08"}, ["--environment", "colab-2026-08"]),
    ):
        code, payload = cli_json(capsys, "verify", *argv)
        with pytest.raises(FixerError) as exc:
            fixer.verify(**kwargs)
        assert error_payload(exc.value, "verify") == payload and exc.value.exit_code == code == 2


def test_the_stages_run_twice_too():
    env = fixer.detect()
    assert type(fixer.detect()) is type(env)
    assert fixer.diagnose(env, fixer.load_recipes()) == fixer.diagnose(env, fixer.load_recipes())


# -- the dry run and the real apply share one refusal decision ----------------------

GPU_MACHINE = {"COLAB_CUDNN_FIX_GPU": "Tesla T4:7.5", "COLAB_CUDNN_FIX_DRIVER": "580.65.06"}


def _decline(preview):
    return False  # the last moment before anything runs: say no


@pytest.mark.parametrize(
    "keywords",
    [
        {"framework": ["torch"]},
        {"framework": ["torch"], "cudnn_from": "apt"},
        {"framework": ["jax"], "cuda": "12.6"},
        {"framework": ["torch", "tensorflow"]},
        {},
    ],
)
@pytest.mark.parametrize("sandboxed", [False, True])
def test_what_the_dry_run_says_apply_would_refuse_is_what_apply_refuses(
    keywords, sandboxed, clean_env, tmp_path
):
    """On this machine (a GPU given by the overrides: the edge), for each intent: the dry run's
    `refusal`, and apply's answer when it is told no at the confirmation (the last moment before
    anything runs): the same error, or none and apply asks."""
    for k, v in GPU_MACHINE.items():
        clean_env.setenv(k, v)
    root = str(tmp_path) if sandboxed else None
    try:
        preview = fixer.apply(dry_run=True, root=root, **keywords)
    except fixer.FixerError as exc:  # refused before any plan (no stack fits): apply the same
        with pytest.raises(type(exc), match="^" + __import__("re").escape(exc.message) + "$"):
            fixer.apply(root=root, confirm=_decline, **keywords)
        return
    if preview.outcome not in ("dry-run", "nothing-to-do"):
        return
    if preview.refusal is None:
        expected = "declined" if preview.outcome == "dry-run" else "nothing-to-do"
        assert fixer.apply(root=root, confirm=_decline, **keywords).outcome == expected
    else:
        with pytest.raises(type(preview.refusal)) as raised:
            fixer.apply(root=root, confirm=_decline, **keywords)
        assert raised.value.message == preview.refusal.message
