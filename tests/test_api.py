"""The Python API: one function per command, each returning a result whose to_dict() is the
command's --json payload, callable again in the same process (a re-run notebook cell)."""
from __future__ import annotations

import json
import os

import pytest

import fixer
from fixer.cli import main

ENV = "colab-2025-01-tf215"


@pytest.fixture
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("COLAB_", "KAGGLE_", "CUDA_VISIBLE", "LD_PRELOAD")):
            monkeypatch.delenv(k, raising=False)
    return monkeypatch


def cli_json(capsys, *argv):
    code = main([*argv, "--json"])
    out, _ = capsys.readouterr()
    return code, json.loads(out)


def test_plan_twice_equals_the_cli_payload(capsys):
    a = fixer.plan(environment=ENV)
    b = fixer.plan(environment=ENV)
    assert a.to_dict() == b.to_dict()
    code, payload = cli_json(capsys, "plan", "--environment", ENV)
    assert a.to_dict() == payload and a.exit_code == code == 0


def test_every_bundled_environment_plans_as_the_cli_does(capsys):
    from fixer.planner import bundled_environments

    for name in bundled_environments():
        code, payload = cli_json(capsys, "plan", "--environment", name)
        assert fixer.plan(environment=name).to_dict() == payload, name


def test_doctor_twice_equals_the_cli_payload(capsys, clean_env):
    a = fixer.doctor()
    b = fixer.doctor()
    code, payload = cli_json(capsys, "doctor")
    assert a.exit_code == b.exit_code == code == payload["exit_code"]
    # the same machine, read three times: the same findings
    assert a.to_dict()["findings"] == b.to_dict()["findings"] == payload["findings"]


def test_explain_without_detection_twice():
    text = "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0."
    a = fixer.explain(text, detect=False)
    b = fixer.explain(text, detect=False)
    assert a.to_dict() == b.to_dict() and a.exit_code == 0
    assert a.findings and a.findings[0].id == "cudnn-too-old"


def test_explain_payload_equals_the_cli(capsys):
    text = "Could not load library libcudnn_cnn_infer.so.8"
    code, payload = cli_json(capsys, "explain", text, "--no-detect")
    result = fixer.explain(text, detect=False)
    assert result.to_dict() == payload and result.exit_code == code


def test_doctor_and_explain_of_every_bundled_environment_equal_the_cli_payload(capsys):
    """doctor --environment and explain --environment: the API's to_dict() is the CLI's --json
    payload, key for key, for every machine the package ships."""
    from fixer.planner import bundled_environments

    text = "Could not load library libcudnn_cnn_infer.so.8"
    for name in bundled_environments():
        code, payload = cli_json(capsys, "doctor", "--environment", name)
        result = fixer.doctor(environment=name)
        assert result.to_dict() == payload and result.exit_code == code, name
        code, payload = cli_json(capsys, "explain", text, "--environment", name)
        result = fixer.explain(text, environment=name)
        assert result.to_dict() == payload and result.exit_code == code, name


def _untimed(value):
    """`value` without its measured durations (`seconds`, `*_seconds`, `phases`): the rest of a
    verify payload is a function of the machine, durations are not."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not (k.endswith("seconds") or k == "phases")}
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


def test_no_public_name_is_also_a_submodule():
    """Issue 9: `fixer.NAME` is a plain function, and no submodule fixer.NAME exists to replace it
    when imported (the bug was `fixer.detect(); fixer.detect()` -> 'module' object is not callable)."""
    import importlib.util
    import pkgutil
    import types

    modules = {m.name for m in pkgutil.iter_modules(fixer.__path__)}
    for name in fixer._API:
        assert name not in modules and importlib.util.find_spec(f"fixer.{name}") is None, name
    for m in sorted(modules):                              # import every submodule, then call again
        if m not in ("__main__", "_entry"):
            importlib.import_module(f"fixer.{m}")
    for name in fixer._API:
        assert isinstance(getattr(fixer, name), types.FunctionType), name
    assert fixer.plan(environment=ENV).exit_code == 0 == fixer.plan(environment=ENV).exit_code


def test_the_stages_run_twice_too():
    env = fixer.detect()
    assert type(fixer.detect()) is type(env)
    assert fixer.diagnose(env, fixer.load_recipes()) == fixer.diagnose(env, fixer.load_recipes())


def test_bad_keyword_values_are_usage_errors():
    with pytest.raises(fixer.UsageError, match="--installer"):
        fixer.plan(environment=ENV, installer="poetry")
    with pytest.raises(fixer.UsageError, match="--index-mirror"):
        fixer.plan(environment=ENV, index_mirror="nonsense")
    with pytest.raises(fixer.UsageError, match="empty"):
        fixer.explain("  ", detect=False)


def test_results_render_for_notebooks_as_the_cli_prints(capsys):
    result = fixer.plan(environment=ENV)
    main(["plan", "--environment", ENV])
    printed, _ = capsys.readouterr()
    html = result._repr_html_()
    assert html.startswith("<!DOCTYPE html>") or "<pre" in html
    text = result.__rich__().plain
    first = next(line for line in printed.splitlines() if line.strip())
    assert first.strip() in text and first.split()[0] in html
