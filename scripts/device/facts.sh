#!/bin/bash
# Reads the facts detection needs from a real GPU machine (read-only). Output: $OUT/facts.txt
set +e
o=${OUT:-/tmp/out}; mkdir -p $o
py=python3
sp=$($py -c "import sysconfig;print(sysconfig.get_paths()['purelib'])")
{
echo "## sp $sp"
echo "## sys module"; cat /sys/module/nvidia/version; echo; cat /proc/driver/nvidia/version
echo "## proc gpus"; for f in /proc/driver/nvidia/gpus/*/information; do echo "# $f"; cat $f; done
echo "## pci"; for d in /sys/bus/pci/devices/*; do v=$(cat $d/vendor); if [ "$v" = 0x10de ]; then echo "$d vendor=$v device=$(cat $d/device) class=$(cat $d/class) subsys=$(cat $d/subsystem_device 2>/dev/null) driver=$(readlink $d/driver)"; fi; done
echo "## smi query"; nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,compute_cap,memory.total,driver_version,uuid --format=csv,noheader,nounits
echo "## smi query header"; nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,compute_cap,memory.total,driver_version,uuid --format=csv
echo "## smi -L"; nvidia-smi -L
echo "## CVD=1 smi"; CUDA_VISIBLE_DEVICES=1 nvidia-smi --query-gpu=index,name --format=csv,noheader
echo "## nvml ctypes"; $py - <<'PY'
import ctypes
nv=ctypes.CDLL("libnvidia-ml.so.1"); print("init", nv.nvmlInit_v2())
n=ctypes.c_uint(); print("count", nv.nvmlDeviceGetCount_v2(ctypes.byref(n)), n.value)
h=ctypes.c_void_p(); print("handle", nv.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h)))
b=ctypes.create_string_buffer(96); nv.nvmlDeviceGetName(h,b,96); print("name", b.value)
ma,mi=ctypes.c_int(),ctypes.c_int(); print("cc", nv.nvmlDeviceGetCudaComputeCapability(h,ctypes.byref(ma),ctypes.byref(mi)), ma.value, mi.value)
v=ctypes.c_int(); print("cudadrv", nv.nvmlSystemGetCudaDriverVersion_v2(ctypes.byref(v)), v.value)
class Pci(ctypes.Structure): _fields_=[("busIdLegacy",ctypes.c_char*16),("domain",ctypes.c_uint),("bus",ctypes.c_uint),("device",ctypes.c_uint),("pciDeviceId",ctypes.c_uint),("pciSubSystemId",ctypes.c_uint),("busId",ctypes.c_char*32)]
p=Pci(); print("pci", nv.nvmlDeviceGetPciInfo_v3(h,ctypes.byref(p)), p.busId, hex(p.pciDeviceId))
class Mem(ctypes.Structure): _fields_=[("total",ctypes.c_ulonglong),("free",ctypes.c_ulonglong),("used",ctypes.c_ulonglong)]
m=Mem(); print("mem", nv.nvmlDeviceGetMemoryInfo(h,ctypes.byref(m)), m.total)
u=ctypes.create_string_buffer(96); nv.nvmlDeviceGetUUID(h,u,96); print("uuid", u.value)
PY
echo "## libcuda cuInit with CVD empty"; CUDA_VISIBLE_DEVICES= $py -c "
import ctypes; l=ctypes.CDLL('libcuda.so.1'); print('init', l.cuInit(0)); v=ctypes.c_int(); print(l.cuDriverGetVersion(ctypes.byref(v)), v.value); n=ctypes.c_int(); print('count', l.cuDeviceGetCount(ctypes.byref(n)), n.value)"
echo "## pyvenv"; cat $($py -c 'import sys;print(sys.prefix)')/pyvenv.cfg; $py -c 'import sys;print(sys.prefix, sys.base_prefix, sys.path)'
echo "## tools"; uv --version; $py -m pip --version; which conda mamba micromamba
echo "## torch version.py"; cat $sp/torch/version.py
echo "## torch preload"; grep -n -A3 -E "nvidia|_load_global_deps|cuda_libs|def _preload" $sp/torch/__init__.py | head -150
echo "## torch lib"; ls $sp/torch/lib
for f in $sp/torch/lib/libtorch_cuda.so $sp/torch/lib/libtorch_global_deps.so $sp/torch/_C*.so $sp/torch/lib/libtorch_python.so; do echo "# readelf $f"; readelf -d $f | grep -E 'RPATH|RUNPATH|NEEDED'; done
echo "## strings torch cudnn arch"; strings $sp/torch/lib/libtorch_cuda.so | grep -m5 -E '^sm_[0-9]+' ; cuobjdump --list-elf $sp/torch/lib/libtorch_cuda.so 2>/dev/null | awk '{print $NF}' | sed -E 's/.*\.(sm_[0-9a-z]+)\..*/\1/' | sort | uniq -c | head
echo "## jax plugin files"; ls $sp/jax_plugins $sp/jax_plugins/* | head -40; ls $sp/jax_cuda13_plugin* 2>/dev/null | head
for f in $sp/jax_plugins/xla_cuda13/__init__.py; do echo "# $f"; cat $f; done
echo "## jax plugin version"; cat $sp/jax_cuda13_plugin/version.py 2>/dev/null; ls $sp/jax_cuda13_plugin | head -30; find $sp/jax_cuda13_plugin -name '*.so' | head; for f in $(find $sp/jax_cuda13_plugin $sp/jax_plugins -name '*.so' | head -4); do echo "# $f"; readelf -d $f | grep -E 'RPATH|RUNPATH|NEEDED'; done
echo "## jaxlib version"; cat $sp/jaxlib/version.py | head -60
echo "## jax cuda versions"; $py -c "
import jax_cuda13_plugin as p, os; print(os.listdir(os.path.dirname(p.__file__)))
from jax_cuda13_plugin import _versions as v; print({k:getattr(v,k)() for k in dir(v) if 'version' in k and callable(getattr(v,k))})" 2>&1 | tail -5
echo "## cupy"; $py -c "import cupy, cupy_backends; print(cupy.__file__)" ; ls $sp/cupy/_core | head -5; $py -c "import cupy; print(cupy.show_config())" 2>&1 | head -40
echo "## nvidia dirs"; ls $sp/nvidia $sp/nvidia/*; ls $sp/nvidia/cu13/lib
echo "## cudnn dist-info"; ls -d $sp/nvidia_cudnn*; cat $sp/nvidia_cudnn_cu13*/METADATA | head -30; cat $sp/nvidia_cudnn_cu13*/RECORD | head -30; cat $sp/nvidia_cudnn_cu13*/INSTALLER
echo "## torch dist-info"; ls $sp/torch-*.dist-info; cat $sp/torch-*.dist-info/WHEEL; cat $sp/torch-*.dist-info/direct_url.json 2>/dev/null; cat $sp/torch-*.dist-info/INSTALLER
echo "## readelf cudnn"; for f in $sp/nvidia/cudnn/lib/libcudnn.so.9 $sp/nvidia/cudnn/lib/libcudnn_cnn.so.9 /usr/lib/x86_64-linux-gnu/libcudnn.so.9; do echo "# $f"; readelf -d $f | grep -E 'SONAME|RPATH|RUNPATH|NEEDED'; done
echo "## strings version in cudnn"; for f in $sp/nvidia/cudnn/lib/libcudnn_graph.so.9 $sp/nvidia/cudnn/lib/libcudnn.so.9 $sp/nvidia/cudnn/lib/libcudnn_ops.so.9; do echo "# $f"; strings $f | grep -m5 -iE 'cudnn.*9\.19|9\.19\.0|CUDNN_VERSION' ; done
echo "## cudnn symbols"; readelf -W --dyn-syms $sp/nvidia/cudnn/lib/libcudnn.so.9 | grep -E 'cudnnGetVersion|cudnnGetCudartVersion|cudnnGetMaxDeviceVersion|cudnnGetProperty'
echo "## each sublib version via cudnnGetVersion-like"; $py - <<PY
import ctypes, glob
for f in sorted(glob.glob("$sp/nvidia/cudnn/lib/*.so*")+glob.glob("/usr/lib/x86_64-linux-gnu/libcudnn*.so.9")):
    try:
        l=ctypes.CDLL(f)
        syms=[s for s in ("cudnnGetVersion","cudnnBackendGetVersion","cudnnOpsVersionCheck","cudnnCnnVersionCheck","cudnnAdvVersionCheck","cudnnGraphVersionCheck") if hasattr(l,s)]
        print(f, syms)
    except OSError as e: print(f, "ERR", e)
PY
echo "## dpkg"; dpkg-query -W -f='${Package} ${Version} ${Status}\n' 2>/dev/null | grep -E 'cudnn|cuda-cudart|libcublas|cuda-nvrtc|cuda-compat|nvidia' | head -40
echo "## dpkg list cudnn"; cat /var/lib/dpkg/info/libcudnn9-cuda-13*.list 2>/dev/null | head -30; ls /var/lib/dpkg/info | grep -i cudnn
echo "## apt-mark"; apt-mark showhold
echo "## cudnn headers"; find / -xdev -name 'cudnn_version*.h' 2>/dev/null
echo "## usr local cuda lib64 cudnn"; ls /usr/local/cuda/lib64 | grep -iE 'cudnn|cudart|cublas' | head
echo "## ldconfig all"; ldconfig -p | head -3; ldconfig -p | wc -l
echo "## ld.so.cache size"; ls -la /etc/ld.so.cache
echo "## ld.so.conf"; cat /etc/ld.so.conf; for f in /etc/ld.so.conf.d/*; do echo "# $f"; cat $f; done
echo "## glibc"; ldd --version | head -1; $py -c 'import platform;print(platform.libc_ver())'
echo "## maps torch conv"; $py - <<'PY'
import os, torch, time
t=time.perf_counter(); x=torch.randn(2,3,16,16,device="cuda"); y=torch.nn.functional.conv2d(x, torch.randn(4,3,3,3,device="cuda")); torch.cuda.synchronize(); print("t", time.perf_counter()-t)
libs=sorted({l.split()[-1] for l in open(f"/proc/{os.getpid()}/maps") if ".so" in l and any(k in l for k in ("nvidia","cuda","cudnn","cublas","nvrtc"))})
print("\n".join(libs)); print(torch.backends.cudnn.version(), torch.version.cuda, torch.cuda.get_arch_list())
PY
echo "## maps jax conv"; $py - <<'PY'
import os, jax, jax.numpy as jnp
x=jnp.ones((1,3,32,32)); w=jnp.ones((8,3,3,3)); y=jax.lax.conv(x,w,(1,1),'SAME').block_until_ready()
libs=sorted({l.split()[-1] for l in open(f"/proc/{os.getpid()}/maps") if ".so" in l and any(k in l for k in ("nvidia","cuda","cudnn","cublas","nvrtc","xla"))})
print("\n".join(libs))
import jax._src.lib as L; print(getattr(L,'cuda_versions',None))
try:
  from jax._src.lib import cuda_versions as cv; print("cudnn get", cv.cudnn_get_version(), "build", cv.cudnn_build_version(), "cuda rt", cv.cuda_runtime_get_version(), cv.cuda_runtime_build_version())
except Exception as e: print("cv err", e)
PY
echo "## timings"; time ($py -c 'import importlib.metadata as m; [d.metadata["Name"] for d in m.distributions()]'); time ($py -c 'pass'); time ($py -S -c 'pass')
echo "## env"; env | sort | grep -vE 'NVIDIA_REQUIRE_CUDA'
echo "## colab-ish"; ls /content /datalab /kaggle 2>&1 | head -3; cat /proc/1/cgroup | head -3; ls -la /.dockerenv 2>&1
} > $o/facts.txt 2>&1
tail -c 2000 $o/facts.txt
