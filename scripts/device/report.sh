#!/bin/bash
# `colab-cudnn-fix report` and `report --html` on the GPU machine, healthy and with the pip cuDNN
# hidden (torch then loads the apt 9.14 while built with 9.19), plus the timing.
# Run from the repository root:  bash scripts/device/report.sh        Output: $OUT (6 files)
#   report.md            report (markdown), healthy machine
#   report.html          report --html, healthy machine
#   report_hidden.md     report with the pip cuDNN hidden: must name cudnn-too-old, the apt copy that
#                        loads and why (found through ld.so.cache), and the fix
#   redaction.txt        how many times the home directory / user name appear, redacted vs --no-redact
#                        (redacted: 0)
#   bench.txt/.json      scripts/bench_report.py: report median must be < 0.3 s, frameworks_imported_by_report []
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
d=$($py -c "import nvidia.cudnn;print(list(nvidia.cudnn.__path__)[0])")
lib="$d/lib"
restore() { if [ -d "$lib.hidden" ] && [ ! -e "$lib" ]; then mv "$lib.hidden" "$lib"; fi; }
trap restore EXIT INT TERM

$py -m fixer report > "$o/report.md"; echo "exit: $?" >> "$o/report.md"
$py -m fixer report --html > "$o/report.html"
mv "$lib" "$lib.hidden"
$py -m fixer report > "$o/report_hidden.md"; echo "exit: $?" >> "$o/report_hidden.md"
mv "$lib.hidden" "$lib"

home=${HOME:-/root}; user=$(id -un)
{
  echo "HOME=$home user=$user"
  echo "redacted:    home paths $($py -m fixer report | grep -c "$home/") user components $($py -m fixer report | grep -cE "/$user(/|$| )")"
  echo "--no-redact: home paths $($py -m fixer report --no-redact | grep -c "$home/")"
} > "$o/redaction.txt" 2>&1
$py scripts/bench_report.py --runs 7 --out "$o/bench.json" > "$o/bench.txt" 2>&1
cat "$o/report.md" "$o/report_hidden.md" "$o/redaction.txt" "$o/bench.txt"
