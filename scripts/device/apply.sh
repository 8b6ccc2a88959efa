#!/bin/bash
# apply / rollback on the real GPU machine (no internet). Run from the repository root:
#     OUT=/tmp/out bash scripts/device/apply.sh
# 1. builds a wheelhouse from the INSTALLED nvidia-cudnn-cu13 (tests.helpers.wheelbuild: RECORD -> wheel)
# 2. breaks the stack: pip uninstall nvidia-cudnn-cu13 -> torch falls back to the apt cuDNN 9.14
# 3. colab-cudnn-fix apply --find-links WHEELHOUSE --no-index  -> doctor healthy, torch conv passes
# 4. apply again -> nothing to do
# 5. rollback of that apply -> back to the broken state exactly; rollback again -> nothing to do
# 6. an injected failure (a corrupt wheel in --find-links) -> step fails, rolled back, state unchanged
# ALWAYS (trap): put nvidia-cudnn-cu13 back from the wheelhouse, remove every file the tool wrote,
# rerun ldconfig if needed, and compare with the original state (RESTORED OK / RESTORE MISMATCH).
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
log="$o/apply.txt"
exec > >(tee "$log") 2>&1
py=$(command -v python3)   # absolute: `uv --python python3` would pick a .venv in the cwd
fix() { PYTHONPATH=$PWD $py -m fixer "$@"; }
WH=/tmp/ccf-wheelhouse; BAD=/tmp/ccf-bad-wheelhouse; STATE=/var/lib/colab-cudnn-fix
state_existed=0; [ -e "$STATE" ] && state_existed=1
sp=$($py -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")
conv='import torch,torch.nn.functional as F; x=torch.randn(1,3,32,32,device="cuda"); w=torch.randn(8,3,3,3,device="cuda"); y=F.conv2d(x,w); r=F.conv2d(x.cpu(),w.cpu()); print("conv max err", (y.cpu()-r).abs().max().item()); print("cudnn", torch.backends.cudnn.version())'
snap() {  # $1: name. freeze + cuDNN files + files the tool may write
  $py -m pip freeze --all 2>/dev/null | sort > "$o/freeze_$1.txt"
  { find "$sp/nvidia/cudnn" -type f 2>/dev/null | sort | xargs -r sha256sum
    ls -la /etc/ld.so.conf.d /etc/profile.d ~/.ipython/profile_default/startup 2>/dev/null | grep -i colab-cudnn-fix
  } > "$o/files_$1.txt"
}
restore() {
  echo "## TRAP: restoring the original state"
  have=$($py -c "import importlib.metadata as m; print(m.version('nvidia-cudnn-cu13'))" 2>/dev/null)
  if [ "$have" != "$orig_ver" ] && [ -n "$orig_ver" ]; then
    echo "reinstalling nvidia-cudnn-cu13==$orig_ver from $WH (found: ${have:-none})"
    uv pip install --python "$py" --no-deps --no-index --find-links "$WH" "nvidia-cudnn-cu13==$orig_ver" \
      || $py -m pip install --no-deps --no-index --find-links "$WH" "nvidia-cudnn-cu13==$orig_ver"
  fi
  ld=0
  for f in /etc/profile.d/*colab-cudnn-fix* /etc/ld.so.conf.d/*colab-cudnn-fix* ~/.ipython/profile_default/startup/*colab-cudnn-fix*; do
    [ -e "$f" ] || continue; echo "removing $f"; rm -f "$f"; case $f in /etc/ld.so.conf.d/*) ld=1;; esac
  done
  [ $ld = 1 ] && ldconfig
  if [ -d "$STATE" ]; then
    mkdir -p "$o/state"; (cd "$STATE" && find . \( -name journal.json -o -name apply.log \) -exec cp --parents {} "$o/state/" \;)
    [ $state_existed = 0 ] && rm -rf "$STATE"
  fi
  snap final
  if diff "$o/freeze_orig.txt" "$o/freeze_final.txt" && diff "$o/files_orig.txt" "$o/files_final.txt"; then
    echo "RESTORED OK: pip freeze --all and the cuDNN files are as before the script"
  else
    echo "RESTORE MISMATCH (see the diff above)"
  fi
  rm -rf "$BAD"
}

echo "## 0 original state"; date; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
orig_ver=$($py -c "import importlib.metadata as m; print(m.version('nvidia-cudnn-cu13'))")
[ -n "$orig_ver" ] || { echo "nvidia-cudnn-cu13 is not installed in $py: this script needs the healthy machine"; exit 1; }
echo "nvidia-cudnn-cu13 $orig_ver in $sp"
snap orig
trap restore EXIT INT TERM
fix doctor; echo "doctor exit $?"

echo "## 1 wheelhouse from the installed nvidia-cudnn-cu13 (no internet here)"
rm -rf "$WH"; mkdir -p "$WH"
t0=$(date +%s%N)
PYTHONPATH=$PWD $py - "$WH" <<'PY'
import importlib.metadata as m, sys
from tests.helpers.wheelbuild import build_wheel_from_installed
d = m.distribution("nvidia-cudnn-cu13")
w = build_wheel_from_installed(d._path, sys.argv[1])
print("built", w, w.stat().st_size, "bytes")
PY
echo "wheel build took $(( ($(date +%s%N) - t0) / 1000000 )) ms"
$py -m zipfile -l "$WH"/*.whl | head -20
[ -s "$(ls "$WH"/*.whl 2>/dev/null | head -1)" ] || { echo "NO WHEEL BUILT: stopping"; exit 1; }

echo "## 2 break: uninstall nvidia-cudnn-cu13 (torch falls back to the apt cuDNN 9.14)"
$py -m pip uninstall -y nvidia-cudnn-cu13
snap broken
fix doctor; echo "doctor exit $? (1 expected)"
$py -c "$conv" 2>&1 | tail -3

echo "## 3 repair: apply --find-links $WH --no-index"
t0=$(date +%s%N)
fix apply --find-links "$WH" --no-index --yes; rc=$?
echo "apply exit $rc (0 expected), $(( ($(date +%s%N) - t0) / 1000000 )) ms"
fix doctor; echo "doctor exit $? (0 expected)"
$py -c "$conv" 2>&1 | tail -3
snap repaired
diff "$o/freeze_orig.txt" "$o/freeze_repaired.txt" && echo "freeze after repair == original"

echo "## 4 apply again: nothing to do"
fix apply --find-links "$WH" --no-index --yes; echo "second apply exit $? (0 expected, 'Nothing to do')"

echo "## 5 rollback of the repair -> exactly the broken state; twice is harmless"
fix rollback; echo "rollback exit $?"
snap after_rollback
diff "$o/freeze_broken.txt" "$o/freeze_after_rollback.txt" && diff "$o/files_broken.txt" "$o/files_after_rollback.txt" \
  && echo "ROLLBACK EXACT: state == broken state before the apply"
fix rollback; echo "second rollback exit $? (0, nothing to roll back)"

echo "## 6 injected failure: a corrupt wheel in --find-links -> step fails, rolled back"
rm -rf "$BAD"; mkdir -p "$BAD"; w=$(ls "$WH"/*.whl | head -1)
head -c $(( $(stat -c %s "$w") / 2 )) "$w" > "$BAD/$(basename "$w")"   # half a wheel
snap before_fail
# no installer cache: uv would otherwise take the good wheel it cached in step 3
UV_NO_CACHE=1 PIP_NO_CACHE_DIR=1 fix apply --find-links "$BAD" --no-index --yes; echo "apply exit $? (1 expected: failed and rolled back)"
snap after_fail
diff "$o/freeze_before_fail.txt" "$o/freeze_after_fail.txt" && diff "$o/files_before_fail.txt" "$o/files_after_fail.txt" \
  && echo "FAILURE ROLLED BACK EXACTLY"
fix rollback; echo "rollback after a rolled-back failure: exit $? (0, nothing to do)"

echo "## 7 repair again for the record, then the trap restores and compares"
fix apply --find-links "$WH" --no-index --yes --json > "$o/apply_final.json"; echo "apply exit $?"
$py -c "$conv" 2>&1 | tail -2
