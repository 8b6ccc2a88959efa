#!/bin/bash
# apply's loader fix end to end on the GPU machine. LD_PRELOAD forces the apt cuDNN's
# libcudnn_ops.so.9 into every process next to the pip cuDNN torch and JAX load (verify:
# cudnn-mixed). doctor must name it, plan must drop that LD_PRELOAD entry for new shells, apply
# must write the env file and check its result in the environment a new shell gets (this
# process keeps its LD_PRELOAD), a new shell must come up clean, and rollback must remove it all.
# Usage (repo root, GPU machine): OUT=/tmp/out bash scripts/device/apply_envfix.sh
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/apply_envfix.txt
exec > >(tee "$log") 2>&1
py=$(command -v python3)
fix() { PYTHONPATH=$PWD $py -m fixer "$@"; }
ops=${APT_OPS:-/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9}
envfile=/etc/profile.d/colab-cudnn-fix.sh
[ -e "$ops" ] || { echo "no $ops on this machine: nothing to preload"; exit 1; }
[ -e "$envfile" ] && { echo "$envfile exists already: not touching this machine"; exit 1; }
cleanup() {
  if [ -e "$envfile" ]; then echo "## TRAP: rolling back"; fix rollback > /dev/null 2>&1; rm -f "$envfile"; fi
  [ -e "$envfile" ] && echo "RESTORE MISMATCH: $envfile still there" || echo "RESTORED OK: no $envfile"
}
trap cleanup EXIT
export LD_PRELOAD=$ops
echo "## 1 doctor, LD_PRELOAD=$ops"
fix doctor 2>&1 | tail -14; echo "doctor exit ${PIPESTATUS[0]} (1 expected)"
echo "## 2 plan"
fix plan --json | $py -c '
import json, sys
d = json.load(sys.stdin); p = d.get("plan", d)
for s in p.get("steps", []):
    print("  step:", s["kind"], "-", s["summary"][:200])'
echo "## 3 apply (this process keeps LD_PRELOAD; the checks run as a new shell would)"
fix apply 2>&1 | tail -30; echo "apply exit ${PIPESTATUS[0]} (0 expected)"
echo "## 4 a new shell with the old LD_PRELOAD"
bash -c ". $envfile; echo \"  LD_PRELOAD in a new shell: \${LD_PRELOAD-unset}\"; PYTHONPATH=$PWD $py -m fixer verify --framework torch --framework jax 2>&1 | grep -E '^(PASSED|FAILED)|conv checks'; echo \"  verify exit \${PIPESTATUS[0]}\""
echo "## 5 rollback"
fix rollback 2>&1 | tail -5; echo "rollback exit ${PIPESTATUS[0]}"
[ -e "$envfile" ] && echo "  $envfile still there" || echo "  $envfile removed"
fix doctor > /dev/null 2>&1; echo "  doctor exit $? after rollback (1 expected: LD_PRELOAD is still set here)"
