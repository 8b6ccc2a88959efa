"""Fleet check: `doctor` (or `doctor --lock`) on every GPU node of a cluster, one report.

    results = fixer.cluster.ray_runner.run("ray://head:10001", lock_text=...)   # Ray
    results = fixer.cluster.slurm.read_results("/shared/ccf")                  # Slurm job array
    value = summarize(results, lock=...)                                     # plain JSON-ready dict

This module is pure (no Ray, no I/O): it groups the nodes' `doctor --json` payloads by finding
and by drift from the lock, and says which nodes share one stack. Ray is imported only by
fixer.cluster.ray_runner, which only `fleet ... --ray` loads (`pip install colab-cudnn-fix[fleet]`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

FLEET_SCHEMA = 1
DRIFT_PREFIX = "drift from lock"


@dataclasses.dataclass(frozen=True)
class NodeResult:
    """One node's answer: its `doctor --json` payload, or why there is none."""

    node: str  # the node's name in reports: hostname (and Ray node id prefix)
    node_id: str = ""  # Ray node id / Slurm file name
    address: str = ""  # node IP
    doctor: Optional[Dict[str, Any]] = None
    error: Optional[str] = None  # the task failed, timed out or returned bad data


def _stack_key(doctor: Dict[str, Any]) -> Tuple[str, ...]:
    """What must be equal for two nodes to run "the same stack": GPU model, driver, each GPU
    framework's version and the cuDNN it loads (version and directory)."""
    env = doctor.get("environment") or {}
    gpus = ",".join(
        sorted({f"{g.get('name')}:{g.get('compute_capability')}" for g in env.get("gpus") or []})
    )
    drv = (env.get("driver") or {}).get("version") or "-"
    fws = []
    for fw in env.get("frameworks") or []:
        load = next(
            (
                x
                for x in env.get("loads") or []
                if x.get("consumer") == fw.get("framework") and x.get("library") == "cudnn"
            ),
            None,
        )
        fws.append(
            f"{fw.get('distribution')}=={fw.get('version')}"
            + (f" cudnn {load.get('version')} {load.get('directory')}" if load else "")
        )
    return (gpus, drv, *sorted(fws))


def stack_text(doctor: Dict[str, Any]) -> str:
    return stack_text_from_key(_stack_key(doctor))


def summarize(results: Sequence[NodeResult], lock: Optional[str] = None) -> Dict[str, Any]:
    """The fleet report as plain data (`fleet ... --json`):

    - nodes: each node with its verdict (exit code, healthy, finding ids, drift lines);
    - by_finding: finding id -> severity, the nodes that have it, the distinct titles;
    - by_drift: with a lock, each drift line -> the nodes that show it; nodes_without_drift;
    - stacks: the distinct stacks, each with its nodes (one entry: every node runs the same stack);
    - failed: nodes whose check did not come back, with the reason.
    """
    nodes: List[Dict[str, Any]] = []
    by_finding: Dict[str, Dict[str, Any]] = {}
    by_drift: Dict[str, List[str]] = {}
    stacks: Dict[Tuple[str, ...], List[str]] = {}
    failed = []
    for r in sorted(results, key=lambda r: r.node):
        if r.doctor is None:
            failed.append({"node": r.node, "node_id": r.node_id, "error": r.error or "no answer"})
            continue
        findings = r.doctor.get("findings") or []
        drift = [
            f["title"].split(": ", 1)[-1] if f["title"].startswith("lock ") else f["title"]
            for f in findings
            if DRIFT_PREFIX in f.get("title", "") or f.get("title", "").startswith("lock ")
        ]
        plain = [
            f
            for f in findings
            if not (DRIFT_PREFIX in f.get("title", "") or f.get("title", "").startswith("lock "))
        ]
        for f in plain:
            g = by_finding.setdefault(
                f["id"], {"severity": f["severity"], "nodes": [], "titles": []}
            )
            if r.node not in g["nodes"]:
                g["nodes"].append(r.node)
            if f["title"] not in g["titles"]:
                g["titles"].append(f["title"])
            if ["error", "warning", "info"].index(f["severity"]) < [
                "error",
                "warning",
                "info",
            ].index(g["severity"]):
                g["severity"] = f["severity"]
        for line in drift:
            by_drift.setdefault(line, []).append(r.node)
        stacks.setdefault(_stack_key(r.doctor), []).append(r.node)
        nodes.append(
            {
                "node": r.node,
                "node_id": r.node_id,
                "address": r.address,
                "exit_code": r.doctor.get("exit_code"),
                "healthy": bool(r.doctor.get("healthy")),
                "findings": sorted({f["id"] for f in plain}),
                "drift": drift,
                "stack": stack_text(r.doctor),
            }
        )
    ordered = sorted(
        by_finding.items(),
        key=lambda kv: (["error", "warning", "info"].index(kv[1]["severity"]), kv[0]),
    )
    unhealthy = [n["node"] for n in nodes if not n["healthy"]]
    return {
        "schema": FLEET_SCHEMA,
        "lock": lock,
        "node_count": len(results),
        "checked": len(nodes),
        "healthy_nodes": [n["node"] for n in nodes if n["healthy"]],
        "unhealthy_nodes": unhealthy,
        "nodes": nodes,
        "by_finding": {k: v for k, v in ordered},
        "by_drift": by_drift,
        "nodes_without_drift": [n["node"] for n in nodes if not n["drift"]] if lock else [],
        "stacks": [
            {"stack": stack_text_from_key(k), "nodes": v}
            for k, v in sorted(stacks.items(), key=lambda kv: (-len(kv[1]), kv[1]))
        ],
        "failed": failed,
        "exit_code": 0 if nodes and not unhealthy and not failed else 1,
    }


def stack_text_from_key(key: Tuple[str, ...]) -> str:
    return "; ".join((f"GPU {key[0] or 'none'}", f"driver {key[1]}", *key[2:]))
