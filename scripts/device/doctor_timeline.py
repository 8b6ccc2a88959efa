#!/usr/bin/env python3
"""Where one `doctor --json` (or, with --plan, `plan --json`) spends its wall time, phase by
phase, in fresh processes.

    PYTHONPATH=$PWD python3 scripts/device/doctor_timeline.py [-n 15] [--plan]

Each run is a child `python3 scripts/device/doctor_timeline.py --child` that does what the console
script does (fixer.cli.entry: import, doctor, print) and stamps each phase
with the time since its interpreter started (from /proc/self/stat). The parent prints, per
phase, the median over the runs of its end time and of its own length. Phases inside detect()
are stamped by wrapping the functions detect() calls through their module attributes."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_T0 = time.perf_counter()


def _since_start() -> float:
    """Seconds since this process started (starttime in /proc/self/stat, clock ticks since boot)."""
    with open("/proc/self/stat") as fh:
        start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as fh:
        uptime = float(fh.read().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def child(plan: bool = False) -> None:
    offset = _since_start() - (time.perf_counter() - _T0)  # interpreter start -> _T0
    stamps = []

    def stamp(name: str) -> None:
        stamps.append((name, offset + time.perf_counter() - _T0))

    stamp("interpreter + site (to the script's first line)")
    sys.argv = ["colab-cudnn-fix", "doctor", "--json"]
    from fixer.cli import table as _options  # noqa: F401

    stamp("import fixer.cli.table (fixer.model, fixer.api)")
    from fixer.cli import commands as _commands  # noqa: F401

    stamp("import fixer.cli.commands (typer, every command)")
    _commands._command()
    stamp("typer builds the click command")
    from fixer import api, pipeline
    from fixer.render.doctor import print_doctor_json
    import fixer.detection as det

    stamp("import api, pipeline, detection, render")

    def wrap(mod, name):
        fn = getattr(mod, name)

        def timed(*a, **k):
            out = fn(*a, **k)
            stamp(f"{mod.__name__.split('.')[-1]}.{name}")
            return out

        setattr(mod, name, timed)

    for n in (
        "load_ld_cache",
        "finish_probe",
        "detect_frameworks",
        "compute_loads",
        "detect_runtime",
    ):
        wrap(det, n)
    wrap(det._libs, "scan")
    wrap(det._gpu, "assemble")
    wrap(pipeline, "doctor_findings")
    import fixer.detection.colab_image as ci

    wrap(ci, "annotate")
    devnull = open(os.devnull, "w")
    real = sys.stdout
    if plan:
        _plan_phases(api, pipeline, wrap, stamp, devnull, real)
        print(json.dumps(stamps))
        return
    result = api.doctor()
    stamp("api.doctor returned")
    sys.stdout = devnull
    print_doctor_json(result.environment, result.findings, result.healthy, result.exit_code)
    sys.stdout = real
    stamp("JSON printed")
    print(json.dumps(stamps))


def _plan_phases(api, pipeline, wrap, stamp, devnull, real) -> None:
    """plan --json: the recipes, the machine, its findings, the solve, the steps, the simulation."""
    from fixer.cli._common import write_json

    wrap(pipeline.rec, "load")
    for n in ("machine", "diagnosed", "resolve", "simulated"):
        wrap(pipeline, n)
    import fixer.planner.steps as steps

    wrap(steps, "make_plan")
    result = api.plan()
    stamp("api.plan returned")
    sys.stdout = devnull
    write_json(result.to_dict())
    sys.stdout = real
    stamp("JSON printed")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=15)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--plan", action="store_true", help="plan --json instead of doctor --json")
    args = ap.parse_args()
    if args.child:
        child(args.plan)
        return
    runs = []
    walls = []
    for _ in range(args.n + 1):
        s = time.perf_counter()
        out = subprocess.run(
            [sys.executable, __file__, "--child", *(["--plan"] if args.plan else [])],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        walls.append(time.perf_counter() - s)
        runs.append(json.loads(out.strip().splitlines()[-1]))
    runs, walls = runs[1:], walls[1:]  # the first warms the page cache
    print(
        f"wall per run (parent's view): median {statistics.median(walls) * 1000:.1f} ms over {len(walls)} runs"
    )
    names = [n for n, _ in runs[0]]
    prev = [0.0] * len(runs)
    for i, name in enumerate(names):
        ends = [r[i][1] if i < len(r) and r[i][0] == name else float("nan") for r in runs]
        lens = [e - p for e, p in zip(ends, prev)]
        prev = ends
        print(
            f"{statistics.median(ends) * 1000:7.1f} ms  (+{statistics.median(lens) * 1000:6.1f})  {name}"
        )


if __name__ == "__main__":
    main()
