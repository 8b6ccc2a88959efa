"""`fleet ... --slurm DIR`: the Slurm way: a job array writes one `doctor --json` per node into a
shared directory; this reads them back (no Slurm API, no scheduler access needed here).

The job-array command (`job_array_command`) runs one array task per node with `--exclusive`
(a task owns its node, so N tasks land on N nodes), writing DIR/<hostname>.json; a node that
answers twice keeps its newest file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
from typing import Any, List, Optional

from fixer.errors import UsageError
from fixer.cluster import NodeResult, checked_doctor

#: A node name as a host name may spell it (RFC 1123 labels); others are shown escaped.
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}")


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


#: The largest node file read (a doctor --json is tens to hundreds of KB).
MAX_NODE_FILE = 16 * 1024 * 1024


def _read_node_file(path: str) -> Any:
    """The JSON of one node file, opened without following a symlink and bounded in size."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError("not a regular file")
        raw = fh.read(MAX_NODE_FILE + 1)
    if len(raw) > MAX_NODE_FILE:
        raise ValueError(f"larger than {MAX_NODE_FILE // 1024 // 1024} MiB")
    return json.loads(raw.decode("utf-8"))


def read_results(directory: str) -> List[NodeResult]:
    """One NodeResult per DIR/<host>.json; a file that is not doctor --json output (checked field
    by field: fixer.cluster.checked_doctor) is that node's error, naming FILE and the JSON path."""
    if not os.path.isdir(directory):
        raise UsageError(f"--slurm {directory}: not a directory")
    out = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        host = name[:-5]
        if not _HOST.fullmatch(host):
            host = repr(host)[1:-1][:64]
        path = os.path.join(directory, name)
        try:
            data = _read_node_file(path)
        except (OSError, ValueError, RecursionError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            out.append(
                NodeResult(
                    node=host, node_id=name, error=f"{path}: not readable JSON ({reason[:200]})"
                )
            )
            continue
        doctor, error = checked_doctor(data, path)
        out.append(NodeResult(node=host, node_id=name, doctor=doctor, error=error))
    if not out:
        raise UsageError(
            f"--slurm {directory}: no node results (*.json) yet; run the job array first "
            "(`fleet doctor --slurm DIR --nodes N` prints it)"
        )
    return out
