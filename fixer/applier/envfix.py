"""Writing the loader fixes: atomically, marked, idempotent, under the --root sandbox; and
ldconfig after an ld.so.conf.d change. What the files say is decided in fixer.planner.envfix."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import List, Optional, Sequence

from fixer.system.paths import under_root
from fixer.planner.envfix import (  # noqa: F401 - re-exported for the apply package and its tests
    ENV_FILE,
    IPYTHON_STARTUP,
    LD_SO_CONF,
    MARKER,
    env_file_content,
    env_fix_steps,
    expand_home,
    ipython_startup_content,
    ld_so_conf_content,
)
from fixer.system import fsgate

#: The loader cache that ldconfig (run without -C) rewrites: apply backs it up with the step's files.
LD_SO_CACHE = "/etc/ld.so.cache"


def is_managed(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline().rstrip("\n") == MARKER
    except OSError:
        return False


def target_path(path: str, root: Optional[str]) -> Path:
    """The file a step names, moved into the --root sandbox when there is one. A path already
    inside the sandbox (make_plan may have prefixed it) is taken as is."""
    path = expand_home(path)
    if root:
        r = os.path.normpath(os.path.abspath(root))
        p = os.path.normpath(path)
        if p == r or p.startswith(r + os.sep):
            return Path(p)
    return under_root(path, root)


def write_managed(path: Path, content: Optional[str]) -> bool:
    """Write (or with None remove) one managed file atomically, through the gate
    (fixer.system.fsgate: only the loader-fix files the apply registered, never through a
    symlink). Returns whether anything changed (idempotent: the same content twice changes
    nothing the second time)."""
    if content is None:
        return fsgate.remove(path)
    data = content.encode("utf-8")
    st = fsgate.lstat(path)
    if st is not None and stat.S_ISREG(st.st_mode):
        try:
            if fsgate.read_bytes(path) == data:
                return False
        except OSError:
            pass
    mode = 0o755 if path.suffix == ".sh" else 0o644
    fsgate.write_bytes(path, data, mode)
    return True


def needs_ldconfig(paths: Sequence[str]) -> bool:
    return any(re.match(r"^/etc/ld\.so\.conf(\.d/.*)?$", p) for p in paths)


#: The tool's one ldconfig command (fixer.planner.envfix._ld_so_conf_step writes the same).
LDCONFIG = ("ldconfig",)


def ldconfig_argv(root: Optional[str]) -> Optional[List[str]]:
    """The ldconfig command after an ld.so.conf.d change, or None when it must not run:
    in a --root sandbox (ldconfig -r would need a whole root tree) or when not root."""
    if root:
        return None
    if not (hasattr(os, "geteuid") and os.geteuid() == 0):
        return None
    return list(LDCONFIG)
