"""The lock's content: the stack's dependency closure with the hash of every file, read from the
indexes (through fixer.system.index) or a --find-links wheelhouse, and its apt pins."""

from __future__ import annotations

import datetime
import hashlib
import os
import re
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    Iterable,
    List,
    Mapping,
    Optional,
    Set,
    Tuple,
)

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import Version

from fixer.planner import installers
from fixer.system.versions import major_minor, same_version
from fixer.errors import FixerError
from fixer.system.index import Unreachable, file_hashes
from fixer.model import Environment, PlanOptions, Stack
from fixer.lockfile.format import AptPin, Lock, LockedPackage, LockRequires, MachineFacts
from fixer.system.index import fetch_requires
from fixer import __version__

PYPI = installers.PYPI_SIMPLE


def _file_version(filename: str) -> Optional[Version]:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except Exception:
        return None


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
                fname = (
                    parse_wheel_filename(f)[0] if f.endswith(".whl") else parse_sdist_filename(f)[0]
                )
            except Exception:
                continue
            if canonicalize_name(fname) == canon and _file_version(f) == want:
                h = hashlib.sha256()
                with open(os.path.join(d, f), "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                out.append("sha256:" + h.hexdigest())
    return tuple(out)


RequiresOf = Callable[
    [Optional[str], str, str], Optional[Tuple[str, ...]]
]  # (index, name, version) -> Requires-Dist


def local_requires(
    directories: Iterable[str], name: str, version: str
) -> Optional[Tuple[str, ...]]:
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
            return tuple(
                line.split(":", 1)[1].strip()
                for line in head.splitlines()
                if line.startswith("Requires-Dist:")
            )
    return None


def _requires_from_index(options: PlanOptions, python_version: Optional[str]) -> RequiresOf:
    """Requires-Dist from the index's own metadata (PEP 691 + PEP 658, fixer.system.index:
    timeouts, retries, cache), or from the --find-links wheels with --no-index. None: offline."""
    tag = "cp" + "".join(python_version.split(".")[:2]) if python_version else None

    def requires_of(index: Optional[str], name: str, version: str) -> Optional[Tuple[str, ...]]:
        found = local_requires(options.find_links, name, version)
        if found is not None or options.no_index:
            return found
        return fetch_requires(
            installers.rewrite_index(index or PYPI, options.index_mirrors) or PYPI,
            name,
            version,
            python_tag=tag,
        )

    return requires_of


#: Distributions that make up a framework besides the one detection names (FrameworkBuild.
#: distribution), which no Requires-Dist of that one reaches: JAX is `jax`, its `jaxlib`, and the
#: CUDA plugin pair jax-cuda{N}-plugin / jax-cuda{N}-pjrt that jax discovers at import
#: (jax/_src/xla_bridge.py, discover_pjrt_plugins: the `jax_plugins` namespace package and the
#: "jax_plugins" entry-point group, jax v0.4.31+); the plugin's own Requires-Dist names the pjrt
#: and, under its `with-cuda` extra, the nvidia-* runtime wheels, but never jax or jaxlib.
FAMILY = {"jax": re.compile(r"^(jax|jaxlib|jax-cuda\d+-(plugin|pjrt))$")}

_EXTRA = re.compile(r"""\bextra\s*==\s*["']([^"']+)["']""")

#: one closure entry: (name, version or None for "as installed", index, extras asked of it)
_Entry = Tuple[str, Optional[str], Optional[str], FrozenSet[str]]


def _spelled_extras(stack: Stack, name: str, version: str) -> FrozenSet[str]:
    """The extras a changed build spells for a pin (jax[cuda12]==0.6.2 -> {"cuda12"})."""
    from packaging.requirements import InvalidRequirement, Requirement

    for c in stack.choices:
        for spec in c.build.packages:
            try:
                req = Requirement(spec)
            except InvalidRequirement:
                continue
            if canonicalize_name(req.name) == name and any(
                sp.version == version for sp in req.specifier
            ):
                return frozenset(canonicalize_name(e) for e in req.extras)
    return frozenset()


def closure_roots(env: Environment, stack: Stack) -> List[_Entry]:
    """Where the closure starts: the stack's pip pins (with the extras their build spells), and
    every framework on the machine that the stack keeps, or leaves alone (not planned under
    --framework): its distribution and the rest of its family (FAMILY), as installed."""
    have = {d.name: d.version for d in (env.python.distributions if env.python else ())}
    installed = set(have)
    roots: List[_Entry] = [
        (
            canonicalize_name(p.name),
            p.version,
            p.index_url or build_index(stack, p.name, p.version),
            _spelled_extras(stack, canonicalize_name(p.name), p.version),
        )
        for p in stack.pins
        if p.action != "remove" and p.manager == "pip"
    ]
    kept = {c.framework for c in stack.choices if c.action == "keep"}
    planned = {c.framework for c in stack.choices}
    for fb in env.frameworks:
        if not (fb.framework in kept or (planned and fb.framework not in planned)):
            continue  # a changed build's pins bring its own family; no stack, no lock of it
        family = FAMILY.get(fb.framework)
        names: Set[str] = {canonicalize_name(fb.distribution)}
        names |= {n for n in installed if family is not None and family.match(n)}
        roots += [
            (n, None, build_index(stack, n, have[n]), frozenset())
            for n in sorted(names & installed)
        ]
    return roots


def _holds(req: Any, markers: Dict[str, str], extras: Iterable[str]) -> bool:
    """The requirement's marker holds on this machine for no extra or for one of `extras`
    (PEP 508: `extra` is the extra being installed; a marker this machine cannot evaluate is
    not for it)."""
    if req.marker is None:
        return True
    for e in ("", *sorted(extras)):
        try:
            if req.marker.evaluate(dict(markers, extra=e)):
                return True
        except Exception:  # noqa: BLE001 - not for this machine
            return False
    return False


def dependency_closure(
    env: Environment, stack: Stack, requires_of: Optional[RequiresOf] = None
) -> List[Tuple[str, str, Optional[str]]]:
    """(name, version, index) for the stack's pins, every framework on the machine, and
    everything they need (Requires-Dist, markers evaluated for this machine, with the extras
    asked of each): `apply --lock` installs with --no-deps and --require-hashes, so the lock
    must name the whole set. What is installed and kept brings its installed dependencies,
    those of its extras included (pip records no extras asked at install time: an extra's
    requirement counts when what it names is installed). What the stack installs brings the
    dependencies its new version declares: from the index's metadata when online
    (requires_of), else the pins the recipes give for that build; an exact pin is locked as
    is, a range by the installed version that satisfies it; anything else is refused (a lock
    with holes would break `apply --lock`). Dependencies come from their parent's index."""
    installed = {d.name: d for d in (env.python.distributions if env.python else ())}
    markers = dict(env.python.markers) if env.python else {}
    queue = closure_roots(env, stack)
    pinned = {name: version for name, version, _, _ in queue if version is not None}
    done: Dict[str, FrozenSet[str]] = {}
    versions: Dict[str, str] = {}
    out: List[Tuple[str, str, Optional[str]]] = []
    while queue:
        name, version, index, extras = queue.pop(0)
        if name in done and extras <= done[name]:
            continue
        dist = installed.get(name)
        version = versions.get(name) or version or (dist.version if dist else None)
        if version is None:
            continue
        if name not in done:
            out.append((name, version, index))
            versions[name] = version
        extras = extras | done.get(name, frozenset())
        done[name] = extras
        queue += _dependencies(
            stack, installed, markers, requires_of, pinned, versions, (name, version, index, extras)
        )
    return out


def _dependencies(
    stack: Stack,
    installed: Mapping[str, Any],
    markers: Dict[str, str],
    requires_of: Optional[RequiresOf],
    pinned: Mapping[str, str],
    versions: Mapping[str, str],
    entry: Tuple[str, str, Optional[str], FrozenSet[str]],
) -> List[_Entry]:
    """The closure entries one distribution brings (see dependency_closure)."""
    from packaging.requirements import InvalidRequirement, Requirement

    name, version, index, extras = entry
    dist = installed.get(name)
    kept = dist is not None and same_version(dist.version, version)
    lines = (
        dist.requires
        if dist is not None and kept
        else _new_requires(stack, name, version, index, requires_of)
    )
    out: List[_Entry] = []
    for line in lines:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        asked = set(_EXTRA.findall(str(req.marker))) if kept and req.marker else extras
        if not _holds(req, markers, asked):
            continue
        dep = canonicalize_name(req.name)
        dep_extras = frozenset(canonicalize_name(e) for e in req.extras)
        have = installed.get(dep)
        if dep in versions or dep in pinned:
            out.append((dep, versions.get(dep) or pinned.get(dep), index, dep_extras))
        elif kept:
            if have is not None:
                out.append((dep, None, index, dep_extras))
        else:
            out.append((dep, _locked_version(name, version, req, have), index, dep_extras))
    return out


def _locked_version(name: str, version: str, req: Any, have: Any) -> str:
    """The version a new distribution's requirement is locked at: its one exact pin, else the
    installed version when it satisfies the range; anything else cannot be locked."""
    exact = [
        sp.version for sp in req.specifier if sp.operator in ("==", "===") and "*" not in sp.version
    ]
    if len(exact) == 1 and len(req.specifier) == 1:
        return str(exact[0])
    if have is not None and req.specifier.contains(have.version, prereleases=True):
        return str(have.version)
    raise FixerError(
        f"cannot lock {name} {version}: it needs {req}, which nothing installed satisfies "
        "and which is not an exact pin",
        hint="apply first, then lock the result",
    )


def _new_requires(
    stack: Stack, name: str, version: str, index: Optional[str], requires_of: Optional[RequiresOf]
) -> Tuple[str, ...]:
    lines = requires_of(index, name, version) if requires_of else None
    if lines is not None:
        return tuple(lines)
    for c in stack.choices:  # offline: the pins the recipes give for that build (empty: unknown)
        if (
            c.build.requires
            and c.build.packages
            and c.build.packages[0].replace(" ", "") == f"{name}=={version}"
        ):
            return tuple(c.build.requires)
    raise FixerError(
        f"cannot lock {name} {version}: its dependencies are unknown (the index's metadata could not "
        "be read and the recipes name no pins for it)",
        hint="lock while online, or apply first and lock the result",
    )


def make_lock(
    env: Environment,
    stack: Stack,
    *,
    options: PlanOptions = PlanOptions(),
    index_kw: Optional[Dict[str, Any]] = None,
    now: Optional[datetime.datetime] = None,
) -> Lock:
    """The lock for `stack` on the machine `env`: exact versions with the hashes the indexes
    publish (or of the wheels in --find-links), apt pins, loader fixes, machine facts."""
    index_kw = dict(index_kw or {})
    packages: List[LockedPackage] = []
    indexes: List[str] = []
    requires_of = _requires_from_index(options, env.python.version if env.python else None)
    for name, version, index in dependency_closure(env, stack, requires_of):
        canonical = None if options.no_index else (index or PYPI)
        hashes = _hashes_of(stack, options, index_kw, name, version, canonical)
        if canonical and canonical not in indexes:
            indexes.append(canonical)
        packages.append(
            LockedPackage(name=name, version=version, index=canonical, hashes=tuple(hashes))
        )
    created = (now or datetime.datetime.now(datetime.timezone.utc)).isoformat(timespec="seconds")
    return Lock(
        created=created,
        tool=f"colab-cudnn-fix {__version__}",
        machine=_machine_facts(env),
        requires=_lock_requires(env, stack),
        indexes=tuple(indexes),
        packages=tuple(packages),
        remove=tuple(canonicalize_name(p.name) for p in stack.pins if p.action == "remove"),
        apt=apt_pins(stack),
        env_fixes=tuple(stack.env_fixes),
        cudnn=stack.cudnn,
        cudnn_from=stack.cudnn_from,
    )


def _hashes_of(
    stack: Stack,
    options: PlanOptions,
    index_kw: Dict[str, Any],
    name: str,
    version: str,
    canonical: Optional[str],
) -> List[str]:
    """Every file hash of name==version: the pin's own (a lock's), the --find-links wheels',
    and the index's (its mirror first, then PyPI's)."""
    fetch_from = installers.rewrite_index(canonical, options.index_mirrors) if canonical else None
    hashes: List[str] = []
    pin = next(
        (p for p in stack.pins if canonicalize_name(p.name) == name and p.version == version),
        None,
    )
    if pin is not None:
        hashes += pin.hashes
    hashes += local_hashes(options.find_links, name, version)
    tried: List[str] = []
    unreachable: List[str] = []
    for url in dict.fromkeys(
        u
        for u in (
            fetch_from,
            installers.rewrite_index(PYPI, options.index_mirrors)
            if canonical and canonical != PYPI
            else None,
        )
        if u
    ):
        tried.append(url)
        try:
            found = file_hashes(url, name, version, **index_kw)
        except Unreachable as exc:
            unreachable.append(exc.message)
            continue
        if found:
            hashes += found
            break
    if not hashes and unreachable:
        local = f"; not in {', '.join(options.find_links)} either" if options.find_links else ""
        raise Unreachable(
            f"cannot lock {name} {version}: " + "; ".join(unreachable) + local,
            hint="check the network, or give a mirror with --index-mirror FROM=TO",
        )
    if not hashes:
        where = (
            ", ".join(tried + list(options.find_links))
            or "nowhere (--no-index without --find-links)"
        )
        raise FixerError(
            f"no file of {name} {version} found in {where}: cannot lock it with a hash"
        )
    return list(dict.fromkeys(hashes))


def _machine_facts(env: Environment) -> MachineFacts:
    py = env.python
    return MachineFacts(
        driver=env.driver.version,
        driver_cuda=env.driver.cuda_version,
        gpus=tuple(g.name for g in env.gpus),
        compute_capabilities=tuple(
            dict.fromkeys(g.compute_capability for g in env.gpus if g.compute_capability)
        ),
        python=py.version if py else None,
        glibc=env.runtime.glibc,
        arch=env.runtime.arch,
        os=env.runtime.os_name,
    )


def _lock_requires(env: Environment, stack: Stack) -> LockRequires:
    builds = [c.build for c in stack.choices]
    cudas = [b.cuda for b in builds if b.cuda]
    ccs: Optional[Set[str]] = None
    for b in builds:
        if b.compute_capabilities:
            ccs = set(b.compute_capabilities) if ccs is None else ccs & set(b.compute_capabilities)
    ptxs = [b.ptx for b in builds if b.ptx]
    py = env.python
    return LockRequires(
        python=".".join(py.version.split(".")[:2]) if py else None,
        cuda=max(cudas, key=major_minor) if cudas else None,
        compute_capabilities=tuple(sorted(ccs or (), key=major_minor)),
        ptx=min(ptxs, key=major_minor) if ptxs else None,
        arch=env.runtime.arch,
    )


def build_index(stack: Stack, name: str, version: str) -> Optional[str]:
    """The index a pin that names none comes from: its build's index in the recipes, else, for
    a version whose local label is a PyTorch variant (2.5.1+cu124), that variant's folder of
    the PyTorch index (never PyPI, which has no +cuXXX files)."""
    want = canonicalize_name(name)
    for c in stack.choices:
        for spec in c.build.packages:
            n, _, v = spec.replace(" ", "").partition("==")
            if canonicalize_name(n) == want and v == version and c.build.index_url:
                return c.build.index_url
    return installers.pytorch_variant_index(version)


def apt_pins(stack: Stack) -> Tuple[AptPin, ...]:
    """The stack's apt packages as exact, held pins. No recipe gives a .deb's SHA256 today, so
    each says that apt's check of the signed repository index stands in."""
    return tuple(AptPin(package=k, version=v) for k, v in sorted(stack.apt.items()))
