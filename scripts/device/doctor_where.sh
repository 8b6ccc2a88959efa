#!/bin/bash
# Where `doctor --json` spends its time on the GPU machine now, and how much of it the image's missing
# bytecode costs. Run from the repository root:  bash scripts/device/doctor_where.sh
# Prints: (1) which packages of doctor's import chain ship .pyc files in this image; (2) the phase
# timeline of doctor (scripts/device/doctor_timeline.py); (3) doctor --json median over N fresh
# processes as the image is, and with every module's bytecode present (PYTHONPYCACHEPREFIX, warmed
# by one run), as a `pip install` leaves them (pip byte-compiles what it installs).
set -u
py=${PY:-python3}
n=${N:-9}
export PYTHONPATH="$PWD"
$py -m compileall -q fixer >/dev/null 2>&1
$py -c 'import os, sys; print("python", sys.version.split()[0], "PYTHONDONTWRITEBYTECODE =", os.environ.get("PYTHONDONTWRITEBYTECODE"))'
$py - <<'PY'
import importlib.util, os, sys
for name in ("typer", "click", "rich", "packaging", "json", "dataclasses", "typing", "fixer"):
    spec = importlib.util.find_spec(name)
    d = os.path.dirname(spec.origin)
    pyc = os.path.isdir(os.path.join(d, "__pycache__")) and any(
        f.endswith(".pyc") for f in os.listdir(os.path.join(d, "__pycache__")))
    print(f"{name:<12} {d:<60} pyc: {'yes' if pyc else 'NO'}")
PY
echo "## timeline"
$py scripts/device/doctor_timeline.py -n 15 2>&1
echo "## doctor --json: the image as it is, then with all bytecode present"
rm -rf /tmp/pyc_all
PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=/tmp/pyc_all $py -m fixer doctor --json >/dev/null 2>&1
$py - "$n" <<'PY'
import os, statistics, subprocess, sys, time
n = int(sys.argv[1])
argv = [sys.executable, "-m", "fixer", "doctor", "--json"]
envs = {"as the image is": dict(os.environ),
        "all bytecode present": dict(os.environ, PYTHONPYCACHEPREFIX="/tmp/pyc_all")}
res = {k: [] for k in envs}
for _ in range(n):
    for k, env in envs.items():
        t = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        res[k].append(time.perf_counter() - t)
for k, ts in res.items():
    print(f"{k:<22} median {statistics.median(ts):.3f} s  min {min(ts):.3f}  max {max(ts):.3f}  ({n} runs)")
t = time.perf_counter(); subprocess.run([sys.executable, "-c", "pass"]); print(f"python -c pass {time.perf_counter()-t:.3f} s")
PY
