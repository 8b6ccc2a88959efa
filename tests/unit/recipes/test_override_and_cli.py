"""--recipes DIR: same-named files replace the shipped ones, new files are added; list/show output."""

from __future__ import annotations

import json

from fixer import recipebook as rec
from fixer.system.paths import recipes_dir
from fixer.cli import main

from tests.unit.recipes.conftest import GOOD_BUILD


def test_new_file_is_added(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD)
    r = rec.load([str(p.parent)])
    assert r.builds_for("torch", "9.9.0") and r.builds_for("torch", "2.11.0")


def test_same_name_replaces_the_shipped_file(write_recipe):
    p = write_recipe("torch.toml", GOOD_BUILD)
    r = rec.load([str(p.parent)])
    assert [b.version for b in r.builds_for("torch")] == ["9.9.0"]
    assert str(recipes_dir() / "torch.toml") not in r.files and str(p) in r.files
    assert r.builds_for("tensorflow")  # other shipped files stay


def test_later_directory_wins(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "torch.toml").write_text(GOOD_BUILD.lstrip())
    (b / "torch.toml").write_text(GOOD_BUILD.lstrip().replace("9.9.0", "9.9.1"))
    r = rec.load([str(a), str(b)])
    assert [x.version for x in r.builds_for("torch")] == ["9.9.1"]


def test_cli_list(capsys):
    assert main(["recipes", "list"]) == 0
    out = capsys.readouterr().out
    assert "torch" in out and "72 builds" in out and "tensorflow" in out and "jax" in out


def test_cli_list_json(capsys):
    assert main(["recipes", "list", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert (
        body["frameworks"]["torch"]["builds"] == 72
        and body["frameworks"]["torch"]["newest"] == "2.15.0"
    )


def test_cli_show_version(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["recipes", "show", "torch==2.11.0"]) == 0
    out = capsys.readouterr().out
    assert "cu130" in out and "nvidia-cudnn-cu13==9.19.0.56" in out
    assert "cuda-toolkit[cublas," in out  # extras survive rich markup


def test_cli_show_json_and_tables(capsys):
    assert main(["recipes", "show", "tensorflow==2.18", "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert {r["variant"] for r in body["records"]} == {"system", "and-cuda"}
    for table in ("cudnn", "drivers", "gpus", "colab"):
        assert main(["recipes", "show", table]) == 0


def test_cli_show_unknown(capsys):
    assert main(["recipes", "show", "torhc"]) == 2
    assert "did you mean 'torch'" in capsys.readouterr().err
    assert main(["recipes", "show", "torch==9.99"]) == 2
