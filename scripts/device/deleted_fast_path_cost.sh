#!/bin/bash
# What two of the start-up measures issue 24 deleted would buy today, measured, so that the owner
# can decide on numbers: `doctor --json` and `plan --json` as they are, with the cyclic garbage
# collector off for the whole run, with the interpreter's finalization skipped (os._exit after
# the output is flushed), and with both. Each variant is a small wrapper around
# fixer.cli.entry (nothing in the package changes); the four run interleaved, N rounds, each in
# a fresh process from a neutral working directory. Prints the median and spread of each.
# Run from the repository root:  bash scripts/device/deleted_fast_path_cost.sh   (N=9)
set -u
export PYTHONPATH="$PWD"
python3 -m compileall -q fixer >/dev/null 2>&1
N=${N:-9} python3 - <<'PY'
import os, statistics, subprocess, sys, tempfile, time
n = int(os.environ["N"])
py = sys.executable
here = tempfile.mkdtemp()
PLAIN = "from fixer.cli.entry import console; console()"
GC_OFF = "import gc; gc.disable(); from fixer.cli.entry import console; console()"
NO_FINAL = ("import os, sys; from fixer.cli.entry import main; code = main(); "
            "sys.stdout.flush(); sys.stderr.flush(); os._exit(code)")
BOTH = "import gc; gc.disable(); " + NO_FINAL
variants = {"as it is": PLAIN, "gc off": GC_OFF, "no finalization": NO_FINAL, "both": BOTH}
for cmd in (["doctor", "--json"], ["plan", "--json"]):
    res = {k: [] for k in variants}
    for k, code in variants.items():  # warm the page cache
        subprocess.run([py, "-c", code, *cmd], cwd=here, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(n):
        for k, code in variants.items():
            t = time.perf_counter()
            p = subprocess.run([py, "-c", code, *cmd], cwd=here, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            res[k].append((time.perf_counter() - t, p.returncode))
    for k, rs in res.items():
        ts = [t for t, _ in rs]
        print(f"{' '.join(cmd):<14} {k:<16} median {statistics.median(ts):.3f} s  min {min(ts):.3f}  max {max(ts):.3f}  exit {sorted({c for _, c in rs})}")
PY
