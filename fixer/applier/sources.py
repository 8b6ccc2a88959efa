"""Where packages come from, and the commands that put previous versions back.

Rollback reinstalls from the same places the plan installed from: the index options are
read back from the plan's own argv (pip and uv spell them the same), then the journal's
repacked wheels are put first as a --find-links directory so that offline restores work.
The command lines themselves come from fixer.installers, the one place that builds them.
"""
from __future__ import annotations

import os
import shutil
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence

from .. import installers
from ..model import PlanOptions, Step

_VALUE_FLAGS = {
    "--index-url": "index_urls", "-i": "index_urls",
    "--extra-index-url": "extra_index_urls",
    "--find-links": "find_links", "-f": "find_links",
}


def sources_of(steps: Iterable[Step], options: PlanOptions) -> Dict[str, Any]:
    """Index URLs, extra index URLs, find-links, no-index and --break-system-packages used by
    the plan's pip/uv steps."""
    out: Dict[str, Any] = {"index_urls": [], "extra_index_urls": [], "find_links": [], "no_index": False,
                           "break_system_packages": False}
    for step in steps:
        if step.kind not in ("pip-install", "pip-uninstall"):
            continue
        argv = list(step.argv)
        i = 0
        while i < len(argv):
            a = argv[i]
            key = _VALUE_FLAGS.get(a)
            if key and i + 1 < len(argv):
                _add(out[key], argv[i + 1])
                i += 2
                continue
            for flag, k in _VALUE_FLAGS.items():
                if flag.startswith("--") and a.startswith(flag + "="):
                    _add(out[k], a.split("=", 1)[1])
            if a == "--no-index":
                out["no_index"] = True
            if a == "--break-system-packages":
                out["break_system_packages"] = True
            i += 1
    for d in options.find_links:
        _add(out["find_links"], d)
    if options.no_index:
        out["no_index"] = True
    return out


def _add(items: List[str], value: str) -> None:
    if value not in items:
        items.append(value)


def find_uv() -> Optional[str]:
    """A uv binary: on PATH, or next to the running interpreter (pip install uv puts it there)."""
    found = shutil.which("uv")
    if found:
        return found
    candidate = os.path.join(os.path.dirname(sys.executable), "uv")
    return candidate if os.access(candidate, os.X_OK) else None


def install_exact_argv(python: str, requirements: Sequence[str], *, tool: str, sources: Dict[str, Any],
                       wheels_dir: Optional[str] = None, offline: bool = False) -> List[str]:
    """`pip install --no-deps name==ver ...` (or the uv form) from the plan's sources, with the
    journal's wheels first; `offline` uses the wheels (and the plan's find-links) only."""
    no_index = offline or bool(sources.get("no_index"))
    urls = list(sources.get("index_urls", []))
    extra = urls[1:] + list(sources.get("extra_index_urls", []))
    links = ([wheels_dir] if wheels_dir else []) + list(sources.get("find_links", []))
    return list(installers.pip_install(
        python, list(requirements), index_url=urls[0] if urls else None, extra_index_urls=extra,
        find_links=links, no_index=no_index, installer=tool, no_deps=True,
        break_system_packages=bool(sources.get("break_system_packages")), uv=find_uv() or "uv",
    ))


def uninstall_argv(python: str, names: Sequence[str], *, tool: str,
                   sources: Optional[Dict[str, Any]] = None) -> List[str]:
    return list(installers.pip_uninstall(
        python, list(names), installer=tool,
        break_system_packages=bool((sources or {}).get("break_system_packages")), uv=find_uv() or "uv"))


def restore_tool(has_pip: bool) -> str:
    """pip when the target has it, else uv (a venv made --without-pip, a uv-managed env)."""
    if has_pip:
        return "pip"
    return "uv" if find_uv() else "pip"
