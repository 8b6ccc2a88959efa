"""Output that copy-pastes: at 100 columns piped (a notebook's `!` cell) and at 60, commands,
fixes, paths and versions are never wrapped or cut, and a table too narrow for its cells
becomes a list."""
from __future__ import annotations

import json

import pytest

from fixer.cli import main
from fixer.recipes import load

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
        assert command_text(Step(kind=s["kind"], summary=s["summary"], argv=tuple(s["argv"]))) in lines, s
    assert "…" not in out
    main(["doctor", "--environment", "colab-2025-01-tf215", "--json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    out = _out(capsys, monkeypatch, columns, "doctor", "--environment", "colab-2025-01-tf215")
    for f in findings:
        if f.get("fix"):
            assert any(f["fix"] in line for line in out.splitlines()), f["fix"]
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
        assert "┃" not in out and "  commit:" in out         # too narrow for 10 columns: a list
