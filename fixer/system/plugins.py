"""Plugins through entry points, found in the environment the tool runs in.

Two groups (a distribution declares them in its entry_points.txt):

    [colab_cudnn_fix.recipes]
    ctranslate2 = my_package.recipes         # a package directory holding recipe *.toml files

    [colab_cudnn_fix.checks]
    my-check = my_package.checks:check       # check(env, recipes) -> iterable of fixer.Finding

Recipe plugins are data: their files join the shipped recipes (added, never replacing a shipped
file), checked by the same checkers, and nothing of the plugin is imported. Check plugins are
code (run by fixer.diagnosis.checkplugins, the stage whose findings they join), and each runs
isolated: in a thread of its own with a deadline (CHECK_TIMEOUT), with every
exception caught (BaseException: a plugin's sys.exit or KeyboardInterrupt is its own failure; a
user's Ctrl-C reaches the main thread, which is waiting for it, and stops the command as
always), and with what it prints to sys.stdout/sys.stderr captured (so `--json` output stays one
JSON document). A plugin that fails, runs late, or returns anything that is not a Finding is
"broken": it is skipped and named in `problems()` (the CLI prints those as warning lines on
stderr), and it changes neither the exit code nor the JSON. A plugin that writes to file
descriptor 1 directly (os.write) is beyond this capture. rapids-cli's `rapids_doctor_check`
entry point works the same way.

Discovery reads the `*.dist-info/entry_points.txt` files of the directories on sys.path
(the same files importlib.metadata reads) and keeps the answer, in the process and on disk,
keyed by those directories' mtimes (installing or removing a distribution changes its
directory's mtime): a later process pays one stat per sys.path entry and one small read
(scripts/bench_plugins.py measures it).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
import threading
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple
from fixer.system.paths import cache_dir
from fixer.system import cachefile
from fixer.system.paths import write_cache

RECIPES_GROUP = "colab_cudnn_fix.recipes"
CHECKS_GROUP = "colab_cudnn_fix.checks"

_LOCK = threading.Lock()
_PROBLEMS: List[str] = []
_CACHE: Dict[Tuple[Tuple[str, int], ...], Tuple["Plugin", ...]] = {}
#: An entry point's object: "pkg.module" or "pkg.module:attr.attr" (Python identifiers).
_VALUE = re.compile(r"[A-Za-z_][\w.]*(\s*:\s*[A-Za-z_][\w.]*)?")
#: The most of one entry_points.txt that is read (a real one is a few hundred bytes).
_MAX_ENTRY_POINTS = 1 << 20


@dataclasses.dataclass(frozen=True)
class Plugin:
    """One entry point of a plugin group: its name, the object it names and the distribution that ships it."""

    group: str
    name: str
    value: str  # "pkg.module" or "pkg.module:attr"
    distribution: str  # "ccf-ctranslate2 1.0"
    location: str  # the sys.path directory the distribution lives in


def problems() -> Tuple[str, ...]:
    """Broken plugins met in this process so far, one sentence each."""
    with _LOCK:
        return tuple(_PROBLEMS)


def _problem(text: str) -> None:
    with _LOCK:
        if text not in _PROBLEMS:
            _PROBLEMS.append(text)


def note(text: str) -> None:
    """A warning line for stderr after the command, from any input reader (a lock that allows
    a plain-http index): the same channel as broken plugins."""
    _problem(text)


def clear() -> None:
    with _LOCK:
        _PROBLEMS.clear()
        _CACHE.clear()


def _parse_entry_points(text: str) -> List[Tuple[str, str, str]]:
    """(group, name, value) from an entry_points.txt (INI: [group] then `name = value`)."""
    out = []
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        m = re.match(r"^\[\s*([^\]]+?)\s*\]$", line)
        if m:
            group = m.group(1)
            continue
        if group and "=" in line:
            name, value = (s.strip() for s in line.split("=", 1))
            out.append((group, name, value))
    return out


def _dist_name(dist_info: str) -> str:
    base = dist_info.rsplit(".", 1)[0]  # "ccf_ct2-1.0"
    name, _, version = base.partition("-")
    return f"{name} {version}".strip()


def _stamp(dirs: Sequence[str]) -> Tuple[Tuple[str, int], ...]:
    key = []
    for d in dirs:
        try:
            key.append((d, os.stat(d).st_mtime_ns))
        except OSError:
            continue
    return tuple(key)


def discover(path: Optional[Sequence[str]] = None) -> Tuple[Plugin, ...]:
    """Every colab_cudnn_fix.* entry point on `path` (default sys.path), first directory first."""
    dirs = [d for d in (sys.path if path is None else path) if d and os.path.isdir(d)]
    k = _stamp(dirs)
    with _LOCK:
        hit = _CACHE.get(k)
    if hit is not None:
        return hit
    disk = _disk_read(k)
    if disk is not None:
        with _LOCK:
            _CACHE[k] = disk
        return disk
    found: List[Plugin] = []
    seen: Set[str] = set()
    for d, _m in k:
        found += _scan_dir(d, seen)
    result = tuple(found)
    with _LOCK:
        _CACHE[k] = result
    _disk_write(k, result)
    return result


def _scan_dir(d: str, seen: Set[str]) -> List[Plugin]:
    """The plugins of one sys.path directory (a distribution already seen earlier on the path
    shadows this one, as importlib does)."""
    try:
        names = sorted(os.listdir(d))
    except OSError:
        return []
    found: List[Plugin] = []
    for n in names:
        if not n.endswith((".dist-info", ".egg-info")):
            continue
        try:
            with open(
                os.path.join(d, n, "entry_points.txt"), encoding="utf-8", errors="replace"
            ) as fh:
                text = fh.read(_MAX_ENTRY_POINTS)
        except OSError:
            continue
        if "colab_cudnn_fix." not in text:
            continue
        dist = _dist_name(n)
        if dist.split()[0] in seen:
            continue
        seen.add(dist.split()[0])
        for group, name, value in _parse_entry_points(text):
            if group in (RECIPES_GROUP, CHECKS_GROUP):
                found.append(
                    Plugin(group=group, name=name, value=value, distribution=dist, location=d)
                )
    return found


def _disk_path(key: Tuple[Tuple[str, int], ...]) -> Any:
    import hashlib

    return cache_dir() / "plugins" / (hashlib.sha256(repr(key).encode()).hexdigest()[:24] + ".json")


def _disk_read(key: Tuple[Tuple[str, int], ...]) -> Optional[Tuple[Plugin, ...]]:
    """The plugins an earlier process found on the same directories, unchanged since (the key
    holds each directory's mtime: installing or removing a distribution changes it). Read only
    from our own private cache file (fixer.system.cachefile), and each entry checked as
    discovery would have made it: a known group, a location among the directories searched,
    short names and an importable value; anything else means scanning again."""
    data = cachefile.read_json(_disk_path(key), limit=1 << 20)
    if not isinstance(data, list):
        return None
    dirs = {d for d, _ in key}
    out = []
    for d in data:
        if not isinstance(d, dict) or set(d) != {f.name for f in dataclasses.fields(Plugin)}:
            return None
        if not all(isinstance(v, str) and len(v) <= 4096 for v in d.values()):
            return None
        if d["group"] not in (RECIPES_GROUP, CHECKS_GROUP) or d["location"] not in dirs:
            return None
        if not _VALUE.fullmatch(d["value"]):
            return None
        out.append(Plugin(**d))
    return tuple(out)


def _disk_write(key: Tuple[Tuple[str, int], ...], plugins: Tuple[Plugin, ...]) -> None:
    import json

    write_cache(_disk_path(key), json.dumps([dataclasses.asdict(p) for p in plugins]).encode())


def recipe_dirs(path: Optional[Sequence[str]] = None) -> Tuple[Tuple[Plugin, str], ...]:
    """(plugin, directory of its recipe files) for each recipe plugin whose package directory
    exists and holds *.toml files; the others are reported as problems and skipped."""
    out = []
    for p in discover(path):
        if p.group != RECIPES_GROUP:
            continue
        if ":" in p.value or not re.match(r"^[A-Za-z_][\w.]*$", p.value):
            _problem(
                f"recipe plugin {p.name!r} of {p.distribution}: {p.value!r} must name a package "
                "directory of recipe files (pkg.sub), not an object; skipped"
            )
            continue
        d = os.path.join(p.location, *p.value.split("."))
        tomls = [f for f in (os.listdir(d) if os.path.isdir(d) else []) if f.endswith(".toml")]
        if not tomls:
            _problem(
                f"recipe plugin {p.name!r} of {p.distribution}: no recipe files (*.toml) in {d}; skipped"
            )
            continue
        out.append((p, d))
    return tuple(out)


def note_broken_recipes(plugin: Plugin, message: str) -> None:
    _problem(f"recipe plugin {plugin.name!r} of {plugin.distribution}: {message}; skipped")


def names(items: Iterable[Plugin]) -> List[str]:
    return [f"{p.group.split('.')[-1]}:{p.name} ({p.distribution})" for p in items]
