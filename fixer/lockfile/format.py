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
from typing import Any, Callable, Dict, FrozenSet, List, Mapping, Optional, Set, Tuple

from fixer.system import grammar
from fixer.system.compat import tomllib
from fixer.system.toml_write import quote, value
from fixer.errors import UsageError
from fixer.model import EnvFix, Recipes
from fixer.system import fsgate
from fixer.recipebook import TomlLines
from fixer.system.plugins import note
from fixer.rules import requirement_name
from fixer.system.versions import canonical_name
from fixer import recipebook
from fixer.planner.envfix import ENV_FILE
from fixer.model import from_dict

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


def check_output(path: str) -> Path:
    """`-o PATH` before anything is done: its directory must exist already (lock creates no
    directory: `-o /nonexistent/dir/x.toml` made folders at the file system's root), and PATH
    must not be a directory. A UsageError (exit 2) otherwise."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"-o {path}: is a directory", hint="name the lock file to write")
    if not target.parent.is_dir():
        raise UsageError(
            f"-o {path}: no such directory: {target.parent}",
            hint="lock writes into an existing directory; create it first",
        )
    return target


def write_lock(lock: Lock, path: str) -> Path:
    """Write atomically (temporary file + fsync + rename) into an existing directory, through
    the gate: the one file the user named with -o is allowed (fixer.system.fsgate; never written
    through a symlink's target)."""
    target = check_output(path)
    try:
        with fsgate.allowed(files=[target], why="-o"):
            fsgate.write_bytes(target, dumps(lock).encode("utf-8"), 0o644)
    except OSError as exc:
        raise UsageError(f"-o {path}: cannot write it: {exc.strerror or exc}")
    return target


class _Bad(Exception):
    """One problem in a lock: the key path ("package[2].name") and what is wrong with it."""

    def __init__(self, key: str, msg: str) -> None:
        super().__init__(f"{key}: {msg}")
        self.key = key
        self.msg = msg


#: The largest lock this reads (a real one is a few KB: a stack has tens of packages).
MAX_LOCK_BYTES = 4 * 1024 * 1024
#: Most records of one kind, and most hashes of one package (a release has one file per
#: platform and Python: tens, not thousands).
MAX_RECORDS = 2000
MAX_HASHES = 500

#: Distributions a lock may never remove, whatever the recipes say: the installers and the
#: tool itself (removing them would leave the machine without a way back).
PROTECTED = frozenset({"pip", "setuptools", "wheel", "uv", "packaging", "colab-cudnn-fix"})

#: Where a loader fix never points: temporary and per-process trees anyone can write to or that
#: are not files at all. A loader fix names the directory of a cuDNN copy (pip's
#: site-packages/nvidia/cudnn/lib, a conda prefix's lib, apt's /usr/lib/<triplet>, the CUDA
#: toolkit's lib64): fixer.resolver.loader_fixes writes nothing else.


def read_lock(path: str, recipes: Optional[Recipes] = None) -> Lock:
    """Parse and check a lock file; any problem is a UsageError naming FILE:LINE and the key.
    `recipes` (default: the recipes in effect) say which distributions [[remove]] may name."""
    text = _read_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"--lock {path}: not TOML: {exc}")
    try:
        return _lock(data, recipes)
    except _Bad as bad:
        raise UsageError(f"{path}:{_line_of(text, bad.key)}: {bad.key}: {bad.msg}") from None


def _read_text(path: str) -> str:
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_LOCK_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"--lock {path}: no such file")
    except OSError as exc:
        raise UsageError(f"--lock {path}: cannot read it: {exc.strerror or exc}")
    if len(raw) > MAX_LOCK_BYTES:
        raise UsageError(f"--lock {path}: larger than {MAX_LOCK_BYTES // 1024 // 1024} MiB")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--lock {path}: not UTF-8 text ({exc.reason} at byte {exc.start})")


def _line_of(text: str, key: str) -> int:
    """The line of `key` ("package[2].name", "requires.cuda", "indexes") in the lock's text."""
    lines = TomlLines(text)
    m = re.match(r"^([A-Za-z_]+)(?:\[(\d+)\])?(?:\.([A-Za-z0-9_-]+))?", key)
    if m is None:
        return 1
    table, index, sub = m.group(1), m.group(2), m.group(3)
    if index is not None:
        kind = {"package": "package", "remove": "remove", "apt": "apt", "env_fix": "env_fix"}
        n = int(index)
        line = lines.key(kind.get(table, table), n, sub) if sub else lines.record(table, n)
        return line or lines.top_key(table) or 1
    if sub:
        return lines.table(table) or 1
    return lines.top_key(table) or lines.table(table) or 1


def lock_from_dict(data: Any, where: str = "lock", recipes: Optional[Recipes] = None) -> Lock:
    """A Lock from parsed TOML (or JSON) data; any problem is a UsageError "WHERE: KEY: what"."""
    try:
        return _lock(data, recipes)
    except _Bad as bad:
        raise UsageError(f"{where}: {bad.key}: {bad.msg}") from None


_TOP_KEYS = (
    "version",
    "created",
    "tool",
    "cudnn",
    "cudnn_from",
    "indexes",
    "allow_insecure_index",
    "machine",
    "requires",
    "package",
    "remove",
    "apt",
    "env_fix",
)


def _lock(data: Any, recipes: Optional[Recipes]) -> Lock:
    if not isinstance(data, dict):
        raise _Bad("$", "expected a table")
    if data.get("version") not in READABLE_VERSIONS or isinstance(data.get("version"), bool):
        raise _Bad(
            "version",
            f"expected one of {READABLE_VERSIONS}, got {_short(data.get('version'))} "
            "(a lock written by another version of colab-cudnn-fix?)",
        )
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise _Bad(_key_name(unknown[0]), "unknown key")
    allow = data.get("allow_insecure_index", False)
    if not isinstance(allow, bool):
        raise _Bad("allow_insecure_index", "expected true or false")
    indexes = tuple(
        _check("indexes", lambda u: grammar.index_url(u, allow_insecure=allow), x, i)
        for i, x in enumerate(_list(data.get("indexes", []), "indexes"))
    )
    packages = _packages(data.get("package", []), allow)
    lock = Lock(
        version=LOCK_VERSION,
        created=_text(data, "created", 64),
        tool=_text(data, "tool", 128),
        machine=_section(data, MachineFacts, "machine"),
        requires=_section(data, LockRequires, "requires"),
        indexes=indexes,
        packages=packages,
        remove=_removes(data.get("remove", []), recipes),
        apt=_apt_pins(data.get("apt", [])),
        env_fixes=_env_fixes(data.get("env_fix", [])),
        cudnn=_opt(data, "cudnn", _CUDNN),
        cudnn_from=_opt(data, "cudnn_from", _WORD),
    )
    _warn_insecure(lock)
    return lock


def _warn_insecure(lock: Lock) -> None:
    """A lock that allows a plain-http index gets a warning line after the command."""
    urls = list(lock.indexes) + [p.index for p in lock.packages if p.index]
    for url in dict.fromkeys(u for u in urls if grammar.insecure(u)):
        note(
            f"the lock allows the plain-http index {grammar.mask_url(url)}: what it serves can be "
            "read and changed on the way (allow_insecure_index = true)"
        )


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]{1,60}")


def _key_name(k: Any) -> str:
    """A key of the untrusted lock as an error message names it: bare when TOML would write it
    bare, else as _short shows any value (repr escapes a newline or a Unicode line separator:
    the message stays one line)."""
    text = str(k)
    return text if _BARE_KEY.fullmatch(text) else _short(text)


def _short(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


def _check(key: str, fn: Callable[[Any], Any], v: Any, i: Optional[int] = None) -> Any:
    where = key if i is None else f"{key}[{i}]"
    try:
        return fn(v)
    except ValueError as exc:
        raise _Bad(where, str(exc)) from None


def _list(v: Any, key: str, limit: int = MAX_RECORDS) -> List[Any]:
    if not isinstance(v, list):
        raise _Bad(key, f"expected a list, got {type(v).__name__}")
    if len(v) > limit:
        raise _Bad(key, f"more than {limit} entries")
    return v


def _regex(pattern: str, what: str) -> Callable[[Any], str]:
    rx = re.compile(pattern)

    def check(v: Any) -> str:
        if not isinstance(v, str) or len(v) > 64 or not rx.fullmatch(v):
            raise ValueError(f"expected {what}, got {_short(v)}")
        return v

    return check


_CUDNN = _regex(r"\d{1,3}\.\d{1,3}\.\d{1,3}", 'a cuDNN version like "9.19.0"')
_CUDA = _regex(r"\d{1,2}\.\d{1,2}", 'a CUDA version like "13.0"')
_PY = _regex(r"3\.\d{1,3}", 'a Python version like "3.12"')
_CC = _regex(r"\d{1,2}\.\d{1,2}", 'a compute capability like "9.0"')
_ARCH = _regex(r"[a-z0-9_]{1,32}", 'an architecture like "x86_64"')
_WORD = _regex(r"[a-z][a-z0-9-]{0,31}", 'a word like "pip"')
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")

#: [requires]: each key's grammar (a machine fact compared against what detection reads).
_REQUIRES: Dict[str, Callable[[Any], str]] = {
    "python": _PY,
    "cuda": _CUDA,
    "compute_capabilities": _CC,
    "ptx": _CUDA,
    "arch": _ARCH,
}


def _text(data: Mapping[str, Any], key: str, limit: int) -> str:
    v = data.get(key, "")
    return str(_check(key, lambda x: grammar.short_text(x, limit, "text"), v))


def _opt(data: Mapping[str, Any], key: str, fn: Callable[[Any], str]) -> Optional[str]:
    v = data.get(key)
    return None if v is None else str(_check(key, fn, v))


def _section(data: Mapping[str, Any], cls: type, key: str) -> Any:
    """[machine] (free text facts, bounded) or [requires] (each key by its grammar)."""
    raw = data.get(key, {})
    if not isinstance(raw, dict):
        raise _Bad(key, "expected a table")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kw: Dict[str, Any] = {}
    for k, v in raw.items():
        if k not in fields:
            raise _Bad(f"{key}.{_key_name(k)}", "unknown key")
        fn = _REQUIRES.get(k) if cls is LockRequires else None
        one = fn or (lambda x: grammar.short_text(x, 256, "text"))
        if "Tuple" in str(fields[k].type):
            kw[k] = tuple(_check(f"{key}.{k}", one, x, i) for i, x in enumerate(_list(v, k, 64)))
        else:
            kw[k] = _check(f"{key}.{k}", one, v)
    return cls(**kw)


def _record(raw: Any, key: str, keys: Tuple[str, ...], required: Tuple[str, ...]) -> Dict[str, Any]:
    if not isinstance(raw, dict):
        raise _Bad(key, "expected a table")
    extra = sorted(set(raw) - set(keys))
    if extra:
        raise _Bad(f"{key}.{_key_name(extra[0])}", "unknown key")
    missing = [k for k in required if k not in raw]
    if missing:
        raise _Bad(key, f"needs {' and '.join(required)}")
    return raw


def _packages(raw: Any, allow_insecure: bool) -> Tuple[LockedPackage, ...]:
    out: List[LockedPackage] = []
    for i, p in enumerate(_list(raw, "package")):
        key = f"package[{i}]"
        p = _record(p, key, ("name", "version", "index", "hashes"), ("name", "version"))
        hashes = tuple(_list(p.get("hashes", []), f"{key}.hashes", MAX_HASHES))
        if not hashes or not all(isinstance(h, str) and _SHA256.fullmatch(h) for h in hashes):
            raise _Bad(f"{key}.hashes", 'needs at least one "sha256:<64 hex digits>"')
        index = p.get("index")
        if index is not None:
            _check(
                f"{key}.index", lambda u: grammar.index_url(u, allow_insecure=allow_insecure), index
            )
        out.append(
            LockedPackage(
                name=_check(f"{key}.name", grammar.pip_name, p["name"]),
                version=_check(f"{key}.version", grammar.pip_version, p["version"]),
                index=index,
                hashes=hashes,
            )
        )
    return tuple(out)


def known_distributions(recipes: Recipes) -> FrozenSet[str]:
    """Every pip distribution the recipes name (builds, their pins and companions, cuDNN
    wheels, downloads, dependency sets): what a stack can install, so what a lock may remove."""
    names: Set[str] = set()
    for b in recipes.builds:
        for req in b.packages + b.requires + b.companions:
            names.add(canonical_name(requirement_name(req)))
    for c in recipes.cudnn:
        names.update(canonical_name(n) for n in c.pip)
    names.update(canonical_name(d.distribution) for d in recipes.downloads)
    for d in recipes.dependencies:
        if d.manager == "pip":
            for req in (d.package,) + d.brings + d.others:
                names.add(canonical_name(requirement_name(req.split("[")[0])))
    return frozenset(names - PROTECTED)


def _removes(raw: Any, recipes: Optional[Recipes]) -> Tuple[str, ...]:
    if recipes is None:
        recipes = recipebook.load()
    known = known_distributions(recipes)
    out: List[str] = []
    for i, r in enumerate(_list(raw, "remove")):
        key = f"remove[{i}]"
        name = _check(
            f"{key}.name", grammar.pip_name, _record(r, key, ("name",), ("name",))["name"]
        )
        if name not in known:
            raise _Bad(
                f"{key}.name",
                f"{name!r} is not a distribution the recipes know (a lock removes only GPU "
                "libraries and framework builds the recipes name; never pip, setuptools or this tool)",
            )
        out.append(name)
    return tuple(out)


def _env_fix_value(kind: str, value: Any) -> str:
    """The value of one loader fix, by the grammar of its kind: what the tool itself writes
    (fixer.system.grammar.loader_fix_value, the one home of that rule)."""
    return grammar.loader_fix_value(kind, value, env_file=ENV_FILE)


def _env_fixes(raw: Any) -> Tuple[EnvFix, ...]:
    out: List[EnvFix] = []
    for i, fx in enumerate(_list(raw, "env_fix", 64)):
        key = f"env_fix[{i}]"
        fx = _record(fx, key, ("kind", "value", "why"), ("kind", "value"))
        try:
            fix = from_dict(EnvFix, fx, key)
        except ValueError as exc:
            raise _Bad(key, str(exc).partition(": ")[2] or str(exc)) from None
        kind = fix.kind
        value = _check(f"{key}.value", lambda v: _env_fix_value(kind, v), fix.value)
        why = _check(f"{key}.why", lambda v: grammar.short_text(v, 1024, "text"), fix.why)
        out.append(EnvFix(fix.kind, value, why=why))
    return tuple(out)


def _apt_pins(raw: Any) -> Tuple[AptPin, ...]:
    """[[apt]] records (version 2), or version 1's [apt] table of package = "version"."""
    if isinstance(raw, dict):
        raw = [{"package": k, "version": v} for k, v in raw.items()]
    out: List[AptPin] = []
    for i, a in enumerate(_list(raw, "apt")):
        key = f"apt[{i}]"
        a = _record(
            a, key, ("package", "version", "hold", "sha256", "integrity"), ("package", "version")
        )
        sha = a.get("sha256")
        if sha is not None:
            try:
                grammar.sha256_hex(sha)
            except ValueError as exc:
                raise _Bad(f"{key}.sha256", str(exc)) from None
        integrity = a.get("integrity", "sha256" if sha else "apt-signed-index")
        if integrity not in ("sha256", "apt-signed-index") or (integrity == "sha256" and not sha):
            raise _Bad(f"{key}.integrity", 'expected "sha256" (with sha256) or "apt-signed-index"')
        hold = a.get("hold", True)
        if not isinstance(hold, bool):
            raise _Bad(f"{key}.hold", "expected true or false")
        out.append(
            AptPin(
                package=_check(f"{key}.package", grammar.apt_name, a["package"]),
                version=_check(f"{key}.version", grammar.apt_version, a["version"]),
                hold=hold,
                sha256=sha,
                integrity=integrity,
            )
        )
    return tuple(out)
