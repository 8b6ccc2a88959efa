#!/usr/bin/env python3
"""Each module's own import time in fresh `colab-cudnn-fix ARGS` processes (python -X importtime),
the median over N runs after a first one that warms the page cache; the top rows and the total.

    PYTHONPATH=$PWD python3 scripts/device/import_table.py [-n 6] [--top 45] -- doctor --json
"""

import argparse
import os
import statistics
import subprocess
import sys


def one_run(args):
    p = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "fixer", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.getcwd()),
    )
    own = {}
    for line in p.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            us, _cum, name = line[12:].split("|")
            own[name.strip()] = int(us) / 1000
    return own


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=6)
    ap.add_argument("--top", type=int, default=45)
    ap.add_argument("args", nargs="+")
    a = ap.parse_args()
    one_run(a.args)
    runs = [one_run(a.args) for _ in range(a.n)]
    names = {k for r in runs for k in r}
    med = {k: statistics.median(r.get(k, 0.0) for r in runs) for k in names}
    total = statistics.median(sum(r.values()) for r in runs)
    print(f"{' '.join(a.args)}: imports {total:.1f} ms (median of {a.n}), {len(names)} modules")
    for k, v in sorted(med.items(), key=lambda kv: -kv[1])[: a.top]:
        print(f"{v:7.1f} ms  {k}")


if __name__ == "__main__":
    main()
