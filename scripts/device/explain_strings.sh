#!/bin/bash
# Checks the catalogue's cuDNN 9 / NVRTC in-library wording against the real binaries on
# the GPU machine (pip cuDNN 9.19 and apt cuDNN 9.14; the catalogue cites cuDNN 9.24.0.43, read on
# the workstation). Reads files only; changes nothing. For every wording it prints one line:
#   FOUND|MISSING  <copy>  <library>  "<wording>"
# Expected (what the output must show): FOUND for every wording in both copies, except that older
# 9.x releases may lack the NVRTC wordings (a MISSING there says the wording is newer than that
# release; the catalogue keeps the 9.24 wording and its older form, if any, shows next to it).
# Usage (repo root, GPU machine): OUT=/tmp/out bash scripts/device/explain_strings.sh   (~10 s)
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"; log=$o/explain_strings.txt
exec > >(tee "$log") 2>&1
. "$(dirname "$0")/_cudnn_copies.sh"
echo "pip cuDNN: $pipdir   apt cuDNN: $apt"
check() {  # $1 copy name, $2 library file, $3 wording
  if [ ! -f "$2" ]; then echo "NOFILE   $1  $2"; return; fi
  if strings -n 6 "$2" | grep -qF -- "$3"; then echo "FOUND    $1  $(basename "$2")  \"$3\""
  else echo "MISSING  $1  $(basename "$2")  \"$3\""; fi
}
for copy in "pip:$pipdir" "apt:$apt"; do
  name=${copy%%:*}; d=${copy#*:}
  main=$(ls "$d"/libcudnn.so.9 2>/dev/null | head -1); graph=$(ls "$d"/libcudnn_graph.so.9 2>/dev/null | head -1)
  check "$name" "$main" "Invalid handle. Cannot load symbol %s"
  check "$name" "$main" "Could not load symbol %s. Error: %s"
  check "$name" "$graph" "Unable to load any of {%s, %s, %s, %s}."
  check "$name" "$graph" "Unable to load library '%s'"
  check "$name" "$graph" "Could not open libnvrtc for runtime linking"
  check "$name" "$graph" "Cannot load CUDA driver library (libcuda.so.1 / libcuda.so)"
  check "$name" "$graph" "Major version mismatch between CUDA runtime and NVRTC"
  check "$name" "$graph" "Failed to query NVRTC version. The NVRTC library may be corrupt or incompatible."
  for s in CUDNN_STATUS_NOT_INITIALIZED CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED \
           CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH \
           CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART \
           CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED; do
    check "$name" "$graph" "$s"
  done
done
# NVRTC's own loader of its builtins library (catalogue: "nvrtc: error: failed to open %s")
nv=$($py -c 'import os, nvidia; [print(os.path.join(p, r)) for p in nvidia.__path__ for r, _, fs in os.walk(p) for f in fs if f.startswith("libnvrtc.so")]' 2>/dev/null | head -1)
nvf=$(ls "$nv"/libnvrtc.so.* 2>/dev/null | head -1)
check "pip" "$nvf" "failed to open"
