"""`fleet ... --slurm DIR`: the Slurm way: a job array writes one `doctor --json` per node into a
shared directory; this reads them back (no Slurm API, no scheduler access needed here).

The job-array command (`job_array_command`) runs one array task per node with `--exclusive`
(a task owns its node, so N tasks land on N nodes), writing DIR/<hostname>.json; a node that
answers twice keeps its newest file.
"""

from __future__ import annotations

import json
import os
import shlex
from typing import List, Optional

from fixer.errors import UsageError
from fixer.cluster import NodeResult


def job_array_command(
    directory: str,
    nodes: int,
    *,
    lock: Optional[str] = None,
    python: Optional[str] = None,
    partition: Optional[str] = None,
    tool: str = "colab-cudnn-fix",
) -> str:
    """The sbatch line that checks `nodes` nodes and leaves one JSON file per node in `directory`."""
    if nodes < 1:
        raise UsageError(f"--nodes {nodes}: at least one node")
    doctor = [tool, "doctor", "--json"]
    if lock:
        doctor += ["--lock", os.path.abspath(lock)]
    if python:
        doctor += ["--python", python]
    out = shlex.quote(os.path.abspath(directory))
    inner = f"{' '.join(shlex.quote(a) for a in doctor)} > {out}/$(hostname).json.tmp; mv {out}/$(hostname).json.tmp {out}/$(hostname).json"
    parts = [
        "sbatch",
        f"--array=0-{nodes - 1}",
        "--nodes=1",
        "--ntasks=1",
        "--exclusive",
        "--job-name=ccf-fleet",
        f"--output={os.path.abspath(directory)}/%x-%A_%a.log",
    ]
    if partition:
        parts.append(f"--partition={partition}")
    return (
        " ".join(shlex.quote(p) for p in parts)
        + " --wrap "
        + shlex.quote(f"mkdir -p {out} && {inner}")
    )


def read_results(directory: str) -> List[NodeResult]:
    """One NodeResult per DIR/<host>.json; a file that is not doctor --json output is that node's error."""
    if not os.path.isdir(directory):
        raise UsageError(f"--slurm {directory}: not a directory")
    out = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        host = name[:-5]
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError) as exc:
            out.append(
                NodeResult(node=host, node_id=name, error=f"{path}: not readable JSON ({exc})")
            )
            continue
        if not isinstance(data, dict) or "environment" not in data or "findings" not in data:
            out.append(
                NodeResult(node=host, node_id=name, error=f"{path}: not `doctor --json` output")
            )
            continue
        out.append(NodeResult(node=host, node_id=name, doctor=data))
    if not out:
        raise UsageError(
            f"--slurm {directory}: no node results (*.json) yet; run the job array first "
            "(`fleet doctor --slurm DIR --nodes N` prints it)"
        )
    return out
