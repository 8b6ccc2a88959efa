#!/bin/bash
# Issue 25: what the post-apply check's cold start costs and what cuts it, on the GPU machine.
#  1. bytecode: the machine sets PYTHONDONTWRITEBYTECODE=1 and ships torch/jax without .pyc, so
#     every check child compiles torch's 2,141 source files (about 3.3 s of a 5.5 s import).
#     Measures: import as is; compileall -j0 into a private PYTHONPYCACHEPREFIX; import from it.
#  2. page cache: JAX beyond its import after dropping the page cache, with and without
#     posix_fadvise(WILLNEED) on the framework's shared libraries started before the import.
set -u
py=${PY:-python3}
site=$($py -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "nproc $(nproc)  site $site  PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}"
imp() { $py -c 'import time,sys; t=time.perf_counter(); import '"$1"'; print("%-34s import %s %.2f s" % (sys.argv[1], "'"$1"'", time.perf_counter()-t))' "$2"; }
pfx=$(mktemp -d)
imp torch "as is"; imp jax "as is"; imp cupy "as is"
t=$(date +%s.%N)
PYTHONPYCACHEPREFIX=$pfx $py -m compileall -q -j0 "$site/torch" "$site/jax" "$site/jaxlib" "$site/cupy" "$site/numpy" >/dev/null 2>&1
echo "compileall -j0 torch jax jaxlib cupy numpy into a prefix: $(echo "$(date +%s.%N) - $t" | bc) s, $(du -sm $pfx | cut -f1) MB"
for fw in torch jax cupy; do env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$pfx bash -c "$(declare -f imp); py=$py; imp $fw 'from the prefix'"; done
echo "## JAX beyond import with a cold page cache (drop_caches), without / with readahead"
cat > /tmp/ra.py <<'PY'
import os, sys, glob, sysconfig
site = sysconfig.get_paths()["purelib"]
pats = sys.argv[1:]
n = b = 0
for pat in pats:
    for p in glob.glob(os.path.join(site, pat), recursive=True):
        if ".so" in os.path.basename(p) and os.path.isfile(p):
            fd = os.open(p, os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
            os.close(fd)
            n += 1; b += os.path.getsize(p)
print("readahead %d files %.0f MB" % (n, b / 1e6), file=sys.stderr)
PY
for mode in none jaxlibs all none jaxlibs all; do
  sync; echo 3 > /proc/sys/vm/drop_caches
  case $mode in
    none) ;;
    jaxlibs) $py /tmp/ra.py 'jaxlib/**' 'jax_cuda*/**' 'nvidia/cudnn/lib/*' 'nvidia/cu13/lib/libcublas*' ;;
    all) $py /tmp/ra.py 'jaxlib/**' 'jax_cuda*/**' 'nvidia/**' ;;
  esac
  $py scripts/device/jax_why.py "cold cache, readahead $mode" 2>&1 | grep "beyond import"
done
echo "## torch check child, cold cache: as is / from the prefix"
for mode in asis prefix; do
  sync; echo 3 > /proc/sys/vm/drop_caches
  if [ $mode = prefix ]; then e="env -u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$pfx"; else e=env; fi
  $e $py fixer/children/verify.py torch 2>/dev/null | $py -c '
import json,sys
r=[json.loads(l.split(" ",1)[1]) for l in sys.stdin if l.startswith("@@fixer-verify@@ ")]
imp=[x for x in r if x["event"]=="imported"][0]; done=[x for x in r if x["event"]=="done"]
print("torch child %-8s import %.2f s  total %.2f s  ok %s" % (sys.argv[1], imp["seconds"], done[-1]["t"] if done else -1, [c.get("ok") for c in r if c["event"]=="case"]))' $mode
done
rm -rf "$pfx"
