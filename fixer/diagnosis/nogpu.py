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


def no_gpu(env: Environment, findings: Sequence[Finding], wanted: bool = False) -> Optional[NoGpu]:
    """None when a GPU is visible; else the exit code and the words for doctor, plan and apply.
    `wanted`: the command was asked for a GPU framework (apply --framework torch on a CPU
    machine), which needs a GPU as much as one installed."""
    if env.gpus:
        return None
    missing = [f for f in findings if f.id == "gpu-missing"]
    needed = any(f.severity == "error" for f in missing) or wanted
    where = env.runtime.kind + (
        f" {env.runtime.accelerator.upper()}" if env.runtime.accelerator else ""
    )
    if not needed:
        return NoGpu(
            0,
            f"No NVIDIA GPU on this {where} runtime, and nothing installed needs one: nothing to fix.",
            gpu_hint(env),
        )
    hint = missing[0].fix if missing and missing[0].fix else gpu_hint(env)
    fws = sorted({fw for f in missing for fw in f.frameworks})
    return NoGpu(
        3,
        f"No NVIDIA GPU on this {where} runtime"
        + (f", but {', '.join(fws)} need one" if fws else "")
        + ": there is no GPU stack to repair, nothing was changed.",
        hint,
    )


__all__ = ["COLAB_HINT", "KAGGLE_HINT", "NoGpu", "gpu_hint", "no_gpu"]
