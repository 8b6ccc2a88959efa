#!/bin/bash
# On the real GPU machine (no internet): a real apply of the ~1 GB nvidia-cudnn-cu13 wheel,
# killed between pip's uninstall and its install, then `colab-cudnn-fix rollback`: the venv must be
# byte-identical to before (pip freeze --all + sha256 and mode of every file and directory).
#
# Run from the repository root:   OUT=/tmp/out bash scripts/device/rollback_kill.sh [SIGKILL SIGTERM ...]
#
# It never touches the machine's own venv (the other device scripts need it): it only READS the
# installed nvidia-cudnn-cu13 to build a wheel from it (tests.helpers.wheelbuild), then works in a
# throw-away venv under /tmp/ccf-kill (python -m venv; pip copied in when ensurepip is missing),
# with its own --root sandbox and lock directory. Steps, for each signal (default: SIGKILL SIGTERM):
# 1. fresh throw-away venv; `pip install --no-deps --no-index --find-links WH nvidia-cudnn-cu13==V`
# 2. fingerprint BEFORE
# 3. apply (the library's apply_plan, in its own process) of one step:
#    pip install --force-reinstall --no-deps --no-index --find-links WH nvidia-cudnn-cu13==V
#    (pip uninstalls the old copy first: it moves nvidia/cudnn aside as nvidia/~udnn, then extracts
#    the wheel); a watcher kills the apply with the signal the moment the `~` copy appears or the
#    old dist-info is gone (between uninstall and install), and prints what it saw
# 4. `python -m fixer rollback --root SANDBOX --json`, then fingerprint AFTER and the comparison.
# Expected: for each signal "KILLED ... between uninstall and install", rollback exit 0 with
# "exact": true, and "RESULT <signal>: BYTE-IDENTICAL (N files, pip freeze equal)"; at the end
# "ALL BYTE-IDENTICAL". Anything else prints the differing lines.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
exec > >(tee "$o/rollback_kill.txt") 2>&1
signals=${*:-SIGKILL SIGTERM}
py=$(command -v python3)
repo=$PWD
W=/tmp/ccf-kill; rm -rf "$W"; mkdir -p "$W/wh" "$W/locks"
export PYTHONPATH=$repo PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
       PIP_CONFIG_FILE=/dev/null PYTHONUNBUFFERED=1
date; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
ver=$($py -c "import importlib.metadata as m; print(m.version('nvidia-cudnn-cu13'))") || {
  echo "nvidia-cudnn-cu13 is not installed in $py: nothing to build a wheel from"; exit 1; }
echo "## wheel from the installed nvidia-cudnn-cu13 $ver (tests.helpers.wheelbuild; the machine's venv is only read)"
t0=$(date +%s.%N)
$py - "$W/wh" <<'PY' || exit 1
import importlib.metadata as m, sys
from tests.helpers.wheelbuild import build_wheel_from_installed
w = build_wheel_from_installed(m.distribution("nvidia-cudnn-cu13")._path, sys.argv[1])
print("built", w.name, round(w.stat().st_size / 2**20), "MiB")
PY
echo "wheel build: $($py -c "import time; print(round(time.time()-$t0, 1))") s"

fresh_venv() {  # $1: dir. A venv with pip, cuDNN installed by pip from the wheelhouse.
  rm -rf "$1"
  if ! $py -m venv "$1" >/dev/null 2>&1; then
    rm -rf "$1"; $py -m venv --without-pip "$1" || return 1
    vsp=$("$1/bin/python" -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")
    hsp=$($py -c "import os,pip;print(os.path.dirname(os.path.dirname(pip.__file__)))")
    cp -a "$hsp/pip" "$vsp/" && cp -a "$hsp"/pip-*.dist-info "$vsp/"
  fi
  "$1/bin/python" -m pip install -q --no-deps --no-index --find-links "$W/wh" "nvidia-cudnn-cu13==$ver"
}

fingerprint() {  # $1: venv, $2: output file
  "$1/bin/python" -m pip freeze --all > "$2.freeze"
  $py - "$1" "$2" <<'PY'
import hashlib, os, stat, sys
root, out = sys.argv[1], sys.argv[2]
lines = []
for d, dirs, files in os.walk(root):
    rel = os.path.relpath(d, root)
    lines.append(f"{rel}/ dir {stat.S_IMODE(os.lstat(d).st_mode):o}")
    for n in sorted(files) + sorted(x for x in dirs if os.path.islink(os.path.join(d, x))):
        p = os.path.join(d, n); st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            lines.append(f"{rel}/{n} -> {os.readlink(p)}"); continue
        h = hashlib.sha256()
        with open(p, "rb") as f:
            for c in iter(lambda: f.read(1 << 22), b""):
                h.update(c)
        lines.append(f"{rel}/{n} {h.hexdigest()} {stat.S_IMODE(st.st_mode):o}")
open(out, "w").write("\n".join(sorted(lines)) + "\n")
print(len(lines), "entries")
PY
}

ok_all=1
for sig in $signals; do
  echo; echo "################ $sig ################"
  V=$W/venv; R=$W/root-$sig; rm -rf "$R"; mkdir -p "$R"
  fresh_venv "$V" || { echo "cannot make the throw-away venv"; exit 1; }
  vsp=$("$V/bin/python" -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")
  echo "throw-away venv $V; cuDNN files: $(du -sh "$vsp/nvidia/cudnn" | cut -f1)"
  fingerprint "$V" "$W/before-$sig"
  $py - "$V/bin/python" "$R" "$W/wh" "$ver" "$sig" "$vsp" <<'PY'
import json, os, signal, subprocess, sys, time
python, root, wh, ver, sig, site = sys.argv[1:7]
from fixer.model import Plan, Step, to_dict
argv = [python, "-m", "pip", "install", "--no-input", "--force-reinstall", "--no-deps", "--no-index",
        "--find-links", wh, f"nvidia-cudnn-cu13=={ver}"]
plan = Plan(steps=(Step(kind="pip-install", summary=f"reinstall nvidia-cudnn-cu13=={ver}", argv=tuple(argv),
                        packages=(f"nvidia-cudnn-cu13=={ver}",)),), python=python)
pf = os.path.join(root, "plan.json"); open(pf, "w").write(json.dumps(to_dict(plan)))
driver = ("import json,sys\nfrom fixer.applier import apply_plan\nfrom fixer.model import Plan, PlanOptions, from_dict\n"
          "from fixer.errors import FixerError\n"
          "plan = from_dict(Plan, json.load(open(sys.argv[1])))\n"
          "try:\n    apply_plan(plan, python=sys.argv[2], options=PlanOptions(root=sys.argv[3]))\n"
          "except FixerError as e:\n    print('APPLY ERROR', type(e).__name__, e.message, flush=True); sys.exit(e.exit_code)\n"
          "print('APPLY DONE', flush=True)\n")
t0 = time.time()
proc = subprocess.Popen([sys.executable, "-c", driver, pf, python, root])
old_di = os.path.join(site, f"nvidia_cudnn_cu13-{ver}.dist-info")
nv = os.path.join(site, "nvidia")
seen = None
while proc.poll() is None:
    if not os.path.isdir(old_di):       # pip moved the old copy aside (renames: microseconds) ...
        time.sleep(0.05)                # ... and is extracting the new one
        stash = [os.path.relpath(os.path.join(d, n), site) for d, dirs, files in os.walk(nv)
                 for n in dirs + files if n.startswith("~")] if os.path.isdir(nv) else []
        top = [n for n in os.listdir(site) if n.startswith("~")]
        lib = os.path.join(nv, "cudnn", "lib")
        new = sorted(os.listdir(lib)) if os.path.isdir(lib) else []
        seen = f"pip's moved-aside copies {stash + top}; new files extracted so far: {len(new)}"
        proc.send_signal(getattr(signal, sig))
        print(f"KILLED the apply with {sig} at {time.time() - t0:.1f} s, between uninstall and install: {seen}")
        break
    time.sleep(0.005)
rc = proc.wait()
print(f"apply exit {rc} after {time.time() - t0:.1f} s" + ("" if seen else "  (NOT KILLED: the window was never seen)"))
left = sorted(os.path.relpath(os.path.join(d, n), site) for d, dirs, files in os.walk(site) for n in dirs + files
              if n.startswith("~"))
print("pip's moved-aside copies left after the kill (rollback must remove them):", left[:8], len(left))
PY
  sleep 1
  t0=$(date +%s.%N)
  $py -m fixer rollback --root "$R" --json > "$W/rollback-$sig.json"; rrc=$?
  echo "rollback exit $rrc in $($py -c "import time; print(round(time.time()-$t0, 1))") s: $($py -c "
import json,sys; r=json.load(open('$W/rollback-$sig.json'))['rollback']
print('status', r['status'], 'exact', r['exact'], 'checked', r.get('checked_files'), 'restored', len(r.get('restored', [])),
      'removed', len(r.get('removed', [])), 'remaining', r['remaining'][:5], 'notes', r['notes'][:3])")"
  fingerprint "$V" "$W/after-$sig"
  if diff -q "$W/before-$sig" "$W/after-$sig" >/dev/null && diff -q "$W/before-$sig.freeze" "$W/after-$sig.freeze" >/dev/null; then
    echo "RESULT $sig: BYTE-IDENTICAL ($(wc -l < "$W/before-$sig") files and directories, pip freeze equal)"
    grep -i cudnn "$W/before-$sig.freeze"; grep "libcudnn.so.9 " "$W/before-$sig" "$W/after-$sig" | sed "s|$W/||"
  else
    ok_all=0
    echo "RESULT $sig: DIFFERS"; diff "$W/before-$sig.freeze" "$W/after-$sig.freeze"; diff "$W/before-$sig" "$W/after-$sig" | head -40
  fi
  cp "$W/rollback-$sig.json" "$o/" 2>/dev/null
done
[ $ok_all = 1 ] && echo "ALL BYTE-IDENTICAL" || echo "SOME DIFFER"
rm -rf "$W"
