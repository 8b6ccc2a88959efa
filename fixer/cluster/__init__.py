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
from fixer.model import Environment, Finding, from_dict

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


def checked_doctor(data: Any, where: str) -> Tuple[Optional[Dict[str, Any]], Optional[str]]:
    """(payload, None) when `data` is `doctor --json` output this tool reads (its environment
    and findings rebuilt by fixer.model.from_dict, every field of its grammar), else (None,
    "WHERE: $.path: what is wrong"): a node's answer is untrusted data."""
    if not isinstance(data, dict) or "environment" not in data or "findings" not in data:
        return None, f"{where}: not `doctor --json` output"
    try:
        from_dict(Environment, data["environment"], "$.environment")
        if not isinstance(data["findings"], list):
            raise ValueError("$.findings: expected a list")
        for i, f in enumerate(data["findings"]):
            from_dict(Finding, f, f"$.findings[{i}]")
        if not isinstance(data.get("healthy", False), bool):
            raise ValueError("$.healthy: expected true or false")
        code = data.get("exit_code", 0)
        if code is not None and (
            not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255
        ):
            raise ValueError("$.exit_code: expected an exit code 0-255")
    except (ValueError, RecursionError) as exc:
        return None, f"{where}: {str(exc)[:300]}"
    return data, None


_SEVERITIES = ["error", "warning", "info"]


def _is_drift(f: Dict[str, Any]) -> bool:
    return DRIFT_PREFIX in f.get("title", "") or f.get("title", "").startswith("lock ")


def _add_findings(
    by_finding: Dict[str, Dict[str, Any]], node: str, plain: List[Dict[str, Any]]
) -> None:
    for f in plain:
        g = by_finding.setdefault(f["id"], {"severity": f["severity"], "nodes": [], "titles": []})
        if node not in g["nodes"]:
            g["nodes"].append(node)
        if f["title"] not in g["titles"]:
            g["titles"].append(f["title"])
        if _SEVERITIES.index(f["severity"]) < _SEVERITIES.index(g["severity"]):
            g["severity"] = f["severity"]


def summarize(results: Sequence[NodeResult], lock: Optional[str] = None) -> Dict[str, Any]:
    """The fleet report as plain data (`fleet ... --json`):

    - nodes: each node with its verdict (exit code, healthy, finding ids, drift lines);
    - by_finding: finding id -> severity, the nodes that have it, the distinct titles;
    - by_drift: with a lock, each drift line -> the nodes that show it; nodes_without_drift;
    - stacks: the distinct stacks, each with its nodes (one entry: every node runs the same stack);
    - failed: nodes whose check did not come back (or came back malformed), with the reason.

    Node files (Slurm) are checked when read (checked_doctor); Ray results come back from the
    tool's own task.
    """
    nodes: List[Dict[str, Any]] = []
    by_finding: Dict[str, Dict[str, Any]] = {}
    by_drift: Dict[str, List[str]] = {}
    stacks: Dict[Tuple[str, ...], List[str]] = {}
    failed = []
    for r in sorted(results, key=lambda r: r.node):
        doctor = r.doctor
        if doctor is None:
            failed.append({"node": r.node, "node_id": r.node_id, "error": r.error or "no answer"})
            continue
        findings = doctor.get("findings") or []
        drift = [
            f["title"].split(": ", 1)[-1] if f["title"].startswith("lock ") else f["title"]
            for f in findings
            if _is_drift(f)
        ]
        plain = [f for f in findings if not _is_drift(f)]
        _add_findings(by_finding, r.node, plain)
        for line in drift:
            by_drift.setdefault(line, []).append(r.node)
        stacks.setdefault(_stack_key(doctor), []).append(r.node)
        nodes.append(
            {
                "node": r.node,
                "node_id": r.node_id,
                "address": r.address,
                "exit_code": doctor.get("exit_code"),
                "healthy": bool(doctor.get("healthy")),
                "findings": sorted({f["id"] for f in plain}),
                "drift": drift,
                "stack": stack_text(doctor),
            }
        )
    return _report(results, lock, nodes, by_finding, by_drift, stacks, failed)


def _report(
    results: Sequence[NodeResult],
    lock: Optional[str],
    nodes: List[Dict[str, Any]],
    by_finding: Dict[str, Dict[str, Any]],
    by_drift: Dict[str, List[str]],
    stacks: Dict[Tuple[str, ...], List[str]],
    failed: List[Dict[str, Any]],
) -> Dict[str, Any]:
    ordered = sorted(
        by_finding.items(), key=lambda kv: (_SEVERITIES.index(kv[1]["severity"]), kv[0])
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
