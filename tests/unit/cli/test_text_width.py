"""Every command's text output for every bundled environment fits a notebook (100 columns, as
Colab's output area) and a narrow terminal (80): a line wider than the console is one unit of
render.prose's rule (a command, a path, a word longer than the width), never prose that could
have been broken. (`report` writes Markdown for an issue, not console text: a Markdown table
row cannot be wrapped, so it is not checked here.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from fixer.cli import main
from fixer.render.prose import over_width

ENVIRONMENTS = sorted(
    p.stem for p in (Path(__file__).resolve().parents[3] / "fixer/environments").glob("*.json")
)
ERROR = (
    "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot "
    "open shared object file: No such file or directory"
)
COMMANDS = [
    ["doctor"],
    ["plan"],
    ["plan", "--cudnn-from", "apt"],
    ["explain", "--text", ERROR],
]
RECIPES = [
    ["recipes", "list"],
    *(["recipes", "show", w] for w in ("torch==2.11", "jax", "cudnn", "colab", "gpus", "drivers")),
]


def _check(argv, columns, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(columns))
    main(argv)
    out, err = capsys.readouterr()
    lines = (out + err).splitlines()
    assert lines, argv
    wide = [line for line in lines if over_width(line, columns)]
    assert not wide, (argv, columns, wide)


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("environment", ENVIRONMENTS)
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_bundled_outputs_fit(command, environment, columns, capsys, monkeypatch):
    _check([*command, "--environment", environment], columns, capsys, monkeypatch)


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("command", RECIPES, ids=" ".join)
def test_recipes_outputs_fit(command, columns, capsys, monkeypatch):
    _check(command, columns, capsys, monkeypatch)
