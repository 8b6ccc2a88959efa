#!/bin/bash
# Where does `doctor --json` spend its time on the GPU machine? And verify's own time per framework.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
{
echo "## dists: $($py -c 'import importlib.metadata as m; print(len(list(m.distributions())))')"
for i in 1 2 3; do /usr/bin/time -f "doctor --json wall %e s" $py -m fixer doctor --json > /dev/null; done
echo "## importtime (top cumulative, us)"
$py -X importtime -m fixer doctor --json 2> "$o/importtime.txt" > /dev/null
sort -t'|' -k2 -n -r "$o/importtime.txt" | head -25
echo "## cProfile (cumulative)"
$py -m cProfile -o /tmp/doctor.prof -m fixer doctor --json > /dev/null
$py -c "
import pstats; p = pstats.Stats('/tmp/doctor.prof'); p.sort_stats('cumulative').print_stats(45)" | tail -60
echo "## verify per framework"
for f in jax torch; do
  /usr/bin/time -f "verify $f wall %e s" $py -m fixer verify --framework $f --json > "$o/verify_$f.json"; echo "rc=$?"
  $py -c "
import json,sys; d=json.load(open('$o/verify_$f.json'))
for r in d['results']: print(r['framework'], r['status'], 'import', r.get('import_seconds'), 'child', r.get('seconds'), 'first', r.get('first_seconds'), 'steady', r.get('steady_seconds'), [ (c.get('case'), c.get('dtype'), c.get('ok'), c.get('first_ms')) for c in r['cases']])
"
done
} 2>&1 | tee "$o/profile.txt"
