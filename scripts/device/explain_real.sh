#!/bin/bash
# explain on texts the real emitters print on the GPU machine: each scenario breaks
# cuDNN for one process only (environment variables, a copy under /tmp; nothing on the machine is
# changed), runs torch's own check or a conv, and pipes what torch printed into explain, once with
# --no-detect and once with detection. Prints one line per run:
#   SCENARIO  explain-mode  top-finding(confidence)  [alternatives]
# and the tail of the text torch printed. Expected (what the output must show):
#   old-cudnn-preloaded   no-detect: cudnn-too-old first (torch's "one possibility ... LD_LIBRARY_PATH" form)
#                         detect:    cudnn-shadowed first (the pip 9.19 copy exists and lost)
#   old-cudnn-on-ldpath   no-detect: cudnn-shadowed first ("Looks like your LD_LIBRARY_PATH contains
#                         incompatible version of cudnn": the path names "cudnn")
#   sublib-missing        cudnn-incomplete or cudnn-missing first (a copy lacking libcudnn_engines_precompiled)
#   graph-from-apt        cudnn-mixed or cudnn-incomplete first (libcudnn_graph of 9.14 next to 9.19)
# Usage (repo root, GPU machine): OUT=/tmp/out bash scripts/device/explain_real.sh   (~1-2 min)
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/explain_real.txt
exec > >(tee "$log") 2>&1
. "$(dirname "$0")/_cudnn_copies.sh"
echo "python: $py   pip cuDNN: $pipdir   apt cuDNN: $(ls $apt/libcudnn.so.9* 2>/dev/null | head -1)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
probe='import torch
print("cudnn", torch.backends.cudnn.version())
x = torch.randn(8, 16, 32, 32, device="cuda"); w = torch.randn(16, 16, 3, 3, device="cuda")
torch.nn.functional.conv2d(x, w).sum().item(); print("conv ok")'
explain_both() {  # $1 scenario, $2 file with the text
  for mode in --no-detect detect; do
    arg=$([ $mode = detect ] && echo "" || echo "--no-detect")
    PYTHONPATH=$PWD $py -m fixer explain $arg --json --file "$2" 2>/dev/null | $py -c '
import json, sys
d = json.load(sys.stdin); f = d.get("findings", [])
top = "%s(%.2f)" % (f[0]["id"], f[0]["confidence"]) if f else "NOT-RECOGNISED"
print("%-22s %-10s %-32s %s" % (sys.argv[1], sys.argv[2], top, [a["id"] for a in d.get("alternatives", [])[1:4]]))' "$1" "$mode"
  done
  echo "   text: $(tail -c 400 "$2" | tr '\n' ' ')"
}
run() {  # $1 scenario; the rest: env assignments
  name=$1; shift
  env "$@" $py -c "$probe" > "$tmp/$name.txt" 2>&1
  explain_both "$name" "$tmp/$name.txt"
}
# 1. the apt cuDNN 9.14 forced in ahead of torch's pip 9.19
run old-cudnn-preloaded LD_PRELOAD=$apt/libcudnn.so.9
# 2. an older cuDNN on LD_LIBRARY_PATH, in a directory whose name says cudnn
mkdir -p "$tmp/cudnn-9.14/lib"; cp -P $apt/libcudnn*.so.9* "$tmp/cudnn-9.14/lib/" 2>/dev/null
run old-cudnn-on-ldpath LD_LIBRARY_PATH="$tmp/cudnn-9.14/lib" LD_PRELOAD="$tmp/cudnn-9.14/lib/libcudnn.so.9"
# 3. a copy of the pip cuDNN without one engine sub-library, first on the path
mkdir -p "$tmp/partial"; cp -P "$pipdir"/libcudnn*.so* "$tmp/partial/"; rm -f "$tmp/partial"/libcudnn_engines_precompiled.so*
run sublib-missing LD_LIBRARY_PATH="$tmp/partial" LD_PRELOAD="$tmp/partial/libcudnn.so.9"
# 4. libcudnn_graph of the apt 9.14 next to the pip 9.19 rest
run graph-from-apt LD_PRELOAD=$apt/libcudnn_graph.so.9
echo "done; texts in $tmp (removed on exit), this log in $log"
