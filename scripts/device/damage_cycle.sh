#!/bin/bash
# On the GPU machine: each breakage of data/gpu_machine/device_break.sh and
# scripts/device/verify.sh, plus a truncated sub-library and a sub-library taken from another
# release (the apt 9.14 copy's), goes doctor -> apply (offline: a wheelhouse built from the
# installed files, --find-links --no-index) -> verify (in the environment a new shell gets) ->
# rollback, and the cuDNN directories are compared by sha256 with their state before the apply
# (BYTE-IDENTICAL / DIFFERS). The machine is restored to its original state between cases and
# checked (ORIGINAL OK / ORIGINAL MISMATCH).
#
# Usage (repo root, GPU machine, no internet):
#     OUT=/tmp/out bash scripts/device/damage_cycle.sh              # every case
#     CASES="sub-missing truncated" OUT=/tmp/out bash scripts/device/damage_cycle.sh
# Cases: sub-missing pip-missing truncated other-release ld-garbage ld-lone preload-ops ld-ops no-gpu
# (the first four reinstall the cuDNN wheel: about a minute each; the others are loader fixes).
# Output: $OUT/damage_cycle.txt, one "== CASE ..." summary line per case at the end.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
log="$o/damage_cycle.txt"
exec > >(tee "$log") 2>&1
py=$(command -v python3)
fix() { PYTHONPATH=$PWD $py -m fixer "$@"; }
CASES=${CASES:-"sub-missing pip-missing truncated other-release ld-garbage ld-lone preload-ops ld-ops no-gpu"}
WH=/tmp/ccf-cycle-wheelhouse; BK=/tmp/ccf-cycle-backup; STATE=/var/lib/colab-cudnn-fix
APT=/usr/lib/x86_64-linux-gnu
sp=$($py -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")
lib="$sp/nvidia/cudnn/lib"
state_existed=0; [ -e "$STATE" ] && state_existed=1
summary=()

sums() {  # sha256 of every file in the pip cuDNN folder and its dist-info, and the apt cuDNN files; symlinks as links
  { find "$sp/nvidia/cudnn" "$sp"/nvidia_cudnn_cu13-*.dist-info -type f 2>/dev/null | sort | xargs -r sha256sum
    find "$sp/nvidia/cudnn" "$sp"/nvidia_cudnn_cu13-*.dist-info -type l 2>/dev/null | sort | while read -r l; do echo "link $l -> $(readlink "$l")"; done
    ls "$APT"/libcudnn* 2>/dev/null | sort | xargs -r sha256sum
    ls -la /etc/ld.so.conf.d /etc/profile.d ~/.ipython/profile_default/startup 2>/dev/null | grep -i colab-cudnn-fix
  } 2>/dev/null
}
tool_files_off() {
  local ld=0
  for f in /etc/profile.d/*colab-cudnn-fix* /etc/ld.so.conf.d/*colab-cudnn-fix* ~/.ipython/profile_default/startup/*colab-cudnn-fix*; do
    [ -e "$f" ] || continue; rm -f "$f"; case $f in /etc/ld.so.conf.d/*) ld=1;; esac
  done
  [ $ld = 1 ] && ldconfig
  [ $state_existed = 0 ] && rm -rf "$STATE"
}
restore_original() {  # the backup taken at the start, then compare
  rm -rf "$sp/nvidia/cudnn" "$sp"/nvidia_cudnn_cu13-*.dist-info
  cp -a "$BK/cudnn" "$sp/nvidia/cudnn"
  cp -a "$BK"/nvidia_cudnn_cu13-*.dist-info "$sp/"
  tool_files_off
  sums > "$o/sums_now.txt"
  if diff -q "$o/sums_orig.txt" "$o/sums_now.txt" >/dev/null; then echo "ORIGINAL OK"; else
    diff "$o/sums_orig.txt" "$o/sums_now.txt" | head -8; echo "ORIGINAL MISMATCH"; fi
}
final() { echo "## TRAP: restoring the original state"; r=$(restore_original); echo "$r"
  echo; echo "## summary"; printf '%s\n' "${summary[@]}"; echo "final restore: $r"; rm -rf "$BK" /tmp/ccf-cycle-shadow; }

echo "## 0 original state $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[ -d "$lib" ] || { echo "no pip cuDNN at $lib: this script needs the healthy GPU machine"; exit 1; }
rm -rf "$BK"; mkdir -p "$BK"; cp -a "$sp/nvidia/cudnn" "$BK/cudnn"; cp -a "$sp"/nvidia_cudnn_cu13-*.dist-info "$BK/"
sums > "$o/sums_orig.txt"
trap final EXIT INT TERM
fix doctor >/dev/null; echo "doctor on the healthy machine: exit $? (0 expected)"
echo "## 1 wheelhouse from the installed nvidia-cudnn-cu13 (before any damage)"
rm -rf "$WH"; mkdir -p "$WH"
PYTHONPATH=$PWD $py - "$WH" <<'PY'
import importlib.metadata as m, sys
from tests.helpers.wheelbuild import build_wheel_from_installed
print("built", build_wheel_from_installed(m.distribution("nvidia-cudnn-cu13")._path, sys.argv[1]))
PY

# break NAME: does the damage, and sets ENVS (the process environment of the damaged shell)
break_it() {
  ENVS=()
  local sh=/tmp/ccf-cycle-shadow; rm -rf "$sh"; mkdir -p "$sh"
  case $1 in
    sub-missing)   rm -f "$lib/libcudnn_engines_precompiled.so.9" "$lib/libcudnn_cnn.so.9" ;;
    pip-missing)   rm -rf "$lib" ;;
    truncated)     f="$lib/libcudnn_cnn.so.9"; head -c $(( $(stat -c %s "$f") / 3 )) "$f" > "$f.t" && mv "$f.t" "$f" ;;
    other-release) cp "$(readlink -f "$APT/libcudnn_cnn.so.9")" "$lib/libcudnn_cnn.so.9" ;;
    ld-garbage)    head -c 4096 /dev/urandom > "$sh/libcudnn.so.9"; ENVS=(LD_LIBRARY_PATH="$sh") ;;
    ld-lone)       cp "$lib/libcudnn.so.9" "$sh/"; ENVS=(LD_LIBRARY_PATH="$sh") ;;
    preload-ops)   ENVS=(LD_PRELOAD="$(readlink -f "$APT/libcudnn_ops.so.9")") ;;
    ld-ops)        ln -s "$(readlink -f "$APT/libcudnn_ops.so.9")" "$sh/libcudnn_ops.so.9"; ENVS=(LD_LIBRARY_PATH="$sh") ;;
    no-gpu)        ENVS=(CUDA_VISIBLE_DEVICES=) ;;
  esac
}

for case in $CASES; do
  echo; echo "################ $case"
  break_it "$case"
  sums > "$o/sums_broken_$case.txt"
  env "${ENVS[@]}" PYTHONPATH=$PWD $py -m fixer doctor > "$o/doctor_$case.txt" 2>&1; d=$?
  ids=$(grep -oE '(error|warning) [a-z-]+' "$o/doctor_$case.txt" | awk '{print $2}' | sort -u | tr '\n' ',' | sed 's/,$//')
  echo "doctor exit $d ($ids)"; tail -n 12 "$o/doctor_$case.txt"
  t0=$(date +%s)
  env "${ENVS[@]}" UV_NO_CACHE=1 PYTHONPATH=$PWD $py -m fixer apply --find-links "$WH" --no-index --yes \
      > "$o/apply_$case.txt" 2>&1; a=$?
  echo "apply exit $a ($(( $(date +%s) - t0 )) s)"; tail -n 15 "$o/apply_$case.txt"
  # verify in the environment a new shell gets: the damaged shell's variables, then the tool's env file
  env "${ENVS[@]}" PYTHONPATH=$PWD bash -c "[ -f /etc/profile.d/colab-cudnn-fix.sh ] && . /etc/profile.d/colab-cudnn-fix.sh; \
      exec $py -m fixer verify --framework torch --framework jax" > "$o/verify_$case.txt" 2>&1; v=$?
  echo "verify exit $v"; tail -n 8 "$o/verify_$case.txt"
  env "${ENVS[@]}" PYTHONPATH=$PWD $py -m fixer rollback > "$o/rollback_$case.txt" 2>&1; r=$?
  echo "rollback exit $r"; tail -n 6 "$o/rollback_$case.txt"
  sums > "$o/sums_rolled_$case.txt"
  if diff -q "$o/sums_broken_$case.txt" "$o/sums_rolled_$case.txt" >/dev/null; then same="BYTE-IDENTICAL"; else
    same="DIFFERS"; diff "$o/sums_broken_$case.txt" "$o/sums_rolled_$case.txt" | head -8; fi
  echo "rollback vs the state before apply: $same"
  orig=$(restore_original); echo "$orig"
  summary+=("== $case: doctor $d ($ids) | apply $a | verify $v | rollback $r | $same | $orig")
done
