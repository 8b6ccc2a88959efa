#!/bin/bash
# On the GPU machine: which version strings each cuDNN 9 library file carries inside it, for the
# pip copy (nvidia-cudnn-cu13 9.19) and the apt copy (libcudnn9-cuda-13 9.14). Evidence for
# naming the release of a file that cannot answer cudnnGetVersion in place (a sub-library of
# another release that fails to load beside its own copy): files-modified names it today from
# cudnnGetVersion or from identical bytes in another copy (fixer.detection.libraries.
# name_foreign_files); this shows whether the file's own bytes would say it too.
# For each file: its size, and how often each candidate spelling occurs in it (grep -a -c -o),
# with the first three occurrences in context (printable bytes around it).
# Usage (repo root, GPU machine):  OUT=/tmp/out bash scripts/device/cudnn_version_strings.sh   (~1 min)
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
exec > >(tee "$o/cudnn_version_strings.txt") 2>&1
py=$(command -v python3)
pip=$($py -c 'import os, nvidia.cudnn as m; print(os.path.join(os.path.dirname(m.__file__), "lib"))' 2>/dev/null \
      || $py -c 'import os, nvidia; print(os.path.join(list(nvidia.__path__)[0], "cudnn", "lib"))')
apt=/usr/lib/x86_64-linux-gnu
pv=$($py -c 'import importlib.metadata as m; print(m.version("nvidia-cudnn-cu13"))' 2>/dev/null)
av=$(readlink -f "$apt/libcudnn.so.9" | sed -E 's/.*\.so\.//')
echo "pip: $pip ($pv)   apt: $apt ($av)"
for copy in "$pip:$pv" "$apt:$av"; do
  dir=${copy%%:*}; ver=${copy#*:}
  M=$(echo "$ver" | cut -d. -f1); m=$(echo "$ver" | cut -d. -f2); p=$(echo "$ver" | cut -d. -f3)
  int=$(( M * 10000 + m * 100 + p ))
  for f in "$dir"/libcudnn.so.9 "$dir"/libcudnn_*.so.9; do
    real=$(readlink -f "$f"); [ -f "$real" ] || continue
    echo; echo "== $real ($(stat -c %s "$real") bytes)"
    for pat in "$M.$m.$p" "$ver" "$int" "v$int" "CUDNN_VERSION" "cudnn_version" "$M.$m"; do
      n=$(grep -a -o -F -- "$pat" "$real" | wc -l)
      echo "  '$pat': $n"
      [ "$n" -gt 0 ] && [ "$n" -lt 200 ] && grep -a -o -E ".{0,40}$(printf '%s' "$pat" | sed 's/\./\\./g').{0,40}" "$real" \
        | tr -c '[:print:]\n' '.' | head -n 3 | sed 's/^/      /'
    done
  done
done
