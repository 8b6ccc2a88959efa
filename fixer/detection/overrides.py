"""Overrides: facts given instead of probed (offline planning, tests, broken drivers).

Like uv's UV_CUDA_DRIVER_VERSION and conda's CONDA_OVERRIDE_CUDA. Detection takes them as a
parameter and never reads the environment for them; the CLI reads these variables:

    COLAB_CUDNN_FIX_DRIVER=580.65.06          driver version
    COLAB_CUDNN_FIX_CUDA=13.0                 highest CUDA the driver supports
    COLAB_CUDNN_FIX_GPU="Tesla T4:7.5"        GPUs, comma separated, NAME[:CC]; "none" for no GPU
"""

from __future__ import annotations

import dataclasses
import re
from typing import Mapping, Optional, Tuple

from fixer.errors import UsageError
from fixer.model import Gpu

from fixer.detection.gpu_probe import (
    ENV_CUDA as ENV_CUDA,
    ENV_DRIVER as ENV_DRIVER,
    ENV_GPU as ENV_GPU,
)  # their one home
from fixer.recipebook import load
from fixer.rules import driver_cuda_mismatch


@dataclasses.dataclass(frozen=True)
class Overrides:
    """Facts given instead of probed (the COLAB_CUDNN_FIX_* variables): driver, CUDA, GPUs."""

    driver_version: Optional[str] = None  # "580.65.06"
    cuda_version: Optional[str] = None  # "13.0"
    gpus: Optional[Tuple[Gpu, ...]] = None  # None: probe; (): no GPU

    def any(self) -> bool:
        return (
            self.driver_version is not None
            or self.cuda_version is not None
            or self.gpus is not None
        )


_DRIVER_RE = re.compile(r"^\d+(\.\d+){1,2}$")
_CC_RE = re.compile(r"^\d+\.\d+$")


def parse_gpu_override(text: str) -> Tuple[Gpu, ...]:
    """ "Tesla T4:7.5,NVIDIA H200" -> Gpu tuple; "none"/"" -> ()."""
    text = text.strip()
    if text.lower() in ("", "none", "0"):
        return ()
    gpus = []
    for i, item in enumerate(p.strip() for p in text.split(",")):
        if not item:
            continue
        name, cc = item, None
        if ":" in item:
            name, cc = (s.strip() for s in item.rsplit(":", 1))
            if not _CC_RE.match(cc):
                raise UsageError(
                    f"{ENV_GPU}: {cc!r} is not a compute capability like 7.5 (in {item!r})"
                )
            if not name:
                raise UsageError(
                    f"{ENV_GPU}: {item!r} has no GPU name before the ':' (NAME:CC, e.g. 'Tesla T4:7.5')"
                )
        elif _CC_RE.match(item):
            name, cc = f"GPU with compute capability {item}", item
        gpus.append(Gpu(index=i, name=name, compute_capability=cc, source="override"))
    return tuple(gpus)


def overrides_from_env(environ: Mapping[str, str]) -> Overrides:
    """The COLAB_CUDNN_FIX_* variables as Overrides; a malformed value is a UsageError."""
    driver = environ.get(ENV_DRIVER) or None
    if driver is not None and not _DRIVER_RE.match(driver.strip()):
        raise UsageError(f"{ENV_DRIVER}={driver!r} is not a driver version like 580.65.06")
    cuda = environ.get(ENV_CUDA) or None
    if cuda is not None and not re.match(r"^\d+(\.\d+)?$", cuda.strip()):
        raise UsageError(f"{ENV_CUDA}={cuda!r} is not a CUDA version like 13.0")
    gpus = parse_gpu_override(environ[ENV_GPU]) if ENV_GPU in environ else None
    if driver and cuda:
        why = driver_cuda_mismatch(driver.strip(), cuda.strip(), load().driver_floors)
        if why:
            raise UsageError(
                f"{ENV_DRIVER}={driver} with {ENV_CUDA}={cuda}: {why} (recipes/nvidia.toml)"
            )
    return Overrides(
        driver_version=driver.strip() if driver else None,
        cuda_version=cuda.strip() if cuda else None,
        gpus=gpus,
    )
