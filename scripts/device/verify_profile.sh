#!/bin/bash
# Where verify's own time goes, per framework: the child's
# timeline ("t" on every record), torch per-case costs, JAX compile stages and variants.
# Usage (repo root, GPU machine): bash scripts/device/verify_profile.sh   -> $OUT/verify_profile.txt
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/verify_profile.txt; : > "$log"
PY=${PY:-python3}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1
say() { echo "$*" | tee -a "$log"; }
timeline() {  # the child's records, one line each: t, event, the essentials
  $PY -c '
import json, sys
M = "@@fixer-verify@@ "
for line in sys.stdin:
    if not line.startswith(M): continue
    r = json.loads(line[len(M):])
    extra = {k: r[k] for k in ("case", "dtype", "first_ms", "steady_ms", "ref_ms", "ms", "seconds", "stage", "ok") if k in r}
    print("   %7.3f  %-9s %s" % (r.get("t", -1), r["event"], extra))'
}
say "# verify profile on $(hostname) $(date -u +%FT%TZ)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$log"
for fw in torch jax; do
  for rep in 1 2 3; do
    say "## child $fw rep $rep"
    XLA_PYTHON_CLIENT_PREALLOCATE=false $PY fixer/children/verify.py $fw 2>/dev/null | timeline | tee -a "$log"
  done
done
say "## torch per-case costs"
for m in bench bench nobench; do timeout 120 $PY scripts/device/torch_cases.py $m 2>&1 | tail -40 | tee -a "$log"; done
say "## jax variants"
for v in grad vjp vjp vjp-nofp16 vjp-fp32; do timeout 120 $PY scripts/device/jax_profile.py $v 2>&1 | tail -12 | tee -a "$log"; done
for f in "--xla_gpu_enable_command_buffer=" "--xla_gpu_force_compilation_parallelism=16" "--xla_gpu_autotune_level=0"; do
  XLA_FLAGS="$f" timeout 120 $PY scripts/device/jax_profile.py vjp 2>&1 | tail -12 | tee -a "$log"
done
