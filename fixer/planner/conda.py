"""Where conda puts cuDNN for a target, and how condacolab gets conda onto Colab. Pure: no I/O.

What condacolab does (read from its source, condacolab 0.1.10, github conda-incubator/condacolab,
condacolab.py `install_from_url`): it needs `google.colab` importable; it downloads a
constructor installer (Miniforge by default: `install = install_miniforge`) and runs
`bash installer -bfp PREFIX` with PREFIX = /usr/local (`condacolab.PREFIX`); it appends
`python X.Y.*` and `cuda-version 12.*` pins to PREFIX/conda-meta/pinned; it appends to
/etc/ipython/ipython_config.py an exec_lines block that puts PREFIX/lib/pythonX.Y/site-packages on
sys.path; it renames sys.executable to sys.executable + ".real" and writes a bash wrapper in its
place (`exec env PATH=PREFIX/bin:... LD_LIBRARY_PATH=PREFIX/lib:... python.real -x "$@"`), so the
next kernel starts with PREFIX/lib first on LD_LIBRARY_PATH; and it ends the kernel with
`get_ipython().kernel.do_shutdown(True)` (Colab starts a fresh one). `condacolab.check()` is
"conda on PATH, that site-packages on sys.path, PREFIX/bin on PATH, PREFIX/lib on LD_LIBRARY_PATH".

So conda's cuDNN lands in PREFIX/lib (/usr/local/lib on Colab), which Ubuntu's
/etc/ld.so.conf.d/libc.conf already lists: an ld.so.conf.d entry plus ldconfig makes it found by
every new process, and the notebook kernel gets it preloaded by path.
"""

from __future__ import annotations

import os
from typing import Optional

from fixer.system.paths import under_root
from fixer.model import Environment, Step
from fixer.rules import (
    CONDACOLAB_PREFIX,
    conda_lib_dir,
    conda_prefix,
)  # the Environment queries resolve shares

#: The distribution that brings conda to Colab, installed with pip when missing.
CONDACOLAB_DIST = "condacolab"


def needs_condacolab(env: Environment) -> bool:
    """Colab without conda: condacolab must install it (and the kernel restarts)."""
    return env.runtime.kind == "colab" and not (env.python and env.python.conda)


def conda_binary(env: Environment, root: Optional[str] = None) -> str:
    """The conda to run: the target's, else the one condacolab installs (PREFIX/bin/conda)."""
    if env.python and env.python.conda:
        return env.python.conda
    prefix = conda_prefix(env) or CONDACOLAB_PREFIX
    return str(under_root(f"{prefix}/bin/conda", root))


def is_condacolab_step(step: Step) -> bool:
    """The step that runs condacolab.install() in the notebook kernel (it restarts the kernel)."""
    return step.kind == "conda-install" and step.packages == (CONDACOLAB_DIST,)


def installed_by_condacolab(prefix: str, root: Optional[str] = None) -> bool:
    """condacolab has run: PREFIX/bin/conda exists (the first of condacolab.check()'s conditions
    that a file can show)."""
    return os.path.exists(under_root(f"{prefix}/bin/conda", root))


__all__ = [
    "CONDACOLAB_DIST",
    "CONDACOLAB_PREFIX",
    "conda_binary",
    "conda_lib_dir",
    "conda_prefix",
    "installed_by_condacolab",
    "is_condacolab_step",
    "needs_condacolab",
]
