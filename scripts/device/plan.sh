#!/bin/bash
# `colab-cudnn-fix plan` on the GPU machine: the plan for the machine as it is, then for each
# breakage of data/gpu_machine/device_break.sh (same techniques), the bundled example
# environments, and the benchmark. plan changes nothing; the breakages are undone on exit (trap).
# Run from the repository root:  bash scripts/device/plan.sh      Output: $OUT (4 files)
#   plan.txt      text output and exit code of each case
#   cases.jsonl   one `plan --json` object per case (label and exit code added)
#   summary.txt   per case: exit code, nothing_to_do, each step's argv  <- read this first
#   bench.json    scripts/bench_plan.py -n 15 --json
# What it must show (summary.txt):
#   healthy                          exit 0, nothing_to_do true, no steps
#   pip cuDNN hidden                 exit 0, ONE install step: ... --no-deps --reinstall nvidia-cudnn-cu13==9.19.0.56
#                                    (uv pip install --python <venv python> ... when uv is found), then verify;
#                                    no torch step: torch is never reinstalled
#   engines_precompiled+cnn missing  the same single reinstall step (the copy is incomplete)
#   garbage libcudnn.so.9 first on LD_LIBRARY_PATH   nothing_to_do (torch's RPATH and JAX's preload win)
#   no GPU visible                   exit 0 (nothing to do) or 3 (nothing detected); never a plan that installs
#   bundled environments             the same plans as on any machine (tests/unit/resolve/test_replay.py)
#   bench.json                       end_to_end medians < 0.3 s; solver growth_10x_over_1x about 10
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
d=$($py -c "import nvidia.cudnn;print(list(nvidia.cudnn.__path__)[0])")
lib="$d/lib"
hid=$(mktemp -d /tmp/plan-hidden.XXXXXX)
shadow=$(mktemp -d /tmp/plan-shadow.XXXXXX)

restore() {
  if [ -d "$lib.hidden" ] && [ ! -e "$lib" ]; then mv "$lib.hidden" "$lib"; fi
  for f in "$hid"/*; do [ -e "$f" ] && mv "$f" "$lib/"; done
  rm -rf "$shadow" "$hid" "$hid.json"
}
trap restore EXIT INT TERM

: > "$o/plan.txt"; : > "$o/cases.jsonl"
case_run() {   # label, then env assignments and/or extra plan arguments after --
  label=$1; shift
  envs=(); args=()
  while [ $# -gt 0 ]; do if [ "$1" = "--" ]; then shift; args=("$@"); break; fi; envs+=("$1"); shift; done
  { echo "### $label"; env "${envs[@]}" $py -m fixer plan "${args[@]}"; echo "exit code: $?"; echo; } >> "$o/plan.txt" 2>&1
  env "${envs[@]}" $py -m fixer plan --json "${args[@]}" > "$hid.json" 2>> "$o/plan.txt"
  rc=$?
  $py - "$label" "$hid.json" "$rc" >> "$o/cases.jsonl" <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[2]))
except Exception as exc:  # noqa: BLE001
    data = {"unreadable": str(exc)}
data["label"] = sys.argv[1]; data["exit_code"] = int(sys.argv[3])
print(json.dumps(data))
PY
}

echo "## cudnn lib dir: $lib ($(ls "$lib" | wc -l) files)" > "$o/summary.txt"
case_run "healthy" NOOP=1

mv "$lib" "$lib.hidden"
case_run "pip cuDNN hidden (expect one step: reinstall nvidia-cudnn-cu13==9.19.0.56)" NOOP=1
mv "$lib.hidden" "$lib"

mv "$lib/libcudnn_engines_precompiled.so.9" "$lib/libcudnn_cnn.so.9" "$hid/"
case_run "engines_precompiled + cnn moved out (expect the same reinstall)" NOOP=1
mv "$hid"/libcudnn_* "$lib/"

head -c 4096 /dev/urandom > "$shadow/libcudnn.so.9"
case_run "garbage libcudnn.so.9 first on LD_LIBRARY_PATH (expect nothing to do)" \
  LD_LIBRARY_PATH="$shadow:${LD_LIBRARY_PATH:-}"

case_run "no GPU visible (expect exit 0 nothing to do, or 3)" CUDA_VISIBLE_DEVICES=

restore; trap - EXIT INT TERM
echo "## restored: $(ls "$lib" | wc -l) files in $lib" >> "$o/summary.txt"

for e in colab-2026-08 colab-2025-01-tf215 h200-healthy h200-pip-cudnn-hidden; do
  case_run "bundled $e" NOOP=1 -- --environment "$e"
done

$py - "$o/cases.jsonl" >> "$o/summary.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    print(f"### {c['label']}: exit {c['exit_code']}")
    if "plan" in c:
        p = c["plan"]
        print(f"  nothing_to_do={p.get('nothing_to_do')} restart={p.get('restart_required')}")
        for ch in p["stack"]["choices"]:
            print(f"  {ch['framework']}: {ch['action']} {ch['build']['version']} {ch['build']['variant']}")
        print(f"  cudnn_runtime={p['stack'].get('cudnn_runtime')}")
        for s in p["steps"]:
            print(f"  [{s['kind']}] {' '.join(s['argv']) or s['summary']}")
    else:
        print("  " + json.dumps(c.get("error") or c)[:600])
PY

$py scripts/bench_plan.py -n 15 --json > "$o/bench.json" 2>> "$o/plan.txt"
echo "## bench exit: $?" >> "$o/summary.txt"
cat "$o/summary.txt"
