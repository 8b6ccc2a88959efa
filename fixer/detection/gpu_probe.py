"""Detection's GPU probe child (`children/native.py gpu`: NVML and libcuda): its one command, when
detection runs it, and its start ahead of the tool's own imports.

The probe loads libnvidia-ml and libcuda in a child process and asks NVML; on a freshly started GPU
machine that can take longer than the rest of `doctor`. `doctor --json` (fixer.cli.fast) therefore
starts it before importing the rest of the tool (`start_early`), and detect() asks for the same
child with `start` and gets the one already running: fixer.system.proc.python_child hands out a child
started early only when its command, environment and timeout are exactly those asked for (else it
starts a new one, and the early one is stopped by `fixer.system.proc.drop_early` when the command ends).

This module imports fixer.system.proc only when it starts the probe: it runs before anything else of the
tool is imported, and `plan --environment` reads its variable names without starting a process.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Mapping, Optional

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


def start(
    environ: Mapping[str, str], timeout: float = TIMEOUT, early: bool = False
) -> "_proc.Child":
    """The probe, started now (or the same one started early); `result()` waits for its JSON.
    `early`: started ahead of the code that will ask for it (fixer.system.proc.python_child)."""
    from fixer.system import proc as _proc

    return _proc.python_child(
        sys.executable,
        SCRIPT,
        ["gpu"],
        timeout=timeout,
        env=_proc.child_env(environ),
        label=LABEL,
        early=early,
    )


def start_early(environ: Optional[Mapping[str, str]] = None) -> bool:
    """Start the probe that `doctor` on this machine will ask for, before the tool's own imports;
    False when detection will not run it (the overrides give its answers)."""
    environ = os.environ if environ is None else environ
    if not needed("/", ENV_GPU in environ, bool(environ.get(ENV_DRIVER))):
        return False
    start(environ, TIMEOUT, early=True)
    return True
