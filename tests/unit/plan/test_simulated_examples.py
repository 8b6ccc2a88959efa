"""The plans the project shows are fixes when simulated: every bundled environment's
plan, and every `colab-cudnn-fix plan` command line of the README run against each bundled
environment. Each is simulated on the machine's model and diagnosed again (fixer.planner.simulate); a
plan may instead refuse (no stack fits: exit 1 with the clash; no GPU: exit 3), but a plan that
is shown must not leave errors or warnings behind, nor differ from the stack it chose."""

from __future__ import annotations

import json
import re
import shlex
from typing import List

import pytest

from fixer.cli import main
from fixer.planner.steps import bundled_environments
from tests.helpers.paths import REPO

#: the README's plan lines and the reference's (docs/commands.md: every option shown)
README = REPO / "README.md"
DOCS = REPO / "docs" / "commands.md"


def readme_plan_args() -> List[List[str]]:
    """The option lists of the README's `colab-cudnn-fix plan ...` example lines (synopsis
    lines with [brackets] and --environment/--python/--json are left out: the test supplies those)."""
    out: List[List[str]] = [[]]
    for line in (README.read_text() + DOCS.read_text()).splitlines():
        m = re.match(r"^\s+colab-cudnn-fix plan(.*?)(#.*)?$", line)
        if not m or "[" in m.group(1):
            continue
        args = shlex.split(m.group(1))
        keep: List[str] = []
        skip = False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("--environment", "--python"):
                skip = True
                continue
            if a != "--json":
                keep.append(a)
        if keep not in out:
            out.append(keep)
    return out


CASES = [(env, args) for env in bundled_environments() for args in readme_plan_args()]


def test_the_readme_shows_plan_examples():
    assert any(args for args in readme_plan_args()), "the README's plan examples were not found"


@pytest.mark.parametrize(
    "env, args", CASES, ids=[f"{e}:{' '.join(a) or 'default'}" for e, a in CASES]
)
def test_shown_plans_are_fixes_when_simulated(env, args, capsys):
    code = main(["plan", "--json", "--environment", env, *args])
    out = capsys.readouterr()
    if code in (1, 3):  # no stack fits (the clash is reported) / no GPU: refused, not shown
        return
    if code == 2:  # the example asks for what this machine lacks (--keep tensorflow)
        assert "Traceback" not in out.out + out.err
        return
    assert code == 0, out.err
    plan = json.loads(out.out)["plan"]
    sim = plan["simulation"]
    assert sim["healthy"] is True, (env, args, sim["cannot_fix"], sim["drift"])
