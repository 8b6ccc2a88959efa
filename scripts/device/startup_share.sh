#!/bin/bash
# Where `doctor --json` spends its start-up (imports), on the GPU machine: the typer version (typer
# >= 0.28 builds pydantic TypeAdapters for every parameter, so pydantic is imported), then the
# median over N runs of `python -X importtime -m fixer doctor --json`, each import's own time
# summed by who owns it: typer+click, pydantic (with annotated_types, typing_inspection), rich, fixer.model (its frozen dataclasses),
# the rest of fixer, and the standard library / other packages.
# Run from the repository root:  bash scripts/device/startup_share.sh     (N=7 runs by default)
# What it should show: the total, and each share; with typer 0.27 the pydantic row is 0.
set -u
py=${PY:-python3}
n=${N:-7}
$py -m compileall -q fixer >/dev/null 2>&1
$py -c "import typer, sys; print('python', sys.version.split()[0], 'typer', typer.__version__)" 2>&1
$py - "$n" <<'PY'
import os, statistics, subprocess, sys
n = int(sys.argv[1])
GROUPS = ("typer", "click", "pydantic", "pydantic_core", "annotated_types", "typing_inspection",
          "rich", "fixer.model", "fixer")
def owner(name):
    for g in GROUPS:
        if name == g or name.startswith(g + "."):
            return {"click": "typer", "pydantic_core": "pydantic", "annotated_types": "pydantic",
                    "typing_inspection": "pydantic"}.get(g, g)
    return "stdlib/other"
runs = []
for _ in range(n):
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "fixer", "doctor", "--json"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.getcwd()))
    sums = {}
    for line in p.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _cum, name = line[12:].split("|")
        key = owner(name.strip())
        sums[key] = sums.get(key, 0) + max(int(own), 0) / 1000
    runs.append(sums)
keys = sorted({k for r in runs for k in r})
total = statistics.median(sum(r.values()) for r in runs)
print(f"doctor --json imports, median of {n} runs: {total:.1f} ms")
for k in sorted(keys, key=lambda k: -statistics.median(r.get(k, 0) for r in runs)):
    m = statistics.median(r.get(k, 0) for r in runs)
    print(f"  {k:<14} {m:7.1f} ms  {100 * m / total:5.1f}%")
PY
