"""Plugins through entry points, found in the environment the tool runs in.

Two groups (a distribution declares them in its entry_points.txt):

    [colab_cudnn_fix.recipes]
    ctranslate2 = my_package.recipes         # a package directory holding recipe *.toml files

    [colab_cudnn_fix.checks]
    my-check = my_package.checks:check       # check(env, recipes) -> iterable of fixer.Finding

Recipe plugins are data: their files join the shipped recipes (added, never replacing a shipped
file), and nothing of the plugin is imported. Check plugins are code: each runs in isolation,
and whatever it raises or returns that is not a Finding makes it "broken": it is skipped and
named in `problems()` (the CLI prints those as warning lines on stderr), so one broken plugin
cannot take a command down. rapids-cli's `rapids_doctor_check` entry point works the same way.

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
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

RECIPES_GROUP = "colab_cudnn_fix.recipes"
CHECKS_GROUP = "colab_cudnn_fix.checks"

_LOCK = threading.Lock()
_PROBLEMS: List[str] = []
_CACHE: Dict[Tuple[Tuple[str, int], ...], Tuple["Plugin", ...]] = {}


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


def discover(path: Optional[Sequence[str]] = None) -> Tuple[Plugin, ...]:
    """Every colab_cudnn_fix.* entry point on `path` (default sys.path), first directory first."""
    dirs = [d for d in (sys.path if path is None else path) if d and os.path.isdir(d)]
    key = []
    for d in dirs:
        try:
            key.append((d, os.stat(d).st_mtime_ns))
        except OSError:
            continue
    k = tuple(key)
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
    seen = set()
    for d, _m in key:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for n in names:
            if not n.endswith((".dist-info", ".egg-info")):
                continue
            try:
                with open(
                    os.path.join(d, n, "entry_points.txt"), encoding="utf-8", errors="replace"
                ) as fh:
                    text = fh.read()
            except OSError:
                continue
            if "colab_cudnn_fix." not in text:
                continue
            dist = _dist_name(n)
            if dist.split()[0] in seen:  # shadowed by an earlier sys.path entry, as importlib does
                continue
            seen.add(dist.split()[0])
            for group, name, value in _parse_entry_points(text):
                if group in (RECIPES_GROUP, CHECKS_GROUP):
                    found.append(
                        Plugin(group=group, name=name, value=value, distribution=dist, location=d)
                    )
    result = tuple(found)
    with _LOCK:
        _CACHE[k] = result
    _disk_write(k, result)
    return result


def _disk_path(key: Tuple[Tuple[str, int], ...]) -> Any:
    import hashlib

    from fixer.system.paths import cache_dir

    return cache_dir() / "plugins" / (hashlib.sha256(repr(key).encode()).hexdigest()[:24] + ".json")


def _disk_read(key: Tuple[Tuple[str, int], ...]) -> Optional[Tuple[Plugin, ...]]:
    """The plugins an earlier process found on the same directories, unchanged since (the key
    holds each directory's mtime: installing or removing a distribution changes it)."""
    import json

    try:
        data = json.loads(_disk_path(key).read_text())
        return tuple(Plugin(**d) for d in data)
    except (OSError, ValueError, TypeError):
        return None


def _disk_write(key: Tuple[Tuple[str, int], ...], plugins: Tuple[Plugin, ...]) -> None:
    import json

    from fixer.system.paths import write_cache

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


def run_checks(env: Any, recipes: Any, path: Optional[Sequence[str]] = None) -> Tuple[Any, ...]:
    """The findings of every check plugin; a plugin that fails to import, raises, or returns
    anything but fixer Findings is skipped and reported."""
    plugins = [p for p in discover(path) if p.group == CHECKS_GROUP]
    if not plugins:
        return ()
    import importlib

    from fixer.model import FINDING_IDS, Finding

    out: List[Finding] = []
    for p in plugins:
        where = f"check plugin {p.name!r} of {p.distribution}"
        module, _, attr = p.value.partition(":")
        try:
            fn: Any = importlib.import_module(module.strip())
            for part in attr.strip().split(".") if attr else []:
                fn = getattr(fn, part)
            got = list(fn(env, recipes) or ())
        except Exception as exc:  # noqa: BLE001 - a plugin's failure is reported, never raised
            _problem(f"{where} failed: {type(exc).__name__}: {exc}; skipped")
            continue
        bad = [
            g
            for g in got
            if not isinstance(g, Finding)
            or g.id not in FINDING_IDS
            or g.severity not in ("error", "warning", "info")
        ]
        if bad:
            _problem(
                f"{where} returned {bad[0]!r}, not a Finding with a known id and severity; skipped"
            )
            continue
        out += [
            dataclasses.replace(f, evidence=tuple(f.evidence) + (f"reported by {where}",))
            for f in got
        ]
    return tuple(out)


def names(items: Iterable[Plugin]) -> List[str]:
    return [f"{p.group.split('.')[-1]}:{p.name} ({p.distribution})" for p in items]
