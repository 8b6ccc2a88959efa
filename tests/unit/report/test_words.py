"""The words of doctor's and report's verdicts claim exactly what was checked.

- With no GPU framework installed, a healthy machine is never said to have "every framework"
  load a cuDNN it accepts: nothing loads cuDNN there.
- The header names the tool that recorded the machine: a version of this tool as "vX", and a
  bundled environment (recorded by scripts/make_environments.py) by that name, never "vmake_...".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fixer.cli import main

ENVS = Path(__file__).resolve().parents[3] / "fixer" / "environments"
NAMES = sorted(p.stem for p in ENVS.glob("*.json"))


def _without_frameworks(name: str, tmp_path: Path) -> str:
    doc = json.loads((ENVS / f"{name}.json").read_text())
    env = doc["environment"]
    env["frameworks"], env["loads"], env["runtime_views"] = [], [], []
    doc["findings"] = []
    path = tmp_path / f"{name}-bare.json"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("name", NAMES)
def test_no_framework_is_never_every_framework(name, tmp_path, capsys):
    path = _without_frameworks(name, tmp_path)
    for argv in (["doctor"], ["report"], ["report", "--html"]):
        main([*argv, "--environment", path])
        out = capsys.readouterr().out
        assert "every framework" not in out, (name, argv, out)
    main(["report", "--json", "--environment", path])
    body = json.loads(capsys.readouterr().out)
    if body["healthy"]:
        main(["report", "--environment", path])
        assert "no GPU framework is installed" in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_the_header_names_the_recorder_not_a_fake_version(name, capsys):
    main(["report", "--environment", name])
    head = capsys.readouterr().out.splitlines()[0]
    made = json.loads((ENVS / f"{name}.json").read_text())["environment"]["tool_version"]
    want = f"(v{made})" if made[0].isdigit() else f"(recorded by {made})"
    assert head.endswith(want) and "(vmake" not in head, head
