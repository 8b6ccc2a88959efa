"""Output that copy-pastes: at 100 columns piped (a notebook's `!` cell) and at 60, commands,
fixes, paths and versions are never wrapped or cut, and a table too narrow for its cells
becomes a list."""

from __future__ import annotations

import json

import pytest

from fixer.cli import main
from fixer.recipebook import load
from tests.helpers.output import units_whole, whole_on_a_line

pytestmark = pytest.mark.smoke


def _out(capsys, monkeypatch, columns, *argv):
    monkeypatch.setenv("COLUMNS", str(columns))
    main(list(argv))
    return capsys.readouterr().out


@pytest.mark.parametrize("columns", [60, 100])
def test_plan_commands_and_doctor_fixes_stay_whole(columns, capsys, monkeypatch):
    from fixer.render.plan import command_text

    main(["plan", "--environment", "colab-2025-01-tf215", "--json"])
    steps = json.loads(capsys.readouterr().out)["plan"]["steps"]
    out = _out(capsys, monkeypatch, columns, "plan", "--environment", "colab-2025-01-tf215")
    lines = out.splitlines()
    from fixer.model import Step

    for s in steps:
        assert (
            command_text(Step(kind=s["kind"], summary=s["summary"], argv=tuple(s["argv"]))) in lines
        ), s
    assert "…" not in out
    main(["doctor", "--environment", "colab-2025-01-tf215", "--json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    out = _out(capsys, monkeypatch, columns, "doctor", "--environment", "colab-2025-01-tf215")
    for f in findings:
        if f.get("fix"):
            assert units_whole(out, f["fix"]), f["fix"]
    assert "…" not in out


@pytest.mark.parametrize("columns", [60, 100])
@pytest.mark.parametrize("what", ["colab", "cudnn", "gpus", "drivers", "torch==2.11"])
def test_recipe_tables_never_cut_a_cell(what, columns, capsys, monkeypatch):
    out = _out(capsys, monkeypatch, columns, "recipes", "show", what)
    assert "…" not in out
    tokens = set(out.replace("│", " ").replace("┃", " ").split())
    rec = load()
    if what == "colab":
        for image in rec.colab_images:
            for cell in (image.commit, image.torch, image.tensorflow, image.apt_cudnn):
                for word in (cell or "").split():
                    assert word in tokens, (columns, word)
    if what == "cudnn":
        for c in rec.cudnn:
            for k, v in c.pip.items():
                assert f"{k}=={v}" in tokens or f"{k}=={v}," in tokens, (columns, k, v)
    if columns == 60 and what == "colab":
        assert "┃" not in out and "  commit:" in out  # too narrow for 10 columns: a list


# ---------------------------------------------------------------------------------------------
# verify and fleet: recorded real outputs through the real CLI (stdout piped, COLUMNS set)
# ---------------------------------------------------------------------------------------------


def _recorded():
    from tests.helpers.gpu_records import verify_runs

    return verify_runs()


@pytest.mark.parametrize("columns", [60, 100])
@pytest.mark.parametrize("scenario", [name for name, _ in _recorded()])
def test_verify_recorded_on_the_gpu_machine_never_cuts_a_path_or_a_cell(
    scenario, columns, capsys, monkeypatch
):
    from fixer.render.verify import CASE_HEADERS, case_rows, clip

    results = dict(_recorded())[scenario]
    # The GPU edge: the children's results, as recorded on the H200 (tests/helpers/gpu_records.py).
    monkeypatch.setattr("fixer.verifier.checks.verify", lambda *a, **k: list(results))
    # the frameworks the target has (verify names them while it checks): the recorded ones
    monkeypatch.setattr(
        "fixer.verifier.checks.installed_frameworks",
        lambda *a, **k: tuple(r.framework for r in results),
    )
    monkeypatch.setenv("COLUMNS", str(columns))
    code = main(["verify"])
    out = capsys.readouterr().out
    assert code == (0 if all(r.status == "passed" for r in results) else 1)
    assert "…" not in out
    for r in results:
        assert units_whole(out, r.summary), r.summary
        for p in r.mapped:
            assert f"  mapped {p}" in out.splitlines(), p
        for f in r.findings:
            assert units_whole(out, f"  {f.id}: {f.title}")
        for e in r.errors:
            assert units_whole(out, clip(e))
        for row in case_rows(r):
            for cell in row:
                assert whole_on_a_line(out, getattr(cell, "plain", cell)), cell
    has_cases = any(r.cases for r in results)
    if has_cases and columns == 60:  # 8 columns do not fit in 60: each case is a list entry
        assert "  dtype: float32" in out and "  steady ms: " in out
    if has_cases and columns == 100:  # they fit in 100: one table line per case
        header = next(line for line in out.splitlines() if line.lstrip().startswith("case"))
        assert header.split() == " ".join(CASE_HEADERS).split()


def test_every_recorded_verify_result_is_read_back():
    runs = dict(_recorded())
    assert set(runs) >= {
        "healthy",
        "pip-cudnn-hidden",
        "engines-precompiled-missing",
        "no-gpu-visible",
        "mixed-ld-preload",
    }
    torch = runs["healthy"][0]
    assert (
        torch.framework == "torch" and len(torch.cases) == 7 and all(c["ok"] for c in torch.cases)
    )
    assert any(p.endswith("/libcudnn_engines_precompiled.so.9") for p in torch.mapped)
    bad = runs["engines-precompiled-missing"][0]
    assert [f.id for f in bad.findings] == ["cudnn-incomplete"] and bad.status == "failed"
    assert len(bad.cases) == 3 and bad.errors  # two cases raised; the three that ran were right
