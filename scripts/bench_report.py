#!/usr/bin/env python3
"""Time `colab-cudnn-fix report` and `report --html` against `doctor --json`, and prove that no
framework is imported on the way.

Each command runs as a fresh subprocess, alternately, N times; medians are printed (and written
as JSON with --out). The import check runs `python -X importtime -m fixer report` once and lists
any torch / tensorflow / jax / cupy module it imported (there must be none). Budget: report
under 0.3 s on the GPU machine.

    PYTHONPATH=$PWD python3 scripts/bench_report.py --runs 7 [--python /opt/torch/.venv/bin/python3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FRAMEWORK_MODULES = re.compile(r"\|\s+(torch|tensorflow|jax|jaxlib|cupy)(\.|$)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--python", default=None, help="target interpreter (--python of the commands)")
    ap.add_argument("--out", help="write the numbers as JSON here")
    args = ap.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    target = ["--python", args.python] if args.python else []
    commands = {
        "doctor --json": [sys.executable, "-m", "fixer", "doctor", "--json", *target],
        "report": [sys.executable, "-m", "fixer", "report", *target],
        "report --html": [sys.executable, "-m", "fixer", "report", "--html", *target],
    }
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "fixer")], check=False)
    times = {k: [] for k in commands}
    for argv in commands.values():  # warm the page cache and the tool's caches once
        subprocess.run(argv, env=env, capture_output=True)
    for _ in range(args.runs):
        for name, argv in commands.items():
            t = time.perf_counter()
            proc = subprocess.run(argv, env=env, capture_output=True)
            times[name].append(time.perf_counter() - t)
            if proc.returncode not in (0, 1, 3):
                sys.stderr.write(proc.stderr.decode(errors="replace")[-2000:])
                print(f"{name} failed with exit {proc.returncode}")
                return 1
    imp = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "fixer", "report", *target],
        env=env,
        capture_output=True,
        text=True,
    )
    imported = sorted({m.group(1) for m in FRAMEWORK_MODULES.finditer(imp.stderr)})
    result = {
        name: {
            "median_s": round(statistics.median(ts), 4),
            "min_s": round(min(ts), 4),
            "runs": len(ts),
        }
        for name, ts in times.items()
    }
    result["frameworks_imported_by_report"] = imported
    for name, r in result.items():
        print(f"{name:>32}: {r}")
    ok = result["report"]["median_s"] < 0.3 and not imported
    print(f"report under 0.3 s with no framework import: {ok}")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
