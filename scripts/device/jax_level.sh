#!/bin/bash
# JAX's check at XLA autotune level 0 (cuDNN's heuristic engine, no autotuning) against level 1,
# each a fresh process; the first line is the first JAX process on a freshly started machine.
# Prints beyond-import time, whether the cases passed, and which cuDNN files the child had
# mapped after its first conv (the "loaded" record): does level 0 load the same sub-libraries?
# Usage, from the repo root on the GPU machine:  bash scripts/device/jax_level.sh
set -u
py=${PY:-python3}
run() {  # $1 label, $2 level
  XLA_FLAGS=--xla_gpu_autotune_level=$2 "$py" fixer/children/verify.py jax 2>/dev/null | "$py" -c '
import json, os, sys
recs = [json.loads(l.split(" ", 1)[1]) for l in sys.stdin if l.startswith("@@fixer-verify@@ ")]
by = {}
for r in recs:
    by.setdefault(r["event"], []).append(r)
imp = by["imported"][-1]
done = by.get("done", [{}])[-1].get("t", float("nan"))
loaded = [r for r in by.get("loaded", []) if r.get("stage") == "after first conv"]
files = sorted(os.path.basename(f["path"]) for f in (loaded[-1].get("files") or [])) if loaded else []
print("%-28s import %.2f s  beyond import %.2f s  cases %s  errors %s" % (
    sys.argv[1], imp["seconds"], done - imp["t"], [c.get("ok") for c in by.get("case", [])],
    [e.get("message", "")[:100] for e in by.get("error", [])]))
print("    cuDNN files mapped after the first conv:", ", ".join(files) or "(none reported)")
' "$1"
}
run "level 0, first JAX process" 0
run "level 1" 1
run "level 0" 0
run "level 1" 1
run "level 0" 0
