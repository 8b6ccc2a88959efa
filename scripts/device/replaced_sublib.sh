#!/bin/bash
# On the GPU machine: one sub-library of the pip nvidia-cudnn-cu13 (9.19) is
# replaced by the apt cuDNN 9.14 file of the same name (a real file, no symlink: a RECORD
# mismatch). Shown, in order:
#   1. before the repair: a torch LSTM (cuDNN RNN: libcudnn_adv) and a conv, each in a child;
#   2. doctor (size against RECORD) and doctor --deep (sha256) name the file and its release
#      (files-modified);
#   3. apply, offline from a wheelhouse packed from the installed wheel BEFORE the damage
#      (tests/helpers/wheelbuild.py), reinstalls the same version (--force-reinstall --no-deps);
#   4. doctor is healthy, and the LSTM and the conv both pass;
#   5. rollback gives back the damaged state byte for byte (sha256 of every file);
# and the machine's own copy is put back from a backup taken at the start (trap, on any exit),
# checked by sha256 (ORIGINAL OK / ORIGINAL MISMATCH).
#
# Usage (repo root, GPU machine, no internet):  OUT=/tmp/out bash scripts/device/replaced_sublib.sh
# SUB=libcudnn_cnn.so.9 picks another sub-library (default libcudnn_adv.so.9). About 2 minutes.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
exec > >(tee "$o/replaced_sublib.txt") 2>&1
py=$(command -v python3)
fix() { PYTHONPATH=$PWD $py -m fixer "$@"; }
SUB=${SUB:-libcudnn_adv.so.9}
APT=/usr/lib/x86_64-linux-gnu
WH=/tmp/ccf-replaced-wheelhouse; BK=/tmp/ccf-replaced-backup; STATE=/var/lib/colab-cudnn-fix
sp=$($py -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")
lib="$sp/nvidia/cudnn/lib"
state_existed=0; [ -e "$STATE" ] && state_existed=1

sums() {  # every file of the pip cuDNN folder and its dist-info, symlinks as links
  { find "$sp/nvidia/cudnn" "$sp"/nvidia_cudnn_cu13-*.dist-info -type f | sort | xargs -r sha256sum
    find "$sp/nvidia/cudnn" "$sp"/nvidia_cudnn_cu13-*.dist-info -type l | sort | while read -r l; do echo "link $l -> $(readlink "$l")"; done
  } 2>/dev/null
}
restore_original() {
  rm -rf "$sp/nvidia/cudnn" "$sp"/nvidia_cudnn_cu13-*.dist-info
  cp -a "$BK/cudnn" "$sp/nvidia/cudnn"; cp -a "$BK"/nvidia_cudnn_cu13-*.dist-info "$sp/"
  [ $state_existed = 0 ] && rm -rf "$STATE"
  sums > "$o/replaced_sums_now.txt"
  if diff -q "$o/replaced_sums_orig.txt" "$o/replaced_sums_now.txt" >/dev/null; then echo "ORIGINAL OK"; else
    diff "$o/replaced_sums_orig.txt" "$o/replaced_sums_now.txt" | head -8; echo "ORIGINAL MISMATCH"; fi
}
final() { echo; echo "## restoring the machine's own copy"; restore_original; rm -rf "$BK" "$WH"; }

torch_checks() {  # one child per check: an LSTM (cuDNN RNN) and a conv, each PASS/FAIL with its error
  for what in lstm conv; do
    $py - "$what" <<'PY' 2>&1 | tail -n 3
import sys, torch
what = sys.argv[1]
try:
    torch.backends.cudnn.enabled = True
    if what == "lstm":
        m = torch.nn.LSTM(32, 64, num_layers=2, batch_first=True).cuda()
        y, _ = m(torch.randn(8, 16, 32, device="cuda"))
        y.sum().backward()
    else:
        m = torch.nn.Conv2d(3, 16, 3).cuda()
        y = m(torch.randn(4, 3, 64, 64, device="cuda"))
        y.sum().backward()
    torch.cuda.synchronize()
    print(f"{what}: PASS (cuDNN {torch.backends.cudnn.version()})")
except Exception as e:
    print(f"{what}: FAIL {type(e).__name__}: {str(e).splitlines()[0][:300]}")
PY
  done
}
finding_lines() {  # the files-modified / pip-leftovers findings of a doctor --json file, with evidence
  $py - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
fs = d.get("findings", [])
print("findings:", ", ".join(f"{f['severity']} {f['id']}" for f in fs) or "none", "| healthy:", d.get("healthy"))
for f in fs:
    if f["id"] in ("files-modified", "cudnn-mixed", "cudnn-incomplete"):
        print(" ", f["id"], "-", f["title"])
        for e in f["evidence"]:
            print("    ", e)
PY
}

echo "## 0 $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
[ -f "$lib/$SUB" ] || { echo "no $lib/$SUB: this needs the GPU machine's pip cuDNN"; exit 1; }
apt_file=$(readlink -f "$APT/$SUB")
[ -f "$apt_file" ] || { echo "no apt $SUB under $APT"; exit 1; }
echo "pip copy: $lib/$SUB $(stat -c %s "$lib/$SUB") bytes; apt file: $apt_file $(stat -c %s "$apt_file") bytes"
rm -rf "$BK"; mkdir -p "$BK"; cp -a "$sp/nvidia/cudnn" "$BK/cudnn"; cp -a "$sp"/nvidia_cudnn_cu13-*.dist-info "$BK/"
sums > "$o/replaced_sums_orig.txt"
trap final EXIT INT TERM

echo "## 1 wheelhouse from the installed nvidia-cudnn-cu13 (before the damage)"
rm -rf "$WH"; mkdir -p "$WH"
PYTHONPATH=$PWD $py - "$WH" <<'PY'
import importlib.metadata as m, sys
from tests.helpers.wheelbuild import build_wheel_from_installed
print("built", build_wheel_from_installed(m.distribution("nvidia-cudnn-cu13")._path, sys.argv[1]))
PY
echo "healthy machine:"; torch_checks

echo "## 2 damage: $lib/$SUB <- $apt_file (a real file, no symlink)"
rm -f "$lib/$SUB"; cp "$apt_file" "$lib/$SUB"
sums > "$o/replaced_sums_broken.txt"
echo "damaged machine:"; torch_checks

echo "## 3 doctor (size against RECORD) and doctor --deep (sha256 too)"
fix doctor --json > "$o/replaced_doctor.json"; echo "doctor exit $?"; finding_lines "$o/replaced_doctor.json"
t0=$(date +%s%N); fix doctor --deep --json > "$o/replaced_doctor_deep.json"; echo "doctor --deep exit $? ($(( ($(date +%s%N) - t0) / 1000000 )) ms)"
finding_lines "$o/replaced_doctor_deep.json"

echo "## 4 plan and apply (offline: --find-links $WH --no-index)"
fix plan --find-links "$WH" --no-index 2>&1 | tail -n 12
t0=$(date +%s)
UV_NO_CACHE=1 fix apply --find-links "$WH" --no-index --yes > "$o/replaced_apply.txt" 2>&1; a=$?
echo "apply exit $a ($(( $(date +%s) - t0 )) s)"; tail -n 15 "$o/replaced_apply.txt"

echo "## 5 after apply"
fix doctor --deep --json > "$o/replaced_doctor_after.json"; echo "doctor --deep exit $? (0 = healthy)"
finding_lines "$o/replaced_doctor_after.json"
cmp -s "$lib/$SUB" "$BK/cudnn/lib/$SUB" && echo "$SUB is the wheel's file again (cmp: identical)" || echo "$SUB still differs from the wheel's file"
echo "repaired machine:"; torch_checks

echo "## 6 rollback: back to the damaged state, byte for byte"
fix rollback > "$o/replaced_rollback.txt" 2>&1; echo "rollback exit $?"; tail -n 5 "$o/replaced_rollback.txt"
sums > "$o/replaced_sums_rolled.txt"
if diff -q "$o/replaced_sums_broken.txt" "$o/replaced_sums_rolled.txt" >/dev/null; then echo "rollback vs the damaged state: BYTE-IDENTICAL"; else
  echo "rollback vs the damaged state: DIFFERS"; diff "$o/replaced_sums_broken.txt" "$o/replaced_sums_rolled.txt" | head -8; fi
