#!/bin/bash
# Checks wordings explain reads against the torch installed on the GPU machine (torch 2.11): the
# Python sources by file and line (grep -n: a cite can name pypi:torch FILE:LINE@VERSION), the C++
# messages in libtorch_cuda.so by `strings`. Reads files only; changes nothing. One line each:
#   FOUND|MISSING  <file>[:line]  "<wording>"
# Usage (repo root, GPU machine): OUT=/tmp/out bash scripts/device/torch_strings.sh   (~10 s)
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
exec > >(tee "$o/torch_strings.txt") 2>&1
py=${PY:-python3}
site=$($py -c 'import os, torch; print(os.path.dirname(torch.__file__))' 2>/dev/null)
ver=$($py -c 'import torch; print(torch.__version__)' 2>/dev/null)
echo "torch $ver at $site"
src() {  # $1 file under torch/, $2 wording (fixed string)
  hit=$(grep -nF -- "$2" "$site/$1" 2>/dev/null | head -1 | cut -d: -f1)
  if [ -n "$hit" ]; then echo "FOUND    torch/$1:$hit  \"$2\""; else echo "MISSING  torch/$1  \"$2\""; fi
}
bin() {  # $1 library under torch/lib, $2 wording
  if strings -n 8 "$site/lib/$1" 2>/dev/null | grep -qF -- "$2"; then echo "FOUND    torch/lib/$1  \"$2\""
  else echo "MISSING  torch/lib/$1  \"$2\""; fi
}
src amp/autocast_mode.py "but CUDA is not available. Disabling"
src amp/autocast_mode.py "CUDA is not available or torch_xla is imported. Disabling autocast."
src amp/grad_scaler.py "is enabled, but CUDA is not available"
src cuda/__init__.py "Torch not compiled with CUDA enabled"
src cuda/__init__.py "is not compatible with the current PyTorch installation"
src backends/cudnn/__init__.py "is not compatible with devices with SM < 7.5"
bin libtorch_cuda.so "Unable to find a valid cuDNN algorithm to run convolution"
bin libtorch_cuda.so "FIND was unable to find an engine to execute this computation"
bin libtorch_cuda.so "GET was unable to find an engine to execute this computation"
bin libc10_cuda.so "Found no NVIDIA driver on your system"
bin libc10_cuda.so "No CUDA GPUs are available"
bin libtorch_cuda.so "cuFFT error: "
bin libtorch_cuda.so "Plan failed with a cudnnException"
bin libtorch_cuda.so "Attempt to open cnn_infer failed"
