#!/bin/bash
# JAX's first verify beyond its import, on fresh processes: the child as it ran before issue 25
# (XLA's default autotuning, level 4 "on+init+reinit+check", and JAX_PLATFORMS=cuda,cpu) against
# now (--xla_gpu_autotune_level=1, JAX_PLATFORMS=cuda; fixer/children/verify.py _jax_settings),
# plus autotuning off (level 0) for comparison. Runs interleaved, "before" first on the freshly
# started machine (so the first, cold run is charged to the old settings, not the new ones).
# Prints one line per run: import, backend (device) init, first program (compile + autotune +
# run), checks, total beyond import; and whether every case passed. Budget: beyond import < 3 s.
# Usage, from the repo root on the GPU machine:  bash scripts/device/jax_first_verify.sh [REPEATS]
set -u
py=${PY:-python3}
reps=${1:-3}
child=fixer/children/verify.py
run() {  # $1 label, then env assignments
  local label=$1; shift
  env "$@" XLA_PYTHON_CLIENT_PREALLOCATE=false "$py" "$child" jax 2>/dev/null | "$py" -c '
import json, sys
label = sys.argv[1]
recs = [json.loads(l.split(" ", 1)[1]) for l in sys.stdin if l.startswith("@@fixer-verify@@ ")]
by = {}
for r in recs:
    by.setdefault(r["event"], []).append(r)
t = lambda e, i=-1: by[e][i]["t"] if e in by else float("nan")
imp = by.get("imported", [{}])[-1]
imp_t, dev_t, first_ms, done_t = t("imported"), t("device"), by.get("first", [{}])[0].get("ms", float("nan")), t("done")
cases = [c.get("ok") for c in by.get("case", [])]
errors = [e.get("message", "")[:120] for e in by.get("error", []) + by.get("nogpu", [])]
print("%-26s import %5.2f s  backend %5.2f s  first program %5.2f s  beyond import %5.2f s  cases %s%s" % (
    label, imp.get("seconds", float("nan")), dev_t - imp_t, first_ms / 1000, done_t - imp_t,
    cases, ("  errors " + "; ".join(errors)) if errors else ""))
' "$label"
}
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader 2>/dev/null
"$py" -c "import jax, jaxlib; print('jax', jax.__version__, 'jaxlib', jaxlib.__version__)" 2>/dev/null
for i in $(seq 1 "$reps"); do
  run "before (level 4, cuda,cpu)" XLA_FLAGS=--xla_gpu_autotune_level=4 JAX_PLATFORMS=cuda,cpu
  run "now (level 1, cuda)"
  run "level 0 (no autotune)" XLA_FLAGS=--xla_gpu_autotune_level=0
done
