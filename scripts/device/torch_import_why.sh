#!/bin/bash
# Where torch's import time goes on the GPU machine (issue 25: torch's check child spends ~5 s in
# `import torch`, also warm). Prints: who we are, whether torch's __pycache__ is there and
# writable, import time (fresh process) x3, the top of -X importtime, and the shared libraries
# torch maps with their sizes.
set -u
py=${PY:-python3}
id; $py -c 'import sys; print(sys.version); print(sys.executable)'
site=$($py -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null)
echo "torch at $site"
ls -ld "$site" "$site/__pycache__" 2>&1 | head -3
echo "pyc files under torch: $(find "$site" -name '*.pyc' | wc -l), py files: $(find "$site" -name '*.py' | wc -l)"
touch "$site/.w" 2>/dev/null && { echo "torch dir writable"; rm -f "$site/.w"; } || echo "torch dir NOT writable"
for i in 1 2 3; do
  $py -c 'import time; t=time.perf_counter(); import torch; a=time.perf_counter(); torch.cuda.init(); b=time.perf_counter(); print("import %.2f s  cuda.init %.2f s" % (a-t, b-a))'
done
echo "## -X importtime, top 25 by cumulative"
$py -X importtime -c 'import torch' 2>&1 | sort -t'|' -k2 -n | tail -25
echo "## PYTHONDONTWRITEBYTECODE / pycache prefix"
echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset} PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-unset}"
$py -c 'import sys; print("dont_write_bytecode", sys.dont_write_bytecode, "prefix", sys.pycache_prefix)'
echo "## time in exec of shared libraries (strace-free): perf of dlopen via LD_DEBUG=statistics"
LD_DEBUG=statistics $py -c 'import torch' 2>&1 | grep -i "total startup\|relocation\|load" | head -8
echo "## mapped libraries after import torch, biggest first"
$py - <<'PY'
import os, torch
seen = {}
for line in open("/proc/self/maps"):
    p = line.split()[-1]
    if p.startswith("/") and ".so" in p and p not in seen:
        try: seen[p] = os.path.getsize(p)
        except OSError: pass
tot = sum(seen.values())
print("libs %d, %.0f MB" % (len(seen), tot / 1e6))
for p, s in sorted(seen.items(), key=lambda kv: -kv[1])[:12]:
    print("%7.0f MB %s" % (s / 1e6, p))
PY
echo "## python-only import cost: torch import with CUDA libs preloaded by a first import (warm) vs cProfile top"
$py -c 'import cProfile, pstats, io; pr=cProfile.Profile(); pr.enable(); import torch; pr.disable(); s=io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(25); print(s.getvalue()[:6000])'
