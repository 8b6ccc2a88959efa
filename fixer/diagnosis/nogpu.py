"""No GPU visible: the one place that decides what that means and what to tell the user.

The rule (DESIGN "Conventions"): no visible NVIDIA GPU while a GPU framework is installed or
asked for is exit 3 for doctor, plan and apply; no GPU and nothing that needs one is exit 0
(nothing to fix). What to do depends on where we are: on Colab "Runtime → Change runtime type
→ a GPU" (a CPU or TPU runtime has no GPU to repair, even with CUDA builds installed, as Colab's
CPU images ship them); CUDA_VISIBLE_DEVICES hiding the GPUs; a container started without GPUs;
else the driver / hardware hint.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Optional, Sequence

from fixer.model import Environment, Finding

#: What Colab's menu calls it (Colab: Runtime > Change runtime type > Hardware accelerator).
COLAB_HINT = "Runtime → Change runtime type → a GPU (e.g. T4), then run the cell again"
KAGGLE_HINT = "Settings → Accelerator → a GPU, then run the cell again"


@dataclasses.dataclass(frozen=True)
class NoGpu:
    """The verdict for a machine with no visible GPU."""

    exit_code: int  # 3: something needs a GPU; 0: nothing does
    message: str  # one line: what is missing
    hint: str  # what to do, for this kind of machine


def gpu_hint(env: Environment, hidden: bool = False, container: bool = False) -> str:
    """What to do to get a GPU here (the fix text of the gpu-missing finding too)."""
    if hidden:
        return "Unset CUDA_VISIBLE_DEVICES (or set it to the GPU indices to use, e.g. 0), then restart the process."
    if env.runtime.kind == "colab":
        return f"Switch to a GPU runtime: {COLAB_HINT}."
    if env.runtime.kind == "kaggle":
        return f"Switch to a GPU runtime: {KAGGLE_HINT}."
    if container:
        return "Start the container with a GPU (docker run --gpus all, NVIDIA_VISIBLE_DEVICES=all)."
    return "Attach an NVIDIA GPU to this machine and install its driver, or install CPU builds of the frameworks."


#: Probes that report what the driver itself sees, before CUDA_VISIBLE_DEVICES filters it
#: (fixer.detection.gpu.assemble): NVML and nvidia-smi ignore the variable (NVIDIA's
#: CUDA_VISIBLE_DEVICES applies to CUDA applications), and so do /proc/driver/nvidia/gpus and
#: the PCI sysfs.
DRIVER_PROBES = ("nvml", "nvidia-smi", "procfs gpus", "sysfs-pci")


def hidden_by_cvd(env: Environment) -> Optional[str]:
    """When CUDA_VISIBLE_DEVICES hides GPUs the driver sees, what detection recorded about it
    ("CUDA_VISIBLE_DEVICES='-1': 0 of 1 GPU(s) visible"); else None. Read from the
    CUDA_VISIBLE_DEVICES probe note, or, for an environment recorded without it, from the
    variable being set while a driver probe counted GPUs."""
    notes = [p.detail for p in env.probes if p.probe == "CUDA_VISIBLE_DEVICES"]
    if notes:
        return notes[0]
    cvd = env.env.get("CUDA_VISIBLE_DEVICES")
    if cvd is None or env.gpus:
        return None
    seen = [p for p in env.probes if p.probe in DRIVER_PROBES and p.ok]
    counts = [re.match(r"(\d+) ", p.detail) for p in seen]
    if any(m and int(m.group(1)) > 0 for m in counts):
        return f"CUDA_VISIBLE_DEVICES={cvd!r} hides the GPU(s) the driver sees"
    return None


def no_gpu(env: Environment, findings: Sequence[Finding], wanted: bool = False) -> Optional[NoGpu]:
    """None when a GPU is visible; else the exit code and the words for doctor, plan and apply.
    `wanted`: the command was asked for a GPU framework (apply --framework torch on a CPU
    machine), which needs a GPU as much as one installed. GPUs the driver sees but
    CUDA_VISIBLE_DEVICES hides are said to be hidden, never "no GPU on this runtime"."""
    if env.gpus:
        return None
    missing = [f for f in findings if f.id == "gpu-missing"]
    needed = any(f.severity == "error" for f in missing) or wanted
    hidden = hidden_by_cvd(env)
    if hidden:
        what = f"No NVIDIA GPU is visible to CUDA programs: {hidden}"
        hint = gpu_hint(env, hidden=True)
    else:
        where = env.runtime.kind + (
            f" {env.runtime.accelerator.upper()}" if env.runtime.accelerator else ""
        )
        what = f"No NVIDIA GPU on this {where} runtime"
        hint = gpu_hint(env)
    if not needed:
        return NoGpu(0, f"{what}, and nothing installed needs one: nothing to fix.", hint)
    if missing and missing[0].fix and not hidden:
        hint = missing[0].fix
    fws = sorted({fw for f in missing for fw in f.frameworks})
    return NoGpu(
        3,
        what
        + (f"; {', '.join(fws)} need one" if fws and hidden else "")
        + (f", but {', '.join(fws)} need one" if fws and not hidden else "")
        + ": there is no GPU stack to repair, nothing was changed.",
        hint,
    )


__all__ = ["COLAB_HINT", "KAGGLE_HINT", "NoGpu", "gpu_hint", "hidden_by_cvd", "no_gpu"]
