"""Where we run: Colab (GPU/TPU/CPU runtime), Kaggle, Docker, WSL or plain Linux; OS; glibc;
and, in a notebook, which GPU libraries the kernel process has already mapped (a change to
them needs a runtime restart)."""

from __future__ import annotations

import os
import re
from typing import List, Mapping, Optional, Tuple

from fixer.model import ProbeNote, Runtime
from fixer.detection.fs import MachineFS

KERNEL_MARKERS = ("ipykernel_launcher", "colab_kernel_launcher", "ipykernel")
GPU_LIB = re.compile(r"/lib(cudnn[^/]*|cuda|cudart|cublas[^/]*|nvrtc)\.so[^/]*$")


def parse_os_release(text: str) -> Optional[str]:
    m = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', text, re.M)
    return m.group(1) if m else None


def parse_maps_gpu_libs(text: str) -> Tuple[str, ...]:
    """GPU library files in a /proc/<pid>/maps text, each once, in order."""
    out: List[str] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 6 and GPU_LIB.search(parts[-1]) and parts[-1] not in out:
            out.append(parts[-1])
    return tuple(out)


def _kernel(fs: MachineFS, environ: Mapping[str, str]) -> Tuple[Optional[int], Tuple[str, ...]]:
    """The running Jupyter/IPython kernel (not us): its pid and the GPU libraries it mapped."""
    me = os.getpid()
    for name in fs.listdir("/proc") or []:
        if not name.isdigit() or int(name) == me:
            continue
        cmd = fs.read_text(f"/proc/{name}/cmdline", limit=4096) or ""
        if any(m in cmd for m in KERNEL_MARKERS):
            return int(name), parse_maps_gpu_libs(
                fs.read_text(f"/proc/{name}/maps", limit=32 << 20) or ""
            )
    return None, ()


def detect_runtime(
    fs: MachineFS, environ: Mapping[str, str], has_gpu: bool
) -> Tuple[Runtime, List[ProbeNote]]:
    notes: List[ProbeNote] = []
    kind = "linux"
    accelerator: Optional[str] = None
    image: Optional[str] = None
    colab_vars = [
        k for k in environ if k.startswith("COLAB_") and not k.startswith("COLAB_CUDNN_FIX")
    ]
    if colab_vars or (fs.exists("/datalab") and fs.exists("/content")):
        kind = "colab"
        image = environ.get("COLAB_RELEASE_TAG")
        if (
            environ.get("COLAB_TPU_ADDR")
            or environ.get("TPU_ACCELERATOR_TYPE")
            or environ.get("COLAB_TPU_1VM")
        ):
            accelerator = "tpu"
        elif environ.get("COLAB_GPU") or has_gpu:
            accelerator = "gpu"
        else:
            accelerator = "cpu"
    elif (
        environ.get("KAGGLE_KERNEL_RUN_TYPE")
        or environ.get("KAGGLE_URL_BASE")
        or fs.exists("/kaggle")
    ):
        kind = "kaggle"
        accelerator = (
            "tpu"
            if environ.get("TPU_NAME") or environ.get("TPU_ACCELERATOR_TYPE")
            else ("gpu" if has_gpu else "cpu")
        )
    else:
        version = fs.read_text("/proc/version", limit=4096) or ""
        cgroup = fs.read_text("/proc/1/cgroup", limit=65536) or ""
        if "microsoft" in version.lower():
            kind = "wsl"
        elif (
            fs.exists("/.dockerenv")
            or fs.exists("/run/.containerenv")
            or re.search(r"docker|containerd|kubepods", cgroup)
        ):
            kind = "docker"
        if environ.get("TPU_ACCELERATOR_TYPE") or environ.get("TPU_NAME"):
            accelerator = "tpu"
        else:
            accelerator = "gpu" if has_gpu else "cpu"
    os_name = parse_os_release(fs.read_text("/etc/os-release", limit=65536) or "")
    glibc = None
    if fs.root == "/":
        try:
            glibc = os.confstr("CS_GNU_LIBC_VERSION").split()[-1]  # type: ignore[union-attr]
        except (ValueError, OSError, AttributeError):
            glibc = None
    in_kernel = "JPY_PARENT_PID" in environ or kind in ("colab", "kaggle")
    pid: Optional[int] = None
    loaded: Tuple[str, ...] = ()
    if in_kernel:
        pid, loaded = _kernel(fs, environ)
    machine = os.uname().machine if hasattr(os, "uname") else "x86_64"
    notes.append(
        ProbeNote("runtime", True, f"{kind} ({accelerator}){' image ' + image if image else ''}")
    )
    return Runtime(
        kind=kind,  # type: ignore[arg-type]
        accelerator=accelerator,  # type: ignore[arg-type]
        image=image,
        os_name=os_name,
        arch=machine,
        glibc=glibc,
        in_notebook_kernel=in_kernel,
        kernel_pid=pid,
        kernel_loaded=loaded,
        source="environment, /etc/os-release, /proc",
    ), notes
