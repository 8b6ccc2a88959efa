"""`colab-cudnn-fix fleet doctor|lock-check`: doctor on every GPU node of a cluster, one report.

--ray ADDRESS runs one task pinned per GPU node (fixer.cluster.ray_runner; needs the [fleet]
extra); --slurm DIR reads the per-node JSON files a job array wrote (with --nodes N: prints that
job-array command instead).
"""

from __future__ import annotations

from typing import Optional

import typer

from fixer.errors import UsageError
from fixer.cli._app import app
from fixer.cli._common import handle_errors
from fixer.cli.options import command, option

fleet_app = typer.Typer(
    name="fleet",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Check every GPU node of a cluster (Ray or Slurm) and report which nodes differ.",
)
app.add_typer(fleet_app, name="fleet")


def _fleet(
    command: str,
    ray: Optional[str],
    slurm: Optional[str],
    nodes: Optional[int],
    lock: Optional[str],
    python: Optional[str],
    timeout: float,
    json: bool,
    markdown: bool,
    partition: Optional[str],
) -> None:
    from fixer.cluster import summarize
    from fixer.render import json_payload, write_json
    from fixer.render.fleet import render

    if (ray is None) == (slurm is None):
        raise UsageError("give one of --ray ADDRESS or --slurm DIR")
    if json and markdown:
        raise UsageError("--json and --markdown exclude each other: choose one output")
    if slurm is not None:
        from fixer.cluster import slurm as _slurm

        if nodes is not None:
            if json:
                raise UsageError(
                    "--nodes prints the job-array command (a shell line, not JSON): drop --json, "
                    "then read the results back with --slurm DIR --json"
                )
            import sys

            sys.stdout.write(
                _slurm.job_array_command(
                    slurm, nodes, lock=lock, python=python, partition=partition
                )
                + "\n"
            )
            raise typer.Exit(0)
        results = _slurm.read_results(slurm)
    else:
        if nodes is not None or partition is not None:
            raise UsageError("--nodes and --partition go with --slurm")
        from fixer.cluster import ray_runner

        results, _alive = ray_runner.run(ray, python=python, lock=lock, timeout=timeout)  # type: ignore[arg-type]
        if not results:
            raise UsageError(f"--ray {ray}: the cluster has no alive node with a GPU resource")
    value = summarize(results, lock=lock)
    if json:
        write_json(json_payload(value, command))
    else:
        render(value, "markdown" if markdown else "table")
    raise typer.Exit(value["exit_code"])


@command(fleet_app, "doctor")
@handle_errors()
def fleet_doctor(
    ray: Optional[str] = option("ray"),
    slurm: Optional[str] = option("slurm"),
    nodes: Optional[int] = option("nodes"),
    partition: Optional[str] = option("partition"),
    python: Optional[str] = option("python"),
    timeout: float = option("fleet_timeout"),
    json: bool = option("json"),
    markdown: bool = option("markdown"),
) -> None:
    """Run doctor on every GPU node and group the nodes by finding and by stack."""
    _fleet("fleet doctor", ray, slurm, nodes, None, python, timeout, json, markdown, partition)


@command(fleet_app, "lock-check")
@handle_errors()
def fleet_lock_check(
    lock: Optional[str] = option("lock"),
    ray: Optional[str] = option("ray"),
    slurm: Optional[str] = option("slurm"),
    nodes: Optional[int] = option("nodes"),
    partition: Optional[str] = option("partition"),
    python: Optional[str] = option("python"),
    timeout: float = option("fleet_timeout"),
    json: bool = option("json"),
    markdown: bool = option("markdown"),
) -> None:
    """Run `doctor --lock FILE` on every GPU node and group the nodes by drift from the lock."""
    if not lock:
        raise UsageError("fleet lock-check needs --lock FILE (a lock file written by `lock`)")
    _fleet("fleet lock-check", ray, slurm, nodes, lock, python, timeout, json, markdown, partition)
