#!/bin/bash
# The GPU targets read from the build's own libraries (fixer/detection/fatbin.py) against
# torch.cuda.get_arch_list(), on the GPU machine (torch 2.11+cu130, JAX cuda13 plugin).
# Run from the repository root:  bash scripts/device/arch_list.sh       Output: $OUT/arch_list.txt
# Proof: the lines "EQUAL arch-flags: True" (what doctor uses for torch) and, for the fatbin of
# libtorch_cuda.so, "EQUAL fatbin: True/False" (shown with the difference); timings of the cold
# and cached reads of the ~1 GB libtorch_cuda.so; the JAX plugin's targets next to the GPU's cc.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PY:-python3}
$py - <<'PY' 2>&1 | tee "$o/arch_list.txt"
import os, time, glob
import importlib.util
from fixer.detection.fatbin import read_arch_flags, read_fatbin_targets, build_targets

torch_dir = os.path.dirname(importlib.util.find_spec("torch").origin)
lib = os.path.join(torch_dir, "lib")
cuda_so = os.path.join(lib, "libtorch_cuda.so")
py_so = os.path.join(lib, "libtorch_python.so")
print("libtorch_cuda.so:", os.path.getsize(cuda_so), "bytes; libtorch_python.so:", os.path.getsize(py_so), "bytes")

t = time.perf_counter(); flags = read_arch_flags(py_so, use_cache=False); t_flags = time.perf_counter() - t
t = time.perf_counter(); fat = read_fatbin_targets(cuda_so, use_cache=False); t_cold = time.perf_counter() - t
read_fatbin_targets(cuda_so)                                   # fills the cache
t = time.perf_counter(); cached = read_fatbin_targets(cuda_so); t_cached = time.perf_counter() - t
t = time.perf_counter(); chosen = build_targets("torch", os.path.dirname(torch_dir), cuda_so); t_build = time.perf_counter() - t

import torch
real = torch.cuda.get_arch_list()
print("torch", torch.__version__, "cuda", torch.version.cuda, "device cc", torch.cuda.get_device_capability())
print("torch.cuda.get_arch_list():", real)
print("arch-flags (libtorch_python.so):", list(flags.arch_list()) if flags else None, f"[{t_flags*1000:.1f} ms]")
print("fatbin (libtorch_cuda.so):", list(fat.arch_list()) if fat else None,
      f"containers={fat.containers if fat else 0} entries={fat.entries if fat else 0} "
      f"compressed={fat.compressed if fat else 0} error={fat.error if fat else None} [cold {t_cold*1000:.0f} ms, cached {t_cached*1000:.2f} ms]")
print("doctor uses:", list(chosen.arch_list()) if chosen else None, "from", chosen.file if chosen else None, chosen.source if chosen else None, f"[{t_build*1000:.2f} ms]")
print("EQUAL arch-flags:", bool(flags) and list(flags.arch_list()) == real)
print("EQUAL doctor's list:", bool(chosen) and list(chosen.arch_list()) == real)
if fat:
    print("EQUAL fatbin:", list(fat.arch_list()) == real,
          "| only in fatbin:", sorted(set(fat.arch_list()) - set(real)), "| only in get_arch_list:", sorted(set(real) - set(fat.arch_list())))

for so in sorted(glob.glob(os.path.join(os.path.dirname(torch_dir), "jax_plugins", "xla_cuda*", "*.so"))
                 + glob.glob(os.path.join(os.path.dirname(torch_dir), "jaxlib", "*.so"))):
    t = time.perf_counter(); j = read_fatbin_targets(so, use_cache=False); dt = time.perf_counter() - t
    if j:
        print("JAX", os.path.relpath(so, os.path.dirname(torch_dir)), os.path.getsize(so), "bytes:", list(j.arch_list()),
              f"containers={j.containers} entries={j.entries} error={j.error} [{dt*1000:.0f} ms]")
try:
    import jax
    print("jax", jax.__version__, "devices", [(d.device_kind, getattr(d, "compute_capability", None)) for d in jax.devices()])
except Exception as exc:
    print("jax:", type(exc).__name__, exc)
PY
# cuobjdump, when the toolkit is there: an independent count of SASS/PTX entries per arch
cob=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
if [ -n "$cob" ]; then
  tl=$($py -c "import torch,os;print(os.path.join(os.path.dirname(torch.__file__),'lib','libtorch_cuda.so'))")
  { echo "## cuobjdump --list-elf (arch counts)"; "$cob" --list-elf "$tl" 2>&1 | grep -o "sm_[0-9]*[af]\?" | sort | uniq -c
    echo "## cuobjdump --list-ptx (arch counts)"; "$cob" --list-ptx "$tl" 2>&1 | grep -o "sm_[0-9]*[af]\?" | sort | uniq -c; } | tee -a "$o/arch_list.txt"
fi
