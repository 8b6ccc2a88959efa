#!/bin/bash
# Issue 25, second round: (1) JAX's program split per case and compiled in parallel threads,
# first on the fresh machine, then warm and after drop_caches; (2) how long compileall -j0 of
# the frameworks into a private PYTHONPYCACHEPREFIX takes; (3) JAX beyond import with its
# libraries fully read into the page cache first (the ceiling of a readahead during apply).
set -u
py=${PY:-python3}
site=$($py -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
j() { $py scripts/device/jax_why.py "$1" "$2" 2>&1 | grep "beyond import"; }
j "split, fresh machine" split
j "grad (now)" grad
j "split" split
j "grad (now)" grad
j "split" split
for i in 1 2; do
  sync; echo 3 > /proc/sys/vm/drop_caches; j "split, dropped cache" split
  sync; echo 3 > /proc/sys/vm/drop_caches; j "grad, dropped cache" grad
done
pfx=$(mktemp -d)
t=$($py -c 'import time; print(time.time())')
PYTHONPYCACHEPREFIX=$pfx $py -m compileall -q -j0 "$site/torch" "$site/jax" "$site/jaxlib" "$site/cupy" "$site/numpy" >/dev/null 2>&1
$py -c 'import sys,time; print("compileall -j0 (16 cores) torch jax jaxlib cupy numpy: %.2f s" % (time.time()-float(sys.argv[1])))' "$t"
rm -rf "$pfx"
echo "## libraries fully read before the run (ceiling of a readahead during apply)"
for v in grad split; do
  sync; echo 3 > /proc/sys/vm/drop_caches
  t=$($py -c 'import time; print(time.time())')
  find "$site/jaxlib" "$site"/jax_cuda* "$site/nvidia" /usr/local/nvidia/lib64 -name '*.so*' -type f -exec cat {} + > /dev/null 2>&1
  $py -c 'import sys,time; print("read all libs: %.2f s" % (time.time()-float(sys.argv[1])))' "$t"
  j "$v, libs read first" $v
done
