"""The lock file format: its dataclasses and its TOML, read and written.

Schema (version 2; version 1 files, whose [apt] was a table of package = "version", still read):

    version = 2
    created = "2026-11-26T04:10:00+00:00"
    tool = "colab-cudnn-fix 0.1.0"
    cudnn = "9.19.0"                      # the cuDNN the stack runs on (optional)
    cudnn_from = "pip"                    # optional
    indexes = ["https://download.pytorch.org/whl/cu130", "https://pypi.org/simple"]

    [machine]                             # what it was resolved for (facts, for people and drift)
    driver = "580.159.04"
    driver_cuda = "13.0"
    gpus = ["NVIDIA H200"]
    compute_capabilities = ["9.0"]
    python = "3.12.3"
    glibc = "2.39"
    arch = "x86_64"
    os = "Ubuntu 24.04.3 LTS"

    [requires]                            # what a machine must have to use it (apply --lock checks)
    python = "3.12"                       # major.minor of the interpreter
    cuda = "13.0"                         # the driver must support at least this CUDA
    compute_capabilities = ["7.5", ...]   # SASS targets every locked build ships ([] = not checked)
    ptx = "12.0"                          # or newer GPUs through PTX
    arch = "x86_64"

    [[package]]                           # installed with --require-hashes --no-deps
    name = "nvidia-cudnn-cu13"
    version = "9.19.0.56"
    index = "https://pypi.org/simple"
    hashes = ["sha256:..."]               # every file of that version the index lists

    [[remove]]                            # distributions the stack removes
    name = "nvidia-cudnn-cu12"

    [[apt]]                               # an exact apt pin, held after install
    package = "libcudnn9-cuda-13"
    version = "9.19.0.56-1"
    hold = true
    integrity = "apt-signed-index"        # or "sha256" with sha256 = "<hex>" when the recipes have it

    [[env_fix]]                           # loader fixes (fixer.model.EnvFix)
    kind = "ld-library-path-drop"
    value = "/usr/lib/x86_64-linux-gnu"
    why = "..."
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from fixer.system.compat import tomllib
from fixer.system.toml_write import quote, value
from fixer.errors import UsageError
from fixer.model import EnvFix

LOCK_VERSION = 2
READABLE_VERSIONS = (1, 2)


@dataclasses.dataclass(frozen=True)
class LockedPackage:
    name: str
    version: str
    index: Optional[str] = None  # index URL it comes from (None: only --find-links)
    hashes: Tuple[str, ...] = ()  # "sha256:<hex>", every file of this version


@dataclasses.dataclass(frozen=True)
class MachineFacts:
    driver: Optional[str] = None
    driver_cuda: Optional[str] = None
    gpus: Tuple[str, ...] = ()
    compute_capabilities: Tuple[str, ...] = ()
    python: Optional[str] = None
    glibc: Optional[str] = None
    arch: Optional[str] = None
    os: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class LockRequires:
    python: Optional[str] = None  # "3.12"
    cuda: Optional[str] = None  # the driver must support this CUDA
    compute_capabilities: Tuple[str, ...] = ()
    ptx: Optional[str] = None
    arch: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class AptPin:
    """An apt package at an exact version, held after install. `sha256` of its .deb when the
    recipes know it; otherwise `integrity` says what stands in: apt's own check of the
    signed repository index (InRelease / Release.gpg -> Packages -> the .deb's SHA256)."""

    package: str
    version: str
    hold: bool = True
    sha256: Optional[str] = None
    integrity: str = "apt-signed-index"  # or "sha256"


@dataclasses.dataclass(frozen=True)
class Lock:
    version: int = LOCK_VERSION
    created: str = ""
    tool: str = ""
    machine: MachineFacts = MachineFacts()
    requires: LockRequires = LockRequires()
    indexes: Tuple[str, ...] = ()
    packages: Tuple[LockedPackage, ...] = ()
    remove: Tuple[str, ...] = ()
    apt: Tuple[AptPin, ...] = ()
    env_fixes: Tuple[EnvFix, ...] = ()
    cudnn: Optional[str] = None
    cudnn_from: Optional[str] = None


def _table(d: Mapping[str, Any]) -> List[str]:
    return [
        f"{quote(k) if not re.match(r'^[A-Za-z0-9_-]+$', k) else k} = {value(v)}"
        for k, v in d.items()
        if v is not None
    ]


def dumps(lock: Lock) -> str:
    lines = [
        "# colab-cudnn-fix lock file (schema: `version`; see fixer/lockfile/format.py).",
        "# Reproduce with: colab-cudnn-fix apply --lock THIS_FILE",
        "",
    ]
    top = {
        "version": lock.version,
        "created": lock.created,
        "tool": lock.tool,
        "cudnn": lock.cudnn,
        "cudnn_from": lock.cudnn_from,
        "indexes": list(lock.indexes),
    }
    lines += _table(top)
    lines += ["", "[machine]"] + _table(dataclasses.asdict(lock.machine))
    lines += ["", "[requires]"] + _table(dataclasses.asdict(lock.requires))
    for p in lock.packages:
        lines += ["", "[[package]]"] + _table(
            {"name": p.name, "version": p.version, "index": p.index, "hashes": list(p.hashes)}
        )
    for name in lock.remove:
        lines += ["", "[[remove]]", f"name = {quote(name)}"]
    for a in lock.apt:
        lines += ["", "[[apt]]"] + _table(
            {
                "package": a.package,
                "version": a.version,
                "hold": a.hold,
                "sha256": a.sha256,
                "integrity": a.integrity,
            }
        )
    for fx in lock.env_fixes:
        lines += ["", "[[env_fix]]"] + _table({"kind": fx.kind, "value": fx.value, "why": fx.why})
    return "\n".join(lines) + "\n"


def write_lock(lock: Lock, path: str) -> Path:
    """Write atomically (temporary file + fsync + rename)."""
    from fixer.applier.journal import atomic_write

    target = Path(path)
    try:
        atomic_write(target, dumps(lock).encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write it: {exc.strerror or exc}")
    return target


def read_lock(path: str) -> Lock:
    """Parse and check a lock file; any problem is a UsageError naming the file and key."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise UsageError(f"--lock {path}: no such file")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--lock {path}: cannot read it: {exc}")
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--lock {path}: not TOML: {exc}")
    return lock_from_dict(data, path)


def lock_from_dict(data: Dict[str, Any], where: str = "lock") -> Lock:
    def bad(key: str, msg: str) -> UsageError:
        return UsageError(f"{where}: {key}: {msg}")

    if data.get("version") not in READABLE_VERSIONS:
        raise bad(
            "version",
            f"expected one of {READABLE_VERSIONS}, got {data.get('version')!r} "
            "(a lock written by another version of colab-cudnn-fix?)",
        )
    known = {
        "version",
        "created",
        "tool",
        "cudnn",
        "cudnn_from",
        "indexes",
        "machine",
        "requires",
        "package",
        "remove",
        "apt",
        "env_fix",
    }
    unknown = sorted(set(data) - known)
    if unknown:
        raise bad(unknown[0], "unknown key")

    def strs(v: Any, key: str) -> Tuple[str, ...]:
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise bad(key, "expected a list of strings")
        return tuple(v)

    def section(cls: type, key: str) -> Any:
        raw = data.get(key, {})
        if not isinstance(raw, dict):
            raise bad(key, "expected a table")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kw: Dict[str, Any] = {}
        for k, v in raw.items():
            if k not in fields:
                raise bad(f"{key}.{k}", "unknown key")
            kw[k] = (
                strs(v, f"{key}.{k}")
                if isinstance(v, list) or "Tuple" in str(fields[k].type)
                else v
            )
            if not isinstance(kw[k], (str, tuple)):
                raise bad(f"{key}.{k}", "expected a string")
        return cls(**kw)

    packages: List[LockedPackage] = []
    for i, p in enumerate(data.get("package", [])):
        key = f"package[{i}]"
        if (
            not isinstance(p, dict)
            or not isinstance(p.get("name"), str)
            or not isinstance(p.get("version"), str)
        ):
            raise bad(key, "needs name and version strings")
        try:
            Version(p["version"])
        except InvalidVersion:
            raise bad(f"{key}.version", f"{p['version']!r} is not a version")
        hashes = strs(p.get("hashes", []), f"{key}.hashes")
        if not hashes or not all(re.match(r"^sha256:[0-9a-f]{64}$", h) for h in hashes):
            raise bad(f"{key}.hashes", 'needs at least one "sha256:<64 hex digits>"')
        extra = sorted(set(p) - {"name", "version", "index", "hashes"})
        if extra:
            raise bad(f"{key}.{extra[0]}", "unknown key")
        packages.append(
            LockedPackage(
                name=canonicalize_name(p["name"]),
                version=p["version"],
                index=p.get("index"),
                hashes=hashes,
            )
        )
    fixes: List[EnvFix] = []
    for i, fx in enumerate(data.get("env_fix", [])):
        try:
            from fixer.model import from_dict

            fixes.append(from_dict(EnvFix, fx, f"{where}: env_fix[{i}]"))
        except ValueError as exc:
            raise UsageError(str(exc))
    apt = _apt_pins(data.get("apt", []), bad)
    return Lock(
        version=LOCK_VERSION,
        created=str(data.get("created", "")),
        tool=str(data.get("tool", "")),
        machine=section(MachineFacts, "machine"),
        requires=section(LockRequires, "requires"),
        indexes=strs(data.get("indexes", []), "indexes"),
        packages=tuple(packages),
        remove=tuple(canonicalize_name(r["name"]) for r in data.get("remove", [])),
        apt=apt,
        env_fixes=tuple(fixes),
        cudnn=data.get("cudnn"),
        cudnn_from=data.get("cudnn_from"),
    )


def _apt_pins(raw: Any, bad: Callable[[str, str], UsageError]) -> Tuple[AptPin, ...]:
    """[[apt]] records (version 2), or version 1's [apt] table of package = "version"."""
    if isinstance(raw, dict):
        if not all(isinstance(v, str) for v in raw.values()):
            raise bad("apt", 'expected a table of package = "version"')
        return tuple(AptPin(package=k, version=v) for k, v in raw.items())
    if not isinstance(raw, list):
        raise bad("apt", "expected [[apt]] records")
    out: List[AptPin] = []
    for i, a in enumerate(raw):
        key = f"apt[{i}]"
        if (
            not isinstance(a, dict)
            or not isinstance(a.get("package"), str)
            or not isinstance(a.get("version"), str)
        ):
            raise bad(key, "needs package and version strings")
        extra = sorted(set(a) - {"package", "version", "hold", "sha256", "integrity"})
        if extra:
            raise bad(f"{key}.{extra[0]}", "unknown key")
        sha = a.get("sha256")
        if sha is not None and not (isinstance(sha, str) and re.match(r"^[0-9a-f]{64}$", sha)):
            raise bad(f"{key}.sha256", "expected 64 hex digits")
        integrity = a.get("integrity", "sha256" if sha else "apt-signed-index")
        if integrity not in ("sha256", "apt-signed-index") or (integrity == "sha256" and not sha):
            raise bad(f"{key}.integrity", 'expected "sha256" (with sha256) or "apt-signed-index"')
        out.append(
            AptPin(
                package=a["package"],
                version=a["version"],
                hold=bool(a.get("hold", True)),
                sha256=sha,
                integrity=integrity,
            )
        )
    return tuple(out)
