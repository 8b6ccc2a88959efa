"""Detection's GPU probe child (`children/native.py gpu`: NVML and libcuda): its one command, and
when detection runs it.

The probe loads libnvidia-ml and libcuda in a child process and asks NVML; detect() starts it
first and reads the files while it runs. This module imports fixer.system.proc only when it starts
the probe: `plan --environment` reads its variable names without starting a process.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Mapping
from fixer.system import proc as _proc

if TYPE_CHECKING:
    from fixer.system import proc as _proc

#: The variables that give detection's GPU and driver facts instead of probing them
#: (fixer.detection.overrides reads them).
ENV_DRIVER = "COLAB_CUDNN_FIX_DRIVER"
ENV_CUDA = "COLAB_CUDNN_FIX_CUDA"
ENV_GPU = "COLAB_CUDNN_FIX_GPU"

#: Seconds detection's children get (detect()'s default).
TIMEOUT = 20.0

SCRIPT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "children", "native.py"
)
LABEL = "nvml/libcuda probe"


def needed(root: str, gpus_given: bool, driver_given: bool) -> bool:
    """Whether detection runs the probe: on the real machine (not a --root sandbox), unless the
    overrides give both the GPUs and the driver version."""
    return root == "/" and not (gpus_given and driver_given)


def start(environ: Mapping[str, str], timeout: float = TIMEOUT) -> "_proc.Child":
    """The probe, started now; `result()` waits for its JSON."""
    return _proc.python_child(
        sys.executable,
        SCRIPT,
        ["gpu"],
        timeout=timeout,
        env=_proc.child_env(environ),
        label=LABEL,
    )
