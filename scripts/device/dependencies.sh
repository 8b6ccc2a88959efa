#!/bin/bash
# What installs bring, checked on the GPU machine. Read-only, no network, ~10 s.
#  1. For every installed distribution recipes/dependencies.toml has a pip record for (jax[cudaNN],
#     jaxlib, jax-cudaNN-plugin, jax-cudaNN-pjrt at the installed version), the wheel's real
#     Requires-Dist (markers evaluated for this machine, the cudaNN / with-cuda extras taken) is
#     compared with the record: every real dependency must be in brings + others + the build's
#     `requires`, and a record marked complete must name nothing the wheel lacks.
#     Lines "MATCH name version" / "MISMATCH name version: ..."; the summary
#     "dependency records: N match, 0 mismatch" must show 0 mismatches.
#  2. The apt cuDNN packages' Depends, from dpkg's database and apt's lists (whatever the image has
#     offline): the source recipes/dependencies.toml lacks for apt. Section "## apt Depends".
# Output: stdout and $OUT/dependencies.txt.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
{
echo "## python"; python3 --version
echo "## pip records vs installed Requires-Dist"
python3 - <<'PY'
from importlib import metadata
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name as canon
from fixer import recipebook as recipes
r = recipes.load()
ok = bad = 0
def reqs(dist, extras):
    out = set()
    for text in metadata.requires(dist) or ():
        q = Requirement(text)
        if q.marker is None or any(q.marker.evaluate({"extra": e}) for e in extras or ("",)):
            out.add(canon(q.name))
    return out
for d in sorted(metadata.distributions(), key=lambda d: d.metadata["Name"].lower()):
    name, version = canon(d.metadata["Name"]), d.version
    keys = [name] + [f"{name}[{e}]" for e in ("cuda12", "cuda13")]
    for key in keys:
        rec = r.dependencies_of("pip", key, version)
        if rec is None:
            continue
        extra = key[len(name) + 1:-1] if "[" in key else ""
        real = reqs(name, (extra,) if extra else ())
        if extra:   # jax[cudaNN] -> the plugin's with-cuda extra comes with it
            plug = f"jax-{extra}-plugin"
            try:
                real |= reqs(plug, ("with-cuda", "with_cuda")) - {canon(f"jax-{extra}-pjrt")}
            except metadata.PackageNotFoundError:
                print(f"SKIP {key} {version}: {plug} is not installed here")
                continue
        build = next((b for b in r.builds_for("jax", version) if b.packages and b.packages[0].startswith(key + "==")), None)
        recorded = {canon(Requirement(x.replace("{version}", version)).name) for x in rec.brings} | {canon(x) for x in rec.others}
        recorded |= {canon(Requirement(x).name) for x in (build.requires if build else ())}
        missing, extra_names = real - recorded, recorded - real
        if missing or (rec.complete and extra_names):
            bad += 1
            print(f"MISMATCH {key} {version}: installed requires {sorted(missing)} not recorded; recorded but absent {sorted(extra_names)}")
        else:
            ok += 1
            print(f"MATCH {key} {version}: {sorted(real)}")
print(f"dependency records: {ok} match, {bad} mismatch")
PY
echo "## apt Depends (dpkg database)"
dpkg-query -W -f='Package: ${Package}\nVersion: ${Version}\nDepends: ${Depends}\nInstalled-Size: ${Installed-Size}\n\n' \
  'libcudnn*' 'cudnn*' 2>/dev/null
echo "## apt Depends (apt lists, offline)"
for p in libcudnn9-cuda-13 libcudnn9-cuda-12 libcudnn9-dev-cuda-13 libcudnn9-dev-cuda-12 cudnn9-cuda-13 cudnn9-cuda-12; do
  apt-cache show "$p" 2>/dev/null | grep -E '^(Package|Version|Depends|Size|Installed-Size):' | head -40
done
echo "## apt simulate (no download; what apt-get would add)"
apt-get install -s -y --no-install-recommends libcudnn9-cuda-13 2>&1 | grep -E '^(Inst|Conf)|NOTE|E:' | head -20
} 2>&1 | tee "$o/dependencies.txt"
