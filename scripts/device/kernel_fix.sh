#!/bin/bash
# The loader fix applied to a LIVE Python process (issue 11): no restart when nothing was loaded.
#
# 1-2: what each breakage does to a FRESH process (torch 2.11 preloads its wheel's cuDNN by
#      absolute path and has DT_RPATH; the pip libcudnn.so.9 finds its sub-libraries through
#      DT_RUNPATH $ORIGIN, which LD_LIBRARY_PATH beats):
#      1 LD_LIBRARY_PATH = a directory with the apt cuDNN 9.14 family first
#      2 LD_PRELOAD = the apt libcudnn_ops.so.9 (the breakage verify saw as cudnn-mixed)
# 3:   the same LD_LIBRARY_PATH breakage, repaired from INSIDE one Python process before any
#      framework import (fixer.applier.kernel.apply_here(this_process=True), files into a --root
#      sandbox), then torch and JAX imported in that same process: cudnn.version() must be the pip
#      9.19 (91900), a conv must run, and only the pip cuDNN directory may be mapped.
# 4:   the LD_PRELOAD breakage in a live process: apply_here must NOT claim "fixed in this
#      kernel" (LD_PRELOAD mapped the apt file at start); it says "fixed for new processes".
# Usage (repo root, GPU machine): OUT=/tmp/out bash scripts/device/kernel_fix.sh
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/kernel_fix.txt
exec > >(tee "$log") 2>&1
py=$(command -v python3)
apt_dir=/usr/lib/x86_64-linux-gnu
[ -e "$apt_dir/libcudnn.so.9" ] || { echo "no apt cuDNN 9 in $apt_dir: nothing to break with"; exit 1; }
shadow=$(mktemp -d /tmp/kfix-shadow.XXXXXX)
sandbox=$(mktemp -d /tmp/kfix-root.XXXXXX)
trap 'rm -rf "$shadow" "$sandbox"' EXIT
for f in "$apt_dir"/libcudnn*.so.9*; do ln -s "$f" "$shadow/"; done
export XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONUNBUFFERED=1

cat > "$sandbox/probe.py" <<'EOF'
import json, os, sys, time
def probe(tag):
    out = {"tag": tag}
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
        r = jax.lax.conv_general_dilated(a, k, (1, 1), "SAME")
        out["jax_conv_sum"] = float(r.sum())
    except Exception as e:
        out["jax_error"] = f"{type(e).__name__}: {str(e)[:200]}"
    maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l})
    out["cudnn_dirs_mapped"] = sorted({os.path.dirname(os.path.realpath(p)) for p in maps})
    out["cudnn_files_from_apt"] = [os.path.basename(p) for p in maps if os.path.realpath(p).startswith("/usr/lib/")]
    print("PROBE", json.dumps(out))
EOF

echo "## 1 fresh process, LD_LIBRARY_PATH=$shadow (the apt cuDNN 9.14 family first)"
LD_LIBRARY_PATH=$shadow $py -c "import sys; sys.path.insert(0, '$sandbox'); import probe; probe.probe('fresh LD_LIBRARY_PATH')"
echo "## 2 fresh process, LD_PRELOAD=$apt_dir/libcudnn_ops.so.9"
LD_PRELOAD=$apt_dir/libcudnn_ops.so.9 $py -c "import sys; sys.path.insert(0, '$sandbox'); import probe; probe.probe('fresh LD_PRELOAD')"

fix_in_process='
import sys, time, json
sys.path.insert(0, SANDBOX)
t0 = time.monotonic()
import fixer.applier.kernel as k
before = k.gpu_libraries_mapped()
r = k.apply_here(root=SANDBOX, this_process=True)
t1 = time.monotonic()
print("APPLY_HERE", json.dumps({"verdict": r.verdict, "message": r.kernel.message if r.kernel else None,
      "todo": r.kernel.todo if r.kernel else None, "gpu_libs_mapped_before": list(before),
      "loaded_now": list(r.kernel.process.loaded) if r.kernel and r.kernel.process else [],
      "nothing_to_do": r.nothing_to_do, "seconds": round(t1 - t0, 2)}))
import probe; probe.probe(TAG)
'
echo "## 3 live process, LD_LIBRARY_PATH=$shadow: fixer.applier.kernel.apply_here(this_process=True) first, then import torch/jax in the SAME process"
LD_LIBRARY_PATH=$shadow PYTHONPATH=$PWD $py -c "SANDBOX='$sandbox'; TAG='live LD_LIBRARY_PATH, after apply_here'
$fix_in_process"
echo "## 4 live process, LD_PRELOAD=$apt_dir/libcudnn_ops.so.9: apply_here must say 'fixed for new processes' (LD_PRELOAD mapped it at start)"
LD_PRELOAD=$apt_dir/libcudnn_ops.so.9 PYTHONPATH=$PWD $py -c "SANDBOX='$sandbox'; TAG='live LD_PRELOAD, after apply_here'
$fix_in_process"
echo "## files the applies wrote (sandbox only)"
find "$sandbox" -type f -not -name 'probe*' | sed "s|$sandbox|<sandbox>|" | head -20
