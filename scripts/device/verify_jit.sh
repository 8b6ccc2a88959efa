#!/bin/bash
# The fresh-machine cost of verify is the CUDA JIT cache (verify_cold.sh: dropping the page cache
# changed nothing, CUDA_CACHE_DISABLE=1 reproduced it). Which cases compile, with the cuDNN
# algorithm search on and off? And does a damaged cuDNN (engines_precompiled missing) still fail
# with the search off? Usage (repo root, GPU machine): bash scripts/device/verify_jit.sh
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/verify_jit.txt; : > "$log"
PY=${PY:-python3}; TOOL=${TOOL:-$PY}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
say() { echo "$*" | tee -a "$log"; }
one() {
  local name=$1; shift
  env "$@" $TOOL -m fixer verify --json --python "$(command -v $PY)" --framework torch 2>>"$log.stderr" | $PY -c '
import json, sys
d = json.load(sys.stdin)
for r in d["results"]:
    print("%-34s %-5s %s own=%.2fs import=%.2f %s" % (sys.argv[1], r["framework"], r["status"], r["seconds"] - r["import_seconds"],
          r["import_seconds"], " ".join("%s=%.2f" % kv for kv in r.get("phases", {}).items())))
    for c in r.get("cases", []):
        print("     %-22s %-9s %-5s first=%7.1fms ok=%s err=%s" % (c.get("case"), c.get("dtype"), c.get("layout"), c.get("first_ms") or -1, c.get("ok"), c.get("max_error")))
    for f in r.get("findings", []):
        print("     finding:", f.get("id"), "-", f.get("title"))' "$name" | tee -a "$log"
}
for mode in bench nobench; do
  say "## torch_cases.py $mode, CUDA_CACHE_DISABLE=1"
  CUDA_CACHE_DISABLE=1 $PY scripts/device/torch_cases.py $mode 2>&1 | tail -16 | tee -a "$log"
done
one "jit-off benchmark=on"  CUDA_CACHE_DISABLE=1 FIXER_VERIFY_BENCHMARK=1
one "jit-off benchmark=off" CUDA_CACHE_DISABLE=1 FIXER_VERIFY_BENCHMARK=0
one "warm benchmark=off" FIXER_VERIFY_BENCHMARK=0
cudnn=$($PY -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))")
hid=$(mktemp -d); trap 'mv "$hid"/* "$cudnn"/ 2>/dev/null' EXIT
mv "$cudnn"/libcudnn_engines_precompiled.so.9 "$hid"/
say "## engines_precompiled hidden"
one "no-precompiled benchmark=off" FIXER_VERIFY_BENCHMARK=0
one "no-precompiled benchmark=on" FIXER_VERIFY_BENCHMARK=1
mv "$hid"/* "$cudnn"/
ls "$cudnn" | tee -a "$log"
