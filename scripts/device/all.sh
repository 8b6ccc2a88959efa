#!/bin/bash
# Runs every area's GPU-machine script in one lease, each with its own output folder, and
# packs them into $OUT/device-results.tar.gz (the device tool brings back at most 8 files).
# Usage on the GPU machine: bash scripts/device/all.sh [doctor verify apply ...]
set -u
final=${OUT:-/tmp/out}; mkdir -p "$final"
work=$(mktemp -d /tmp/device-results.XXXX)
areas=${*:-doctor verify apply}
export PYTHONUNBUFFERED=1
for a in $areas; do
  s=scripts/device/$a.sh
  [ -f "$s" ] || { echo "## $a: no $s"; continue; }
  mkdir -p "$work/$a"
  echo "################ $a ################"
  start=$(date +%s.%N)
  OUT="$work/$a" timeout 560 bash "$s" > "$work/$a/stdout.txt" 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "## $a rc=$rc seconds=$(python3 -c "print(round($end-$start,1))")"
  tail -c 2500 "$work/$a/stdout.txt"
done
tar -C "$work" -czf "$final/device-results.tar.gz" .
ls -la "$final"
