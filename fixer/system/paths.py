"""Where the tool's own files live: the shipped recipes, and its state (journal, lock, log)."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import List, Optional
from fixer.system import fsgate


def split_ld_preload(value: Optional[str]) -> List[str]:
    """LD_PRELOAD's entries: ld.so(8) separates them by colons or whitespace."""
    return [p for p in re.split(r"[:\s]+", value or "") if p]


@functools.lru_cache(maxsize=1)
def _package_dir() -> Path:
    """fixer/, resolved once per process: the module's own file does not move while it runs
    (resolving it again stat()ed every component of the path on each recipes and catalogue
    load: a fifth of `explain`'s time on a short paste)."""
    return Path(__file__).resolve().parent.parent


def recipes_dir() -> Path:
    """The recipes shipped with the package: fixer/recipe_data in a wheel (not fixer/recipes: a
    directory of that name would import as a namespace package over the function
    fixer.recipes), ../recipes in a checkout."""
    here = _package_dir()
    for candidate in (here / "recipe_data", here.parent / "recipes"):
        if candidate.is_dir():
            return candidate
    return here / "recipe_data"


def under_root(path: str, root: Optional[str]) -> Path:
    """`path` (absolute) moved under the sandbox prefix `root` (`--root DIR`)."""
    if not root:
        return Path(path)
    return Path(root) / path.lstrip("/")


def state_dir(root: Optional[str] = None) -> Path:
    """Journal, lock and logs: /var/lib/colab-cudnn-fix as root, else ~/.local/state/colab-cudnn-fix.
    Under `--root` both go into the sandbox."""
    if root:
        return under_root("/var/lib/colab-cudnn-fix", root)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        return Path("/var/lib/colab-cudnn-fix")
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "colab-cudnn-fix"


def private_state_dir(root: Optional[str] = None) -> Path:
    """state_dir(root), created 0700 and checked on every use (fixer.system.fsgate.private_dir:
    a directory, not a symlink, owned by this user, not writable by others); PathRefused (exit 2)
    otherwise. The journal, the apply log, the backups and the locks live here, nowhere shared."""
    return fsgate.private_dir(state_dir(root))


def lock_dir(root: Optional[str] = None) -> Path:
    """The directory of the per-interpreter apply locks (fixer.applier.filelock.TargetLock): in
    the private state directory (a lock in a shared /tmp directory could be held, spoofed or
    replaced by any user)."""
    return fsgate.private_dir(private_state_dir(root) / "locks", what="lock directory")


def cache_dir() -> Path:
    """Caches that can be rebuilt at any time (parsed recipes, index metadata):
    $XDG_CACHE_HOME/colab-cudnn-fix or ~/.cache/colab-cudnn-fix."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "colab-cudnn-fix"


def write_cache(path: Path, data: bytes) -> None:
    """Best-effort atomic write of a cache file through the gate (fixer.system.fsgate), into the
    private cache directory (0700, this user's, checked). A read-only home, a full disk or a cache
    directory that is not private just means no cache: never an error."""
    try:
        fsgate.private_dir(cache_dir(), what="cache directory")
        fsgate.write_bytes(path, data, 0o600, durable=False)
    except OSError:
        pass


def runnable_python(python: str) -> str:
    """The interpreter to hand a `-c CODE` argument to. condacolab replaces sys.executable by a
    bash wrapper, `exec env PATH=... LD_LIBRARY_PATH=... PYTHON.real -x $@`, whose unquoted $@
    splits every argument at spaces (`-c "import json, sys"` runs just `import`): call the
    `.real` interpreter behind such a wrapper directly (the same Python; the wrapper only adds
    PATH and LD_LIBRARY_PATH, which a notebook kernel started through it already has)."""
    real = python + ".real"
    try:
        if os.path.getsize(python) < 4096 and os.path.exists(real):
            with open(python, "rb") as f:
                text = f.read(4096)
            if text.startswith(b"#!/bin/bash") and b"exec env " in text and b".real" in text:
                return real
    except OSError:
        pass
    return python
