#!/bin/bash
# doctor --json's time on the GPU machine, broken down (byte-compiled, as a pip install is).
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
$py -m compileall -q fixer
for i in 1 2 3 4 5; do /usr/bin/time -f "doctor --json %e s" $py -m fixer doctor --json > /dev/null; done
for i in 1 2 3; do /usr/bin/time -f "python -c pass %e s" $py -c pass; done
for i in 1 2 3; do /usr/bin/time -f "python -I -S -c pass %e s" $py -I -S -c pass; done
$py -X importtime -m fixer doctor --json 2> /tmp/imp.txt > /dev/null
echo "## importtime top (cumulative us)"; sort -t'|' -k2 -n -r /tmp/imp.txt | head -16
$py - <<'PY'
import cProfile, pstats, io, sys, time
sys.argv = ["colab-cudnn-fix", "doctor", "--json"]
from fixer.cli import main
import contextlib, os
pr = cProfile.Profile(); t = time.perf_counter()
with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
    pr.enable(); main(["doctor", "--json"]); pr.disable()
print("in-process doctor (after imports): %.3f s" % (time.perf_counter() - t))
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(30); print(s.getvalue()[-6000:])
PY
