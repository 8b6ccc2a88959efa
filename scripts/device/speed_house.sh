#!/bin/bash
# The speed budget re-set: on a freshly started GPU machine, the median wall time
# of each command in a fresh process, measured beside `python -m torch.utils.collect_env` in the
# same run (the yardstick: what a user would otherwise run), with the ratio to it.
#   budget: doctor --json median <= 0.3 s, plan --json <= 0.4 s; every command >= 15x faster than
#   collect_env.
# Run from the repository root:  bash scripts/device/speed_house.sh
#   N=5          runs of each command (the first run of each is reported apart: a cold start)
#   BASE_DIR=DIR the same with a tree already unpacked in DIR
#   BASE=REV     also measure the tree at git revision REV (e.g. the commit before the change),
#                interleaved with this one, so the two are compared on the same machine and run
# Prints one table (also written to $OUT/speed_house.txt when OUT is set). What it must show: the
# doctor and plan rows "ok" within the budget, and every ratio column >= 15.
set -u
py=${PY:-python3}
n=${N:-5}
base_dir="${BASE_DIR:-}"   # or a folder that holds another tree's fixer/ (and recipes/)
if [ -z "$base_dir" ] && [ -n "${BASE:-}" ]; then
    base_dir=$(mktemp -d)
    git archive "$BASE" | tar -x -C "$base_dir"
fi
out=${OUT:-}
[ -n "$out" ] && mkdir -p "$out"
$py -m compileall -q fixer >/dev/null 2>&1
[ -n "$base_dir" ] && $py -m compileall -q "$base_dir/fixer" >/dev/null 2>&1
$py - "$n" "$PWD" "$base_dir" <<'PY' | tee ${out:+"$out/speed_house.txt"}
import os, statistics, subprocess, sys, tempfile, time

n, here, base = int(sys.argv[1]), sys.argv[2], sys.argv[3]
py = sys.executable
TEXT = "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0."
COMMANDS = {
    "doctor --json": ["doctor", "--json"],
    "plan --json": ["plan", "--json"],
    "explain --json --no-detect": ["explain", "--json", "--no-detect", TEXT],
}
BUDGET = {"doctor --json": 0.3, "plan --json": 0.4}
trees = [("this tree", here)] + ([("BASE", os.path.abspath(base))] if base else [])

NEUTRAL = tempfile.mkdtemp()  # the children's working directory: `python -m` puts its working
# directory first on sys.path, ahead of PYTHONPATH, so run from the repository root every tree
# would import the root's fixer (before 2026-11-27 the BASE column measured this tree twice)

def timed(argv, env):
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                       timeout=300, cwd=NEUTRAL)
    return time.perf_counter() - t, p.returncode

def which_fixer(root):
    env = dict(os.environ, PYTHONPATH=root)
    return subprocess.run([py, "-c", "import fixer; print(fixer.__file__)"], env=env, cwd=NEUTRAL,
                          capture_output=True, text=True).stdout.strip()

for tree, root in trees:
    print(f"{tree}: {which_fixer(root)}")
runs = {}
for i in range(n):  # round robin: drift of the machine's speed spreads over every command alike
    argv = [py, "-m", "torch.utils.collect_env"]
    runs.setdefault(("collect_env", ""), []).append(timed(argv, dict(os.environ)))
    for tree, root in trees:
        env = dict(os.environ, PYTHONPATH=root)
        for name, args in COMMANDS.items():
            runs.setdefault((name, tree), []).append(timed([py, "-m", "fixer", *args], env))

ref = statistics.median(t for t, _ in runs[("collect_env", "")][1:] or runs[("collect_env", "")])
print(f"{'command':<28} {'tree':<10} {'first s':>8} {'median s':>9} {'max s':>7} {'exit':>5} {'x faster than collect_env':>27} budget")
for (name, tree), rs in runs.items():
    rest = [t for t, _ in rs[1:]] or [rs[0][0]]
    med = statistics.median(rest)
    budget = BUDGET.get(name)
    verdict = "" if budget is None else ("ok" if med <= budget else f"OVER {budget} s")
    ratio = "" if name == "collect_env" else f"{ref / med:.1f}"
    codes = ",".join(sorted({str(c) for _, c in rs}))
    print(f"{name:<28} {tree or '-':<10} {rs[0][0]:>8.3f} {med:>9.3f} {max(rest):>7.3f} {codes:>5} {ratio:>27} {verdict}")
print(f"(first: the first run of each, a cold start; median and max over the other {n - 1} runs)")
PY
[ -n "$base_dir" ] && rm -rf "$base_dir"
exit 0
