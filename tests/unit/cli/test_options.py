"""The options table (fixer.cli.options) is the one declaration of every option: the parser of
every command is built from it, and help renders from it without cutting a word at any width."""

from __future__ import annotations


import pytest

from fixer.cli import main
from fixer.cli.commands import app
from fixer.cli.options import spec_for

pytestmark = pytest.mark.smoke  # also run against the lowest dependency versions (.ci/run)


def _commands():
    """(path, click command) of every command, sub-commands included."""
    import typer.main

    root = typer.main.get_command(app)
    todo = [((), root)]
    while todo:
        path, cmd = todo.pop()
        subs = getattr(cmd, "commands", None)
        if subs:
            todo += [((*path, name), sub) for name, sub in subs.items()]
        else:
            yield path, cmd


ALL = sorted(_commands(), key=lambda c: c[0])
TYPER_OWN = {"help", "install_completion", "show_completion"}


def test_every_option_of_every_command_comes_from_the_table():
    assert len(ALL) >= 10
    for path, cmd in ALL:
        for p in cmd.params:
            if p.param_type_name != "option" or p.name in TYPER_OWN:
                continue
            spec = spec_for(list(p.opts) + list(p.secondary_opts), p.help)
            assert spec is not None, (path, p.name, p.opts)
            assert not p.secondary_opts, (path, p.name, "a flag has one spelling")


@pytest.mark.parametrize("columns", [60, 100])
def test_help_lists_choices_defaults_exit_codes_and_overrides_without_cutting_words(
    columns, capsys, monkeypatch
):
    monkeypatch.setenv("COLUMNS", str(columns))
    for path, cmd in ALL:
        assert main([*path, "--help"]) == 0
        out = capsys.readouterr().out
        assert "<bool>" not in out and "<str>" not in out and "<list" not in out, path
        assert "Exit codes:" in out, path
        if path[0] in ("doctor", "plan", "apply", "lock", "verify", "explain"):
            assert "COLAB_CUDNN_FIX_GPU" in out and "COLAB_CUDNN_FIX_DRIVER" in out, path
        if path == ("plan",):
            flat = " ".join(out.split())
            assert "--installer auto|pip|uv|conda" in flat and "Default: auto." in flat
            assert "--cudnn-from pip|apt|conda" in flat
        tokens = set(out.split())
        for line in out.splitlines():
            assert len(line) <= columns or " " not in line.strip(), (path, line)
        for p in cmd.params:
            spec = spec_for(list(p.opts), p.help)
            for word in (
                spec.help_for(" ".join(path)).split() if spec else ()
            ):  # no word of the help is cut or split
                assert word in tokens, (path, word)


def test_short_help_version_and_completion(capsys):
    from fixer import __version__

    assert main(["-h"]) == 0 and "Commands:" in capsys.readouterr().out
    assert main(["doctor", "-h"]) == 0 and "--deep" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"{__version__}\n"  # the version only
    assert main(["--help"]) == 0 and "--install-completion" in capsys.readouterr().out


def test_usage_errors_exit_2_and_are_json_under_json(capsys):
    import json

    assert main(["plan", "--bogus", "--json"]) == 2
    body = json.loads(capsys.readouterr().out)
    assert body["schema"] == 1 and body["command"] == "plan" and body["exit_code"] == 2
    assert "--bogus" in body["error"]["message"]
    assert main(["doctor", "--installer", "pip"]) == 2
    assert "No such option" in capsys.readouterr().err
    assert main(["plan", "--installer", "npm", "--json"]) == 2
    assert "'npm' is not one of" in json.loads(capsys.readouterr().out)["error"]["message"]
