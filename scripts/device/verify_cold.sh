#!/bin/bash
# Where verify's time goes on a freshly started machine. Run it as the FIRST
# command after the machine starts: run 1 is the cold one users see. Then: warm; the page cache
# of the GPU libraries dropped (posix_fadvise DONTNEED on every file under the frameworks' and
# nvidia's library folders); the CUDA JIT cache disabled; and a cold page cache with the
# libraries read ahead while the framework imports.
# Usage (repo root, GPU machine): bash scripts/device/verify_cold.sh   -> $OUT/verify_cold.txt
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/verify_cold.txt; : > "$log"
PY=${PY:-python3}; TOOL=${TOOL:-$PY}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
say() { echo "$*" | tee -a "$log"; }
say "# $(date -u +%FT%TZ) uptime: $(cut -d' ' -f1 /proc/uptime)s; $(nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader 2>&1)"
say "# ComputeCache before: $(du -sh ~/.nv/ComputeCache 2>/dev/null || echo none)"
libdirs=$($PY - <<'PY'
import importlib.util, os
out = []
for mod in ("torch", "nvidia", "jaxlib", "jax_plugins", "cupy", "cupy_backends"):
    s = importlib.util.find_spec(mod)
    if s and s.submodule_search_locations:
        out += list(s.submodule_search_locations)
print(" ".join(out + ["/usr/lib/x86_64-linux-gnu"]))
PY
)
say "# library folders: $libdirs"
evict() {   # drop the page cache of the GPU libraries (clean pages only: nothing is lost)
  $PY - $libdirs <<'PY'
import os, sys
n = b = 0
for top in sys.argv[1:]:
    for d, _, fs in os.walk(top):
        for f in fs:
            p = os.path.join(d, f)
            if ".so" not in f or os.path.islink(p):
                continue
            try:
                fd = os.open(p, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); n += 1; b += os.fstat(fd).st_size
            finally:
                os.close(fd)
print("evicted %d files, %.2f GB" % (n, b / 1e9))
PY
  sync; echo 1 > /proc/sys/vm/drop_caches 2>/dev/null && echo "drop_caches: ok" || echo "drop_caches: refused"
}
one() {   # one NAME [env...]: verify torch+jax once, phases per framework
  local name=$1; shift
  local t0=$(date +%s.%N)
  env "$@" $TOOL -m fixer verify --json --python "$(command -v $PY)" --framework torch --framework jax 2>>"$log.stderr" | $PY -c '
import json, sys
name = sys.argv[1]
d = json.load(sys.stdin)
for r in d["results"]:
    print("%-22s %-5s %s own=%.2fs (child %.2fs, import %.2fs) %s" % (name, r["framework"], r["status"], r["seconds"] - r["import_seconds"],
          r["seconds"], r["import_seconds"], " ".join("%s=%.2f" % kv for kv in r.get("phases", {}).items())))' "$name" | tee -a "$log"
  say "   wall $(python3 -c "print(round($(date +%s.%N)-$t0,2))")s"
}
one "1-fresh-machine"
one "2-warm"
say "# ComputeCache after: $(du -sh ~/.nv/ComputeCache 2>/dev/null || echo none)"
say "# $(evict)"
one "3-page-cache-dropped"
one "4-warm-no-jit-cache" CUDA_CACHE_DISABLE=1
say "# $(evict)"
one "5-dropped+readahead-fadvise" FIXER_VERIFY_READAHEAD=fadvise
say "# $(evict)"
one "6-dropped+readahead-read" FIXER_VERIFY_READAHEAD=read
one "7-warm+readahead-fadvise" FIXER_VERIFY_READAHEAD=fadvise
say "# sizes of the big libraries"
for d in $libdirs; do find "$d" -name '*.so*' -size +100M -printf '%s %p\n' 2>/dev/null; done | sort -rn | head -20 | awk '{printf "  %.0f MB %s\n", $1/1e6, $2}' | tee -a "$log"
say "# disk read speed (dd of the biggest cuDNN file, cold)"
big=$(for d in $libdirs; do find "$d" -name 'libcudnn_engines_precompiled*' 2>/dev/null; done | head -1)
[ -n "$big" ] && { $PY -c "import os,sys; fd=os.open(sys.argv[1],os.O_RDONLY); os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)" "$big"; dd if="$big" of=/dev/null bs=8M 2>&1 | tail -1 | tee -a "$log"; }
