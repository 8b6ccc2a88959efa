#!/bin/bash
# Runs scripts/device/jax_why.py variants, each a fresh process; the first line is the cold one.
set -u
py=${PY:-python3}
r() { local label=$1 var=$2; shift 2; env "$@" "$py" scripts/device/jax_why.py "$label" "$var" 2>&1 | grep -v "^WARNING\|^I0000\|^E0000" | tail -2; }
r "grad (now), cold" grad
r "grad (now)" grad
r "vjp" vjp
r "vjp" vjp
r "grad, no command buffers" grad XLA_FLAGS=--xla_gpu_enable_command_buffer=
r "vjp, no command buffers" vjp XLA_FLAGS=--xla_gpu_enable_command_buffer=
r "grad, level 0" grad XLA_FLAGS=--xla_gpu_autotune_level=0
r "vjp, level 0" vjp XLA_FLAGS=--xla_gpu_autotune_level=0
r "grad, no triton gemm" grad XLA_FLAGS=--xla_gpu_enable_triton_gemm=false
r "vjp, nvptxcompiler lib" vjp XLA_FLAGS=--xla_gpu_enable_libnvptxcompiler=true
