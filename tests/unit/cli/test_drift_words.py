"""What doctor --lock and fleet lock-check say about drift.

- doctor --lock FILE says "no drift from FILE" exactly when no finding comes from the lock (every
  drift finding names the lock file first: fixer/lockfile/drift.py), on every bundled machine,
  with a lock that matches (empty) and with one that does not (a package that is not there).
- fleet's drift lines say "drift" once: the line is the finding's title, "drift from lock: ...".
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from fixer.cli import main
from fixer.lockfile.format import Lock, LockedPackage, write_lock

ENVS = sorted(
    p.stem for p in (Path(__file__).resolve().parents[3] / "fixer/environments").glob("*.json")
)


def _package() -> LockedPackage:
    import dataclasses

    fields = {f.name for f in dataclasses.fields(LockedPackage)}
    kw = {"name": "ccf-not-installed", "version": "1.0"}
    if "hashes" in fields:
        kw["hashes"] = ("sha256:" + "0" * 64,)
    return LockedPackage(**kw)


@pytest.mark.parametrize("name", ENVS)
@pytest.mark.parametrize("drifted", [False, True])
def test_doctor_lock_says_no_drift_exactly_when_there_is_none(name, drifted, tmp_path, capsys):
    lock = tmp_path / "stack.lock.toml"
    write_lock(Lock(packages=(_package(),) if drifted else ()), str(lock))
    main(["doctor", "--lock", str(lock), "--environment", name, "--json"])
    import json

    findings = json.loads(capsys.readouterr().out)["findings"]
    from_lock = [f for f in findings if f["evidence"][:1] == [str(lock)]]
    main(["doctor", "--lock", str(lock), "--environment", name])
    out = " ".join(capsys.readouterr().out.split())  # prose may wrap before the path
    assert (f"no drift from {lock}" in out) == (not from_lock), out
    assert bool(from_lock) == drifted


def test_fleet_says_drift_once():
    from fixer.render.fleet import render

    line = "drift from lock: torch is 2.5.1, the lock has 2.4.0"
    value = {
        "checked": 2,
        "node_count": 2,
        "lock": "stack.lock.toml",
        "nodes": [],
        "failed": [],
        "by_finding": {},
        "by_drift": {line: ["node-a", "node-b"]},
        "nodes_without_drift": [],
        "stacks": [],
    }
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        render(value, "table")
    text = buf.getvalue()
    assert f"{line}: node-a, node-b" in text and "drift drift" not in text
    with contextlib.redirect_stdout(io.StringIO()) as md:
        render(value, "markdown")
    assert "drift drift" not in md.getvalue()
