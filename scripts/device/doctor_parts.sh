#!/bin/bash
# Where doctor's own work goes on the GPU machine, part by part (fresh interpreter for each part).
# Run from the repository root:  bash scripts/device/doctor_parts.sh
# Prints: the dpkg database's size (files in /var/lib/dpkg/info, bytes of status); the time of
# listing /var/lib/dpkg/info, of reading the status file, of read_dpkg_owners and of the whole
# libraries.scan; the import time of fixer.model; the time of 24 empty frozen dataclasses.
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python3 -m compileall -q fixer >/dev/null 2>&1
echo "files in /var/lib/dpkg/info: $(ls /var/lib/dpkg/info | wc -l); .list files: $(ls /var/lib/dpkg/info | grep -c '\.list$'); status bytes: $(stat -c %s /var/lib/dpkg/status)"
python3 - <<'PY'
import os, statistics, time
def t(f, n=7):
    v = []
    for _ in range(n):
        s = time.perf_counter(); f(); v.append(time.perf_counter() - s)
    return f"median {statistics.median(v)*1000:.1f} ms, first {v[0]*1000:.1f} ms"
print("os.listdir(/var/lib/dpkg/info):", t(lambda: os.listdir("/var/lib/dpkg/info")))
print("sorted(os.listdir(...)):", t(lambda: sorted(os.listdir("/var/lib/dpkg/info"))))
print("read status:", t(lambda: open("/var/lib/dpkg/status", encoding="utf-8", errors="replace").read()))
from fixer.detection import fs as fsmod, libraries
def owners():
    return libraries.read_dpkg_owners(fsmod.MachineFS("/"))
print("read_dpkg_owners:", t(owners))
o, v = owners()
print(f"  owners {len(o)}, packages with versions {len(v)}: {sorted(v.items())[:12]}")
PY
python3 -X importtime -c "import fixer.model" 2>&1 | tail -1
python3 - <<'PY'
import dataclasses, time
s = time.perf_counter()
for i in range(24):
    dataclasses.dataclass(frozen=True)(type(f"C{i}", (), {"__annotations__": {f"f{j}": int for j in range(9)}}))
print(f"24 frozen dataclasses of 9 fields: {(time.perf_counter() - s)*1000:.1f} ms")
PY
