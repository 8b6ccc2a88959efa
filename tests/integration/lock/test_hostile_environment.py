"""Environment JSON (`--environment FILE`, doctor --json output) is untrusted data: a hostile
value in any field (tests/helpers/hostile.py) gives a plan, or exit 2 with one line naming the
file and the JSON path; never a traceback, and nothing runs or is written. The crashes of issue
21 (a framework CUDA of "x", a version of thousands of digits) are among the generated values."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Tuple

import pytest
from hypothesis import HealthCheck, given, settings

from fixer.planner.steps import environments_dir
from tests.helpers.examples import examples
from tests.helpers.hostile import mutations, nothing_happens, values, with_field

GOOD = json.loads(Path(environments_dir(), "colab-2026-08.json").read_text())

#: One change of the good machine: a hostile value in any field or list item (every item, not
#: only the first), a field or item removed, an unknown key or item added.
CHANGES = mutations(GOOD, values())


def _plan(capsys, path: Path) -> Tuple[int, str, str]:
    from fixer.cli import main

    code = main(["plan", "--environment", str(path), "--json"])
    got = capsys.readouterr()
    return code, got.out, got.err


def _in_caches(event: Tuple[str, str]) -> bool:
    """A write of the tool's own caches: named by its path, or (written by the file-system gate
    through directory fds, so the audit hook sees a bare name) a name that is in the cache folder
    now, a temporary one (".NAME.HEX.tmp") included."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "colab-cudnn-fix"
    if str(cache) in event[1]:
        return True
    if event[0] == "os.chmod" and re.match(r"^\(\d+, ", event[1]):
        return True  # a chmod of an open fd: the file's own open event is judged above
    m = re.match(r"^\(?'([^'/]+)'", event[1])
    if not m:
        return False
    name = re.sub(r"^\.(.*)\.[0-9a-f]+\.tmp$", r"\1", m.group(1))
    return cache.is_dir() and any(p.name == name for p in cache.rglob("*"))


@pytest.fixture(scope="module", autouse=True)
def _caches_made(tmp_path_factory) -> None:
    """One plan of the good machine first: the tool's own caches (recipes, plugins) are written
    then, through the file-system gate's directory fds (paths the audit hook sees relative), so
    that what the hostile plans below do is all there is to see."""
    from fixer.cli import main

    f = tmp_path_factory.mktemp("good") / "env.json"
    f.write_text(json.dumps(GOOD))
    main(["plan", "--environment", str(f), "--json"])


@settings(
    max_examples=examples(500),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(change=CHANGES)
def test_a_hostile_environment_field_plans_or_exits_2(tmp_path, capsys, change) -> None:
    try:
        text = json.dumps(change.doc)
    except ValueError:  # a float JSON cannot spell
        text = json.dumps(with_field(GOOD, change.path, 0))
    f = tmp_path / "env.json"
    f.write_text(text)
    with nothing_happens() as happened:
        code, out, err = _plan(capsys, f)
    assert "Traceback" not in out + err
    assert code in (0, 1, 2, 3), (code, out[-500:], err[-500:])
    if code == 2:
        doc = json.loads(out)
        assert str(f) in json.dumps(doc)
    assert [e for e in happened if not _in_caches(e)] == []  # only the tool's own caches


@pytest.mark.parametrize(
    "path, value",
    [
        (("environment", "frameworks", 0, "cuda"), "x"),
        (("environment", "driver", "version"), "9" * 5000),
        (("environment", "frameworks", 0, "version"), "1." + "0" * 5000),
        (("environment", "gpus", 0, "compute_capability"), "x.y"),
        (("environment", "python", "distributions", 0, "name"), "-oDPkg::Pre-Invoke::=x"),
    ],
)
def test_the_crashes_of_issue_21_exit_2_with_one_line(tmp_path, capsys, path, value) -> None:
    f = tmp_path / "env.json"
    f.write_text(json.dumps(with_field(GOOD, path, value)))
    from fixer.cli import main

    code = main(["plan", "--environment", str(f)])
    got = capsys.readouterr()
    assert code == 2 and "Traceback" not in got.err
    lines = [ln for ln in got.err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and str(f) in lines[0] and "$.environment." in lines[0]
