#!/bin/bash
# The budget of issue 5: verify's own time per framework (child wall time minus the
# framework's import), warm, with the phases the result reports. Appends to $BUDGET_LOG.
# Usage (repo root, GPU machine): BUDGET_RUNS=4 bash scripts/device/verify_budget.sh
set -u
PY=${PY:-python3}; TOOL=${TOOL:-$PY}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
log=${BUDGET_LOG:-/dev/null}
echo "## budget: verify-own seconds per framework, ${BUDGET_RUNS:-4} healthy runs" | tee -a "$log"
for i in $(seq "${BUDGET_RUNS:-4}"); do
  $TOOL -m fixer verify --json --python "$(command -v $PY)" --framework torch --framework jax 2>/dev/null | $PY -c '
import json, sys
d = json.load(sys.stdin)
for r in d["results"]:
    print("   %-5s %s own=%.2fs (child %.2fs, import %.2fs) phases %s" % (r["framework"], r["status"], r["seconds"] - r["import_seconds"],
          r["seconds"], r["import_seconds"], " ".join("%s=%.2f" % kv for kv in r.get("phases", {}).items())))' | tee -a "$log"
done
