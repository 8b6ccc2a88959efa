"""Version strings and distribution names, the one place that normalises them.

No packaging import: these run on the fast path of doctor and plan (packaging's parsers cost
40-65 ms to import on the GPU machine). Comparisons that need real PEP 440 semantics
(specifiers, markers) use packaging where they happen.
"""

from __future__ import annotations

import functools
import re
from typing import Optional, Tuple


@functools.lru_cache(maxsize=4096)
def version_key(v: Optional[str]) -> Tuple[int, ...]:
    """Numeric key of a version string: "9.19.0.56" -> (9, 19, 0, 56). A local label is dropped
    ("2.11.0+cu130" -> (2, 11, 0)) and the key stops at the first part that does not start
    with a digit ("2.15.0rc1" -> (2, 15, 0))."""
    if not v:
        return ()
    out = []
    for part in re.split(r"[.\-]", v.split("+")[0]):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group(0)))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def newest_first(v: Optional[str]) -> Tuple[int, ...]:
    """version_key negated: a sort key that puts the newest version first."""
    return tuple(-x for x in version_key(v))


def public(v: str) -> str:
    """The version without its local label: "2.11.0+cu130" -> "2.11.0"."""
    return v.split("+")[0]


@functools.lru_cache(maxsize=8192)
def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 normalises it: "nvidia_cudnn_cu13" -> "nvidia-cudnn-cu13"."""
    return re.sub(r"[-_.]+", "-", name).lower()


def major_minor(v: Optional[str]) -> Tuple[int, ...]:
    """(major, minor) of a version: "12.6.3" -> (12, 6); "13" -> (13,)."""
    return version_key(v)[:2]


def older_minor(version: Optional[str], built: Optional[str]) -> bool:
    """True when `version` has the major of `built` but an older major.minor: "12.1.3" against
    CUDA "12.6". Within a CUDA major only newer runtime libraries are compatible with a build
    (docs.nvidia.com/deploy/cuda-compatibility @release:CUDA-13.0, "Minor Version
    Compatibility": an application built with X.y runs with the runtime/libraries of X.z,
    z >= y; tests/unit/test_rule_sources.py)."""
    if not (version and built):
        return False
    v, b = version_key(version), version_key(built)
    return bool(v) and bool(b) and v[0] == b[0] and v[:2] < b[:2]


def same_version(a: Optional[str], b: str) -> bool:
    """PEP 440 equality (2.5 == 2.5.0, local labels compared), text equality for non-PEP 440
    versions (apt's); False when `a` is None (not installed)."""
    from packaging.version import InvalidVersion, Version

    if a is None:
        return False
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def installer_skips(installed: Optional[str], named: Optional[str], wanted: str) -> bool:
    """True when pip or uv would take `NAME==wanted` as already installed and install nothing, so
    that only a forced reinstall (pip --force-reinstall, uv --reinstall-package NAME) replaces
    the copy: `installed` is METADATA's version, `named` the dist-info folder's name's when the
    two disagree (Distribution.named_version).

    NAMED_VERSION, the installed version each installer reads:
    - pip, from METADATA's Version (pip/_internal/metadata/importlib/_dists.py, pip 24.x
      `Distribution.version` -> importlib.metadata), and it skips a requirement whose installed
      version satisfies it (pip/_internal/req/req_install.py `check_if_exists`; resolution/
      resolvelib/factory.py `_iter_found_candidates` keeps the installed candidate unless
      --force-reinstall);
    - uv, from the folder's name (astral-sh/uv crates/uv-distribution-types/src/installed.rs
      `InstalledDist::try_from_path`: "Try to parse a distribution from a `.dist-info`
      directory name"), and `uv pip install` leaves a satisfied requirement alone unless
      --reinstall / --reinstall-package (docs.astral.sh/uv/reference/cli, `uv pip install`)."""
    return same_version(installed, wanted) or (named is not None and same_version(named, wanted))


# requirement strings

_REQ = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*(\[[^\]]*\])?\s*(?:===?\s*([^\s;,]+))?")


@functools.lru_cache(maxsize=8192)  # pure, and asked about the same few hundred strings
def split_requirement(req: str) -> Tuple[str, Optional[str]]:
    """ "torch==2.5.1+cu124" -> ("torch", "2.5.1+cu124"); "nvidia_cudnn_cu12[x] >= 9" ->
    ("nvidia-cudnn-cu12", None): the canonical name and the exact (==) version, extras dropped."""
    m = _REQ.match(req)
    if not m:
        return canonical_name(req.strip()), None
    return canonical_name(m.group(1)), m.group(3)


@functools.lru_cache(maxsize=8192)  # pure, and asked about the same few hundred strings
def requirement_parts(req: str) -> Tuple[str, Tuple[str, ...], str, Optional[str]]:
    """ "jax[cuda12]==0.4.30; sys_platform == 'linux'" -> ("jax", ("cuda12",), "==0.4.30", "0.4.30"):
    the canonical name, the extras, the specifier text and the exact (==) version."""
    m = re.match(r"^\s*([A-Za-z0-9][A-Za-z0-9_.\-]*)\s*(\[[^\]]*\])?\s*([^;]*?)\s*(;.*)?$", req)
    if not m:
        return canonical_name(req.strip()), (), "", None
    extras = tuple(e.strip() for e in (m.group(2) or "").strip("[]").split(",") if e.strip())
    spec = (m.group(3) or "").strip()
    exact = re.match(r"^={2,3}\s*([^\s,;]+)$", spec)
    return canonical_name(m.group(1)), extras, spec, exact.group(1) if exact else None


def requirement_name(req: str) -> str:
    """The canonical distribution name a requirement string names."""
    return split_requirement(req)[0]
