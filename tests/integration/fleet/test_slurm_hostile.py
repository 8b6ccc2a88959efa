"""Slurm node files are untrusted data: a node's `doctor --json` with a hostile value in any
field (tests/helpers/hostile.py), a symlink, or a huge file is that node's error naming FILE and
the JSON path; the fleet summary is made without a traceback and nothing runs or is written."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.cluster import summarize
from fixer.cluster.slurm import read_results
from fixer.planner.steps import environments_dir
from tests.helpers.examples import examples
from tests.helpers.hostile import field_paths, nothing_happens, values, with_field

GOOD = json.loads(Path(environments_dir(), "h200-pip-cudnn-hidden.json").read_text())
GOOD = {
    "environment": GOOD["environment"],
    "findings": GOOD.get("findings", []),
    "healthy": False,
    "exit_code": 1,
}


FIELDS = field_paths(GOOD, items=2)


@settings(
    max_examples=examples(400),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(field=st.sampled_from(FIELDS), hostile=values())
def test_a_hostile_node_file_is_that_nodes_error(tmp_path_factory, field, hostile) -> None:
    d = tmp_path_factory.mktemp("slurm")
    (d / "good-node.json").write_text(json.dumps(GOOD))
    try:
        text = json.dumps(with_field(GOOD, field, hostile))
    except ValueError:  # an integer json cannot write: the file holds its digits
        text = json.dumps(with_field(GOOD, field, 0)).replace(": 0", ": " + str(hostile), 1)
    (d / "node-x.json").write_text(text)
    with nothing_happens() as happened:
        results = read_results(str(d))
        summary = summarize(results)
    assert happened == []
    bad = next(r for r in results if r.node == "node-x")
    if bad.doctor is None:
        assert bad.error and bad.error.startswith(str(d / "node-x.json")) and "\n" not in bad.error
    assert summary["node_count"] == 2


def test_a_symlinked_or_huge_node_file_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(GOOD))
    d = tmp_path / "out"
    d.mkdir()
    os.symlink(secret, d / "linked.json")
    (d / "huge.json").write_bytes(b" " * (17 * 1024 * 1024))
    results = {r.node: r for r in read_results(str(d))}
    assert results["linked"].doctor is None and "not readable" in results["linked"].error
    assert results["huge"].doctor is None and "larger than" in results["huge"].error
