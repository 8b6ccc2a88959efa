"""A Slurm node file (DIR/<host>.json, written by whoever can write the shared directory) is
untrusted data: with any field of a doctor --json replaced by a hostile value
(tests/helpers/hostile.py), a hostile file name, or bytes that are no JSON, `fleet doctor
--slurm DIR --json` answers with valid JSON and no traceback; each node is either read or
carries one error line that names its file; the good node beside it is still read; nothing
runs or is written."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.cli import main
from fixer.cluster import slurm
from fixer.planner.steps import environments_dir
from tests.helpers.examples import examples
from tests.helpers.hostile import field_paths, nothing_happens, one_line, values, with_field

with open(os.path.join(environments_dir(), "h200-healthy.json"), encoding="utf-8") as _fh:
    GOOD: Dict[str, Any] = json.load(_fh)


FIELDS = field_paths(GOOD) + [("healthy",), ("exit_code",)]
NAMES = ("node-1.json", "-oX.json", "a b.json", "..json", "\u00e9\\n.json", "x" * 200 + ".json")
RAW = (b"", b"{", b"\xff\xfe", b"[" * 100000, b"1" * 5000, b'{"environment": {}}')


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    """The recipe cache is written on first use (by design), before any watch."""
    main(["plan", "--environment", "h200-healthy", "--json"])


@settings(
    max_examples=examples(300),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    field=st.sampled_from(FIELDS),
    hostile=values(),
    name=st.sampled_from(NAMES),
    raw=st.one_of(st.none(), st.sampled_from(RAW)),
)
def test_a_hostile_node_file_is_that_nodes_one_line_error(
    capsys, tmp_path, field, hostile, name, raw
):
    d = Path(tempfile.mkdtemp(dir=tmp_path))
    (d / "good.json").write_text(json.dumps(GOOD))
    bad = d / name
    bad.write_bytes(
        raw if raw is not None else json.dumps(with_field(GOOD, field, hostile)).encode()
    )
    capsys.readouterr()
    with nothing_happens() as happened:
        results = slurm.read_results(str(d))
        code = main(["fleet", "doctor", "--slurm", str(d), "--json"])
    out = capsys.readouterr()
    assert happened == [], happened
    assert "Traceback" not in out.out + out.err
    body = json.loads(out.out)
    assert code == body.get("exit_code", code) and code in (0, 1), (code, out.err[-1000:])
    assert [r for r in results if r.node_id == "good.json"][0].doctor is not None
    for r in results:
        assert (r.doctor is None) != (r.error is None)
        if r.error is not None:
            assert one_line(r.error) and r.error.startswith(str(bad)), r.error
            assert len(r.error) < 600 + len(str(bad))
