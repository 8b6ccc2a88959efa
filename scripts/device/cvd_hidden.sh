#!/usr/bin/env bash
# With CUDA_VISIBLE_DEVICES hiding every GPU the driver sees, doctor, plan
# and apply --dry-run say the GPU is hidden by CUDA_VISIBLE_DEVICES, never "No NVIDIA GPU on this
# ... CPU runtime". Runs from the repo root on the GPU machine (driver 580, torch installed).
# Prints, per value of the variable, each command's exit code and its verdict line, then PASS/FAIL.
set -u
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python3}
echo "## nvidia-smi -L (what the driver sees)"
nvidia-smi -L 2>&1 | head -4
echo "## /proc/driver/nvidia/gpus"
ls /proc/driver/nvidia/gpus 2>&1
fail=0
for cvd in "-1" "" "7" "GPU-00000000"; do
  for cmd in "doctor" "plan" "apply --dry-run"; do
    out=$(CUDA_VISIBLE_DEVICES="$cvd" timeout 170 "$PY" -m fixer $cmd 2>&1)
    rc=$?
    line=$(printf '%s\n' "$out" | grep -m1 -E "No NVIDIA GPU|hidden|CUDA_VISIBLE_DEVICES" || true)
    printf 'CUDA_VISIBLE_DEVICES=%-14q %-16s exit=%s  %s\n' "$cvd" "$cmd" "$rc" "$line"
    if printf '%s' "$out" | grep -q "CPU runtime"; then fail=1; echo "   ^ says CPU runtime"; fi
    if ! printf '%s' "$out" | grep -q "CUDA_VISIBLE_DEVICES"; then fail=1; echo "   ^ does not name CUDA_VISIBLE_DEVICES"; fi
  done
done
[ $fail = 0 ] && echo PASS || echo FAIL
