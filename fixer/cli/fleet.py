"""`colab-cudnn-fix fleet doctor|lock-check`: doctor on every GPU node of a cluster, one report.

--ray ADDRESS runs one task pinned per GPU node (fixer.cluster.ray_runner; needs the [fleet]
extra); --slurm DIR reads the per-node JSON files a job array wrote (with --nodes N: prints that
job-array command instead).
"""

from __future__ import annotations

import sys
from typing import Optional

import typer

from fixer.errors import UsageError
from fixer.cli._app import app
from fixer.cli._common import handle_errors, write_result
from fixer.cli.options import command, option
from fixer import api

fleet_app = typer.Typer(
    name="fleet",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Check every GPU node of a cluster (Ray or Slurm) and report which nodes differ.",
)
app.add_typer(fleet_app, name="fleet")


def _fleet(
    action: str,
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
    if json and markdown:
        raise UsageError("--json and --markdown exclude each other: choose one output")
    if nodes is not None and slurm is not None and (action == "doctor" or lock):
        _job_array(slurm, nodes, lock, python, partition, json)
    if slurm is None and (nodes is not None or partition is not None):
        raise UsageError("--nodes and --partition go with --slurm")
    result = api.fleet(action, ray=ray, slurm=slurm, lock=lock, python=python, timeout=timeout)
    if markdown:
        # start-up: fixer.render.fleet 0.0% alone, all small ones +4% (doctor --json, importtime)
        from fixer.render.fleet import render

        render(result.summary, "markdown")
        raise typer.Exit(result.exit_code)
    raise typer.Exit(write_result(result, json))


def _job_array(
    slurm: str,
    nodes: int,
    lock: Optional[str],
    python: Optional[str],
    partition: Optional[str],
    json: bool,
) -> None:
    """`--slurm DIR --nodes N`: print the sbatch job-array command that writes the nodes' files."""
    # start-up: fixer.cluster.slurm +1% on doctor --json (python -X importtime)
    from fixer.cluster import slurm as _slurm

    if json:
        raise UsageError(
            "--nodes prints the job-array command (a shell line, not JSON): drop --json, "
            "then read the results back with --slurm DIR --json"
        )
    line = _slurm.job_array_command(slurm, nodes, lock=lock, python=python, partition=partition)
    sys.stdout.write(line + "\n")
    raise typer.Exit(0)


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
    _fleet("doctor", ray, slurm, nodes, None, python, timeout, json, markdown, partition)


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
    _fleet("lock-check", ray, slurm, nodes, lock, python, timeout, json, markdown, partition)
