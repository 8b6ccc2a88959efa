"""GPUs and the driver, from the cheapest source that answers.

Order (first reliable answer wins, each source noted as a ProbeNote):
  1. overrides (COLAB_CUDNN_FIX_DRIVER / _CUDA / _GPU through the CLI),
  2. /sys/module/nvidia/version, /proc/driver/nvidia/version, /proc/driver/nvidia/gpus/*/information,
  3. NVML through ctypes, in a child process (names, compute capability, PCI, memory, UUID, CUDA version),
     with cuDriverGetVersion from libcuda.so.1 in the same child,
  4. `nvidia-smi --query-gpu=... --format=csv,noheader,nounits`,
  5. /sys/bus/pci/devices with vendor 0x10de (display/3D class), so a machine whose driver is
     missing or broken still names its GPU (compute capability later from the recipes' GPU table).
Then CUDA_VISIBLE_DEVICES filters what a CUDA program will see.

Each source has a pure parse_* function tested on recorded text.
"""

from __future__ import annotations

import csv
import io
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple

from fixer.model import Driver, Gpu, ProbeNote
from fixer.rules import cuda_version_from_int
from fixer.detection.overrides import Overrides
from fixer.system.proc import run

SMI_FIELDS = "index,name,pci.bus_id,pci.device_id,compute_cap,memory.total,driver_version,uuid"


# ----------------------------------------------------------------------------- parsers


def parse_sys_module_nvidia_version(text: str) -> Optional[str]:
    """/sys/module/nvidia/version: "580.159.04\\n"."""
    v = text.strip()
    return v if re.match(r"^\d+(\.\d+)+$", v) else None


_PROC_VERSION = re.compile(r"NVRM version:.*?Kernel Module(?: for \S+)?\s+(\d+(?:\.\d+)+)")


def parse_proc_driver_nvidia_version(text: str) -> Tuple[Optional[str], Optional[str]]:
    """/proc/driver/nvidia/version -> (driver version, "open"/"proprietary").

    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)"
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023"
    """
    m = _PROC_VERSION.search(text)
    if not m:
        return None, None
    first = text.splitlines()[0] if text else ""
    return m.group(1), ("open" if "Open Kernel Module" in first else "proprietary")


def parse_proc_gpu_information(text: str) -> Dict[str, str]:
    """/proc/driver/nvidia/gpus/<bus>/information: "Model: \\t\\t NVIDIA H200" lines -> dict."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def _na(v: str) -> Optional[str]:
    v = v.strip()
    return None if not v or v.startswith("[") or v.upper() in ("N/A", "NA") else v


def parse_nvidia_smi_csv(text: str) -> Tuple[List[Gpu], Optional[str]]:
    """`nvidia-smi --query-gpu=<SMI_FIELDS> --format=csv,noheader,nounits` -> (GPUs, driver version).

    "0, NVIDIA H200, 00000000:00:06.0, 0x233510DE, 9.0, 143771, 580.159.04, GPU-b889..."
    Tolerates units left in ("143771 MiB"), [N/A] fields, blank lines and error lines."""
    gpus: List[Gpu] = []
    driver: Optional[str] = None
    for row in csv.reader(io.StringIO(text), skipinitialspace=True):
        if len(row) < 2 or not row[0].strip().isdigit():
            continue
        row = row + [""] * (8 - len(row))
        index, name, bus, dev, cc, mem, drv, uuid = (c.strip() for c in row[:8])
        device_id = None
        if _na(dev):
            d = dev.lower()
            if d.startswith("0x") and len(d) == 10:  # 0x233510DE: device id, then vendor
                d = "0x" + d[2:6]
            device_id = d
        mem_num = re.match(r"^(\d+)", mem or "")
        gpus.append(
            Gpu(
                index=int(index),
                name=name,
                pci_bus_id=_na(bus),
                pci_device_id=device_id,
                compute_capability=_na(cc),
                memory_mib=int(mem_num.group(1)) if mem_num else None,
                uuid=_na(uuid),
                source="nvidia-smi",
            )
        )
        driver = driver or _na(drv)
    return gpus, driver


def parse_nvml_result(data: Mapping[str, Any]) -> Tuple[List[Gpu], Optional[str], Optional[str]]:
    """The JSON of `children/native.py gpu` -> (GPUs, driver version, CUDA version "13.0")."""
    nvml = data.get("nvml") or {}
    gpus: List[Gpu] = []
    for g in nvml.get("gpus", []):
        dev = g.get("pci_device_id")
        if dev and len(dev) == 10:
            dev = "0x" + dev[2:6]
        gpus.append(
            Gpu(
                index=int(g.get("index", len(gpus))),
                name=g.get("name") or "NVIDIA GPU",
                pci_bus_id=g.get("pci_bus_id"),
                pci_device_id=dev,
                compute_capability=g.get("cc"),
                memory_mib=g.get("memory_mib"),
                uuid=g.get("uuid"),
                source="nvml",
            )
        )
    cuda_int = data.get("cuda_driver") or nvml.get("cuda")
    return gpus, nvml.get("driver"), cuda_version_from_int(cuda_int) if cuda_int else None


def parse_pci_device(vendor: str, device: str, klass: str) -> Optional[str]:
    """sysfs vendor/device/class texts -> "0x2335" for an NVIDIA display or 3D controller."""
    if vendor.strip().lower() != "0x10de":
        return None
    k = klass.strip().lower()
    if not (k.startswith("0x0300") or k.startswith("0x0302")):
        return None
    return device.strip().lower()


def filter_visible(gpus: List[Gpu], cvd: Optional[str]) -> Tuple[List[Gpu], Optional[str]]:
    """Apply CUDA_VISIBLE_DEVICES as the CUDA runtime does: unset -> all; "" -> none; a list of
    indices or UUID prefixes, read up to the first entry that names no device."""
    if cvd is None:
        return gpus, None
    text = cvd.strip()
    if text == "":
        return [], f"CUDA_VISIBLE_DEVICES is empty: hides all {len(gpus)} GPU(s)"
    chosen: List[Gpu] = []
    for item in (p.strip() for p in text.split(",")):
        match = None
        if item.lstrip("-").isdigit():
            match = next((g for g in gpus if g.index == int(item)), None)
        elif item:
            match = next(
                (
                    g
                    for g in gpus
                    if g.uuid
                    and g.uuid.startswith(item if item.startswith("GPU-") else "GPU-" + item)
                ),
                None,
            )
            if match is None:
                match = next((g for g in gpus if g.uuid and g.uuid.startswith(item)), None)
        if match is None or match in chosen:
            break
        chosen.append(match)
    hidden = len(gpus) - len(chosen)
    note = (
        f"CUDA_VISIBLE_DEVICES={cvd!r}: {len(chosen)} of {len(gpus)} GPU(s) visible"
        if hidden
        else None
    )
    return chosen, note


# ----------------------------------------------------------------------------- readers


def _read(root: str, path: str) -> Optional[str]:
    try:
        with open(os.path.join(root, path.lstrip("/")), encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return None


def read_driver_files(root: str) -> Tuple[Optional[str], Optional[str], List[ProbeNote]]:
    notes: List[ProbeNote] = []
    version = kmod = None
    text = _read(root, "/sys/module/nvidia/version")
    if text is not None:
        version = parse_sys_module_nvidia_version(text)
    notes.append(
        ProbeNote("sysfs /sys/module/nvidia/version", version is not None, version or "absent")
    )
    text = _read(root, "/proc/driver/nvidia/version")
    if text is not None:
        v2, kmod = parse_proc_driver_nvidia_version(text)
        version = version or v2
        notes.append(
            ProbeNote(
                "procfs /proc/driver/nvidia/version", v2 is not None, f"{v2} ({kmod} kernel module)"
            )
        )
    else:
        notes.append(ProbeNote("procfs /proc/driver/nvidia/version", False, "absent"))
    return version, kmod, notes


def read_proc_gpus(root: str) -> List[Gpu]:
    base = os.path.join(root, "proc/driver/nvidia/gpus")
    try:
        buses = sorted(os.listdir(base))
    except OSError:
        return []
    out = []
    for i, bus in enumerate(buses):
        info = parse_proc_gpu_information(
            _read(root, f"/proc/driver/nvidia/gpus/{bus}/information") or ""
        )
        if not info:
            continue
        minor = info.get("Device Minor", "")
        out.append(
            Gpu(
                index=int(minor) if minor.isdigit() else i,
                name=info.get("Model", "NVIDIA GPU"),
                pci_bus_id=info.get("Bus Location", bus),
                uuid=info.get("GPU UUID"),
                source="procfs",
            )
        )
    return out


def read_pci_gpus(root: str) -> List[Gpu]:
    base = os.path.join(root, "sys/bus/pci/devices")
    try:
        entries = sorted(os.listdir(base))
    except OSError:
        return []
    out: List[Gpu] = []
    for bus in entries:
        d = os.path.join(base, bus)
        try:
            vendor = open(os.path.join(d, "vendor")).read()
            device = open(os.path.join(d, "device")).read()
            klass = open(os.path.join(d, "class")).read()
        except OSError:
            continue
        dev = parse_pci_device(vendor, device, klass)
        if dev:
            out.append(
                Gpu(
                    index=len(out),
                    name=f"NVIDIA GPU (PCI device {dev})",
                    pci_bus_id=bus,
                    pci_device_id=dev,
                    source="sysfs-pci",
                )
            )
    return out


def run_nvidia_smi(timeout: float) -> Tuple[Optional[str], Optional[str]]:
    import errno

    proc = run(
        ["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"],
        timeout=timeout,
    )
    if proc.errno == errno.ENOENT:
        return None, "nvidia-smi not found"
    if proc.error is not None or proc.timed_out:
        return None, f"nvidia-smi failed: {proc.error or f'no answer within {timeout:g} s'}"
    if proc.returncode != 0:
        said = (proc.text + proc.errors).strip()
        return None, said.splitlines()[-1] if said else f"exit {proc.returncode}"
    return proc.text, None


def _merge(primary: List[Gpu], extra: List[Gpu]) -> List[Gpu]:
    """Fill None fields of `primary` GPUs from `extra` GPUs on the same PCI bus."""

    def key(bus: Optional[str]) -> str:
        return (bus or "").lower()[-12:]

    by_bus = {key(g.pci_bus_id): g for g in extra if g.pci_bus_id}
    out = []
    import dataclasses

    for g in primary:
        o = by_bus.get(key(g.pci_bus_id))
        if o is not None:
            g = dataclasses.replace(
                g,
                **{
                    f: getattr(o, f)
                    for f in ("pci_device_id", "compute_capability", "memory_mib", "uuid")
                    if getattr(g, f) is None and getattr(o, f) is not None
                },
            )
        out.append(g)
    return out


class _Found:
    """What the sources said so far, in the order assemble asks them."""

    def __init__(self, version: Optional[str], notes: List[ProbeNote]) -> None:
        self.version = version
        self.notes = notes
        self.driver_source = "sysfs" if version else ""
        self.cuda: Optional[str] = None
        self.libcuda: Optional[str] = None
        self.error: Optional[str] = None
        self.gpus: List[Gpu] = []


def assemble(
    root: str,
    environ: Mapping[str, str],
    overrides: Overrides,
    native: Tuple[Optional[Dict[str, Any]], Optional[str]],
    probe_native: bool,
    timeout: float,
) -> Tuple[Tuple[Gpu, ...], Driver, List[ProbeNote]]:
    """Combine the sources (the NVML child was started by the caller; `native` is its result)."""
    version, kmod, notes = read_driver_files(root)
    f = _Found(version, list(notes))
    if probe_native:
        _from_native(f, *native)
        if not f.gpus:
            _from_nvidia_smi(f, timeout)
    if not f.gpus:
        f.gpus = read_proc_gpus(root)
        if f.gpus:
            f.notes.append(ProbeNote("procfs gpus", True, f"{len(f.gpus)} GPU(s)"))
    pci = read_pci_gpus(root)
    f.notes.append(ProbeNote("sysfs-pci", bool(pci), f"{len(pci)} NVIDIA device(s)"))
    f.gpus = _merge(f.gpus, pci) if f.gpus else pci
    _overridden(f, overrides)
    _visible(f, environ)
    error = _driver_error(f, overrides, probe_native, bool(f.gpus or pci))
    driver = Driver(
        version=f.version,
        cuda_version=f.cuda,
        libcuda_path=f.libcuda,
        kernel_module=kmod,
        source=f.driver_source,
        error=error,
    )
    return tuple(f.gpus), driver, f.notes


def _from_native(f: _Found, data: Optional[Dict[str, Any]], err: Optional[str]) -> None:
    """The NVML/libcuda child's answer (children/native.py gpu)."""
    if data is None:
        f.notes.append(ProbeNote("nvml", False, err or "no answer"))
        f.error = err
        return
    ngpus, nver, ncuda = parse_nvml_result(data)
    if data.get("nvml"):
        f.notes.append(ProbeNote("nvml", True, f"{len(ngpus)} GPU(s), driver {nver}, CUDA {ncuda}"))
        f.gpus = ngpus
        f.version = f.version or nver
        f.driver_source = f.driver_source or "nvml"
    else:
        f.notes.append(ProbeNote("nvml", False, data.get("nvml_error") or "no answer"))
    if data.get("cuda_driver"):
        f.cuda = cuda_version_from_int(int(data["cuda_driver"]))
        f.libcuda = data.get("libcuda")
        f.notes.append(ProbeNote("cuDriverGetVersion", True, f"{f.cuda} ({f.libcuda})"))
    else:
        f.error = data.get("cuda_error") or "libcuda.so.1 did not answer"
        f.notes.append(ProbeNote("cuDriverGetVersion", False, f.error))
        f.cuda = ncuda if data.get("nvml") else None


def _from_nvidia_smi(f: _Found, timeout: float) -> None:
    text, serr = run_nvidia_smi(timeout=min(timeout, 10.0))
    if text is None:
        f.notes.append(ProbeNote("nvidia-smi", False, serr or ""))
        return
    sgpus, sdrv = parse_nvidia_smi_csv(text)
    f.notes.append(ProbeNote("nvidia-smi", bool(sgpus), f"{len(sgpus)} GPU(s), driver {sdrv}"))
    f.gpus = sgpus
    f.version = f.version or sdrv
    f.driver_source = f.driver_source or ("nvidia-smi" if sdrv else "")


def _overridden(f: _Found, overrides: Overrides) -> None:
    """Facts the user gave instead of probed ones (fixer.detection.overrides)."""
    if overrides.driver_version:
        f.version, f.driver_source = overrides.driver_version, "override"
        f.notes.append(ProbeNote("override driver", True, f.version))
    if overrides.cuda_version:
        cuda = overrides.cuda_version
        f.cuda = cuda if "." in cuda else cuda + ".0"
        f.notes.append(ProbeNote("override cuda", True, f.cuda))
    if overrides.gpus is not None:
        f.gpus = list(overrides.gpus)
        f.notes.append(
            ProbeNote("override gpus", True, ", ".join(g.name for g in f.gpus) or "none")
        )


def _visible(f: _Found, environ: Mapping[str, str]) -> None:
    """The GPUs this process may use: CUDA_VISIBLE_DEVICES, and a container given none."""
    f.gpus, note = filter_visible(f.gpus, environ.get("CUDA_VISIBLE_DEVICES"))
    if note:
        f.notes.append(ProbeNote("CUDA_VISIBLE_DEVICES", False, note))
    nvd = environ.get("NVIDIA_VISIBLE_DEVICES")
    if nvd is not None and nvd.strip().lower() in ("none", "void", ""):
        f.notes.append(
            ProbeNote(
                "NVIDIA_VISIBLE_DEVICES",
                False,
                f"NVIDIA_VISIBLE_DEVICES={nvd!r}: the container gets no GPU",
            )
        )


def _driver_error(
    f: _Found, overrides: Overrides, probe_native: bool, any_gpu: bool
) -> Optional[str]:
    """What is wrong with the driver, if anything, after every source spoke."""
    if overrides.driver_version:
        return None  # the user vouches for the driver
    if not probe_native:
        if f.version or not any_gpu:
            return None
        return (
            "no NVIDIA driver loaded (no /sys/module/nvidia/version, "
            "no /proc/driver/nvidia/version)"
        )
    if f.cuda is not None:
        return None
    if f.version is None and not any_gpu:
        return None  # no GPU, no driver: nothing to complain about here
    return f.error
