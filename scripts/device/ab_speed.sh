# A/B of doctor --json and plan --json: this tree vs an older tree beside it (BEFORE, default before2:
# c36b9ae), interleaved, fresh processes. Run from the repository root: BEFORE=before4 bash scripts/device/ab_speed.sh
B=${BEFORE:-before2}
export PYTHONUNBUFFERED=1
for t in "$PWD" "$PWD/$B"; do (cd $t && python3 -m compileall -q fixer >/dev/null 2>&1); done
B="$B" python3 - <<'PY'
import subprocess, time, statistics, os, sys
trees = {"now": os.getcwd(), os.environ["B"]: os.path.join(os.getcwd(), os.environ["B"])}
cmds = {"doctor": ["-m", "fixer", "doctor", "--json"], "plan-tf215": ["-m", "fixer", "plan", "--environment", "colab-2025-01-tf215", "--json"]}
res = {(t, c): [] for t in trees for c in cmds}
for i in range(15):
    for c, argv in cmds.items():
        for t, d in trees.items():
            env = dict(os.environ, PYTHONPATH=d)
            s = time.perf_counter(); subprocess.run([sys.executable, *argv], cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); res[(t, c)].append(time.perf_counter() - s)
for (t, c), v in sorted(res.items()):
    print(f"{c:12s} {t:8s} median {statistics.median(v):.4f} min {min(v):.4f} max {max(v):.4f}")
PY
for t in "$PWD" "$PWD/$B"; do echo "== importtime $t"; (cd $t && PYTHONPATH=$t python3 -X importtime -m fixer doctor --json 2>&1 >/dev/null | sort -t'|' -k2 -n | tail -6); done
