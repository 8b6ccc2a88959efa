#!/bin/bash
# On the GPU machine: rollback undoes only what apply did (three-way).
#
# In a throw-away venv (--system-site-packages: torch, JAX from the machine) with its own copy of
# the machine's nvidia-cudnn-cu13 (installed from a wheelhouse built from the installed files with
# tests/helpers/wheelbuild.py, no internet):
#   1. damage cuDNN (truncate libcudnn_cnn.so.9 to a third), record sha256 of every cuDNN file;
#   2. apply a real repair (the CLI's plan when it makes one, else an explicit force-reinstall
#      plan through fixer.applier.apply_plan); the journal goes to the machine's state directory
#      (/var/lib/colab-cudnn-fix), and loader fixes the CLI may write are undone by the rollback;
#   3. after the apply: `pip install` another package (a wheel built here) and write a file into
#      the venv root and one into site-packages;
#   4. rollback; then print: the cuDNN tree's sha256 equals the state before the apply
#      (BYTE-IDENTICAL), the later package is still installed and importable, the files are intact.
# Usage (repo root, GPU machine):  OUT=/tmp/out bash scripts/device/rollback_later_changes.sh
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
exec > >(tee "$o/rollback_later_changes.txt") 2>&1
py=$(command -v python3)
W=/tmp/ccf-later; rm -rf "$W"; mkdir -p "$W/wh" "$W/later"
trap 'rm -rf "$W"' EXIT
echo "## 0 $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
t0=$(date +%s)
echo "## 1 wheelhouse from the installed nvidia-cudnn-cu13, and a later package"
PYTHONPATH=$PWD $py - "$W/wh" "$W/later" <<'PY'
import importlib.metadata as m, sys
from tests.helpers.wheelbuild import build_wheel_from_installed
from tests.helpers.pyindex import build_wheel
d = m.distribution("nvidia-cudnn-cu13")
print("cuDNN", d.version, "->", build_wheel_from_installed(d._path, sys.argv[1]))
print("later ->", build_wheel(sys.argv[2], "later-pkg", "1.0", {"later_pkg/__init__.py": "X = 1\n"}))
PY
ver=$($py -c "import importlib.metadata as m; print(m.version('nvidia-cudnn-cu13'))")
$py -m venv --system-site-packages "$W/venv" || exit 1
vpy="$W/venv/bin/python"
$vpy -m pip install -q --no-index --find-links "$W/wh" --no-deps --force-reinstall "nvidia-cudnn-cu13==$ver" || exit 1
sp=$($vpy -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
lib="$sp/nvidia/cudnn/lib"
sums() { find "$sp/nvidia/cudnn" "$sp"/nvidia_cudnn_cu13-*.dist-info \( -type f -o -type l \) 2>/dev/null | sort |
         while read -r f; do if [ -L "$f" ]; then echo "link $f -> $(readlink "$f")"; else sha256sum "$f"; fi; done
         find "$sp/nvidia/cudnn" -type d | sort; }
echo "venv $W/venv, cuDNN $ver in $sp ($(( $(date +%s) - t0 )) s)"

echo "## 2 damage: truncate libcudnn_cnn.so.9"
f="$lib/libcudnn_cnn.so.9"; head -c $(( $(stat -c %s "$f") / 3 )) "$f" > "$f.t" && mv "$f.t" "$f"
sums > "$o/later_before_apply.txt"; echo "cuDNN files recorded: $(wc -l < "$o/later_before_apply.txt")"

echo "## 3 apply"
fix() { PYTHONPATH=$PWD $py -m fixer "$@"; }
UV_NO_CACHE=1 fix apply --python "$vpy" --find-links "$W/wh" --no-index --yes > "$o/later_apply.txt" 2>&1; a=$?
echo "CLI apply exit $a"; tail -n 12 "$o/later_apply.txt"
if ! cmp -s <(sha256sum "$lib/libcudnn_cnn.so.9" | cut -d' ' -f1) <(grep "libcudnn_cnn.so.9$" "$o/later_before_apply.txt" | cut -d' ' -f1) ; then
  echo "the CLI apply changed libcudnn_cnn.so.9"; how=cli
else
  echo "the CLI made no repair of the venv's cuDNN: explicit force-reinstall plan through fixer.applier.apply_plan"
  PYTHONPATH=$PWD $py - "$vpy" "$W/wh" "$ver" <<'PY' || exit 1
import sys
from fixer.applier import apply_plan
from fixer.model import PipOptions, Plan, PlanOptions, Step
py, wh, ver = sys.argv[1:]
req = f"nvidia-cudnn-cu13=={ver}"
step = Step(kind="pip-install", summary=f"reinstall {req}", packages=(req,),
            argv=(py, "-m", "pip", "install", "--no-deps", "--no-index", "--find-links", wh, "--force-reinstall", req),
            pip=PipOptions(no_index=True, find_links=(wh,), no_deps=True, reinstall=True))
r = apply_plan(Plan(steps=(step,), python=py), python=py, options=PlanOptions())
print("apply_plan:", [(c.name, c.before, c.after) for c in r.distributions], "repaired:", len(r.repaired), "files")
PY
  how=api
fi
sums > "$o/later_after_apply.txt"
echo "cuDNN after apply differs from before: $(diff -q "$o/later_before_apply.txt" "$o/later_after_apply.txt" >/dev/null && echo NO || echo yes) ($how)"
$vpy -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version(), 'conv ok', torch.nn.functional.conv2d(torch.ones(1,1,8,8,device='cuda'), torch.ones(1,1,3,3,device='cuda')).sum().item())" 2>&1 | tail -1

echo "## 4 later changes: pip install later-pkg, files in the venv"
$vpy -m pip install -q --no-index --find-links "$W/later" later-pkg==1.0 && echo "later-pkg installed"
echo "mine" > "$W/venv/notes.txt"; echo "Y = 2" > "$sp/user_module.py"
later_sums() { sha256sum "$W/venv/notes.txt" "$sp/user_module.py" "$sp/later_pkg/__init__.py"; ls -d "$sp"/later_pkg-1.0.dist-info; }
later_sums > "$o/later_files_before.txt"

echo "## 5 rollback"
fix rollback --python "$vpy" > "$o/later_rollback.txt" 2>&1; r=$?
echo "rollback exit $r"; tail -n 12 "$o/later_rollback.txt"
sums > "$o/later_after_rollback.txt"
if diff -q "$o/later_before_apply.txt" "$o/later_after_rollback.txt" >/dev/null; then c=BYTE-IDENTICAL; else
  c=DIFFERS; diff "$o/later_before_apply.txt" "$o/later_after_rollback.txt" | head -10; fi
later_sums > "$o/later_files_after.txt" 2>&1
if diff -q "$o/later_files_before.txt" "$o/later_files_after.txt" >/dev/null; then l=UNTOUCHED; else
  l=CHANGED; diff "$o/later_files_before.txt" "$o/later_files_after.txt" | head; fi
imp=$($vpy -c "import later_pkg; print('importable', later_pkg.X)" 2>&1 | tail -1)
frz=$($vpy -m pip freeze 2>/dev/null | grep -i later)
echo "cuDNN vs before the apply: $c ($(wc -l < "$o/later_after_rollback.txt") entries; sha256 of libcudnn_cnn.so.9: $(sha256sum "$lib/libcudnn_cnn.so.9" | cut -c1-16))"
echo "later package and files: $l ($frz, $imp)"
echo "== rollback_later_changes: apply $how | rollback exit $r | cuDNN $c | later $l | $(( $(date +%s) - t0 )) s"
