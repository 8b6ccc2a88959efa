"""Lock files: the resolved stack, written down so that another machine gets exactly it.

    lock = make_lock(env, stack, options=PlanOptions(...))      # hashes read from the indexes
    write_lock(lock, "stack.lock.toml")                         # atomic
    lock = read_lock("stack.lock.toml")                         # UsageError naming file and key
    problems = incompatibilities(lock, env)                     # why this machine cannot use it
    plan = plan_from_lock(lock, python=..., options=...)        # what `apply --lock` runs
    findings = check_drift("stack.lock.toml", env)              # `doctor --lock`

Schema (version 1), TOML:

    version = 1
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

    [apt]                                 # exact apt pins (held after install)
    "libcudnn9-cuda-13" = "9.19.0.56-1"

    [[env_fix]]                           # loader fixes (fixer.model.EnvFix)
    kind = "ld-library-path-drop"
    value = "/usr/lib/x86_64-linux-gnu"
    why = "..."
"""
from __future__ import annotations

import dataclasses
import datetime
import hashlib
import html.parser
import json
import os
import re
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Set, Tuple

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from ._versions import major_minor
from ._toml_write import quote, value
from . import installers
from ._compat import tomllib
from .errors import FixerError, UsageError
from .model import EnvFix, Environment, Finding, Plan, PlanOptions, Stack, Step

LOCK_VERSION = 1
PYPI = installers.PYPI_SIMPLE


@dataclasses.dataclass(frozen=True)
class LockedPackage:
    name: str
    version: str
    index: Optional[str] = None             # index URL it comes from (None: only --find-links)
    hashes: Tuple[str, ...] = ()            # "sha256:<hex>", every file of this version


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
    python: Optional[str] = None            # "3.12"
    cuda: Optional[str] = None              # the driver must support this CUDA
    compute_capabilities: Tuple[str, ...] = ()
    ptx: Optional[str] = None
    arch: Optional[str] = None


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
    apt: Dict[str, str] = dataclasses.field(default_factory=dict)
    env_fixes: Tuple[EnvFix, ...] = ()
    cudnn: Optional[str] = None
    cudnn_from: Optional[str] = None


# ---------------------------------------------------------------------------------------
# hashes from an index (PEP 691 JSON, else PEP 503 HTML) or a local wheelhouse
# ---------------------------------------------------------------------------------------

Fetch = Callable[[str], Tuple[str, str]]     # url -> (content type, body)


def _http_fetch(url: str) -> Tuple[str, str]:
    import requests

    try:
        r = requests.get(url, timeout=30, headers={
            "Accept": "application/vnd.pypi.simple.v1+json, text/html;q=0.1"})
    except requests.RequestException as exc:
        raise FixerError(f"cannot read {url}: {exc}")
    if r.status_code != 200:
        raise FixerError(f"cannot read {url}: HTTP {r.status_code}")
    return r.headers.get("Content-Type", ""), r.text


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: List[Tuple[str, str]] = []
        self._href: Optional[str] = None

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "a":
            self._href = dict(attrs).get("href") or ""

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self.links.append((data.strip(), self._href))

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._href = None


def _file_version(filename: str) -> Optional[Version]:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except Exception:
        return None


def index_hashes(index_url: str, name: str, version: str, fetch: Optional[Fetch] = None) -> Tuple[str, ...]:
    """sha256 of every file of `name` `version` the simple index lists ("sha256:<hex>")."""
    fetch = fetch or _http_fetch
    url = index_url.rstrip("/") + "/" + canonicalize_name(name) + "/"
    ctype, body = fetch(url)
    want = Version(version)
    out: List[str] = []
    if "json" in ctype:
        data = json.loads(body)
        for f in data.get("files", []):
            if _file_version(f.get("filename", "")) == want and f.get("hashes", {}).get("sha256"):
                out.append("sha256:" + f["hashes"]["sha256"])
    else:
        parser = _Links()
        parser.feed(body)
        for text, href in parser.links:
            filename = text or href.split("#")[0].rsplit("/", 1)[-1]
            m = re.search(r"#sha256=([0-9a-f]{64})", href)
            if m and _file_version(filename) == want:
                out.append("sha256:" + m.group(1))
    return tuple(dict.fromkeys(out))


def local_hashes(directories: Iterable[str], name: str, version: str) -> Tuple[str, ...]:
    want, canon = Version(version), canonicalize_name(name)
    out: List[str] = []
    for d in directories:
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith((".whl", ".tar.gz", ".zip")):
                continue
            try:
                fname = parse_wheel_filename(f)[0] if f.endswith(".whl") else parse_sdist_filename(f)[0]
            except Exception:
                continue
            if canonicalize_name(fname) == canon and _file_version(f) == want:
                h = hashlib.sha256()
                with open(os.path.join(d, f), "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                out.append("sha256:" + h.hexdigest())
    return tuple(out)


# ---------------------------------------------------------------------------------------
# make
# ---------------------------------------------------------------------------------------


RequiresOf = Callable[[Optional[str], str, str], Optional[Tuple[str, ...]]]   # (index, name, version) -> Requires-Dist


def local_requires(directories: Iterable[str], name: str, version: str) -> Optional[Tuple[str, ...]]:
    """Requires-Dist of name==version from a wheel in --find-links (read from its METADATA)."""
    import zipfile

    want, canon = Version(version), canonicalize_name(name)
    for d in directories:
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith(".whl"):
                continue
            try:
                fname, fver = parse_wheel_filename(f)[:2]
            except Exception:  # noqa: BLE001 - not a wheel name
                continue
            if canonicalize_name(fname) != canon or fver != want:
                continue
            try:
                with zipfile.ZipFile(os.path.join(d, f)) as z:
                    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
                    text = z.read(meta).decode("utf-8", "replace")
            except (OSError, zipfile.BadZipFile, StopIteration):
                continue
            head = text.split("\n\n", 1)[0]
            return tuple(line.split(":", 1)[1].strip() for line in head.splitlines() if line.startswith("Requires-Dist:"))
    return None


def _requires_from_index(options: PlanOptions, python_version: Optional[str]) -> RequiresOf:
    """Requires-Dist from the index's own metadata (PEP 691 + PEP 658, fixer.index_metadata:
    timeouts, retries, cache), or from the --find-links wheels with --no-index. None: offline."""
    from .index_metadata import fetch_requires

    tag = "cp" + "".join(python_version.split(".")[:2]) if python_version else None

    def requires_of(index: Optional[str], name: str, version: str) -> Optional[Tuple[str, ...]]:
        found = local_requires(options.find_links, name, version)
        if found is not None or options.no_index:
            return found
        return fetch_requires(installers.rewrite_index(index or PYPI, options.index_mirrors) or PYPI, name, version,
                              python_tag=tag)
    return requires_of


def _closure(env: Environment, stack: Stack, requires_of: Optional[RequiresOf] = None
             ) -> List[Tuple[str, str, Optional[str]]]:
    """(name, version, index) for the stack's pins and everything they need (Requires-Dist,
    markers evaluated for this machine): `apply --lock` installs with --no-deps and
    --require-hashes, so the lock must name the whole set. What is installed and kept brings its
    installed dependencies. What the stack installs brings the dependencies its new version
    declares: from the index's metadata when online (requires_of), else the pins the recipes
    give for that build; an exact pin is locked as is, a range by the installed version that
    satisfies it; anything else is refused (a lock with holes would break `apply --lock`).
    Dependencies come from their parent's index."""
    from packaging.requirements import InvalidRequirement, Requirement

    installed = {d.name: d for d in (env.python.distributions if env.python else ())}
    markers = dict(env.python.markers) if env.python else {}
    markers["extra"] = ""
    out: List[Tuple[str, str, Optional[str]]] = []
    seen: Dict[str, bool] = {}
    queue: List[Tuple[str, Optional[str], Optional[str]]] = [
        (canonicalize_name(p.name), p.version, p.index_url) for p in stack.pins if p.action != "remove"]
    pinned = {name for name, _, _ in queue}
    while queue:
        name, version, index = queue.pop(0)
        if name in seen:
            continue
        seen[name] = True
        dist = installed.get(name)
        if version is None:
            if dist is None:
                continue
            version = dist.version
        out.append((name, version, index))
        kept = dist is not None and _same_version(dist.version, version)
        lines = dist.requires if dist is not None and kept else _new_requires(stack, name, version, index, requires_of)
        for line in lines:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            try:
                if req.marker is not None and not req.marker.evaluate(markers):
                    continue
            except Exception:  # noqa: BLE001 - a marker this machine cannot evaluate: not for it
                continue
            dep = canonicalize_name(req.name)
            if dep in seen or dep in pinned:
                continue
            have = installed.get(dep)
            if kept:
                if have is not None:
                    queue.append((dep, None, index))
                continue
            exact = [sp.version for sp in req.specifier if sp.operator in ("==", "===") and "*" not in sp.version]
            if len(exact) == 1 and len(req.specifier) == 1:
                queue.append((dep, exact[0], index))
            elif have is not None and req.specifier.contains(have.version, prereleases=True):
                queue.append((dep, have.version, index))
            else:
                raise FixerError(f"cannot lock {name} {version}: it needs {req}, which nothing installed satisfies "
                                 "and which is not an exact pin", hint="apply first, then lock the result")
    return out


def _new_requires(stack: Stack, name: str, version: str, index: Optional[str],
                  requires_of: Optional[RequiresOf]) -> Tuple[str, ...]:
    lines = requires_of(index, name, version) if requires_of else None
    if lines is not None:
        return tuple(lines)
    for c in stack.choices:   # offline: the pins the recipes give for that build (empty: unknown)
        if c.build.requires and c.build.packages and c.build.packages[0].replace(" ", "") == f"{name}=={version}":
            return tuple(c.build.requires)
    raise FixerError(f"cannot lock {name} {version}: its dependencies are unknown (the index's metadata could not "
                     "be read and the recipes name no pins for it)", hint="lock while online, or apply first and lock the result")


def make_lock(env: Environment, stack: Stack, *, options: PlanOptions = PlanOptions(),
              fetch: Optional[Fetch] = None, now: Optional[datetime.datetime] = None) -> Lock:
    """The lock for `stack` on the machine `env`: exact versions with the hashes the indexes
    publish (or of the wheels in --find-links), apt pins, loader fixes, machine facts."""
    from . import __version__

    packages: List[LockedPackage] = []
    indexes: List[str] = []
    requires_of = _requires_from_index(options, env.python.version if env.python else None)
    for name, version, index in _closure(env, stack, requires_of):
        canonical = None if options.no_index else (index or PYPI)
        fetch_from = installers.rewrite_index(canonical, options.index_mirrors) if canonical else None
        hashes: List[str] = []
        pin = next((p for p in stack.pins if canonicalize_name(p.name) == name and p.version == version), None)
        if pin is not None and pin.sha256:
            hashes.append("sha256:" + pin.sha256)
        hashes += local_hashes(options.find_links, name, version)
        tried: List[str] = []
        for url in dict.fromkeys(u for u in (fetch_from, installers.rewrite_index(PYPI, options.index_mirrors)
                                             if canonical and canonical != PYPI else None) if u):
            tried.append(url)
            try:
                found = index_hashes(url, name, version, fetch)
            except FixerError:
                found = ()
            if found:
                hashes += found
                break
        hashes = list(dict.fromkeys(hashes))
        if not hashes:
            where = ", ".join(tried + list(options.find_links)) or "nowhere (--no-index without --find-links)"
            raise FixerError(f"no file of {name} {version} found in {where}: cannot lock it with a hash")
        if canonical and canonical not in indexes:
            indexes.append(canonical)
        packages.append(LockedPackage(name=name, version=version, index=canonical, hashes=tuple(hashes)))
    builds = [c.build for c in stack.choices]
    cudas = [b.cuda for b in builds if b.cuda]
    ccs: Optional[Set[str]] = None
    for b in builds:
        if b.compute_capabilities:
            ccs = set(b.compute_capabilities) if ccs is None else ccs & set(b.compute_capabilities)
    ptxs = [b.ptx for b in builds if b.ptx]
    py = env.python
    machine = MachineFacts(
        driver=env.driver.version, driver_cuda=env.driver.cuda_version,
        gpus=tuple(g.name for g in env.gpus),
        compute_capabilities=tuple(dict.fromkeys(g.compute_capability for g in env.gpus if g.compute_capability)),
        python=py.version if py else None, glibc=env.runtime.glibc, arch=env.runtime.arch, os=env.runtime.os_name,
    )
    requires = LockRequires(
        python=".".join(py.version.split(".")[:2]) if py else None,
        cuda=max(cudas, key=major_minor) if cudas else None,
        compute_capabilities=tuple(sorted(ccs or (), key=major_minor)),
        ptx=min(ptxs, key=major_minor) if ptxs else None,
        arch=env.runtime.arch,
    )
    created = (now or datetime.datetime.now(datetime.timezone.utc)).isoformat(timespec="seconds")
    return Lock(created=created, tool=f"colab-cudnn-fix {__version__}", machine=machine, requires=requires,
                indexes=tuple(indexes), packages=tuple(packages),
                remove=tuple(canonicalize_name(p.name) for p in stack.pins if p.action == "remove"),
                apt=dict(stack.apt), env_fixes=tuple(stack.env_fixes), cudnn=stack.cudnn,
                cudnn_from=stack.cudnn_from)


# ---------------------------------------------------------------------------------------
# TOML
# ---------------------------------------------------------------------------------------




def _table(d: Mapping[str, Any]) -> List[str]:
    return [f"{quote(k) if not re.match(r'^[A-Za-z0-9_-]+$', k) else k} = {value(v)}"
            for k, v in d.items() if v is not None]


def dumps(lock: Lock) -> str:
    lines = ["# colab-cudnn-fix lock file (schema: `version`; see the README, \"Lock files\").",
             "# Reproduce with: colab-cudnn-fix apply --lock THIS_FILE", ""]
    top = {"version": lock.version, "created": lock.created, "tool": lock.tool, "cudnn": lock.cudnn,
           "cudnn_from": lock.cudnn_from, "indexes": list(lock.indexes)}
    lines += _table(top)
    lines += ["", "[machine]"] + _table(dataclasses.asdict(lock.machine))
    lines += ["", "[requires]"] + _table(dataclasses.asdict(lock.requires))
    for p in lock.packages:
        lines += ["", "[[package]]"] + _table({"name": p.name, "version": p.version, "index": p.index,
                                               "hashes": list(p.hashes)})
    for name in lock.remove:
        lines += ["", "[[remove]]", f"name = {quote(name)}"]
    if lock.apt:
        lines += ["", "[apt]"] + _table(lock.apt)
    for fx in lock.env_fixes:
        lines += ["", "[[env_fix]]"] + _table({"kind": fx.kind, "value": fx.value, "why": fx.why})
    return "\n".join(lines) + "\n"


def write_lock(lock: Lock, path: str) -> Path:
    """Write atomically (temporary file + fsync + rename)."""
    from .apply.journal import atomic_write

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

    if data.get("version") != LOCK_VERSION:
        raise bad("version", f"expected {LOCK_VERSION}, got {data.get('version')!r} "
                  "(a lock written by another version of colab-cudnn-fix?)")
    known = {"version", "created", "tool", "cudnn", "cudnn_from", "indexes", "machine", "requires", "package",
             "remove", "apt", "env_fix"}
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
            kw[k] = strs(v, f"{key}.{k}") if isinstance(v, list) or "Tuple" in str(fields[k].type) else v
            if not isinstance(kw[k], (str, tuple)):
                raise bad(f"{key}.{k}", "expected a string")
        return cls(**kw)

    packages: List[LockedPackage] = []
    for i, p in enumerate(data.get("package", [])):
        key = f"package[{i}]"
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not isinstance(p.get("version"), str):
            raise bad(key, "needs name and version strings")
        try:
            Version(p["version"])
        except InvalidVersion:
            raise bad(f"{key}.version", f"{p['version']!r} is not a version")
        hashes = strs(p.get("hashes", []), f"{key}.hashes")
        if not hashes or not all(re.match(r"^sha256:[0-9a-f]{64}$", h) for h in hashes):
            raise bad(f"{key}.hashes", "needs at least one \"sha256:<64 hex digits>\"")
        extra = sorted(set(p) - {"name", "version", "index", "hashes"})
        if extra:
            raise bad(f"{key}.{extra[0]}", "unknown key")
        packages.append(LockedPackage(name=canonicalize_name(p["name"]), version=p["version"],
                                      index=p.get("index"), hashes=hashes))
    fixes: List[EnvFix] = []
    for i, fx in enumerate(data.get("env_fix", [])):
        try:
            from .model import from_dict

            fixes.append(from_dict(EnvFix, fx, f"{where}: env_fix[{i}]"))
        except ValueError as exc:
            raise UsageError(str(exc))
    apt = data.get("apt", {})
    if not isinstance(apt, dict) or not all(isinstance(v, str) for v in apt.values()):
        raise bad("apt", "expected a table of package = \"version\"")
    return Lock(
        version=LOCK_VERSION, created=str(data.get("created", "")), tool=str(data.get("tool", "")),
        machine=section(MachineFacts, "machine"), requires=section(LockRequires, "requires"),
        indexes=strs(data.get("indexes", []), "indexes"), packages=tuple(packages),
        remove=tuple(canonicalize_name(r["name"]) for r in data.get("remove", [])),
        apt=dict(apt), env_fixes=tuple(fixes), cudnn=data.get("cudnn"), cudnn_from=data.get("cudnn_from"),
    )


# ---------------------------------------------------------------------------------------
# use
# ---------------------------------------------------------------------------------------


def incompatibilities(lock: Lock, env: Environment) -> List[Tuple[str, str]]:
    """(finding id, reason) for each way this machine cannot run the locked stack."""
    out: List[Tuple[str, str]] = []
    req = lock.requires
    py = env.python
    if req.python and py and ".".join(py.version.split(".")[:2]) != req.python:
        out.append(("pip-conflict", f"the lock was made for Python {req.python}; the target is Python {py.version}"))
    if req.arch and env.runtime.arch and req.arch != env.runtime.arch:
        out.append(("pip-conflict", f"the lock was made for {req.arch}; this machine is {env.runtime.arch}"))
    if req.cuda:
        if not env.gpus:
            out.append(("gpu-missing", f"the lock needs an NVIDIA GPU with a driver for CUDA {req.cuda}; "
                                       "this machine shows none"))
        elif not env.driver.cuda_version:
            out.append(("driver-missing", f"the lock needs a driver for CUDA {req.cuda}; no working driver found"))
        elif major_minor(env.driver.cuda_version) < major_minor(req.cuda):
            out.append(("driver-too-old", f"the lock needs CUDA {req.cuda}; driver {env.driver.version} supports "
                                          f"CUDA {env.driver.cuda_version} (the lock was made for driver "
                                          f"{lock.machine.driver or '?'})"))
    if req.compute_capabilities or req.ptx:
        for g in env.gpus:
            cc = g.compute_capability
            if not cc:
                continue
            if cc in req.compute_capabilities:
                continue
            if req.ptx and major_minor(cc) >= major_minor(req.ptx):
                continue
            if any(major_minor(c)[:1] == major_minor(cc)[:1] and major_minor(c) <= major_minor(cc) for c in req.compute_capabilities):
                continue    # SASS of an older minor of the same major runs (6.0 on 6.1)
            out.append(("gpu-arch-unsupported",
                        f"{g.name} (compute capability {cc}) is not among the locked builds' targets "
                        f"({', '.join(req.compute_capabilities) or '-'}"
                        + (f", PTX {req.ptx}" if req.ptx else "") + ")"))
    return out


def check_compatible(lock: Lock, env: Environment, path: str = "lock") -> None:
    """Raise UsageError (exit 2) saying why when the lock does not fit this machine."""
    problems = incompatibilities(lock, env)
    if problems:
        raise UsageError(f"{path} does not fit this machine: " + "; ".join(r for _, r in problems),
                         hint="make a new lock on (or for) this machine with `colab-cudnn-fix lock`")


def plan_from_lock(lock: Lock, *, python: str, options: PlanOptions, installer: str = "pip",
                   installed: Optional[Mapping[str, str]] = None, apt_installed: Optional[Mapping[str, str]] = None,
                   home: Optional[str] = None) -> Plan:
    """The steps that make `python` match the lock; none when it already does (apply twice =
    nothing to do). `installed`: name -> version now (default: read from the target)."""
    from ._paths import state_dir
    from .apply import envfix
    from .apply.sources import find_uv
    from .envfix import env_fix_steps

    if installed is None:
        from .apply.snapshot import read_target

        installed = read_target(python).versions()
    steps: List[Step] = []
    removes = [n for n in lock.remove if n in installed]
    uv = find_uv() or "uv"
    if removes:
        steps.append(Step(kind="pip-uninstall", summary="remove " + ", ".join(removes) + " (the lock removes them)",
                          argv=installers.pip_uninstall(python, removes, installer=installer, uv=uv),
                          packages=tuple(removes)))
    needed = [p for p in lock.packages if not _same_version(installed.get(p.name), p.version)]
    if needed:
        text = "".join(f"{p.name}=={p.version} " + " ".join(f"--hash={h}" for h in p.hashes) + "\n" for p in needed)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        req_file = str(state_dir(options.root) / "lock" / f"requirements-{digest}.txt")
        indexes = [installers.rewrite_index(u, options.index_mirrors) or u for u in lock.indexes]
        argv = installers.pip_install(
            python, ["--require-hashes", "-r", req_file], index_url=indexes[0] if indexes else None,
            extra_index_urls=indexes[1:], find_links=options.find_links, no_index=options.no_index or not indexes,
            installer=installer, no_deps=True, uv=uv)
        steps.append(Step(kind="pip-install",
                          summary="install " + ", ".join(f"{p.name}=={p.version}" for p in needed)
                                  + " with hashes enforced (from the lock)",
                          argv=argv, packages=tuple(f"{p.name}=={p.version}" for p in needed),
                          files=(req_file,), content=text))
    if lock.apt:
        apt_now = dict(apt_installed or {})
        changing = {k: v for k, v in lock.apt.items() if apt_now.get(k) != v}
        if changing:
            steps.append(Step(kind="apt-install", summary="install " + ", ".join(f"{k}={v}" for k, v in changing.items()),
                              argv=installers.apt_install(changing),
                              packages=tuple(f"{k}={v}" for k, v in changing.items())))
            steps.append(Step(kind="apt-hold", summary="hold " + ", ".join(changing),
                              argv=installers.apt_hold(list(changing)), packages=tuple(changing)))
    for step in env_fix_steps(lock.env_fixes, home=home):
        target = envfix.target_path(step.files[0], options.root)
        if target.is_file() and step.content is not None and target.read_text(encoding="utf-8") == step.content:
            continue
        steps.append(step)
    return Plan(steps=tuple(steps), python=python,
                notes=(f"from lock made {lock.created} by {lock.tool}",))


def _same_version(a: Optional[str], b: str) -> bool:
    if a is None:
        return False
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a == b


def check_drift(lock_path: str, env: Environment) -> Tuple[Finding, ...]:
    """What differs between the machine and the lock (`doctor --lock FILE`)."""
    lock = read_lock(lock_path)
    findings: List[Finding] = []
    for fid, reason in incompatibilities(lock, env):
        findings.append(Finding(id=fid, severity="error", title=f"lock {os.path.basename(lock_path)}: {reason}",  # type: ignore[arg-type]
                                evidence=(lock_path,), fix="make a new lock for this machine"))
    for p in lock.packages:
        dist = env.distribution(p.name)
        if dist is None:
            findings.append(Finding(id="pip-conflict", severity="error",
                                    title=f"drift from lock: {p.name} {p.version} is not installed",
                                    evidence=(lock_path,), fix=f"colab-cudnn-fix apply --lock {lock_path}"))
        elif not _same_version(dist.version, p.version):
            findings.append(Finding(id="pip-conflict", severity="error",
                                    title=f"drift from lock: {p.name} is {dist.version}, the lock has {p.version}",
                                    evidence=(lock_path, dist.location), fix=f"colab-cudnn-fix apply --lock {lock_path}"))
    for name in lock.remove:
        if env.distribution(name) is not None:
            findings.append(Finding(id="pip-conflict", severity="warning",
                                    title=f"drift from lock: {name} is installed, the lock removes it",
                                    evidence=(lock_path,), fix=f"colab-cudnn-fix apply --lock {lock_path}"))
    apt_seen: Dict[str, str] = {}
    for lib in env.libraries:
        if lib.origin == "apt" and lib.package:
            name, _, ver = lib.package.partition(" ")
            apt_seen[name] = ver
    for name, ver in lock.apt.items():
        if name in apt_seen and apt_seen[name] != ver:
            findings.append(Finding(id="pip-conflict", severity="warning",
                                    title=f"drift from lock: apt {name} is {apt_seen[name]}, the lock has {ver}",
                                    evidence=(lock_path,), fix=f"colab-cudnn-fix apply --lock {lock_path}"))
    return tuple(findings)
