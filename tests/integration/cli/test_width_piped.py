"""Output that copy-pastes through a real pipe: `fleet doctor` in a child process with its stdout
piped and COLUMNS=60 or 100, on per-node files holding real doctor payloads of bundled machines
(tests/unit/cli/test_width.py has the in-process cases; test_width_invariants.py the rule)."""

from __future__ import annotations

import json

from tests.helpers.output import whole_on_a_line, words_whole


def _fleet_dir(tmp_path):
    from fixer.pipeline import examine
    from fixer.render.doctor import doctor_json

    d = tmp_path / "results"
    d.mkdir()
    # real doctor payloads of bundled machines (the H200's recorded states and a stock Colab image)
    for host, name in (
        ("gpu-node-a.cluster.internal", "h200-healthy"),
        ("gpu-node-b.cluster.internal", "h200-pip-cudnn-hidden"),
        ("gpu-node-c.cluster.internal", "colab-2025-01-tf215"),
    ):
        e = examine(environment=name)
        (d / f"{host}.json").write_text(
            json.dumps(doctor_json(e.env, e.findings, e.healthy, e.exit_code))
        )
    (d / "gpu-node-d.cluster.internal.json").write_text("{not json")
    return d


def test_fleet_table_piped_at_60_and_100_columns_never_cuts_a_node_or_a_stack(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    d = _fleet_dir(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))

    def run(columns, *extra):
        env["COLUMNS"] = str(columns)
        return subprocess.run(
            [sys.executable, "-m", "fixer", "fleet", "doctor", "--slurm", str(d), *extra],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )

    value = json.loads(run(100, "--json").stdout)
    assert len(value["nodes"]) == 3 and len(value["failed"]) == 1
    for columns in (60, 100):
        r = run(columns)
        assert r.returncode == 1, r.stderr
        out = r.stdout
        assert "…" not in out
        for n in value["nodes"]:
            for text in (n["node"], n["stack"], n["address"] or "-"):
                assert whole_on_a_line(out, text), (columns, text)
            assert words_whole(out, ", ".join(n["findings"]) or "healthy")
        for f in value["failed"]:
            assert whole_on_a_line(out, f["node"]) and words_whole(out, f"no answer: {f['error']}")
        assert any(
            "cudnn" in s["stack"] and "/" in s["stack"] for s in value["stacks"]
        )  # paths were there
