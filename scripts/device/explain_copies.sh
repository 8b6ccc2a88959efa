#!/bin/bash
# explain's decisions from the cuDNN copies a paste shows (fixer.explainer.copies), on texts the real
# emitters print on the GPU machine: torch's own cuDNN check with the apt cuDNN 9.14 forced in
# ahead of torch's pip 9.19 (LD_PRELOAD for one process; nothing on the machine is changed), pasted
# beside what a user would run to show the copies (pip list, the header's #defines, dpkg -l).
# explain runs with --no-detect: the text alone decides. One line per paste:
#   PASTE  top-finding(confidence)  decided-by-line
# Expected (what the output must show):
#   check-alone          cudnn-too-old     (no second copy shown)
#   check+pip-list       cudnn-shadowed    (nvidia-cudnn-cu13 9.19 fits the build, 9.14 loaded)
#   check+pip-header     cudnn-shadowed    (the pip copy's cudnn_version.h: 9.19.x)
#   check+apt-header     cudnn-too-old     (only the loaded 9.14 shown)
#   check+dpkg           cudnn-too-old     (dpkg lists the apt 9.14, the loaded one)
# If torch's check does not fire (torch built against <= 9.14), the first line says so and the
# rest are skipped. Usage (repo root, GPU machine): OUT=/tmp/out bash scripts/device/explain_copies.sh (~30 s)
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/explain_copies.txt
exec > >(tee "$log") 2>&1
. "$(dirname "$0")/_cudnn_copies.sh"
echo "python: $py   pip cuDNN: $pipdir   apt cuDNN: $(ls $apt/libcudnn.so.9.* 2>/dev/null | head -1)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
LD_PRELOAD=$apt/libcudnn.so.9 $py -c 'import torch; print("cudnn", torch.backends.cudnn.version())' \
  > "$tmp/check.txt" 2>&1
if ! grep -q "cuDNN version incompatibility" "$tmp/check.txt"; then
  echo "torch's check did not fire: $(tail -c 300 "$tmp/check.txt" | tr '\n' ' ')"; exit 0
fi
echo "torch printed: $(grep -o 'cuDNN version incompatibility[^.]*' "$tmp/check.txt" | head -1)"
inc=$(dirname "$pipdir")/include
{ echo '$ pip list | grep -i cudnn'; $py -m pip list 2>/dev/null | grep -i cudnn; } > "$tmp/pip.txt"
{ echo "\$ grep -A2 'define CUDNN_MAJOR' $inc/cudnn_version.h"; grep -A2 'define CUDNN_MAJOR' "$inc/cudnn_version.h"; } > "$tmp/pip-header.txt" 2>/dev/null
{ echo "\$ grep -A2 'define CUDNN_MAJOR' /usr/include/cudnn_version.h"; grep -A2 'define CUDNN_MAJOR' /usr/include/cudnn_version*.h 2>/dev/null | sed 's/^[^:]*://' | head -3; } > "$tmp/apt-header.txt"
{ echo '$ dpkg -l | grep cudnn'; dpkg -l 2>/dev/null | grep -i cudnn; } > "$tmp/dpkg.txt"
: > "$tmp/none.txt"
for p in "check-alone:none" "check+pip-list:pip" "check+pip-header:pip-header" "check+apt-header:apt-header" "check+dpkg:dpkg"; do
  name=${p%%:*}; extra=$tmp/${p#*:}.txt
  cat "$tmp/check.txt" "$extra" > "$tmp/paste.txt"
  PYTHONPATH=$PWD $py -m fixer explain --no-detect --json --file "$tmp/paste.txt" 2>/dev/null | $py -c '
import json, sys
d = json.load(sys.stdin); f = d.get("findings", [])
top = "%s(%.2f)" % (f[0]["id"], f[0]["confidence"]) if f else "NOT-RECOGNISED"
why = next((e for e in (f[0]["evidence"] if f else []) if e.startswith("decided by:")), "")
print("%-18s %-26s %s" % (sys.argv[1], top, why[:160]))' "$name"
  echo "   shown: $(tail -n +2 "$extra" | head -3 | tr '\n' ' ')"
done
echo "this log: $log"
