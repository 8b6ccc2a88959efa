"""The fleet report without a cluster: grouping invariants over generated node results, and the
Slurm path (job-array command; per-node `doctor --json` files read back) through the real CLI."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.cluster import NodeResult, summarize
from tests.helpers.examples import examples
from tests.helpers.paths import REPO

IDS = ["cudnn-too-old", "driver-too-old", "cudnn-incomplete", "log-noise"]


def payload(findings, drift, gpu="H200", driver="580"):
    fs = [
        {
            "id": i,
            "severity": "info" if i == "log-noise" else "error",
            "title": f"{i} title",
            "evidence": [],
            "fix": "",
            "frameworks": [],
            "confidence": 1.0,
        }
        for i in findings
    ]
    fs += [
        {
            "id": "pip-conflict",
            "severity": "error",
            "title": f"drift from lock: {d}",
            "evidence": [],
            "fix": "",
            "frameworks": [],
            "confidence": 1.0,
        }
        for d in drift
    ]
    bad = any(f["severity"] != "info" for f in fs)
    return {
        "schema": 1,
        "environment": {
            "gpus": [{"name": gpu, "compute_capability": "9.0"}],
            "driver": {"version": driver},
            "frameworks": [],
            "loads": [],
        },
        "findings": fs,
        "healthy": not bad,
        "exit_code": 1 if bad else 0,
    }


node_st = st.tuples(
    st.sets(st.sampled_from(IDS)),
    st.sets(st.sampled_from(["a 2.0 vs 1.0", "b missing"])),
    st.sampled_from(["H200", "T4"]),
    st.sampled_from(["580", "535"]),
    st.booleans(),
)


@settings(max_examples=examples(200), deadline=None)
@given(nodes=st.lists(node_st, min_size=1, max_size=8), lock=st.booleans())
def test_grouping_invariants(nodes, lock) -> None:
    results = []
    for i, (fids, drift, gpu, drv, failed) in enumerate(nodes):
        name = f"node-{i}"
        results.append(
            NodeResult(node=name, error="timeout")
            if failed
            else NodeResult(node=name, doctor=payload(sorted(fids), sorted(drift), gpu, drv))
        )
    v = summarize(results, lock="stack.lock.toml" if lock else None)
    ok = [r for r in results if r.doctor is not None]
    assert v["checked"] == len(ok) and len(v["failed"]) == len(results) - len(ok)
    assert sorted(v["healthy_nodes"] + v["unhealthy_nodes"]) == sorted(r.node for r in ok)
    assert sorted(n for s in v["stacks"] for n in s["nodes"]) == sorted(
        r.node for r in ok
    )  # stacks partition nodes
    for r in ok:
        fids = {
            f["id"] for f in r.doctor["findings"] if not f["title"].startswith("drift from lock")
        }
        for fid, g in v["by_finding"].items():
            assert (r.node in g["nodes"]) == (fid in fids)
        drift = {
            f["title"] for f in r.doctor["findings"] if f["title"].startswith("drift from lock")
        }
        for line, ns in v["by_drift"].items():
            assert (r.node in ns) == (line in drift)
        if lock:
            assert (r.node in v["nodes_without_drift"]) == (not drift)
    assert v["exit_code"] == (0 if ok and not v["unhealthy_nodes"] and not v["failed"] else 1)


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "fixer", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        timeout=120,
    )


def test_slurm_command_and_read_back(tmp_path: Path) -> None:
    from fixer.pipeline import examine
    from fixer.render.doctor import doctor_json

    out = tmp_path / "results"
    r = cli("fleet", "doctor", "--slurm", str(out), "--nodes", "4", "--partition", "gpu")
    assert r.returncode == 0, r.stderr
    argv = shlex.split(r.stdout)
    assert (
        argv[0] == "sbatch"
        and "--array=0-3" in argv
        and "--exclusive" in argv
        and "--partition=gpu" in argv
    )
    assert "colab-cudnn-fix doctor --json" in argv[-1] and str(out) in argv[-1]
    out.mkdir()
    for host, name in (
        ("gpu-a", "h200-healthy"),
        ("gpu-b", "h200-healthy"),
        ("gpu-c", "h200-pip-cudnn-hidden"),
    ):
        e = examine(environment=name)
        (out / f"{host}.json").write_text(
            json.dumps(doctor_json(e.env, e.findings, e.healthy, e.exit_code))
        )
    (out / "gpu-d.json").write_text("{not json")
    r = cli("fleet", "doctor", "--slurm", str(out), "--json")
    assert r.returncode == 1, r.stderr
    v = json.loads(r.stdout)
    assert v["healthy_nodes"] == ["gpu-a", "gpu-b"] and v["unhealthy_nodes"] == ["gpu-c"]
    assert v["by_finding"]["cudnn-too-old"]["nodes"] == ["gpu-c"]
    assert [f["node"] for f in v["failed"]] == ["gpu-d"]
    md = cli("fleet", "doctor", "--slurm", str(out), "--markdown").stdout
    assert "`cudnn-too-old` on 1 node(s): gpu-c" in md
    table = cli("fleet", "doctor", "--slurm", str(out))
    assert table.returncode == 1 and "gpu-c" in table.stdout and "cudnn-too-old" in table.stdout
    assert cli("fleet", "doctor").returncode == 2
    assert cli("fleet", "doctor", "--slurm", str(tmp_path / "nope")).returncode == 2
