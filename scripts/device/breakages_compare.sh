#!/bin/bash
# doctor findings and plan steps per breakage, in a stable form, to diff two versions of the code
# on the GPU machine (issue 9: "the breakage scripts give the same findings and plans before and
# after the change, except where the old answer was wrong (the truncated library)").
#
# The breakages are those of scripts/device/doctor.sh and plan.sh (same techniques), plus a
# TRUNCATED sub-library (libcudnn_cnn.so.9 cut to 4 KiB: present, but not a loadable ELF).
# Every change is undone on exit (trap), even on failure or interrupt.
#
# Run from the repository root:
#   bash scripts/device/breakages_compare.sh                    # this tree only
#   BEFORE=before bash scripts/device/breakages_compare.sh      # and another tree, then the diff
# where `before` is an older tree next to this one, made on the coordinator's side with e.g.
#   mkdir -p before && git archive b802fd7 fixer recipes | tar -x -C before
# (untracked, not ignored: it travels with the working tree).
#
# Output: $OUT
#   after.txt    this tree: per case, doctor's exit code and sorted "severity id" lines, then
#                plan's exit code, nothing_to_do and each step as "kind: argv"
#   before.txt   the same for $BEFORE (when given)
#   diff.txt     diff -u before.txt after.txt                     <- read this first
# What it must show: no difference except in the case "truncated libcudnn_cnn.so.9": before, doctor
# says cudnn-incomplete (exit 1) while plan says nothing_to_do true; after, plan reinstalls the
# nvidia-cudnn-cu13 wheel (a pip-install step with --force-reinstall/--reinstall), then verify.
# Display names also differ where a plan's words say "torch" (now "PyTorch"); steps do not.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
py=${PY:-python3}
d=$($py -c "import nvidia.cudnn;print(list(nvidia.cudnn.__path__)[0])")
lib="$d/lib"
hid=$(mktemp -d /tmp/compare-hidden.XXXXXX)
shadow=$(mktemp -d /tmp/compare-shadow.XXXXXX)

restore() {
  if [ -d "$lib.hidden" ] && [ ! -e "$lib" ]; then mv "$lib.hidden" "$lib"; fi
  for f in "$hid"/*; do [ -e "$f" ] && mv -f "$f" "$lib/"; done
  rm -rf "$shadow" "$hid"
}
trap restore EXIT INT TERM

summarise() {   # doctor.json plan.json plan-exit -> stable lines
  $py - "$1" "$2" "$3" "$shadow" "$hid" <<'PY'
import json, sys
doc_path, plan_path, plan_code, shadow, hid = sys.argv[1:6]

def stable(s):
    return str(s).replace(shadow, "<shadow>").replace(hid, "<hidden>")

try:
    doc = json.load(open(doc_path))
    print(f"doctor exit {doc.get('exit_code')}")
    for f in sorted(f"{f['severity']} {f['id']}" for f in doc.get("findings", [])):
        print(f"  finding {f}")
except ValueError as exc:
    print(f"doctor: no JSON ({exc})")
try:
    body = json.load(open(plan_path))
    plan = body.get("plan") or {}
    print(f"plan exit {plan_code} nothing_to_do {plan.get('nothing_to_do')}")
    if body.get("error"):
        print(f"  error {body['error'].get('type')}: {stable(body['error'].get('message'))}")
    for s in plan.get("steps", []):
        print(f"  step {s['kind']}: {stable(' '.join(s.get('argv') or ()) or s.get('summary'))}")
except ValueError as exc:
    print(f"plan: no JSON ({exc})")
PY
}

run_cases() {   # source root -> stable text on stdout
  root=$1
  one() {   # label, then env assignments
    label=$1; shift
    echo "### $label"
    # `python -m` puts the working directory first on sys.path: run from $root, so that its fixer is the one imported
    (cd "$root" && env PYTHONPATH="$root" "$@" $py -m fixer doctor --json > "$hid.doctor.json" 2>/dev/null)
    (cd "$root" && env PYTHONPATH="$root" "$@" $py -m fixer plan --json > "$hid.plan.json" 2>/dev/null)
    code=$?
    summarise "$hid.doctor.json" "$hid.plan.json" "$code"
    rm -f "$hid.doctor.json" "$hid.plan.json"
    echo
  }
  one "healthy"

  mv "$lib" "$lib.hidden"
  one "pip cuDNN hidden"
  mv "$lib.hidden" "$lib"

  mv "$lib/libcudnn_engines_precompiled.so.9" "$lib/libcudnn_cnn.so.9" "$hid/"
  one "engines_precompiled + cnn moved out"
  mv "$hid"/libcudnn_* "$lib/"

  cp -p "$lib/libcudnn_cnn.so.9" "$hid/"
  head -c 4096 "$hid/libcudnn_cnn.so.9" > "$lib/libcudnn_cnn.so.9"
  one "truncated libcudnn_cnn.so.9"
  mv -f "$hid/libcudnn_cnn.so.9" "$lib/"

  one "no GPU visible" CUDA_VISIBLE_DEVICES=

  head -c 4096 /dev/urandom > "$shadow/libcudnn.so.9"
  one "garbage libcudnn.so.9 first on LD_LIBRARY_PATH" LD_LIBRARY_PATH="$shadow:${LD_LIBRARY_PATH:-}"
  rm -f "$shadow"/*

  apt_ops=$(ls /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9* 2>/dev/null | head -1)
  if [ -n "$apt_ops" ]; then
    one "apt libcudnn_ops forced in by LD_PRELOAD" LD_PRELOAD="$apt_ops"
  fi

  for e in $(cd "$root" && PYTHONPATH="$root" $py -c "
try:
    from fixer.planner.steps import bundled_environments as b   # the stages' modules since issue 9's rename
except ImportError:
    from fixer.plan import bundled_environments as b      # an older tree (BEFORE)
print(' '.join(b()))" 2>/dev/null); do
    echo "### bundled environment $e"
    (cd "$root" && PYTHONPATH="$root" $py -m fixer plan --environment "$e" --json > "$hid.plan.json" 2>/dev/null)
    code=$?
    echo '{}' > "$hid.doctor.json"
    summarise "$hid.doctor.json" "$hid.plan.json" "$code" | grep -v '^doctor exit'
    rm -f "$hid.doctor.json" "$hid.plan.json"
    echo
  done
}

run_cases "$PWD" > "$o/after.txt" 2>&1
if [ -n "${BEFORE:-}" ]; then
  run_cases "$(cd "$BEFORE" && pwd)" > "$o/before.txt" 2>&1
  diff -u "$o/before.txt" "$o/after.txt" > "$o/diff.txt"
  echo "diff exit $? (0: identical)" >> "$o/diff.txt"
fi
restore; trap - EXIT INT TERM
echo "restored: $(ls "$lib" | wc -l) files in $lib" >> "$o/after.txt"
if [ -n "${BEFORE:-}" ]; then tail -c 6000 "$o/diff.txt"; else tail -c 6000 "$o/after.txt"; fi
