#!/bin/bash
# The speed budget of issue 9 on the GPU machine: `doctor --json` median <= 0.2 s and
# `plan --json` median <= 0.25 s, each a fresh process, measured by the project's benchmarks.
# Run from the repository root:  bash scripts/device/speed.sh        Output: $OUT
#   doctor.json / doctor.txt   scripts/bench_doctor.py --runs 15 (doctor --json on this machine)
#   plan.json                  scripts/bench_plan.py -n 15 --json (plan --json per bundled environment)
#   summary.txt                one line per measurement: name, median, max, within budget or not  <- read this
# What it must show: every "doctor" and "plan" line ends with "ok".
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
$py -m compileall -q fixer >/dev/null 2>&1
$py scripts/bench_doctor.py --runs 15 --out "$o/doctor.json" > "$o/doctor.txt" 2>&1
$py scripts/bench_plan.py -n 15 --json > "$o/plan.json" 2> "$o/plan.err"
$py - "$o/doctor.json" "$o/plan.json" > "$o/summary.txt" <<'PY'
import json, sys

def walk(prefix, value, out):
    if isinstance(value, dict) and "median_s" in value:
        out.append((prefix, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            walk(f"{prefix}/{k}" if prefix else k, v, out)

try:
    doc = json.load(open(sys.argv[1]))
    verdict = "ok" if doc["doctor_median_s"] <= 0.2 else "OVER the 0.2 s budget"
    print(f"doctor --json: median {doc['doctor_median_s']} s, min {doc['doctor_min_s']} s, {doc['runs']} runs: {verdict}")
except (OSError, ValueError, KeyError) as exc:
    print(f"doctor: no numbers ({exc})")
try:
    data = json.load(open(sys.argv[2]))
    found = []
    walk("", data.get("end_to_end", data), found)
    for key, v in found:
        verdict = "ok" if v["median_s"] <= 0.25 else "OVER the 0.25 s budget"
        print(f"plan --json {key}: median {v['median_s']} s, max {v['max_s']} s, {v['runs']} runs: {verdict}")
except (OSError, ValueError) as exc:
    print(f"plan: no numbers ({exc})")
PY
cat "$o/summary.txt"
