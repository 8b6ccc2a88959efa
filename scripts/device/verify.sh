#!/bin/bash
# `colab-cudnn-fix verify` on the GPU machine: healthy, then each breakage of
# data/gpu_machine/device_break.sh plus two made-up mixed copies, with timings.
# Every file moved is moved back on exit (trap), whatever happens.
# Usage (repo root, on the GPU machine): bash scripts/device/verify.sh
# Output: $OUT/verify.txt (summary + tails) and $OUT/verify_runs.jsonl (one `verify --json` per line).
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
PY=${PY:-python3}            # the target interpreter (torch, jax, cupy)
TOOL=${TOOL:-$PY}            # the interpreter running colab-cudnn-fix (needs typer, rich, packaging)
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
log=$o/verify.txt; runs=$o/verify_runs.jsonl; : > "$log"; : > "$runs"
cudnn=$($PY -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))")
[ -n "$cudnn" ] && [ -d "$cudnn" ] || { echo "no pip cuDNN directory found (nvidia.cudnn): nothing to break" | tee "$log"; exit 1; }
apt_ops=${APT_OPS:-/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9}
hid=$(mktemp -d /tmp/verify-hidden.XXXX)
shadow=$(mktemp -d /tmp/verify-shadow.XXXX)

restore() {
  [ -d "$cudnn.hidden" ] && [ ! -e "$cudnn" ] && mv "$cudnn.hidden" "$cudnn"
  for f in "$hid"/*; do [ -e "$f" ] && mv "$f" "$cudnn/"; done
  rm -rf "$shadow"
}
trap restore EXIT INT TERM

say() { echo "$*" | tee -a "$log"; }

# run NAME EXPECT [env assignments...] -- [verify args...]
run() {
  local name=$1 expect=$2; shift 2
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ "${1:-}" = "--" ] && shift
  local t0 t1 out rc
  t0=$(date +%s.%N)
  out=$(env "${envs[@]}" $TOOL -m fixer verify --json --python "$(command -v $PY)" "$@" 2>>"$log.stderr")
  rc=$?
  t1=$(date +%s.%N)
  echo "$out" | $PY -c "import json,sys; d=json.load(sys.stdin); d['scenario']='$name'; print(json.dumps(d))" >> "$runs" 2>/dev/null
  say "## $name  (expect: $expect)  exit=$rc  wall=$($PY -c "print(round($t1-$t0,2))")s  env: ${envs[*]:-(none)}"
  echo "$out" | $PY -c '
import json, sys
try:
    d = json.load(sys.stdin)
except Exception as e:
    print("   NO JSON:", e); sys.exit()
for r in d.get("results", []):
    ids = [f["id"] for f in r["findings"]]
    own = None if r["seconds"] is None or r["import_seconds"] is None else round(r["seconds"] - r["import_seconds"], 2)
    bad = [c["case"] + "/" + c["dtype"] + " err=" + str(c["max_error"]) for c in r["cases"] if not c["ok"]]
    print("   %-10s %-8s findings=%s loaded=%s built=%s import=%ss child=%ss verify-own=%ss first=%ss steady=%sms cases=%d%s"
          % (r["framework"], r["status"], ",".join(ids) or "-", r["cudnn_loaded"], r["cudnn_built"], r["import_seconds"],
             r["seconds"], own, r["first_seconds"], None if r["steady_seconds"] is None else round(r["steady_seconds"] * 1000, 3),
             len(r["cases"]), (" WRONG: " + "; ".join(bad)) if bad else ""))
    print("              summary: " + r["summary"][:300])
    dirs = sorted({p.rsplit("/", 1)[0] for p in r["mapped"]})
    print("              mapped cuDNN dirs: " + (", ".join(dirs) or "-"))
    if r["status"] != "passed":
        for f in r["findings"][:2]:
            print("              %s: %s" % (f["id"], f["title"][:240]))
        for e in r["errors"][:2]:
            print("              error: " + e[:240])
' | tee -a "$log"
}

say "# verify on $(hostname) $(date -u +%FT%TZ); cudnn dir $cudnn; python $($PY -c 'import sys;print(sys.executable)')"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>&1 | tee -a "$log"

say "## bare import times (reference for 'verify adds < 3 s beyond import')"
for m in torch jax cupy; do
  $PY -c "import time; t=time.perf_counter(); import $m; print('   import $m: %.2f s' % (time.perf_counter()-t))" 2>&1 | tail -1 | tee -a "$log"
done

run healthy "torch, jax, cupy pass"
run healthy-again "pass (warm file cache)" -- --framework torch --framework jax

BUDGET_LOG=$log bash scripts/device/verify_budget.sh

# 1. pip cuDNN hidden: torch then runs on the apt 9.14 without error -> must FAIL as cudnn-too-old.
#    JAX (built with 9.12) accepts 9.14: passing there is right.
mv "$cudnn" "$cudnn.hidden"
run pip-cudnn-hidden "torch: cudnn-too-old; jax: passes on apt 9.14 (>= its 9.12)" -- --framework torch --framework jax
mv "$cudnn.hidden" "$cudnn"

# 2. engines_precompiled missing from the pip copy: wrong numbers or no engine -> cudnn-incomplete.
mv "$cudnn/libcudnn_engines_precompiled.so.9" "$hid/"
run engines-precompiled-missing "cudnn-incomplete (torch and jax)" -- --framework torch --framework jax
mv "$hid/libcudnn_engines_precompiled.so.9" "$cudnn/"

# 3. no GPU visible.
run no-gpu-visible "gpu-missing (torch and jax)" CUDA_VISIBLE_DEVICES= -- --framework torch --framework jax

# 4. mixed copies: the apt 9.14 libcudnn_ops.so.9 preloaded into a process that loads the pip 9.19 copy.
if [ -e "$apt_ops" ]; then
  run mixed-ld-preload "cudnn-mixed (torch and jax)" LD_PRELOAD="$apt_ops" -- --framework torch --framework jax
  # 5. the same through LD_LIBRARY_PATH: a directory holding only the apt sub-library.
  ln -s "$(readlink -f "$apt_ops")" "$shadow/libcudnn_ops.so.9"
  run mixed-ld-library-path "cudnn-mixed if the sub-library is searched there, else pass" LD_LIBRARY_PATH="$shadow" -- --framework torch --framework jax
else
  say "## mixed: skipped, $apt_ops not found"
fi

restore
run restored "torch, jax pass again (files restored)" -- --framework torch --framework jax
ls -la "$cudnn" >> "$log"
[ -s "$log.stderr" ] && { echo "## stderr of the verify runs (tail)" >> "$log"; tail -c 6000 "$log.stderr" >> "$log"; }
rm -f "$log.stderr"
tail -c 5000 "$log"
