#!/bin/bash
# An LD_PRELOAD of another cuDNN's sub-library, set where users set it, fixed where it is set
# The apt cuDNN 9.14's libcudnn_*.so.9 forced in next to the pip cuDNN 9.19
# torch loads. Two sources, on THIS machine (the GPU machine is thrown away after the session;
# `--root` cannot be used: it requires the interpreter inside the sandbox, and torch's is the
# machine's): both files are put back by rollback, checked byte for byte, and the script
# restores them again on exit whatever happens:
#   A. a Jupyter kernel spec's env (/usr/local/share/jupyter/kernels/preload-test, a
#      directory jupyter_core.paths.jupyter_path("kernels") lists), removed at the end;
#   B. /etc/environment (pam_env): the LD_PRELOAD line added, the original put back at the end.
# For each: a plain child process started the way the source starts it, before apply (the
# mix), then `apply` run with that LD_PRELOAD in its own environment (as a `!` cell of such a
# kernel would), apply's verdict, the fixed file, and a plain child started after apply with
# the environment the fixed source gives it now: it must load the pip cuDNN (cudnn.version()
# 91900, maps from nvidia/cudnn/lib only) and pass a conv and an LSTM. Then rollback, and the
# source file must be byte-identical to before.
# Usage (repo root, GPU machine only): PRELOAD_CHILD_CHANGES_THIS_MACHINE=1 bash scripts/device/preload_child.sh
set -u
[ "${PRELOAD_CHILD_CHANGES_THIS_MACHINE:-}" = 1 ] || {
  echo "this script edits /etc/environment and a kernel spec of this machine (then puts them back):"
  echo "run it on the throw-away GPU machine with PRELOAD_CHILD_CHANGES_THIS_MACHINE=1"; exit 2; }
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/preload_child.txt
exec > >(tee "$log") 2>&1
py=$(command -v python3)
fix() { PYTHONPATH=$PWD $py -m fixer "$@"; }
apt_dir=/usr/lib/x86_64-linux-gnu
sub=""
for name in libcudnn_graph.so.9 libcudnn_ops.so.9 libcudnn_engines_precompiled.so.9; do
  [ -e "$apt_dir/$name" ] && { sub=$apt_dir/$name; break; }
done
[ -n "$sub" ] || { echo "no apt cuDNN 9 sub-library under $apt_dir: nothing to preload"; exit 1; }
tmp=$(mktemp -d /tmp/preload-child.XXXXXX)
specdir=/usr/local/share/jupyter/kernels/preload-test
cp -p /etc/environment "$tmp/environment.orig"
trap 'cp -p "$tmp/environment.orig" /etc/environment; rm -rf "$specdir" "$tmp"' EXIT
base_env() { env -u LD_PRELOAD -u LD_LIBRARY_PATH "$@"; }

child() {  # a plain child process: cuDNN version, the cuDNN files it maps, a conv and an LSTM
  "$@" $py - <<'EOF'
import torch, sys
ok = True
try:
    v = torch.backends.cudnn.version()
    x = torch.randn(4, 8, 32, 32, device="cuda")
    torch.nn.functional.conv2d(x, torch.randn(16, 8, 3, 3, device="cuda")).sum().item()
    lstm = torch.nn.LSTM(16, 32, batch_first=True).cuda()
    lstm(torch.randn(4, 10, 16, device="cuda"))[0].sum().item()
    torch.cuda.synchronize()
except Exception as exc:  # noqa: BLE001 - the failure is what we show
    ok = False
    print("  child FAILED:", type(exc).__name__, str(exc).splitlines()[0][:200])
    v = torch.backends.cudnn.version() if torch.cuda.is_available() else None
maps = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l})
print("  child cudnn.version() =", v, "| conv + LSTM", "PASSED" if ok else "FAILED")
for m in maps:
    print("    maps", m)
sys.exit(0 if ok else 1)
EOF
  echo "  child exit $?"
}

apply_in() {  # apply runs with the LD_PRELOAD the source gives its processes
  LD_PRELOAD=$sub fix apply --no-verify --json > "$tmp/apply.json" 2> "$tmp/apply.err"
  echo "  apply exit $?"
  $py - "$tmp/apply.json" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except ValueError:
    print("  (no JSON)"); sys.exit(0)
p = d.get("plan", {})
for s in p.get("steps", []):
    if s["kind"] == "env-fix":
        print("  step:", s["summary"][:220])
r = d.get("restart") or {}
print("  verdict:", r.get("verdict"), "|", (r.get("message") or "")[:300])
print("  todo:", r.get("todo"))
EOF
  tail -3 "$tmp/apply.err"
}

echo "## cuDNN copies: pip (torch) and the apt sub-library preloaded"
child base_env
echo "  preloading $sub"

echo "## A. LD_PRELOAD in a kernel spec's env"
spec=$specdir/kernel.json
mkdir -p "$(dirname "$spec")"
printf '{\n "argv": ["%s", "-m", "ipykernel_launcher", "-f", "{connection_file}"],\n "display_name": "preload test",\n "language": "python",\n "env": {"LD_PRELOAD": "%s", "MY_SETTING": "1"}\n}\n' "$py" "$sub" > "$spec"
before=$(sha256sum "$spec" | cut -d' ' -f1)
echo "# before apply: a plain child with the spec's env (as the kernel and its ! cells get it)"
child base_env LD_PRELOAD="$sub"
apply_in
echo "# the kernel spec now:"; sed 's/^/    /' "$spec"
spec_preload=$($py -c 'import json,sys; print(json.load(open(sys.argv[1])).get("env",{}).get("LD_PRELOAD",""))' "$spec")
echo "# after apply: a plain child with the env the fixed spec gives a new kernel (LD_PRELOAD='$spec_preload')"
if [ -n "$spec_preload" ]; then child base_env LD_PRELOAD="$spec_preload"; else child base_env; fi
fix rollback --json > /dev/null 2>&1; echo "  rollback exit $?"
[ "$(sha256sum "$spec" | cut -d' ' -f1)" = "$before" ] && echo "  RESTORED: kernel.json byte-identical" || echo "  RESTORE MISMATCH: kernel.json differs"

rm -rf "$specdir"  # B's source alone
echo "## B. LD_PRELOAD in /etc/environment"
etcenv=/etc/environment
printf 'LD_PRELOAD=%s\n' "$sub" >> "$etcenv"
before=$(sha256sum "$etcenv" | cut -d' ' -f1)
echo "# before apply: a plain child of a login session (pam_env sets LD_PRELOAD)"
child base_env LD_PRELOAD="$sub"
apply_in
echo "# /etc/environment now:"; sed 's/^/    /' "$etcenv"
now=$(sed -n 's/^\(export \)\{0,1\}LD_PRELOAD=["'"'"']\{0,1\}\([^"'"'"']*\).*/\2/p' "$etcenv")
echo "# after apply: a plain child of a new login session (LD_PRELOAD='$now')"
if [ -n "$now" ]; then child base_env LD_PRELOAD="$now"; else child base_env; fi
fix rollback --json > /dev/null 2>&1; echo "  rollback exit $?"
[ "$(sha256sum "$etcenv" | cut -d' ' -f1)" = "$before" ] && echo "  RESTORED: /etc/environment byte-identical" || echo "  RESTORE MISMATCH: /etc/environment differs"
