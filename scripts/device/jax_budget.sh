#!/bin/bash
# How much of JAX verify's own time is XLA autotuning? verify --framework jax under XLA's
# autotune levels (4 = XLA's default: autotune with correctness checks; 2 = autotune, no checks).
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
for flags in "" "--xla_gpu_autotune_level=2" "--xla_gpu_autotune_level=1"; do
  for rep in 1 2; do
    XLA_FLAGS="$flags" $py -m fixer verify --framework jax --json > "$o/jax.json"; rc=$?
    $py -c "
import json; d=json.load(open('$o/jax.json')); r=d['results'][0]
print('flags=[$flags] rep=$rep rc=$rc', r['status'], 'import', r.get('import_seconds'), 'child', r.get('seconds'),
      'own', round(r['seconds']-r['import_seconds'],2), 'first', r.get('first_seconds'), [c['ok'] for c in r['cases']])"
  done
done 2>&1 | tee "$o/jax_budget.txt"
