"""Is this command running under a notebook kernel that already loaded the GPU stack?

A `!colab-cudnn-fix apply` cell runs as a descendant of the IPython kernel. A library the
kernel already mapped (cuDNN, torch, TensorFlow, JAX) stays mapped whatever we install,
so the fix reaches the notebook only after a restart. We find the kernel by walking the
parent chain through /proc/PID/stat, and read its /proc/PID/maps.

Restarting the way Colab expects: its "Restart session" ends the kernel process and the
Jupyter kernel manager starts a fresh one (the notebook shows "Your session crashed ...
restarting", which is expected). `restart_kernel` does the same with os.kill(SIGKILL).
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
from typing import List, Optional, Tuple

KERNEL_MARKERS = ("ipykernel_launcher", "colab_kernel_launcher", "ipykernel", "jupyter-kernel")

#: Mapped files that mean "the GPU stack is already loaded in that process".
_LOADED = re.compile(
    r"(libcudnn[^/]*\.so|libtorch_cuda\.so|libtorch_python\.so|_pywrap_tensorflow|libtensorflow_framework"
    r"|xla_extension|jaxlib/|jax_plugins/|libcudart\.so|libcublas\.so)"
)


@dataclasses.dataclass(frozen=True)
class KernelInfo:
    pid: int
    cmdline: str
    loaded: Tuple[str, ...] = ()  # GPU library files the kernel has mapped

    @property
    def restart_needed(self) -> bool:
        return bool(self.loaded)


def parent_pid(pid: int, proc: str = "/proc") -> Optional[int]:
    """PPID from /proc/PID/stat (field 4; the command name in field 2 may hold spaces and ')')."""
    try:
        with open(f"{proc}/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    rest = stat[stat.rfind(")") + 2 :].split()
    try:
        return int(rest[1])
    except (IndexError, ValueError):
        return None


def cmdline(pid: int, proc: str = "/proc") -> str:
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def mapped_gpu_libraries(pid: int, proc: str = "/proc") -> Tuple[str, ...]:
    seen: List[str] = []
    try:
        with open(f"{proc}/{pid}/maps", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 6:
                    continue
                path = parts[5].strip()
                if _LOADED.search(path) and path not in seen:
                    seen.append(path)
    except OSError:
        pass
    return tuple(seen)


def find_kernel(
    pid: Optional[int] = None, proc: str = "/proc", max_depth: int = 32
) -> Optional[KernelInfo]:
    """The nearest ancestor of `pid` (default: this process) that is a Jupyter/IPython kernel."""
    current = parent_pid(pid if pid is not None else os.getpid(), proc)
    depth = 0
    while current and current > 1 and depth < max_depth:
        line = cmdline(current, proc)
        if any(m in line for m in KERNEL_MARKERS):
            return KernelInfo(pid=current, cmdline=line, loaded=mapped_gpu_libraries(current, proc))
        current = parent_pid(current, proc)
        depth += 1
    return None


def restart_kernel(kernel: KernelInfo) -> str:
    """End the kernel process so the notebook server starts a fresh one. Returns what was done."""
    os.kill(kernel.pid, signal.SIGKILL)
    return (
        f"restarted the notebook runtime: sent SIGKILL to kernel pid {kernel.pid} "
        f"({kernel.cmdline[:80]}); the notebook reconnects to a fresh kernel "
        "(Colab shows 'Your session crashed', which is expected)"
    )
