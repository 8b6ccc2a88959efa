#!/bin/bash
# Does a `doctor --json` that runs right after `python -m torch.utils.collect_env` (as speed_house.sh
# interleaves them) take longer than one that does not, and why? For N rounds: collect_env, then
# doctor --json three times in a row (1st, 2nd, 3rd after it), then explain --no-detect (no GPU
# probe). Then N doctor --json runs back to back with no collect_env. Prints medians per position.
# Run from the repository root:  bash scripts/device/after_collect_env.sh   (N=6)
set -u
export PYTHONPATH="$PWD"
python3 -m compileall -q fixer >/dev/null 2>&1
N=${N:-6} python3 - <<'PY'
import os, statistics, subprocess, sys, time
n = int(os.environ["N"])
py = sys.executable
def t(argv):
    s = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - s
doc = [py, "-m", "fixer", "doctor", "--json"]
exp = [py, "-m", "fixer", "explain", "--json", "--no-detect", "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0."]
t(doc); t(exp)
pos = {k: [] for k in ("doctor 1st after collect_env", "doctor 2nd", "doctor 3rd", "explain after them")}
for _ in range(n):
    t([py, "-m", "torch.utils.collect_env"])
    for k in list(pos)[:3]:
        pos[k].append(t(doc))
    pos["explain after them"].append(t(exp))
alone = [t(doc) for _ in range(n)]
for k, v in pos.items():
    print(f"{k:<30} median {statistics.median(v):.3f} s  ({', '.join(f'{x:.3f}' for x in v)})")
print(f"{'doctor back to back':<30} median {statistics.median(alone):.3f} s  ({', '.join(f'{x:.3f}' for x in alone)})")
PY
