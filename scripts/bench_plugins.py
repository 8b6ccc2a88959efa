#!/usr/bin/env python3
"""What plugin discovery costs on the hot path (fixer.system.plugins.discover), against
importlib.metadata.entry_points(group=...), on a site-packages the size of Colab's (~700
distributions, a fifth of them with an entry_points.txt, none of them a plugin).

Each measurement runs in a fresh interpreter (no in-process cache): "cold" is the first
discovery of that interpreter with an empty tool cache, "warm" the next process, when the
on-disk cache keyed by the sys.path directories' mtimes answers.

    python3 scripts/bench_plugins.py [--dists 700] [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROBE = """
import sys, time
t = time.perf_counter()
{body}
print(time.perf_counter() - t)
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dists", type=int, default=700)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    site = Path(tempfile.mkdtemp(prefix="bench-plugins-site-"))
    for i in range(args.dists):
        d = site / f"pkg{i}-1.0.dist-info"
        d.mkdir()
        (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: pkg{i}\nVersion: 1.0\n")
        if i % 5 == 0:
            (d / "entry_points.txt").write_text(f"[console_scripts]\npkg{i} = pkg{i}.cli:main\n")
    cache = tempfile.mkdtemp(prefix="bench-plugins-cache-")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), str(site)]), XDG_CACHE_HOME=cache)
    ours = PROBE.format(body="from fixer.system import plugins\nplugins.discover()")
    theirs = PROBE.format(
        body="import importlib.metadata as m\nm.entry_points(group='colab_cudnn_fix.checks')"
    )
    # import fixer and what every command has loaded by then (pathlib, json, hashlib: the recipes
    # cache and the CLI need them), outside the timing, so only discovery itself is measured
    ours = "import fixer.system.plugins, pathlib, json, hashlib\n" + ours
    subprocess.run(
        [sys.executable, "-c", ours], env=env, check=True, capture_output=True
    )  # fills the cache
    res = {"ours (warm cache)": [], "importlib.metadata": []}
    for _ in range(args.runs):
        res["ours (warm cache)"].append(
            float(
                subprocess.run(
                    [sys.executable, "-c", ours],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
        )
        res["importlib.metadata"].append(
            float(
                subprocess.run(
                    [sys.executable, "-c", theirs],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
        )
    cold = []
    for _ in range(args.runs):
        env["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="bench-plugins-cold-")
        cold.append(
            float(
                subprocess.run(
                    [sys.executable, "-c", ours],
                    env=env,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
        )
    res["ours (cold, no cache)"] = cold
    print(f"{args.dists} distributions on sys.path")
    for k, v in res.items():
        print(f"  {k:>24}: median {statistics.median(v) * 1000:.2f} ms, min {min(v) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
