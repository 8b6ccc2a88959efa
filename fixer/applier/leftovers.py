"""The cleanup step: remove what an interrupted pip run moved aside, journalled like any change.

pip moves a distribution's files aside before it removes them (pypa/pip
src/pip/_internal/req/req_uninstall.py StashedUninstallPathSet._get_directory_stash, which names
the stash with utils/temp_dir.py AdjacentTempDirectory: "~" + the original name's tail, e.g.
`~vidia_cudnn_cu13-9.19.0.56.dist-info`, `nvidia/~udnn`); a run killed before it commits leaves
them. Apply records each such tree as a manifest (filetree.record_tree) and backs it up like a
distribution's files, so rollback's normal restore puts it back byte for byte.

Every path is checked before it is touched: a plan's path is removed only when it is an entry
named "~..." directly in one of the target's site-packages directories or in its nvidia/
namespace directory, and is no symlink (lstat). Anything else is refused with the reason.
"""

from __future__ import annotations

import os
import stat
from typing import Dict, Iterable, List, Tuple

from fixer.applier import filetree
from fixer.system import fsgate

#: The manifest (and backup) name of the n-th leftover of an apply.
NAME = "pip-leftover-{}"


def checked(paths: Iterable[str], sites: Iterable[str]) -> Tuple[List[str], List[str]]:
    """(the paths that may be removed, one line per path refused or already gone)."""
    roots = {os.path.normpath(s) for s in sites}
    ok: List[str] = []
    refused: List[str] = []
    for raw in paths:
        p = os.path.normpath(raw)
        parent = os.path.dirname(p)
        inside = parent in roots or (
            os.path.basename(parent) == "nvidia" and os.path.dirname(parent) in roots
        )
        if not os.path.isabs(raw) or not inside or not filetree.is_leftover(os.path.basename(p)):
            refused.append(f"{raw}: not a '~' entry of the target's site-packages (refused)")
            continue
        try:
            st = os.lstat(p)
        except OSError:
            refused.append(f"{raw}: already gone")
            continue
        if stat.S_ISLNK(st.st_mode):
            refused.append(f"{raw}: a symlink (refused)")
            continue
        ok.append(p)
    return ok, refused


def manifests(paths: Iterable[str]) -> Dict[str, Dict[str, object]]:
    """name -> manifest of each leftover tree (files hashed), for the journal."""
    out: Dict[str, Dict[str, object]] = {}
    for i, p in enumerate(paths):
        site = os.path.dirname(p)
        if os.path.basename(site) == "nvidia":
            site = os.path.dirname(site)
        out[NAME.format(i)] = filetree.record_tree(p, site, name=NAME.format(i))
    return out


def remove(paths: Iterable[str]) -> List[str]:
    """Remove each checked leftover (a directory tree without following symlinks, or a file)
    through fixer.system.fsgate. Returns what was removed."""
    return [p for p in paths if fsgate.remove(p)]  # the one gate: by fds, never via a symlink
