"""Risky ctypes calls, run as a child process: `python native.py TASK [ARGS...]` -> JSON on stdout.

Loading libnvidia-ml, libcuda or a cuDNN copy can hang or crash a process (a broken driver, a
truncated library); so the parent never does it itself. Stdlib only; no fixer import.

Tasks:
  gpu                 NVML (names, compute capability, PCI, memory, UUID, driver and CUDA versions)
                      and cuDriverGetVersion from libcuda.so.1 (no cuInit needed).
  cudnn PATH...       cudnnGetVersion of each file (each cuDNN 9 sub-library exports it),
                      each loaded by absolute path with RTLD_LOCAL.
"""

import ctypes
import json
import os
import sys


def _maps(fragment):
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 6 and fragment in parts[-1]:
                    return parts[-1]
    except OSError:
        pass
    return None


class _Pci(ctypes.Structure):
    """nvmlPciInfo_t (nvml.h)."""

    _fields_ = [
        ("busIdLegacy", ctypes.c_char * 16),
        ("domain", ctypes.c_uint),
        ("bus", ctypes.c_uint),
        ("device", ctypes.c_uint),
        ("pciDeviceId", ctypes.c_uint),
        ("pciSubSystemId", ctypes.c_uint),
        ("busId", ctypes.c_char * 32),
    ]


class _Memory(ctypes.Structure):
    """nvmlMemory_t (nvml.h)."""

    _fields_ = [
        ("total", ctypes.c_ulonglong),
        ("free", ctypes.c_ulonglong),
        ("used", ctypes.c_ulonglong),
    ]


def gpu():
    out: dict = {
        "nvml": None,
        "nvml_error": None,
        "cuda_driver": None,
        "cuda_error": None,
        "libcuda": None,
        "libnvml": None,
    }
    try:
        out["nvml"] = _nvml()
        out["libnvml"] = _maps("libnvidia-ml")
    except (OSError, AttributeError) as exc:
        out["nvml_error"] = str(exc)
    try:
        cu = ctypes.CDLL("libcuda.so.1")
        v = ctypes.c_int()
        rc = cu.cuDriverGetVersion(ctypes.byref(v))
        if rc == 0:
            out["cuda_driver"] = v.value
        else:
            out["cuda_error"] = "cuDriverGetVersion returned %d" % rc
        out["libcuda"] = _maps("libcuda.so")
    except (OSError, AttributeError) as exc:
        out["cuda_error"] = str(exc)
    return out


def _nvml():
    """The driver version, its CUDA version and every GPU, from NVML."""
    nv = ctypes.CDLL("libnvidia-ml.so.1")
    rc = nv.nvmlInit_v2()
    if rc != 0:
        raise OSError("nvmlInit_v2 returned %d" % rc)
    info: dict = {"gpus": []}
    buf = ctypes.create_string_buffer(96)
    if nv.nvmlSystemGetDriverVersion(buf, 96) == 0:
        info["driver"] = buf.value.decode()
    v = ctypes.c_int()
    fn = getattr(nv, "nvmlSystemGetCudaDriverVersion_v2", None) or nv.nvmlSystemGetCudaDriverVersion
    if fn(ctypes.byref(v)) == 0:
        info["cuda"] = v.value
    count = ctypes.c_uint()
    nv.nvmlDeviceGetCount_v2(ctypes.byref(count))
    for i in range(count.value):
        h = ctypes.c_void_p()
        if nv.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) == 0:
            info["gpus"].append(_nvml_device(nv, i, h, buf))
    nv.nvmlShutdown()
    return info


def _nvml_device(nv, i, h, buf):
    g: dict = {"index": i}
    if nv.nvmlDeviceGetName(h, buf, 96) == 0:
        g["name"] = buf.value.decode()
    ma, mi = ctypes.c_int(), ctypes.c_int()
    if nv.nvmlDeviceGetCudaComputeCapability(h, ctypes.byref(ma), ctypes.byref(mi)) == 0:
        g["cc"] = "%d.%d" % (ma.value, mi.value)
    if nv.nvmlDeviceGetUUID(h, buf, 96) == 0:
        g["uuid"] = buf.value.decode()
    pci = _Pci()
    fn = getattr(nv, "nvmlDeviceGetPciInfo_v3", None) or nv.nvmlDeviceGetPciInfo
    if fn(h, ctypes.byref(pci)) == 0:
        g["pci_bus_id"] = pci.busId.decode() or pci.busIdLegacy.decode()
        g["pci_device_id"] = "0x%08x" % pci.pciDeviceId
    mem = _Memory()
    if nv.nvmlDeviceGetMemoryInfo(h, ctypes.byref(mem)) == 0:
        g["memory_mib"] = int(mem.total // (1024 * 1024))
    return g


def cudnn(paths):
    out: dict = {}
    for p in paths:
        try:
            lib = ctypes.CDLL(p, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
        except OSError as exc:
            # dlopen failed next to its own copy's libraries (e.g. "undefined symbol: ..., version
            # libcudnn_graph.so.9": a sub-library of another release): the file is not loadable there
            out[p] = {"error": str(exc), "load_failed": True}
            continue
        try:
            fn = lib.cudnnGetVersion
            fn.restype = ctypes.c_size_t
            fn.argtypes = []
            out[p] = {"version": int(fn())}
        except (OSError, AttributeError) as exc:
            out[p] = {"error": str(exc)}
    return out


def main(argv):
    task = argv[1] if len(argv) > 1 else ""
    if task == "gpu":
        result = gpu()
    elif task == "cudnn":
        result = cudnn(argv[2:])
    else:
        result = {"error": "unknown task %r" % task}
    sys.stdout.write(json.dumps(result))
    sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv)
