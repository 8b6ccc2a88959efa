#!/bin/bash
# doctor --json on the GPU machine: an interleaved A/B against an older tree beside this one
# (BEFORE, default before4), then where one run's time goes (byte-compiled, as a pip install is).
# Run from the repository root:  BEFORE=before4 bash scripts/device/doctor_breakdown.sh
# Prints: per tree the median/min/max of N fresh `python3 -m fixer doctor --json` runs (N=${N:-40});
# python start-up alone; the slowest imports (cumulative, us); an in-process profile of doctor
# after its imports (cumulative, top 40).
set -u
B=${BEFORE:-before4}
export PYTHONUNBUFFERED=1
for t in "$PWD" "$PWD/$B"; do (cd "$t" && python3 -m compileall -q fixer >/dev/null 2>&1); done
B="$B" N="${N:-40}" python3 - <<'PY'
import os, statistics, subprocess, sys, time
trees = {"now": os.getcwd(), os.environ["B"]: os.path.join(os.getcwd(), os.environ["B"])}
argv = [sys.executable, "-m", "fixer", "doctor", "--json"]
res = {t: [] for t in trees}
for t, d in trees.items():   # warm the page cache once each
    subprocess.run(argv, cwd=d, env=dict(os.environ, PYTHONPATH=d), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(int(os.environ["N"])):
    for t, d in trees.items():
        s = time.perf_counter()
        subprocess.run(argv, cwd=d, env=dict(os.environ, PYTHONPATH=d), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        res[t].append(time.perf_counter() - s)
for t, v in res.items():
    print(f"doctor --json {t:8s} median {statistics.median(v):.4f} min {min(v):.4f} max {max(v):.4f} ({len(v)} runs)")
for label, a in (("python3 -c pass", [sys.executable, "-c", "pass"]), ("python3 -S -c pass", [sys.executable, "-S", "-c", "pass"])):
    v = []
    for _ in range(10):
        s = time.perf_counter(); subprocess.run(a); v.append(time.perf_counter() - s)
    print(f"{label:20s} median {statistics.median(v):.4f}")
PY
echo "## importtime, doctor --json (cumulative us, top 25)"
PYTHONPATH=$PWD python3 -X importtime -m fixer doctor --json 2>&1 >/dev/null | sort -t'|' -k2 -n -r | head -25
PYTHONPATH=$PWD python3 - <<'PY'
import contextlib, cProfile, io, os, pstats, time
from fixer.cli import main
pr = cProfile.Profile(); t = time.perf_counter()
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    pr.enable()
    try:
        main(["doctor", "--json"])
    except SystemExit:
        pass
    pr.disable()
print("## in-process doctor after its imports: %.3f s" % (time.perf_counter() - t))
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(40); print(s.getvalue()[-9000:])
PY
