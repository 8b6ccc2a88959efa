#!/usr/bin/env python3
"""Time `colab-cudnn-fix doctor --json` against `python -m torch.utils.collect_env`.

Both run as fresh subprocesses, alternately, N times each; the medians and their ratio are
printed (and written as JSON with --out). collect_env runs only when torch is importable in
the target interpreter. Goal on the GPU machine: doctor < 0.25 s and >= 20x faster.

    PYTHONPATH=$PWD python3 scripts/bench_doctor.py --runs 7 [--python /opt/torch/.venv/bin/python3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(argv, env, timeout=300.0):
    t = time.perf_counter()
    proc = subprocess.run(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout
    )
    return time.perf_counter() - t, proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter with torch (collect_env, doctor's target)",
    )
    ap.add_argument("--out", help="write the numbers as JSON here")
    args = ap.parse_args()

    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    doctor = [sys.executable, "-m", "fixer", "doctor", "--json"]
    if args.python != sys.executable:
        doctor += ["--python", args.python]
    has_torch = (
        subprocess.run(
            [
                args.python,
                "-c",
                "import importlib.util,sys; sys.exit(0 if importlib.util.find_spec('torch') else 1)",
            ],
            capture_output=True,
        ).returncode
        == 0
    )
    collect = [args.python, "-m", "torch.utils.collect_env"]

    # An installed package is byte-compiled by pip; a checkout on PYTHONPATH under
    # PYTHONDONTWRITEBYTECODE=1 (the GPU machine sets it) would recompile every module on
    # every run. Compile once so both measure the same thing a user runs.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "fixer")], check=False)
    timed(doctor, env)  # warm the page cache once, like a second run in a notebook
    d_times, c_times = [], []
    code = None
    for _ in range(args.runs):
        t, proc = timed(doctor, env)
        d_times.append(t)
        code = proc.returncode
        if proc.returncode not in (0, 1, 3):
            sys.stderr.write(proc.stderr.decode(errors="replace")[-2000:])
            print(f"doctor failed with exit {proc.returncode}")
            return 1
        if has_torch:
            t, _ = timed(collect, env)
            c_times.append(t)
    res = {
        "runs": args.runs,
        "doctor_median_s": round(statistics.median(d_times), 4),
        "doctor_min_s": round(min(d_times), 4),
        "doctor_exit_code": code,
    }
    print(
        f"doctor --json      median {res['doctor_median_s']:.3f} s  (min {res['doctor_min_s']:.3f} s, "
        f"{args.runs} runs, exit {code})"
    )
    if c_times:
        res["collect_env_median_s"] = round(statistics.median(c_times), 4)
        res["ratio"] = round(res["collect_env_median_s"] / res["doctor_median_s"], 1)
        print(f"torch collect_env  median {res['collect_env_median_s']:.3f} s")
        print(f"doctor is {res['ratio']:.1f}x faster (goal >= 20x, doctor < 0.25 s)")
    else:
        print("torch not importable in the target: collect_env not timed")
    if args.out:
        Path(args.out).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
