#!/bin/bash
# `colab-cudnn-fix doctor` on the GPU machine: healthy, then each breakage of
# data/gpu_machine/device_break.sh (same techniques), then the benchmark.
# Every change is undone on exit (trap), even on failure or interrupt.
# Run from the repository root:  bash scripts/device/doctor.sh      Output: $OUT (6 files)
#   doctor.txt        text reports with exit codes (healthy and each breakage)
#   deep.json         doctor --deep --json on the healthy machine
#   cases.jsonl       one `doctor --json` object per case (label added)
#   summary.txt       per case: exit code, finding ids, the cuDNN torch/jax load (path, version, via)
#   bench.txt/.json   scripts/bench_doctor.py
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
d=$($py -c "import nvidia.cudnn;print(list(nvidia.cudnn.__path__)[0])")
lib="$d/lib"
hid=$(mktemp -d /tmp/doctor-hidden.XXXXXX)
shadow=$(mktemp -d /tmp/doctor-shadow.XXXXXX)

restore() {
  if [ -d "$lib.hidden" ] && [ ! -e "$lib" ]; then mv "$lib.hidden" "$lib"; fi
  for f in "$hid"/*; do [ -e "$f" ] && mv "$f" "$lib/"; done
  rm -rf "$shadow" "$hid" "$hid.json"
}
trap restore EXIT INT TERM

: > "$o/doctor.txt"; : > "$o/cases.jsonl"
case_run() {   # label, then env assignments (VAR=value ...) for the doctor run
  label=$1; shift
  { echo "### $label"; env "$@" $py -m fixer doctor; echo "exit code: $?"; echo; } >> "$o/doctor.txt" 2>&1
  env "$@" $py -m fixer doctor --json > "$hid.json" 2>> "$o/doctor.txt"
  $py - "$label" "$hid.json" >> "$o/cases.jsonl" <<'PY'
import json, sys
data = json.load(open(sys.argv[2])); data["label"] = sys.argv[1]
print(json.dumps(data))
PY
}

echo "## cudnn lib dir: $lib ($(ls "$lib" | wc -l) files)" > "$o/summary.txt"
case_run "healthy"
{ time $py -m fixer doctor --deep --json > "$o/deep.json"; } 2>> "$o/summary.txt"; echo "deep exit: $?" >> "$o/summary.txt"

mv "$lib" "$lib.hidden"
case_run "pip cuDNN hidden (expect torch: cudnn-too-old on apt 9.14; jax fine)"
mv "$lib.hidden" "$lib"

mv "$lib/libcudnn_engines_precompiled.so.9" "$lib/libcudnn_cnn.so.9" "$hid/"
case_run "engines_precompiled + cnn moved out (expect cudnn-incomplete)"
mv "$hid"/libcudnn_* "$lib/"

case_run "no GPU visible (expect gpu-missing, exit 3)" CUDA_VISIBLE_DEVICES=

head -c 4096 /dev/urandom > "$shadow/libcudnn.so.9"
case_run "garbage libcudnn.so.9 first on LD_LIBRARY_PATH (torch RPATH and JAX preload win: expect healthy)" \
  LD_LIBRARY_PATH="$shadow:${LD_LIBRARY_PATH:-}"

restore; trap - EXIT INT TERM
echo "## restored: $(ls "$lib" | wc -l) files in $lib" >> "$o/summary.txt"

$py - "$o/cases.jsonl" >> "$o/summary.txt" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    print(f"\n### {c['label']}\nexit {c['exit_code']}  healthy={c['healthy']}")
    for f in c["findings"]:
        print(f"  {f['severity']:7} {f['id']}: {f['title']}")
    for l in c["environment"]["loads"]:
        if l["library"] == "cudnn":
            print(f"  load {l['consumer']:6} {l['path']} cuDNN {l['version']} via {l['via']}" + (f" ERROR {l['error']}" if l['error'] else ""))
PY
$py - "$o/deep.json" >> "$o/summary.txt" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
print("\n### deep views")
for v in c["environment"]["runtime_views"]:
    print(f"  {v['framework']}: imported={v['imported']} cudnn={v['cudnn_runtime']} devices={v['devices']} err={v['error']}")
    for m in v["mapped"]:
        if "cudnn" in m: print("     ", m)
PY
$py scripts/bench_doctor.py --runs 7 --out "$o/bench.json" > "$o/bench.txt" 2>&1
cat "$o/summary.txt" "$o/bench.txt" | tail -c 6000
