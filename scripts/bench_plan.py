#!/usr/bin/env python3
"""Benchmarks of `plan` (no network, no GPU).

    python scripts/bench_plan.py            # both parts, N=15
    python scripts/bench_plan.py -n 30 --json

1. End to end: `colab-cudnn-fix plan --json --environment NAME` for every bundled environment,
   each run a fresh process (`python -m fixer`), so interpreter start, imports, recipe
   loading, diagnosis, the solve and rendering all count. Median and max of N runs; the
   target is under 0.3 s. Also, in one warm process, how that time splits between the stages.
2. The solver alone as the recipes grow: the shipped recipes copied 1x..10x (each copy a
   distinct set of versions, so every copy is a real candidate), on a healthy machine and on
   one whose torch must change. Median of N solves per size; the growth must be no worse
   than linear (time at 10x / time at 1x <= about 10).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fixer import model as m  # noqa: E402


def _median_max(samples: List[float]) -> Dict[str, float]:
    return {
        "median_s": round(statistics.median(samples), 4),
        "max_s": round(max(samples), 4),
        "min_s": round(min(samples), 4),
        "runs": len(samples),
    }


def end_to_end(n: int) -> Dict[str, Dict[str, float]]:
    from fixer.planner.steps import bundled_environments

    env = dict(os.environ, PYTHONPATH=str(REPO), NO_COLOR="1")
    # an installed package has its bytecode compiled; measure that, not a compile on every start
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "fixer")], env=env, check=False
    )
    out = {}
    for name in bundled_environments():
        samples = []
        for _ in range(n):
            t = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "fixer", "plan", "--json", "--environment", name],
                cwd=str(REPO),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                timeout=60,
            )
            samples.append(time.perf_counter() - t)
            if proc.returncode not in (
                0,
                1,
                3,
            ):  # a plan, no stack fits, no GPU: all answers (README)
                raise SystemExit(
                    f"plan --environment {name} exited {proc.returncode}: {proc.stderr.decode()[-500:]}"
                )
        out[name] = _median_max(samples)
    return out


def stages(n: int) -> Dict[str, Dict[str, float]]:
    """One warm process: the time of each stage of `plan` for the bundled broken Colab image."""
    from fixer import recipebook as rec
    from fixer.planner.steps import load_environment, make_plan
    from fixer.resolver import resolve

    timings: Dict[str, List[float]] = {
        k: [] for k in ("load_recipes", "load_environment", "diagnose", "resolve", "make_plan")
    }
    for _ in range(n):
        rec.clear_cache()
        t = time.perf_counter()
        recipes = rec.load()
        timings["load_recipes"].append(time.perf_counter() - t)
        t = time.perf_counter()
        env, _f, _w = load_environment("colab-2025-01-tf215")
        timings["load_environment"].append(time.perf_counter() - t)
        try:
            from fixer.diagnosis.findings import diagnose

            t = time.perf_counter()
            findings = diagnose(env, recipes)
            timings["diagnose"].append(time.perf_counter() - t)
        except ImportError:
            findings = ()
        t = time.perf_counter()
        stack = resolve(env, m.Intent(), recipes)
        timings["resolve"].append(time.perf_counter() - t)
        t = time.perf_counter()
        make_plan(env, stack, findings=findings)
        timings["make_plan"].append(time.perf_counter() - t)
    return {k: _median_max(v) for k, v in timings.items() if v}


def grown(recipes: m.Recipes, k: int) -> m.Recipes:
    """The recipes with k-1 extra copies of every build and cuDNN release, each copy under its
    own versions (torch 2.11.0 -> 102.11.0, cuDNN 9.19.0 -> 9.1019.0): k times the candidates."""
    builds = list(recipes.builds)
    cudnn = list(recipes.cudnn)
    for i in range(1, k):
        for b in recipes.builds:
            major, rest = b.version.split(".", 1)
            v = f"{int(major) + 100 * i}.{rest}"
            builds.append(
                dataclasses.replace(
                    b, version=v, packages=tuple(p.replace(b.version, v, 1) for p in b.packages)
                )
            )
        for r in recipes.cudnn:
            parts = r.version.split(".")
            v = ".".join([parts[0], str(int(parts[1]) + 1000 * i)] + parts[2:])
            cudnn.append(
                dataclasses.replace(
                    r,
                    version=v,
                    pip={
                        d: ".".join(
                            [x.split(".")[0], str(int(x.split(".")[1]) + 1000 * i)]
                            + x.split(".")[2:]
                        )
                        for d, x in r.pip.items()
                    },
                    apt={},
                )
            )
    return dataclasses.replace(recipes, builds=tuple(builds), cudnn=tuple(cudnn))


def scaling(n: int, sizes: List[int]) -> Dict[str, Dict[str, float]]:
    from fixer import recipebook as rec
    from fixer.planner.steps import load_environment
    from fixer.resolver import resolve

    def driver_570() -> m.Environment:
        """The recorded H200 machine's torch 2.11.0+cu130 (its only framework here) with a driver
        older than R580: the CUDA 13 build must change."""
        env = load_environment("h200-healthy")[0]
        assert env.driver is not None
        return dataclasses.replace(
            env,
            driver=dataclasses.replace(env.driver, version="570.133.20", cuda_version="12.8"),
            frameworks=tuple(f for f in env.frameworks if f.framework == "torch"),
        )

    base = rec.load()
    cases: Dict[str, Callable[[], m.Environment]] = {
        "healthy (colab-2026-08)": lambda: load_environment("colab-2026-08")[0],
        "broken (colab-2025-01-tf215)": lambda: load_environment("colab-2025-01-tf215")[0],
        "torch must change (h200-healthy on driver 570)": driver_570,
    }
    out: Dict[str, Dict[str, float]] = {}
    for label, make_env in cases.items():
        env = make_env()
        row: Dict[str, float] = {}
        for k in sizes:
            recipes = grown(base, k)
            samples = []
            for _ in range(n):
                t = time.perf_counter()
                resolve(env, m.Intent(), recipes)
                samples.append(time.perf_counter() - t)
            row[f"{k}x ({len(recipes.builds)} builds, {len(recipes.cudnn)} cuDNN)"] = round(
                statistics.median(samples), 5
            )
        first, last = list(row.values())[0], list(row.values())[-1]
        row["growth_10x_over_1x"] = round(last / first, 2) if first else float("nan")
        out[label] = row
    return out


def main(argv: List[str] = None) -> int:  # type: ignore[assignment]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=15, help="runs per measurement (default 15)")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    ap.add_argument("--skip-e2e", action="store_true", help="only the in-process measurements")
    args = ap.parse_args(argv)
    report = {
        "python": sys.version.split()[0],
        "end_to_end": {} if args.skip_e2e else end_to_end(args.n),
        "stages_warm": stages(args.n),
        "solver_scaling": scaling(args.n, list(range(1, 11))),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"Python {report['python']}")
    if report["end_to_end"]:
        print("\nplan --json --environment NAME (fresh process each run; target < 0.3 s)")
        for name, r in report["end_to_end"].items():
            print(
                f"  {name:28} median {r['median_s']:.3f} s   max {r['max_s']:.3f} s   ({r['runs']} runs)"
            )
    print("\nstages in a warm process (colab-2025-01-tf215), median")
    for name, r in report["stages_warm"].items():
        print(f"  {name:18} {r['median_s'] * 1000:8.1f} ms")
    print("\nsolver alone as the recipes grow (median per solve)")
    for label, row in report["solver_scaling"].items():
        print(f"  {label}")
        for k, v in row.items():
            print(
                f"    {k:40} {v * 1000:8.2f} ms"
                if k != "growth_10x_over_1x"
                else f"    10x / 1x: {v}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
