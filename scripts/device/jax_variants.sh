#!/bin/bash
# Which case set keeps JAX verify within its budget? Compiles (with XLA's default autotune)
# one program per case set, fresh process each, twice; then the budget runs of verify.
# Case sets: dtype:shape:layout lists for scripts/device/jax_profile.py.
# Usage (repo root, GPU machine): bash scripts/device/jax_variants.sh
export PYTHONUNBUFFERED=1
A="float32:small:NCHW,float32:2x16x32x32:NCHW,float32:stem:NCHW,float16:2x16x32x32:NHWC,bfloat16:2x16x32x32:NHWC"
B="float32:small:NCHW,float32:2x16x32x32:NCHW,float32:stem:NCHW,bfloat16:2x16x32x32:NHWC"
C="float32:small:NCHW,float32:2x16x32x32:NHWC,float32:stem:NHWC,bfloat16:2x16x32x32:NHWC"
D="float32:small:NHWC,float32:2x16x32x32:NHWC,float32:stem:NHWC,bfloat16:2x16x32x32:NHWC"
E="float32:small:NCHW,float32:2x16x32x32:NHWC,float32:stem:NHWC,float16:2x16x32x32:NHWC,bfloat16:2x16x32x32:NHWC"
for rep in 1 2; do for v in A B C D E; do echo "== $v rep $rep"; timeout 60 python3 scripts/device/jax_profile.py "${!v}" 2>&1 | grep -E "XLA_FLAGS|backend_compile"; done; done
BUDGET_RUNS=3 bash scripts/device/verify_budget.sh 2>&1
