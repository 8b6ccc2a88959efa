#!/bin/bash
# Recipes on the GPU machine: the shipped recipes load and validate with the machine's python3,
# load fast, and agree with what is really installed there (torch/JAX/cuDNN wheels' metadata,
# the apt cuDNN package, the GPU's PCI id and compute capability, the driver floor).
# Read-only. Output: stdout (and $OUT/recipes.txt). Look for "MISMATCH" (must be absent) and
# "recipes check: N facts agree, 0 mismatches".
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
{
echo "## python"; python3 --version
echo "## validate"; python3 -m fixer recipes validate; echo "rc=$?"
echo "## list"; python3 -m fixer recipes list
echo "## load timing (fresh process x5)"
for i in 1 2 3 4 5; do python3 -c "
import time; t=time.perf_counter(); from fixer import recipebook as recipes; a=time.perf_counter(); recipes.load(); b=time.perf_counter()
print('import %.1f ms, load %.1f ms' % ((a-t)*1e3, (b-a)*1e3))"; done
echo "## machine vs recipes"
python3 - <<'PY'
import glob, os, re, subprocess, sys
def run(*argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return ""
from email.parser import HeaderParser
from importlib import metadata
from fixer import recipebook as recipes
r = recipes.load()
ok = bad = 0
def check(what, got, want):
    global ok, bad
    if got == want:
        ok += 1; print(f"ok        {what}: {got}")
    else:
        bad += 1; print(f"MISMATCH  {what}: machine {got!r} vs recipes {want!r}")
# GPU: PCI id from sysfs, compute capability from nvidia-smi
for d in glob.glob("/sys/bus/pci/devices/*"):
    try:
        if open(d + "/vendor").read().strip() != "0x10de" or not open(d + "/class").read().startswith("0x03"):
            continue
    except OSError:
        continue
    dev = open(d + "/device").read().strip()
    g = r.gpu_by_pci(dev)
    smi = run("nvidia-smi", "--query-gpu=pci.bus_id,name,compute_cap,driver_version", "--format=csv,noheader").strip().splitlines()
    cc = next((l.split(", ")[2] for l in smi if l.lower().startswith("0000" + os.path.basename(d)[4:].lower()) or os.path.basename(d).lower() in l.lower()), None)
    print(f"gpu {dev} -> {g.name if g else None}; nvidia-smi: {smi}")
    check(f"GPU {dev} in recipes", g is not None, True)
    if g and cc:
        check(f"compute capability of {g.name}", cc, g.compute_capability)
# driver floor for the installed torch's CUDA
drv = run("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader").split()
def vt(v): return tuple(int(x) for x in re.findall(r"\d+", v))
# installed wheels (the torch venv and the system python)
for dist_name in ("torch", "jax-cuda13-plugin", "jax-cuda12-plugin", "tensorflow"):
    for sp in set(glob.glob("/opt/*/.venv/lib/python3*/site-packages") + glob.glob("/usr/local/lib/python3*/dist-packages")):
        for mdir in glob.glob(f"{sp}/{dist_name.replace('-', '_')}-*.dist-info"):
            meta = HeaderParser().parsestr(open(mdir + "/METADATA").read())
            ver = meta["Version"]; pub, _, local = ver.partition("+")
            reqs = [x for x in (meta.get_all("Requires-Dist") or []) if x.split(";")[0].strip().lower().startswith(("nvidia-cudnn",))]
            print(f"installed {dist_name} {ver} at {sp}: cudnn requirement {reqs}")
            if dist_name == "torch":
                builds = [b for b in r.builds_for("torch", pub) if b.variant == (local or "")] or \
                         [b for b in r.builds_for("torch", pub) if b.index_url is None]
                if not builds:
                    check(f"torch {ver} in recipes", False, True); continue
                b = builds[0]
                pins = sorted(x.split(";")[0].replace(" ", "") for x in reqs)
                check(f"torch {ver} cuDNN pin", pins, sorted(x for x in b.requires if x.startswith("nvidia-cudnn")))
                if drv and b.cuda:
                    check(f"driver {drv[0]} >= floor for CUDA {b.cuda} ({r.min_driver(b.cuda)})", vt(drv[0]) >= vt(r.min_driver(b.cuda)), True)
            if dist_name.startswith("jax-cuda"):
                major = dist_name[8:10]
                b = [x for x in r.builds_for("jax", ver) if x.variant == f"cuda{major}"]
                check(f"jax {ver} cuda{major} plugin in recipes", bool(b), True)
                if b:
                    got = sorted({x.split(";")[0].replace(" ", "") for x in reqs})
                    want = sorted(w.replace(" ", "") for w in b[0].requires if w.startswith("nvidia-cudnn"))
                    check(f"jax plugin {ver} cuDNN requirement", got, want)
# pip cuDNN wheels and apt cuDNN packages: their versions must be known releases
for dist in metadata.distributions(path=sys.path + glob.glob("/opt/*/.venv/lib/python3*/site-packages")):
    n = (dist.metadata["Name"] or "").lower()
    if n.startswith("nvidia-cudnn-cu"):
        rel = r.cudnn_release(dist.version)
        check(f"pip {n} {dist.version} is a known cuDNN release", rel is not None, True)
        if rel:
            check(f"pip {n} version in [[cudnn]] {rel.version}", rel.pip.get(n, dist.version), dist.version)
dpkg = run("dpkg-query", "-W", "-f", "${Package} ${Version}\n")
for line in dpkg.splitlines():
    m = re.match(r"(libcudnn\d+(?:-cuda-\d+)?) (\S+)$", line)
    if m:
        rel = r.cudnn_release(m.group(2).split("-")[0])
        check(f"apt {m.group(1)} {m.group(2)} is a known cuDNN release", rel is not None, True)
        if rel and m.group(1) in rel.apt:
            check(f"apt {m.group(1)} version string", m.group(2), rel.apt[m.group(1)])
print(f"recipes check: {ok} facts agree, {bad} mismatches")
PY
} 2>&1 | tee "$o/recipes.txt"
