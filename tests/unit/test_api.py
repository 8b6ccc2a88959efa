"""The Python API: one function per command, each returning a result whose to_dict() is the
command's --json payload, callable again in the same process (a re-run notebook cell). The API on
this machine (detection and verify start child processes): tests/integration/test_api_detecting.py."""

from __future__ import annotations

import pytest

import fixer
from fixer.cli import main
from tests.helpers.cli import cli_json

ENV = "colab-2025-01-tf215"


def test_plan_twice_equals_the_cli_payload(capsys):
    a = fixer.plan(environment=ENV)
    b = fixer.plan(environment=ENV)
    assert a.to_dict() == b.to_dict()
    code, payload = cli_json(capsys, "plan", "--environment", ENV)
    assert a.to_dict() == payload and a.exit_code == code == 0


def test_every_bundled_environment_plans_as_the_cli_does(capsys):
    from fixer.planner.steps import bundled_environments

    for name in bundled_environments():
        code, payload = cli_json(capsys, "plan", "--environment", name)
        assert fixer.plan(environment=name).to_dict() == payload, name


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
    from fixer.planner.steps import bundled_environments

    text = "Could not load library libcudnn_cnn_infer.so.8"
    for name in bundled_environments():
        code, payload = cli_json(capsys, "doctor", "--environment", name)
        result = fixer.doctor(environment=name)
        assert result.to_dict() == payload and result.exit_code == code, name
        code, payload = cli_json(capsys, "explain", text, "--environment", name)
        result = fixer.explain(text, environment=name)
        assert result.to_dict() == payload and result.exit_code == code, name


def test_no_public_name_is_an_importable_submodule_at_any_depth_of_the_walk():
    """Every module pkgutil finds under fixer (walked to the bottom), and every file or directory
    in the package folder: none is fixer.NAME for a public NAME, and importing each NAME as a
    submodule fails, so nothing can replace the function."""
    import importlib
    import pkgutil
    from pathlib import Path

    public = set(fixer.__all__)
    walked = {m.name for m in pkgutil.walk_packages(fixer.__path__, "fixer.")}
    assert walked and not {f"fixer.{n}" for n in public} & walked
    on_disk = {p.name.split(".")[0] for p in Path(fixer.__file__).parent.iterdir()}
    assert not public & on_disk, public & on_disk
    for name in sorted(public):
        with pytest.raises(ImportError):
            importlib.import_module(f"fixer.{name}")


def test_report_after_importing_the_report_module():
    """The bug of issue 23: `fixer.report(...)` after `import fixer.reporting.report` raised
    "'module' object is not callable"."""
    import fixer.reporting.report  # noqa: F401

    result = fixer.report(environment=ENV)
    assert result.exit_code == 0 and result.to_dict()["command"] == "report"


def test_no_public_name_is_also_a_submodule():
    """Issue 9: `fixer.NAME` is a plain function, and no submodule fixer.NAME exists to replace it
    when imported (the bug was `fixer.detect(); fixer.detect()` -> 'module' object is not callable)."""
    import importlib.util
    import pkgutil
    import types

    modules = {m.name for m in pkgutil.iter_modules(fixer.__path__)}
    for name in fixer._API:
        spec = importlib.util.find_spec(f"fixer.{name}")
        # a directory left with only __pycache__ (an old checkout's) is a namespace, not our module
        assert name not in modules and (spec is None or spec.origin is None), name
    for m in sorted(modules):  # import every submodule, then call again
        if m not in ("__main__", "_entry"):
            importlib.import_module(f"fixer.{m}")
    for name in fixer._API:
        assert isinstance(getattr(fixer, name), types.FunctionType), name
    assert fixer.plan(environment=ENV).exit_code == 0 == fixer.plan(environment=ENV).exit_code


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


def test_report_recipes_and_their_payloads_equal_the_cli(capsys):
    """fixer.report() and fixer.recipes(): to_dict() is the CLI's --json payload and
    exit_code its exit code; the notebook rendering is there."""
    for name in ("colab-2026-08", ENV):
        code, payload = cli_json(capsys, "report", "--environment", name)
        result = fixer.report(environment=name)
        assert result.to_dict() == payload and result.exit_code == code, name
        assert result._repr_html_().startswith("<")
    cases = [
        (("recipes", "list"), ("list",)),
        (("recipes", "show", "torch==2.5"), ("show", "torch==2.5")),
        (("recipes", "show", "cudnn"), ("show", "cudnn")),
        (("recipes", "validate"), ("validate",)),
    ]
    for argv, args in cases:
        code, payload = cli_json(capsys, *argv)
        result = fixer.recipes(*args)
        assert result.to_dict() == payload and result.exit_code == code, argv
        assert "<" in result._repr_html_()


def test_recipes_and_fleet_refuse_an_unknown_action():
    with pytest.raises(fixer.UsageError, match="choose list, show or validate"):
        fixer.recipes("delete")
    with pytest.raises(fixer.UsageError, match="needs WHAT"):
        fixer.recipes("show")
    with pytest.raises(fixer.UsageError, match="choose doctor or lock-check"):
        fixer.fleet("reboot", slurm=".")
    with pytest.raises(fixer.UsageError, match="needs --lock"):
        fixer.fleet("lock-check", slurm=".")


def test_fleet_of_slurm_files_equals_the_cli(tmp_path, capsys):
    """fixer.fleet(slurm=DIR) reads the nodes' doctor --json files as `fleet doctor --slurm` does."""
    import json

    for i, name in enumerate(("colab-2026-08", ENV, "h200-healthy")):
        body = fixer.doctor(environment=name).to_dict()
        (tmp_path / f"node{i}.json").write_text(json.dumps(body))
    code, payload = cli_json(capsys, "fleet", "doctor", "--slurm", str(tmp_path))
    result = fixer.fleet("doctor", slurm=str(tmp_path))
    assert result.to_dict() == payload and result.exit_code == code
    assert result.markdown() and "<" in result._repr_html_()
