#!/bin/bash
# fixer.apply() -- the public API -- called inside a LIVE Python process (issue 11, kernel-aware
# repair): when the process has not mapped a wrong copy yet, the plan's loader fix reaches the
# process itself ("fixed in this kernel", no restart); when it has, the verdict says "fixed for new
# processes" and what to do, and a child of that process shows new processes do get the fix.
#
# Cases (each one fresh python3 started with the breakage; repair and framework use in that SAME process):
#   A  LD_LIBRARY_PATH = a folder of symlinks to the apt cuDNN 9.14 family, first
#   B  LD_LIBRARY_PATH = /usr/lib/x86_64-linux-gnu (the apt directory itself), first
#   C  LD_PRELOAD = the apt libcudnn_ops.so.9 (mapped at process start: cannot be undone in-process)
#   D  LD_LIBRARY_PATH as in A, and torch imported + a conv tried BEFORE fixer.apply()
# For each case: "before" = a fresh process with the breakage and no fix (what is broken); then in
# one process: fixer.apply(root=SANDBOX, this_process=True) -> VERDICT (outcome, nothing_to_do,
# exit_code, to_dict()["restart"]) -> import torch, conv vs CPU, torch.backends.cudnn.version()
# -> JAX conv -> libcudnn files mapped (/proc/self/maps). C and D also run the probe in a CHILD of
# that process (it inherits the os.environ apply fixed). A dry run first: a plan with steps other
# than loader fixes is NOT applied (SKIP), so the venv and apt packages are never touched.
#
# What it changes, and how it is restored: every file apply writes goes into a --root sandbox
# under /tmp; fixer.rollback(root=SANDBOX) runs after each case and the trap deletes the sandbox
# and the symlink folder. os.environ and the loaded libraries die with each python process.
#
# Must show: A and B: VERDICT "fixed in this kernel", nothing_to_do false, exit_code 0, then PROBE
# torch_cudnn 91900, a conv with a small torch_conv_rel_err, a jax_conv_sum, cudnn_files_from_apt [].
# C and D: VERDICT "fixed for new processes", needed true, a todo (start the process again), the
# in-process PROBE honestly still mapping apt files, and the CHILD probe 91900 with no apt files.
# Usage (repo root, GPU machine, ~1-2 min): OUT=/tmp/out bash scripts/device/kernel_apply.sh
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/kernel_apply.txt
exec > >(tee "$log") 2>&1
py=${PYTHON:-$(command -v python3)}
apt_dir=${APT_DIR:-/usr/lib/x86_64-linux-gnu}     # both overridable only for a dry run off the GPU machine
[ -e "$apt_dir/libcudnn.so.9" ] || { echo "no apt cuDNN 9 in $apt_dir: nothing to break with"; exit 1; }
work=$(mktemp -d /tmp/kapply.XXXXXX)
trap 'rm -rf "$work"' EXIT
shadow=$work/shadow; mkdir -p "$shadow"
for f in "$apt_dir"/libcudnn*.so.9*; do ln -s "$f" "$shadow/"; done
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1
# the tool's per-interpreter lock and its caches go into the work folder too
export XDG_CACHE_HOME=$work/cache KAPPLY_APT=$apt_dir
echo "python: $py; repo: $(git rev-parse --short HEAD 2>/dev/null); apt cuDNN: $(ls "$apt_dir"/libcudnn.so.9.* 2>/dev/null)"

cat > "$work/probe.py" <<'EOF'
import json, os, sys
def probe(tag):
    out = {"tag": tag, "pid": os.getpid()}
    try:
        import torch
        out["torch_cudnn"] = torch.backends.cudnn.version()
        x = torch.randn(8, 16, 32, 32, device="cuda"); w = torch.randn(32, 16, 3, 3, device="cuda")
        y = torch.nn.functional.conv2d(x, w, padding=1)
        ref = torch.nn.functional.conv2d(x.cpu().double(), w.cpu().double(), padding=1)
        out["torch_conv_rel_err"] = float((y.cpu().double() - ref).abs().max() / ref.abs().max())
    except Exception as e:
        out["torch_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    try:
        import jax, jax.numpy as jnp
        a = jnp.ones((1, 16, 32, 32)); k = jnp.ones((32, 16, 3, 3))
        out["jax_conv_sum"] = float(jax.lax.conv_general_dilated(a, k, (1, 1), "SAME").sum())
    except Exception as e:
        out["jax_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    maps = sorted({l.split(None, 5)[5].strip() for l in open("/proc/self/maps")
                   if len(l.split(None, 5)) == 6 and "libcudnn" in l})
    out["cudnn_files_mapped"] = maps
    out["cudnn_dirs_mapped"] = sorted({os.path.dirname(os.path.realpath(p.replace(" (deleted)", ""))) for p in maps})
    apt = os.environ.get("KAPPLY_APT", "/usr/lib/x86_64-linux-gnu")
    out["cudnn_files_from_apt"] = [os.path.basename(p) for p in maps if os.path.realpath(p).startswith(apt + "/")]
    print("PROBE", json.dumps(out), flush=True)
EOF

cat > "$work/live.py" <<'EOF'
import json, os, subprocess, sys, time
sys.path.insert(0, os.environ["KAPPLY_WORK"])
import probe
sandbox, tag = os.environ["KAPPLY_ROOT"], os.environ["KAPPLY_TAG"]
if os.environ.get("KAPPLY_IMPORT_FIRST"):
    probe.probe(tag + ": torch + jax BEFORE apply")     # maps the copies the breakage gives
import fixer
preview = fixer.apply(dry_run=True, root=sandbox)
kinds = sorted({s.kind for s in preview.plan.steps})
print("PLAN", json.dumps({"outcome": preview.outcome, "steps": [s.summary for s in preview.plan.steps]}), flush=True)
if set(kinds) - {"env-fix", "verify", "restart"}:
    print("SKIP: the plan has steps other than loader fixes", kinds, "- not applied on this machine", flush=True)
    sys.exit(3)
t0 = time.monotonic()
r = fixer.apply(root=sandbox, this_process=True)
seconds = round(time.monotonic() - t0, 2)
body = r.to_dict()
print("VERDICT", json.dumps({"outcome": body["outcome"], "nothing_to_do": body["nothing_to_do"],
                             "exit_code": body["exit_code"], "seconds": seconds, "verify": [
                                 (c["framework"], c["status"]) for c in body.get("verify") or []],
                             "findings_after": [f["id"] for f in body.get("findings_after") or []],
                             "restart": body["restart"]}), flush=True)
probe.probe(tag + ": same process, after fixer.apply()")
if r.restart_info() and r.restart_info()["needed"]:
    # the claim "fixed for new processes": a child gets os.environ as apply left it
    subprocess.run([sys.executable, "-c", "import sys, os; sys.path.insert(0, os.environ['KAPPLY_WORK']); "
                    "import probe; probe.probe(os.environ['KAPPLY_TAG'] + ': CHILD of the fixed process')"],
                   check=False, timeout=300)
back = fixer.rollback(root=sandbox)
print("ROLLBACK", json.dumps({"status": back.result.status, "exact": back.result.exact,
                              "files": list(back.result.files)}), flush=True)
EOF

before() {  # $1 tag, then VAR=value ...: a fresh process with the breakage, no fix
  local tag=$1; shift
  env "$@" $py -c "import sys; sys.path.insert(0, '$work'); import probe; probe.probe('$tag: before, fresh process, no fix')"
}
live() {  # $1 tag, then VAR=value ...: fixer.apply() inside the process, then the frameworks
  local tag=$1; shift
  local root; root=$(mktemp -d "$work/root.XXXX")
  env "$@" KAPPLY_WORK="$work" KAPPLY_ROOT="$root" KAPPLY_TAG="$tag" PYTHONPATH="$PWD" timeout 300 $py "$work/live.py"
  echo "rc=$?; files left in the sandbox after rollback (journal only):"
  find "$root" -type f | sed "s|$root|<sandbox>|" | grep -v '/var/lib/colab-cudnn-fix/' | head -10
}

echo "## A: LD_LIBRARY_PATH=$shadow (symlinks to the apt cuDNN 9.14 family) first"
before A LD_LIBRARY_PATH="$shadow"
live A LD_LIBRARY_PATH="$shadow"
echo "## B: LD_LIBRARY_PATH=$apt_dir (the apt directory itself) first"
before B LD_LIBRARY_PATH="$apt_dir"
live B LD_LIBRARY_PATH="$apt_dir"
echo "## C: LD_PRELOAD=$apt_dir/libcudnn_ops.so.9 (mapped at process start)"
before C LD_PRELOAD="$apt_dir/libcudnn_ops.so.9"
live C LD_PRELOAD="$apt_dir/libcudnn_ops.so.9"
echo "## D: LD_LIBRARY_PATH=$shadow, torch and JAX imported before fixer.apply()"
live D LD_LIBRARY_PATH="$shadow" KAPPLY_IMPORT_FIRST=1
echo "## done"
