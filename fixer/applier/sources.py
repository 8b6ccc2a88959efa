"""Where packages come from, and the commands that put previous versions back.

Rollback reinstalls from the same places the plan installed from: the index options each
pip/uv step carries as data (Step.pip), gathered here into the journal's "sources"; the
journal's repacked wheels are put first as a --find-links directory so that offline restores
work. The command lines themselves come from fixer.planner.installers, the one place that builds them,
with the installer the plan recorded (Plan.installer, chosen by installers.choose).
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence

from fixer.planner import installers
from fixer.model import PlanOptions, Step


def sources_of(steps: Iterable[Step], options: PlanOptions) -> Dict[str, Any]:
    """Index URLs, extra index URLs, find-links, no-index and --break-system-packages of the
    plan's pip/uv steps (their Step.pip). A step that installs from the default index (PyPI)
    beside steps that name another adds PyPI, so that a reinstall finds both."""
    out: Dict[str, Any] = {
        "index_urls": [],
        "extra_index_urls": [],
        "find_links": [],
        "no_index": False,
        "break_system_packages": False,
    }
    default_index = False
    for step in steps:
        o = step.pip
        if o is None:
            continue
        if step.kind == "pip-install" and not o.no_index:
            if o.index_url:
                _add(out["index_urls"], o.index_url)
            else:
                default_index = True
            for url in o.extra_index_urls:
                _add(out["extra_index_urls"], url)
        for d in o.find_links:
            _add(out["find_links"], d)
        out["no_index"] = out["no_index"] or o.no_index
        out["break_system_packages"] = out["break_system_packages"] or o.break_system_packages
    if default_index and out["index_urls"]:
        _add(out["extra_index_urls"], installers.PYPI_SIMPLE)
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


def install_exact_argv(
    python: str,
    requirements: Sequence[str],
    *,
    tool: str,
    sources: Dict[str, Any],
    wheels_dir: Optional[str] = None,
    offline: bool = False,
) -> List[str]:
    """`pip install --no-deps name==ver ...` (or the uv form) from the plan's sources, with the
    journal's wheels first; `offline` uses the wheels (and the plan's find-links) only."""
    no_index = offline or bool(sources.get("no_index"))
    urls = list(sources.get("index_urls", []))
    extra = urls[1:] + list(sources.get("extra_index_urls", []))
    links = ([wheels_dir] if wheels_dir else []) + list(sources.get("find_links", []))
    return list(
        installers.pip_install(
            python,
            list(requirements),
            index_url=urls[0] if urls else None,
            extra_index_urls=extra,
            find_links=links,
            no_index=no_index,
            installer=tool,
            no_deps=True,
            break_system_packages=bool(sources.get("break_system_packages")),
            uv=find_uv() or "uv",
        )
    )
