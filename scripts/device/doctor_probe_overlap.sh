#!/bin/bash
# Does starting the GPU probe before the tool's imports (fixer/detection/gpu_probe.py) pay on the GPU
# machine, and where does `doctor --json` wait? Same tree, same machine, interleaved, fresh processes.
# Run from the repository root:  bash scripts/device/doctor_probe_overlap.sh     Output: $OUT/overlap.txt
#   probe alone        the GPU probe child by itself (python -I -S fixer/children/native.py gpu)
#   early / late       doctor --json as the console entry runs it (probe started before the imports)
#                      and with the probe started where detection asks for it (the order before)
#                      wall: the whole process; wait: time the parent spent blocked on the probe
#                      child; probe: that child's own life in the parent's clock
#   SAME OUTPUT        early and late print the same JSON (must be "True")
# What it must show: early's wall median below late's, early's wait near 0 ms.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
$py -m compileall -q fixer >/dev/null 2>&1
RUNS=${RUNS:-15} $py - <<'PY' 2>&1 | tee "$o/overlap.txt"
import json, os, statistics, subprocess, sys, time

RUNS = int(os.environ["RUNS"])
# Each mode runs in a fresh interpreter. The wrapper times how long the parent is blocked in the
# probe child's Child.wait (fixer.system.proc), then runs the tool exactly as named.
WRAP = r'''
import sys, time
t0 = time.perf_counter()
mode = sys.argv[1]
sys.argv = ["colab-cudnn-fix", "doctor", "--json"]
def patch():
    import fixer.system.proc as P
    real = P.Child.wait
    def wait(self, **kw):
        t = time.perf_counter()
        try:
            return real(self, **kw)
        finally:
            if self.label == "nvml/libcuda probe":
                sys.stderr.write("@@probe %.6f %.6f %.6f\n" % (time.perf_counter() - t, time.perf_counter() - self.started, self.started - t0))
    P.Child.wait = wait
patch()
if mode == "early":
    from fixer.cli.entry import main
    code = main()
else:
    from fixer.cli.fast import run
    code = run(sys.argv[1:])
sys.stdout.flush()
sys.exit(code)
'''
def once(mode):
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", WRAP, mode], capture_output=True, text=True)
    wall = time.perf_counter() - t
    probe = [l.split()[1:] for l in p.stderr.splitlines() if l.startswith("@@probe ")]
    return wall, (tuple(float(x) for x in probe[0]) if probe else (None, None, None)), p.stdout, p.returncode

def alone():
    t = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-S", "fixer/children/native.py", "gpu"], capture_output=True)
    return time.perf_counter() - t

for m in ("early", "late"):
    once(m)                                 # warm the page cache once
res = {"early": [], "late": []}
outs = {"early": set(), "late": set()}
al = []
for i in range(RUNS):
    al.append(alone())
    for m in ("early", "late") if i % 2 == 0 else ("late", "early"):
        wall, probe, out, code = once(m)
        res[m].append((wall,) + probe)
        outs[m].add(out)
med = lambda xs: statistics.median([x for x in xs if x is not None]) if any(x is not None for x in xs) else float("nan")
print(f"probe alone      median {med(al)*1000:7.1f} ms  (min {min(al)*1000:.1f}, {RUNS} runs)")
for m in ("early", "late"):
    rows = res[m]
    print(f"doctor --json {m:5s} wall median {med([r[0] for r in rows])*1000:7.1f} ms  min {min(r[0] for r in rows)*1000:7.1f}  "
          f"max {max(r[0] for r in rows)*1000:7.1f} | wait median {med([r[1] for r in rows])*1000:6.1f} ms | "
          f"probe life median {med([r[2] for r in rows])*1000:6.1f} ms | probe started at {med([r[3] for r in rows])*1000:6.1f} ms")
print("SAME OUTPUT", len(outs["early"] | outs["late"]) == 1)
PY
