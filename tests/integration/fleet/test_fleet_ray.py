"""`fleet doctor|lock-check --ray`: a real three-node Ray cluster on this machine (ray.cluster_utils,
one CPU each, every address on 127.0.0.1). Each node's GPU facts come through the
COLAB_CUDNN_FIX_* override variables given to that node's processes (the GPU is the true edge);
what is installed differs through the node's PYTHONPATH: node "drifted" sees another version of a
locked distribution, and a torch build its driver is too old for.

The CLI runs for real as a subprocess against the cluster's address. Ray is an optional extra
(`pip install colab-cudnn-fix[fleet]`); without it these tests are skipped, saying so. CI installs
it (.ci/run installs the test and fleet extras).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator

import pytest
from tests.helpers.paths import REPO

ray = pytest.importorskip(
    "ray",
    reason="Ray is not installed: pip install 'colab-cudnn-fix[fleet]' to run the fleet tests",
)

H200 = {
    "COLAB_CUDNN_FIX_GPU": "NVIDIA H200:9.0",
    "COLAB_CUDNN_FIX_DRIVER": "580.65.06",
    "COLAB_CUDNN_FIX_CUDA": "13.0",
}
T4_OLD = {
    "COLAB_CUDNN_FIX_GPU": "Tesla T4:7.5",
    "COLAB_CUDNN_FIX_DRIVER": "535.104.05",
    "COLAB_CUDNN_FIX_CUDA": "12.2",
}
LOCK = """version = 2
created = "2026-11-26T00:00:00Z"
tool = "colab-cudnn-fix test"

[requires]
cuda = "13.0"

[[package]]
name = "ccf-fleet-probe"
version = "1.0"
hashes = ["sha256:{zeros}"]
""".replace("{zeros}", "0" * 64)


def site(root: Path, probe_version: str, torch: bool = False) -> Path:
    """A directory for PYTHONPATH with real dist-info metadata (what detection reads)."""
    d = root / f"site-{probe_version}{'-torch' if torch else ''}"
    info = d / f"ccf_fleet_probe-{probe_version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: ccf-fleet-probe\nVersion: {probe_version}\n"
    )
    if torch:
        t = d / "torch"
        t.mkdir()
        (t / "version.py").write_text("__version__ = '2.11.0+cu130'\ncuda = '13.0'\nhip = None\n")
        ti = d / "torch-2.11.0.dist-info"
        ti.mkdir()
        (ti / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n"
            'Requires-Dist: nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"\n'
        )
    return d


def node_env(facts: Dict[str, str], pythonpath: Path) -> Dict[str, str]:
    return {
        **facts,
        "PYTHONPATH": f"{REPO}{os.pathsep}{pythonpath}",
        "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"],
    }


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[dict]:
    from ray.cluster_utils import Cluster

    # Every Ray process (nodes, the CLI's driver) takes 127.0.0.1 as its address; by default Ray on
    # Linux would pick the machine's outward address even for a cluster started on 127.0.0.1, and
    # a driver started apart would wait for a node of that address for ever.
    old_env = os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    root = tmp_path_factory.mktemp("fleet")
    v1, v2 = site(root, "1.0"), site(root, "2.0", torch=True)
    common = {
        "num_cpus": 1,
        "num_gpus": 1,
        "node_ip_address": "127.0.0.1",
        "object_store_memory": 80 * 1024 * 1024,
        "include_dashboard": False,
    }
    c = Cluster(
        initialize_head=True,
        head_node_args={**common, "env_vars": node_env(H200, v1), "resources": {"head": 1}},
    )
    c.add_node(**common, env_vars=node_env(H200, v1), resources={"twin": 1})
    c.add_node(**common, env_vars=node_env(T4_OLD, v2), resources={"drifted": 1})
    c.add_node(
        num_cpus=1, num_gpus=0, node_ip_address="127.0.0.1", object_store_memory=80 * 1024 * 1024
    )  # no GPU: skipped
    c.wait_for_nodes()
    lock = root / "stack.lock.toml"
    lock.write_text(LOCK)
    try:
        yield {"address": c.address, "lock": str(lock)}
    finally:
        c.shutdown()
        if old_env is None:
            os.environ.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)
        else:
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = old_env


def fleet(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "fixer", "fleet", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )


def test_fleet_doctor_groups_nodes_by_finding(cluster) -> None:
    r = fleet("doctor", "--ray", cluster["address"], "--json", "--timeout", "180")
    assert r.returncode == 1, r.stdout + r.stderr
    value = json.loads(r.stdout)
    assert (
        value["node_count"] == 3 and value["checked"] == 3 and value["failed"] == []
    )  # the GPU-less node is not asked
    by_node = {n["node"]: n for n in value["nodes"]}
    drifted = [n for n in value["nodes"] if "Tesla T4" in n["stack"]]
    assert len(drifted) == 1 and not drifted[0]["healthy"]
    assert len(value["healthy_nodes"]) == 2 and value["unhealthy_nodes"] == [drifted[0]["node"]]
    # every finding is the drifted node's alone: driver 535 (CUDA 12.2) is too old for torch cu130
    assert "driver-too-old" in value["by_finding"]
    for fid, g in value["by_finding"].items():
        assert g["nodes"] == [drifted[0]["node"]], fid
    assert len(value["stacks"]) == 2 and sorted(len(s["nodes"]) for s in value["stacks"]) == [1, 2]
    assert all(n["address"] == "127.0.0.1" for n in by_node.values())


def test_fleet_lock_check_names_the_drifted_node(cluster) -> None:
    r = fleet(
        "lock-check",
        "--ray",
        cluster["address"],
        "--lock",
        cluster["lock"],
        "--json",
        "--timeout",
        "180",
    )
    assert r.returncode == 1, r.stdout + r.stderr
    value = json.loads(r.stdout)
    drifted = next(n["node"] for n in value["nodes"] if "Tesla T4" in n["stack"])
    assert value["by_drift"]["drift from lock: ccf-fleet-probe is 2.0, the lock has 1.0"] == [
        drifted
    ]
    assert any(
        "needs CUDA 13.0" in line and nodes == [drifted]
        for line, nodes in value["by_drift"].items()
    )
    assert sorted(value["nodes_without_drift"]) == sorted(
        n["node"] for n in value["nodes"] if n["node"] != drifted
    )
    md = fleet("lock-check", "--ray", cluster["address"], "--lock", cluster["lock"], "--markdown")
    assert "#### Drift from the lock" in md.stdout and "ccf-fleet-probe is 2.0" in md.stdout


def test_unreachable_cluster_is_a_usage_error() -> None:
    r = fleet("doctor", "--ray", "127.0.0.1:1", "--timeout", "5")
    assert (
        r.returncode == 2
        and "cannot connect" in (r.stdout + r.stderr)
        and "Traceback" not in r.stderr
    )
