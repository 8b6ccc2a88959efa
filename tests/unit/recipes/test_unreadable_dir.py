"""`recipes validate --recipes DIR` with a directory that cannot be listed says so (exit 2), never
"ok". The file system is the edge: listing DIR raises PermissionError, as it does for a user
without read permission (this test machine runs as root, whom a mode of 000 does not stop)."""

from __future__ import annotations

import os

from fixer.cli import main


def test_an_unreadable_recipe_directory_is_a_problem(tmp_path, monkeypatch, capsys):
    locked = tmp_path / "recipes"
    locked.mkdir()
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code = main(["recipes", "validate", "--recipes", str(locked)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "ok" not in out.split(":")[:1]
    assert f"recipe directory '{locked}' cannot be read: Permission denied" in out + err
