#!/bin/bash
# Round twenty-six's readings on texts the real emitters print on the GPU machine (nothing on the
# machine is changed; every file is written under a temp directory):
#   1. nvcc's architecture list (nvcc --list-gpu-arch) against fixer.rules.nvcc_archs for its release
#   2. nvcc compiling for an architecture its release dropped (sm_61 on CUDA 13): the real error,
#      explained alone, beside `nvcc --version` (the release named: dropped -> gpu-arch-unsupported)
#      and beside "CUDA 12.4" (a release that knows sm_61 -> cuda-lib-mismatch)
#   3. the driver's JIT given PTX of an ISA newer than it reads (cuModuleLoadDataEx with the JIT's
#      error log): the real CUresult name and log, explained (driver-too-old)
#   4. NVRTC loaded from a directory without its builtins library: the real compile log, explained
#      (cuda-lib-missing); the machine's own builtins are found through ldconfig's cache, so 4b
#      hides their directory for one process (a private mount namespace) to reach NVRTC's own
#      missing-builtins message
#   5. (round twenty-seven) nvcc's C++ dialects: each -std value compiled for real; a dialect the
#      release does not define prints "Value '...' is not defined for option 'std'", explained
#      (the rule reads c++11..c++20 as an older toolkit; c++23, which no nvcc defines, is not)
# One line per paste:  PASTE  top(confidence) second  |  title
# Usage (repo root, GPU machine): OUT=/tmp/out bash scripts/device/explain_toolchain.sh  (~40 s)
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/explain_toolchain.txt
exec > >(tee "$log") 2>&1
py=${PY:-$(command -v python3)}
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

explain() {  # explain NAME FILE
  $py -m fixer explain --no-detect --json --file "$2" 2>/dev/null | $py -c '
import json, sys
d = json.load(sys.stdin); f = d.get("findings", [])
top = "%s(%.2f)" % (f[0]["id"], f[0]["confidence"]) if f else "NOT-RECOGNISED"
second = f[1]["id"] if len(f) > 1 else "-"
print("%-28s %-28s %-22s | %s" % (sys.argv[1], top, second, f[0]["title"][:110] if f else ""))
' "$1"
}

nvcc=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc 2>/dev/null | head -1)
echo "== 1. nvcc: ${nvcc:-none}"
if [ -n "$nvcc" ]; then
  "$nvcc" --version | tee "$tmp/version.txt"
  "$nvcc" --list-gpu-arch > "$tmp/archs.txt" 2>&1
  $py - "$tmp/version.txt" "$tmp/archs.txt" <<'PY'
import re, sys
from fixer.rules import nvcc_archs
release = re.search(r"release (\d+)\.(\d+)", open(sys.argv[1]).read())
rel = (int(release.group(1)), int(release.group(2)))
listed = {int(a) for a in re.findall(r"compute_(\d+)", open(sys.argv[2]).read())}
table = set(nvcc_archs(rel))
print("release", rel, "nvcc --list-gpu-arch:", sorted(listed))
print("fixer.rules.nvcc_archs:", sorted(table))
print("EQUAL:", listed == table, "| only nvcc:", sorted(listed - table), "| only table:", sorted(table - listed))
PY
  echo "== 2. nvcc -arch=sm_61"
  printf '__global__ void k(int *x) { *x = 1; }\n' > "$tmp/k.cu"
  (cd "$tmp" && "$nvcc" -arch=sm_61 -c k.cu -o k.o) > "$tmp/nvcc_err.txt" 2>&1
  echo "nvcc printed: $(cat "$tmp/nvcc_err.txt")"
  explain "nvcc-alone" "$tmp/nvcc_err.txt"
  { echo '$ nvcc --version'; cat "$tmp/version.txt"; cat "$tmp/nvcc_err.txt"; } > "$tmp/p2.txt"
  explain "nvcc+its-version" "$tmp/p2.txt"
  { echo "I have CUDA 12.4 installed and a GTX 1080"; cat "$tmp/nvcc_err.txt"; } > "$tmp/p3.txt"
  explain "nvcc+CUDA-12.4-named" "$tmp/p3.txt"
fi

echo "== 3. the driver's JIT, PTX .version 9.9"
$py - "$tmp" <<'PY'
import ctypes, sys, os
tmp = sys.argv[1]
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
dev = ctypes.c_int(); cuda.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cuda.cuCtxSetCurrent(ctx)
ptx = b".version 9.9\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n"
LOG = 8192
buf = ctypes.create_string_buffer(LOG)
# CU_JIT_ERROR_LOG_BUFFER = 5, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6 (cuda.h CUjit_option)
opts = (ctypes.c_int * 2)(5, 6)
vals = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), ctypes.c_void_p(LOG))
mod = ctypes.c_void_p()
rc = cuda.cuModuleLoadDataEx(ctypes.byref(mod), ptx, 2, opts, vals)
name = ctypes.c_char_p(); text = ctypes.c_char_p()
cuda.cuGetErrorName(rc, ctypes.byref(name)); cuda.cuGetErrorString(rc, ctypes.byref(text))
out = f"cuModuleLoadDataEx failed: {rc} {name.value.decode()}: {text.value.decode()}\n{buf.value.decode()}\n"
print(out, end="")
open(os.path.join(tmp, "jit.txt"), "w").write(out)
PY
[ -s "$tmp/jit.txt" ] && explain "driver-jit" "$tmp/jit.txt"
grep -v "ptxas application ptx input" "$tmp/jit.txt" > "$tmp/jit2.txt"
{ cat "$tmp/jit2.txt"; echo 'fails with "Unsupported .version 9.9; current version is 9.0"'; } > "$tmp/jit3.txt"
explain "driver-jit-retold" "$tmp/jit3.txt"

echo "== 4. NVRTC without its builtins library"
$py - "$tmp" <<'PY'
import glob, os, shutil, site, sys
tmp = sys.argv[1]
found = []
for d in site.getsitepackages():
    found += glob.glob(os.path.join(d, "nvidia", "*", "lib", "libnvrtc.so.*")) + glob.glob(os.path.join(d, "nvidia", "cuda_nvrtc", "lib", "libnvrtc.so.*"))
found = [f for f in found if "builtins" not in f]
print("libnvrtc:", found[:3])
if found:
    src = found[0]
    print("builtins beside it:", sorted(os.path.basename(f) for f in glob.glob(os.path.join(os.path.dirname(src), "libnvrtc-builtins*"))))
    os.makedirs(os.path.join(tmp, "alone"))
    shutil.copy(src, os.path.join(tmp, "alone", os.path.basename(src)))
PY
# one compile, run twice: with the copy alone, then with the toolkit's directory hidden (4b)
cat > "$tmp/nvrtc_compile.py" <<'PY'
"""python nvrtc_compile.py TMP OUT: compile a kernel with the libnvrtc copied into TMP/alone and
write NVRTC's result and log to TMP/OUT."""
import ctypes, glob, os, sys
tmp, name = sys.argv[1], sys.argv[2]
nvrtc = ctypes.CDLL(glob.glob(os.path.join(tmp, "alone", "libnvrtc.so.*"))[0])
prog = ctypes.c_void_p()
nvrtc.nvrtcCreateProgram(ctypes.byref(prog), b'extern "C" __global__ void k(float *x) { x[0] = sinf(x[0]); }', b"k.cu", 0, None, None)
opts = (ctypes.c_char_p * 1)(b"--gpu-architecture=compute_90")
rc = nvrtc.nvrtcCompileProgram(prog, 1, opts)
nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
size = ctypes.c_size_t(); nvrtc.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
log = ctypes.create_string_buffer(size.value); nvrtc.nvrtcGetProgramLog(prog, log)
out = f"nvrtcCompileProgram: {rc} {nvrtc.nvrtcGetErrorString(rc).decode()}\n{log.value.decode()}\n"
print(out, end="")
open(os.path.join(tmp, name), "w").write(out)
PY
if [ -d "$tmp/alone" ]; then
  $py "$tmp/nvrtc_compile.py" "$tmp" nvrtc.txt && explain "nvrtc-no-builtins" "$tmp/nvrtc.txt"
fi
# the machine's own builtins (ldconfig's cache names /usr/local/cuda/targets/x86_64-linux/lib) are
# found by name; hide that directory for one process in a private mount namespace (unshare -rm:
# nothing outside the process sees it) so that the compile meets NVRTC's own missing-builtins path
cuda_lib=/usr/local/cuda/targets/x86_64-linux/lib
if [ -d "$tmp/alone" ] && [ -d "$cuda_lib" ] && unshare -rm true 2>/dev/null; then
  echo "== 4b. the same with $cuda_lib hidden (unshare -rm, a tmpfs over it for this process only)"
  unshare -rm sh -c "mount -t tmpfs none $cuda_lib && $py '$tmp/nvrtc_compile.py' '$tmp' nvrtc_hidden.txt" \
    && explain "nvrtc-builtins-hidden" "$tmp/nvrtc_hidden.txt"
else
  echo "== 4b. skipped: no libnvrtc copy, or no private mount namespace here (unshare -rm)"
fi
echo "== 5. nvcc -std=..."
if [ -n "$nvcc" ]; then
  printf '__global__ void k(int *x) { *x = 1; }\n' > "$tmp/s.cu"
  for std in c++11 c++14 c++17 c++20 c++23 gnu++17; do
    if (cd "$tmp" && "$nvcc" -std=$std -c s.cu -o s.o) > "$tmp/std_$std.txt" 2>&1; then
      echo "-std=$std: compiled"
    else
      echo "-std=$std: nvcc printed: $(cat "$tmp/std_$std.txt")"
      explain "nvcc-std=$std" "$tmp/std_$std.txt"
    fi
  done
  # the same message for a dialect this release knows, as an older nvcc prints it (CUDA 8 for
  # c++14): the text is nvcc's own template with the value changed
  sed 's/c++23/c++14/' "$tmp/std_c++23.txt" > "$tmp/std_old.txt"
  explain "nvcc-std=c++14(as-CUDA-8)" "$tmp/std_old.txt"
fi

echo "== done"
