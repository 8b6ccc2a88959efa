#!/bin/bash
# The post-apply check for torch + JAX + CuPy (budget: under 6 s), one after another vs side by
# side (fixer.verifier.checks.run_checks: side by side when the GPU's free memory holds each
# framework's GPU_NEED_MIB plus GPU_RESERVE_MIB), on fresh processes, and each check child's
# peak GPU memory while they run together (nvidia-smi --query-compute-apps every 0.1 s), to
# compare with GPU_NEED_MIB. "side by side" runs first, on the freshly started machine.
# Usage, from the repo root on the GPU machine:  bash scripts/device/verify_parallel.sh [REPEATS]
set -u
py=${PY:-python3}
reps=${1:-2}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.free --format=csv,noheader 2>/dev/null
mem=$(mktemp)
sample() {  # every 0.1 s: pid, used MiB of each compute process
  while :; do
    nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
      while IFS=', ' read -r pid used; do  # the child's argv: python .../verify.py FRAMEWORK
        echo "$pid,$used,$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | awk '{print $3}')"
      done
    sleep 0.1
  done > "$mem"
}
run() {  # $1 label, $2 free_mib argument (-1: ask nvidia-smi; None: one after another)
  "$py" - "$1" "$2" <<'PY'
import sys, time
from fixer.verifier.checks import GPU_NEED_MIB, free_gpu_mib, installed_frameworks, run_checks
label, free = sys.argv[1], sys.argv[2]
free = None if free == "None" else int(free)
names = [f for f in ("torch", "jax", "cupy") if f in installed_frameworks(sys.executable)]
t = time.perf_counter()
results = run_checks(sys.executable, names, free_mib=free)
wall = time.perf_counter() - t
print("%-22s wall %5.2f s  free now %s MiB  %s" % (label, wall, free_gpu_mib(),
      "  ".join("%s %s %.2f s (import %.2f)" % (r.framework, r.status, r.seconds or 0, r.import_seconds or 0) for r in results)))
for r in results:
    if r.status != "passed":
        print("   ", r.framework, r.summary[:300])
PY
}
for i in $(seq 1 "$reps"); do
  sample & sampler=$!
  run "side by side" -1
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  "$py" - "$mem" <<'PY'
import sys
from fixer.verifier.checks import GPU_NEED_MIB
peak = {}
for line in open(sys.argv[1]):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) == 3 and parts[1].isdigit():
        key = "%s (pid %s)" % (parts[2] or "?", parts[0])
        peak[key] = max(peak.get(key, 0), int(parts[1]))
print("    peak GPU memory per check child (MiB):", ", ".join("%s %d" % kv for kv in sorted(peak.items())) or "none seen",
      "| GPU_NEED_MIB:", {k: v for k, v in GPU_NEED_MIB.items() if k in ("torch", "jax", "cupy")})
PY
  run "one after another" None
done
rm -f "$mem"
