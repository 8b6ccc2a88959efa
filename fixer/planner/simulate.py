"""simulate(Environment, Plan, Recipes) -> Environment: the machine as the plan would leave it.

The one home of "what a plan does to the model". Pure: it reads nothing and runs nothing.
Each step changes the Environment the way its command changes the machine:

- pip-uninstall  the distributions go, and with them the library copies they own;
- pip-install    each requirement is installed at its exact version; unless the step says
                 --no-deps, the dependencies it brings come too: a framework build's pins and
                 ranges from the recipes (pip keeps an installed version that satisfies a range
                 and otherwise takes the newest release the recipes know). A cuDNN or CUDA wheel
                 (re)installed leaves its directory complete, at the wheel's version;
- apt-install    the apt copy of cuDNN in the multiarch directory, at the release of that
                 package version; conda-install the same in the conda prefix;
- env-fix        the environment a new shell gets (fixer.planner.envfix.environ_after), an ld.so.conf.d
                 directory ahead of the cache's entries, and, in a notebook, the preload by path;

then every framework's loads are walked again through its recorded search order (LD_PRELOAD,
its preloads by path, DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache, default
directories) over the library copies as they now are. `check_plan` diagnoses that result with
the same diagnose() and says what stays broken and where the result is not the stack the plan
claims (a framework loading another cuDNN copy than the one chosen, a version pip would move).
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

from fixer.system.paths import split_ld_preload
from fixer.system.versions import canonical_name, requirement_name, version_key
from fixer.rules import expected_cudnn_sonames, requirement_parts, same_dir
from fixer.diagnosis.findings import diagnose
from fixer.model import (
    DEPENDENCIES_OF,
    Build,
    Distribution,
    Environment,
    Finding,
    FrameworkBuild,
    LibFile,
    LibraryCopy,
    Package,
    LoadResolution,
    SearchDir,
    Plan,
    Recipes,
    Step,
)
from fixer.planner.envfix import environ_after
from fixer.detection import WHEEL_LIBRARIES, wheel_lib_folders

MULTIARCH = "/usr/lib/x86_64-linux-gnu"
DEFAULT_SEARCH = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib")


@dataclasses.dataclass(frozen=True)
class Requirement:
    """A requirement string split (fixer.rules.requirement_parts): name, extras, specifier, exact version."""

    name: str
    extras: Tuple[str, ...] = ()
    spec: str = ""
    exact: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Download:
    """One thing a step downloads, as the simulation sees it: a distribution (or apt/conda
    package) at a version, with its size when the recipes record it (Recipes.download_size; an
    apt or conda cuDNN: its release's size_bytes). `extras` marks a requirement whose extras
    bring distributions the recipes do not list (cuda-toolkit[cublas,...]): what those are,
    and their size, is unknown."""

    name: str
    version: Optional[str]  # None: a version the recipes cannot name
    size_bytes: Optional[int] = None
    extras: Tuple[str, ...] = ()
    # True: not a distribution but the rest of what installing `name` brings, beyond what the
    # simulation installs itself (a build's `requires`, a DependencySet's `brings`): `others`
    # names it where a recorded source does (recipes/dependencies.toml), at versions not known;
    # `complete` says that list is all of it (else the rest is not known either: torch's
    # triton, sympy, ...; an apt package's Depends)
    dependencies: bool = False
    others: Tuple[str, ...] = ()
    complete: bool = False

    @property
    def label(self) -> str:
        if self.dependencies:
            named = ""
            if self.others:
                named = f" ({', '.join(self.others)}{'' if self.complete else ', and others'})"
            return (
                f"{DEPENDENCIES_OF}{self.name}{'[' + ','.join(self.extras) + ']' if self.extras else ''}"
                f"{' ' + self.version if self.version else ''}: not known{named}"
            )
        pinned = f"=={self.version}" if self.version else ""
        if self.extras:
            return f"what {self.name}[{','.join(self.extras)}]{pinned} brings"
        return f"{self.name}{pinned}"


def parse_requirement(text: str) -> Requirement:
    """ "jax[cuda12]==0.4.30" -> Requirement("jax", ("cuda12",), "==0.4.30", "0.4.30")."""
    return Requirement(*requirement_parts(text))


def _same_dir(d: Optional[str]) -> str:
    return same_dir(d or "")


def _v3(v: str) -> str:
    return ".".join(str(x) for x in version_key(v)[:3])


class _State:
    """The mutable model the steps act on; frozen back into an Environment at the end."""

    def __init__(self, env: Environment, plan: Plan, recipes: Recipes) -> None:
        self.env = env
        self.plan = plan
        self.recipes = recipes
        self.dists: Dict[str, Distribution] = {
            d.name: d for d in (env.python.distributions if env.python else ())
        }
        self.frameworks: Dict[str, FrameworkBuild] = {f.framework: f for f in env.frameworks}
        self.copies: List[LibraryCopy] = list(env.libraries)
        self.environ: Dict[str, str] = dict(env.env)
        self.conf_dirs: List[str] = []
        self.notebook_preloads: List[str] = []
        self.changed_frameworks: Set[str] = set()
        self.cudnn_touched = False
        self.site = env.python.site_packages[0] if env.python and env.python.site_packages else ""
        self.downloads: List[Download] = []  # what the step being simulated downloads

    def downloaded(self, name: str, version: Optional[str], size: Optional[int] = None) -> None:
        if size is None and version:
            size = self.recipes.download_size(name, version)
        self.downloads.append(Download(name, version, size))

    # -- distributions -------------------------------------------------------------------
    def build_for(self, req: Requirement) -> Optional[Build]:
        """The framework build a requirement installs: a chosen build of the plan's stack, else
        any recipe build whose main package is this name at this version."""
        if not req.exact:
            return None
        builds = [c.build for c in self.plan.stack.choices] + list(self.recipes.builds)
        found = None
        for b in builds:
            for p in b.packages[:1]:
                r = parse_requirement(p)
                if r.name == req.name and r.exact == req.exact:
                    if r.extras == req.extras:
                        return b  # jax[cuda13]==X is the cuda13 build, not the cuda12 one
                    found = found or b
        return found

    def remove(self, name: str) -> None:
        name = canonical_name(name)
        self.dists.pop(name, None)
        self.copies = [
            c
            for c in self.copies
            if not (c.origin == "pip" and c.package and canonical_name(c.package.name) == name)
        ]
        for fw, fb in list(self.frameworks.items()):
            if canonical_name(fb.distribution) == name:
                del self.frameworks[fw]
                self.changed_frameworks.add(fw)
        if name.startswith("nvidia-cudnn"):
            self.cudnn_touched = True

    def install(self, req: Requirement, *, deps: bool, force: bool) -> None:
        version = req.exact
        if version is None:
            version = self.newest_within(req)
            if version is None:
                # nothing the recipes know satisfies it: left as is in the model, but pip
                # downloads something unless it is installed already
                if req.name not in self.dists:
                    self.downloads.append(Download(req.name, None))
                return
        have = self.dists.get(req.name)
        build = self.build_for(Requirement(req.name, req.extras, f"=={version}", version))
        if have is not None and have.version == version and not force:
            # pip: "Requirement already satisfied": the files stay as they are; its
            # dependencies are still resolved
            if deps and build is not None:
                self.install_deps(build)
            return
        self.downloaded(req.name, version)
        if deps and req.extras and build is None:
            # pip installs what the extras name, which no recipe lists
            self.downloads.append(Download(req.name, version, None, extras=req.extras))
        requires: Tuple[str, ...] = (
            build.requires
            if build is not None
            else (have.requires if have and have.version == version else ())
        )
        location = have.location if have else self.site
        self.dists[req.name] = Distribution(
            name=req.name,
            version=version,
            location=location,
            installer=have.installer if have else "pip",
            requires=requires,
        )
        if build is not None:
            self.set_framework(build, req.name, version)
        self.refresh_copies(req.name, version)
        if deps and build is not None:
            self.install_deps(build)

    def install_deps(self, build: Build) -> None:
        """What pip brings along for a framework build: its exact pins, and for a range the
        installed version when it satisfies it, else the newest the recipes know."""
        for r in build.requires:
            dep = parse_requirement(r)
            cur = self.dists.get(dep.name)
            if cur is not None and _satisfies(cur.version, dep.spec):
                continue
            if dep.extras and self.build_for(dep) is None:
                # cuda-toolkit[cublas,...]: pip installs what the extras name, which no recipe lists
                self.downloads.append(Download(dep.name, dep.exact, None, extras=dep.extras))
            self.install(dep, deps=False, force=False)

    def bring(
        self,
        name: str,
        extras: Tuple[str, ...],
        version: Optional[str],
        build: Optional[Build],
        seen: Set[str],
    ) -> None:
        """What pip brings along for `name[extras]==version`, which this step installs: the
        dependencies its DependencySet names are installed at their versions (a bare name: the
        version the build's companions pin; NAME=={version}: the same version), each in turn with
        its own; what is left (others, or all of it when no source says) is one "dependencies of"
        item. `seen`: names this step installs already (named in it, or brought before)."""
        key = f"{name}[{','.join(extras)}]" if extras else name
        dset = self.recipes.dependencies_of("pip", key, version) if version else None
        if dset is None:
            self.downloads.append(Download(name, version, None, extras=extras, dependencies=True))
            return
        pins = {r.name: r.exact for r in map(parse_requirement, build.companions if build else ())}
        for text in dset.brings:
            dep = parse_requirement(text.replace("{version}", version or ""))
            if dep.name in seen:
                continue
            seen.add(dep.name)
            exact = dep.exact or pins.get(dep.name)
            had = self.dists.get(dep.name)
            self.install(
                Requirement(dep.name, (), f"=={exact}", exact) if exact else Requirement(dep.name),
                deps=False,
                force=False,
            )
            now = self.dists.get(dep.name)
            if now is not None and (had is None or had.version != now.version):
                self.bring(dep.name, (), now.version, build, seen)
        modelled = {parse_requirement(r).name for r in (build.requires if build else ())} | seen
        others = tuple(o for o in dset.others if canonical_name(o) not in modelled)
        if others or not dset.complete:
            self.downloads.append(
                Download(
                    name,
                    version,
                    None,
                    extras=extras,
                    dependencies=True,
                    others=others,
                    complete=dset.complete,
                )
            )

    def system_dependencies(self, manager: str, pkg: str, ver: str) -> None:
        """What an apt or conda install brings along: the packages its DependencySet names at
        the same version come down too (sizes unknown unless recorded); the rest, or all of it
        when no recorded source says (apt: NVIDIA's Packages index was not readable), is one
        "dependencies of" item."""
        dset = self.recipes.dependencies_of(manager, pkg, ver)
        if dset is None:
            self.downloads.append(Download(pkg, ver, None, dependencies=True))
            return
        for text in dset.brings:
            dep = parse_requirement(text.replace("{version}", ver))
            self.downloaded(dep.name, dep.exact)
        if dset.others or not dset.complete:
            self.downloads.append(
                Download(
                    pkg, ver, None, dependencies=True, others=dset.others, complete=dset.complete
                )
            )

    def newest_within(self, req: Requirement) -> Optional[str]:
        """The newest version of `req.name` the recipes know inside its range (cuDNN wheels:
        the releases' pip tables; others: the exact pins any build names)."""
        known: Set[str] = set()
        for rel in self.recipes.cudnn:
            v = rel.pip.get(req.name)
            if v:
                known.add(v)
        for b in self.recipes.builds:
            for r in b.requires:
                p = parse_requirement(r)
                if p.name == req.name and p.exact:
                    known.add(p.exact)
        ok = [v for v in known if _satisfies(v, req.spec)]
        if ok:
            return max(ok, key=version_key)
        return _lowest_allowed(req.spec)  # pip finds one on the index; the recipes do not list it

    def set_framework(self, b: Build, dist: str, version: str) -> None:
        cudnn_req = next(
            (r for r in b.requires if parse_requirement(r).name.startswith("nvidia-cudnn")), None
        )
        old = self.frameworks.get(b.framework)
        self.frameworks[b.framework] = FrameworkBuild(
            framework=b.framework,
            distribution=dist,
            version=version,
            location=old.location if old else self.site,
            variant=b.variant,
            cuda=b.cuda,
            cudnn=b.cudnn,
            cudnn_requirement=cudnn_req,
            compute_capabilities=b.compute_capabilities,
            ptx=b.ptx,
            is_cuda_build=b.cuda is not None,
            loads_by_path=old.loads_by_path if old else False,
            library_file=old.library_file if old else None,
            source="simulated",
        )
        self.changed_frameworks.add(b.framework)

    def refresh_copies(self, dist: str, version: str) -> None:
        """A wheel (re)installed: the copies it owns are complete again, at its version; a cuDNN
        wheel that owned no copy yet lays one out in site-packages/nvidia/cudnn/lib."""
        owned = False
        for i, c in enumerate(self.copies):
            if c.origin == "pip" and c.package and canonical_name(c.package.name) == dist:
                owned = True
                self.copies[i] = _complete(
                    c,
                    _v3(version) if c.library == "cudnn" else c.version,
                    package=Package(dist, version),
                )
        if not owned and self.site:
            self.new_runtime_copies(dist, version)
        if dist.startswith("nvidia-cudnn-cu"):
            self.cudnn_touched = True
            if not owned and self.site:
                cuda = re.search(r"cu(\d+)$", dist)
                d = f"{self.site}/nvidia/cudnn/lib"
                major = version_key(version)[0]
                # wheels of two cuDNN majors share the directory (libcudnn.so.8 next to .so.9)
                self.copies = [
                    c
                    for c in self.copies
                    if not (
                        c.library == "cudnn"
                        and c.major in (None, major)
                        and _same_dir(c.directory) == _same_dir(d)
                    )
                ]
                self.copies.append(
                    _new_cudnn_copy(
                        d,
                        _v3(version),
                        "pip",
                        Package(dist, version),
                        int(cuda.group(1)) if cuda else None,
                    )
                )

    def new_runtime_copies(self, dist: str, version: str) -> None:
        """A CUDA runtime wheel newly installed (nvidia-cuda-runtime-cu12, nvidia-cublas, ...):
        its libraries in the folder the wheels use."""
        m = re.match(r"^(nvidia-[a-z-]+?)(?:-cu(\d+))?$", dist)
        if not m or m.group(1) not in WHEEL_LIBRARIES or m.group(1) == "nvidia-cudnn":
            return
        major = int(m.group(2)) if m.group(2) else version_key(version)[0]
        for library in WHEEL_LIBRARIES[m.group(1)]:
            folders = wheel_lib_folders(library, major)
            folder = folders[-1] if major >= 13 else folders[0]
            d = f"{self.site}/nvidia/{folder}/lib"
            soname = f"lib{library}.so.{major}"
            self.copies = [
                c
                for c in self.copies
                if not (
                    c.library == library
                    and c.major == major
                    and _same_dir(c.directory) == _same_dir(d)
                )
            ]
            self.copies.append(
                LibraryCopy(
                    library=library,
                    major=major,
                    version=_v3(version),
                    directory=d,
                    origin="pip",
                    package=Package(dist, version),
                    version_source="simulated",
                    files=(LibFile(name=soname, soname=soname, version=_v3(version)),),
                )
            )

    # -- system packages -----------------------------------------------------------------
    def apt_install(self, pkg: str, ver: str) -> None:
        rel = next((r for r in self.recipes.cudnn if r.apt.get(pkg) == ver), None)
        self.downloaded(pkg, ver, rel.size_bytes if rel is not None else None)
        version = rel.version if rel is not None else _v3(ver.split("-")[0])
        cuda = re.search(r"cuda-?(\d+)", pkg)
        self.copies = [
            c
            for c in self.copies
            if not (
                c.library == "cudnn" and c.origin == "apt" and c.major == version_key(version)[0]
            )
        ]
        self.copies.append(
            _new_cudnn_copy(
                MULTIARCH, version, "apt", Package(pkg, ver), int(cuda.group(1)) if cuda else None
            )
        )
        self.cudnn_touched = True

    def conda_install(self, pkg: str, ver: str) -> None:
        rel = self.recipes.cudnn_release(ver) if pkg == "cudnn" else None
        self.downloaded(pkg, ver, rel.size_bytes if rel is not None else None)
        if pkg != "cudnn":
            return
        prefix = (self.env.python.prefix if self.env.python else "") or "/usr/local"
        self.copies.append(
            _new_cudnn_copy(f"{prefix}/lib", _v3(ver), "conda", Package("cudnn", ver), None)
        )
        self.cudnn_touched = True

    # -- loads ---------------------------------------------------------------------------
    def walk(self, ld: LoadResolution, soname: str) -> LoadResolution:
        """Where `soname` comes from now, through the search order `ld` recorded."""
        order = self.search_order(ld, soname)
        major = _soname_major(soname)
        # the search as it is after the plan (the default directories are implied, as detect records it)
        ld = dataclasses.replace(
            ld,
            search=tuple(
                SearchDir(v, os.path.normpath(d))  # type: ignore[arg-type]
                for v, d in order
                if v != "default"
            ),
            ld_preload=tuple(
                p
                for p in split_ld_preload(self.environ.get("LD_PRELOAD"))
                if os.path.basename(p) == soname
            ),
        )
        for via, d in order:
            hit = self.file_in(d, ld.library, soname, major, ld)
            if hit is None:
                continue
            copy, f = hit
            path = os.path.join(d, soname)
            if f is not None and not f.valid_elf:
                return dataclasses.replace(
                    ld,
                    soname=soname,
                    path=path,
                    directory=copy.directory if copy else d,
                    version=None,
                    via=via,
                    error=f"invalid ELF header: {path}",
                    intended=None,
                )
            version = (
                f.version if f is not None and f.version and ld.library == "cudnn" else None
            ) or (copy.version if copy is not None else ld.version)
            return dataclasses.replace(
                ld,
                soname=soname,
                path=path,
                directory=copy.directory if copy else d,
                version=version,
                via=via,
                error=None,
                intended=self.intended(order, via, d, ld, soname, major),
            )
        return dataclasses.replace(
            ld,
            soname=soname,
            path=None,
            directory=None,
            version=None,
            via="",
            intended=None,
            error=f"{soname}: not found in any searched place",
        )

    def intended(
        self,
        order: Sequence[Tuple[str, str]],
        via: str,
        winner: str,
        ld: LoadResolution,
        soname: str,
        major: Optional[int],
    ) -> Optional[str]:
        if via not in ("LD_PRELOAD", "LD_LIBRARY_PATH"):
            return None
        for v, d in order:
            if (
                v in ("preload", "DT_RPATH", "DT_RUNPATH")
                and _same_dir(d) != _same_dir(winner)
                and self.file_in(d, ld.library, soname, major, ld) is not None
            ):
                return os.path.join(d, soname)
        return None

    def file_in(
        self, d: str, library: str, soname: str, major: Optional[int], ld: LoadResolution
    ) -> Optional[Tuple[Optional[LibraryCopy], Optional[LibFile]]]:
        """(copy, file) when directory `d` holds `soname` after the plan; None when it does not."""
        sd = _same_dir(d)
        for c in self.copies:
            if (
                c.library == library
                and _same_dir(c.directory) == sd
                and (major is None or c.major in (None, major))
            ):
                if soname in c.missing:
                    return None
                f = next(
                    (
                        x
                        for x in c.files
                        if x.name == soname or x.soname == soname or x.name.startswith(soname + ".")
                    ),
                    None,
                )
                if f is None and c.files:
                    return None
                return c, f
        known_before = any(
            c.library == library and _same_dir(c.directory) == sd for c in self.env.libraries
        )
        if known_before:
            return None  # the copy that was there is gone
        if (
            ld.path
            and _same_dir(os.path.dirname(ld.path)) == sd
            and os.path.basename(ld.path) == soname
        ):
            return None, None  # a file no copy describes, where it was found before
        return None

    def search_order(self, ld: LoadResolution, soname: str) -> List[Tuple[str, str]]:
        out: List[Tuple[str, str]] = []
        for p in split_ld_preload(self.environ.get("LD_PRELOAD")):
            if os.path.basename(p) == soname:
                out.append(("LD_PRELOAD", os.path.dirname(p)))
        for p in self.notebook_preloads:
            if os.path.basename(p) == soname and ld.library == "cudnn":
                out.append(("preload", os.path.dirname(p)))
        rpath, runpath, preload, cache = _recorded(ld)
        out += [("preload", d) for d in preload]
        out += [("DT_RPATH", d) for d in rpath]
        out += [
            ("LD_LIBRARY_PATH", d) for d in self.environ.get("LD_LIBRARY_PATH", "").split(":") if d
        ]
        out += [("DT_RUNPATH", d) for d in runpath]
        out += [("ld.so.cache", d) for d in self.conf_dirs if d not in cache]
        out += [("ld.so.cache", d) for d in cache]
        out += [("default", d) for d in DEFAULT_SEARCH]
        return out

    def new_loads(
        self, fb: FrameworkBuild, template: Optional[LoadResolution]
    ) -> List[LoadResolution]:
        """A framework the plan installs (or moves to another cuDNN major): its cuDNN load, the
        way pip wheels are laid out (RPATH into site-packages/nvidia/cudnn/lib)."""
        if not fb.cuda or not fb.cudnn:
            return []
        soname = f"libcudnn.so.{version_key(fb.cudnn)[0]}"
        if template is None:
            steps = (
                f"DT_RPATH of {self.site}/{fb.framework}/lib/lib{fb.framework}.so: {self.site}/nvidia/cudnn/lib",
            )
            template = LoadResolution(
                consumer=fb.framework,
                library="cudnn",
                soname=soname,
                path=None,
                steps=steps,
                search=(SearchDir("DT_RPATH", f"{self.site}/nvidia/cudnn/lib"),),
            )
        return [self.walk(template, soname)]


def _recorded(ld: LoadResolution) -> Tuple[List[str], List[str], List[str], List[str]]:
    """(DT_RPATH dirs, DT_RUNPATH dirs, preload dirs, ld.so.cache directories) of the search
    detect recorded for a load (LoadResolution.search)."""

    def dirs(via: str) -> List[str]:
        return [s.directory for s in ld.search if s.via == via]

    return dirs("DT_RPATH"), dirs("DT_RUNPATH"), dirs("preload"), dirs("ld.so.cache")


def _soname_major(soname: str) -> Optional[int]:
    m = re.search(r"\.so\.(\d+)", soname)
    return int(m.group(1)) if m else None


def _lowest_allowed(spec: str) -> Optional[str]:
    """A version inside `spec` named by its own lower bound (">=12.6.85,<13" -> "12.6.85")."""
    for m in re.finditer(r"(>=|==|~=|===)\s*([0-9][^\s,;]*)", spec):
        if _satisfies(m.group(2), spec):
            return m.group(2)
    return None


def _satisfies(version: str, spec: str) -> bool:
    if not spec:
        return True
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(spec).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def _complete(c: LibraryCopy, version: Optional[str], package: Optional[Package]) -> LibraryCopy:
    files = tuple(
        dataclasses.replace(
            f,
            valid_elf=True,
            version=version if c.library == "cudnn" else f.version,
            differs=None,  # a (re)installed wheel's files are its RECORD's
        )
        for f in c.files
    )
    names = {f.name for f in files}
    files += tuple(LibFile(name=m, soname=m, version=version) for m in c.missing if m not in names)
    return dataclasses.replace(
        c, version=version, files=files, missing=(), mixed=False, package=package or c.package
    )


def _new_cudnn_copy(
    directory: str, version: str, origin: str, package: Package, cuda_major: Optional[int]
) -> LibraryCopy:
    major = version_key(version)[0]
    files = tuple(LibFile(name=s, soname=s, version=version) for s in expected_cudnn_sonames(major))
    return LibraryCopy(
        library="cudnn",
        major=major,
        version=version,
        directory=directory,
        origin=origin,  # type: ignore[arg-type]
        package=package,
        version_source="simulated",
        files=files,
        cuda_major=cuda_major,
    )


def simulate(env: Environment, plan: Plan, recipes: Recipes) -> Environment:
    """The Environment the plan's steps leave behind (see the module docstring)."""
    return _run(env, plan, recipes)[0]


def downloads(env: Environment, plan: Plan, recipes: Recipes) -> Tuple[Tuple[Download, ...], ...]:
    """What each step of the plan downloads (one tuple per step, in order), dependencies
    included: exactly the distributions the simulation installs or reinstalls in that step (pip
    keeps what already satisfies a requirement), the apt and conda packages, and, as unknowns,
    the extras it cannot expand and the requirements it cannot place at a version."""
    return _run(env, plan, recipes)[1]


def priced(plan: Plan, per_step: Sequence[Sequence[Download]]) -> Plan:
    """The plan with each step's download size set from `per_step` (fixer.planner.simulate.downloads):
    the known bytes, and the labels of what comes down at an unknown size."""
    steps = []
    for step, items in zip(plan.steps, per_step):
        known = [d.size_bytes for d in items if d.size_bytes is not None]
        steps.append(
            dataclasses.replace(
                step,
                download_bytes=sum(known) if items else None,
                download_unknown=tuple(d.label for d in items if d.size_bytes is None),
            )
        )
    return dataclasses.replace(plan, steps=tuple(steps) + plan.steps[len(steps) :])


def _run(
    env: Environment, plan: Plan, recipes: Recipes
) -> Tuple[Environment, Tuple[Tuple[Download, ...], ...]]:
    """The model after the plan, and what each step downloads: one pass over the steps."""
    s = _State(env, plan, recipes)
    per_step: List[Tuple[Download, ...]] = []
    for step in plan.steps:
        s.downloads = []
        _apply_step(s, step)
        # one pip command resolves one version per name: the one the step leaves installed
        last = {(d.name, d.extras, d.dependencies): d for d in s.downloads}
        per_step.append(
            tuple(d for d in s.downloads if last[(d.name, d.extras, d.dependencies)] is d)
        )
    s.downloads = []
    return _result(s, env, plan), tuple(per_step)


def _apply_step(s: _State, step: Step) -> None:
    """One step's change to the model (its downloads go to s.downloads)."""
    if step.kind == "pip-uninstall":
        for name in step.packages:
            s.remove(name)
    elif step.kind == "pip-install":
        _pip_install(s, step)
    elif step.kind == "apt-install":
        for text in step.packages:
            pkg, _, ver = text.partition("=")
            s.apt_install(pkg, ver)
            s.system_dependencies("apt", pkg, ver)
    elif step.kind == "conda-install":
        _conda_install(s, step)


def _pip_install(s: _State, step: Step) -> None:
    deps = not (step.pip and step.pip.no_deps)
    force = bool(step.pip and step.pip.reinstall)
    before = {n: d.version for n, d in s.dists.items()}
    reqs = [parse_requirement(text) for text in step.packages]
    for r in reqs:
        s.install(r, deps=deps, force=force)
    if not deps:
        return
    # pip resolves the whole Requires-Dist of what it installs: what a recorded source says it
    # brings (recipes/dependencies.toml: jax[cuda12] -> jaxlib, the plugin -> its pjrt) is
    # installed and priced; the rest is named where known and counted as unknown
    seen = {r.name for r in reqs}
    for r in reqs:
        now = s.dists.get(r.name)
        if now is None or force or before.get(r.name) != now.version:
            s.bring(r.name, r.extras, now.version if now else None, s.build_for(r), seen)


def _conda_install(s: _State, step: Step) -> None:
    for text in step.packages:
        r = parse_requirement(text)
        if r.exact:
            s.conda_install(r.name, r.exact)
            s.system_dependencies("conda", r.name, r.exact)
        else:
            # condacolab's install(): it fetches a conda installer (Miniforge) of a size no recipe records
            s.downloads.append(Download(f"conda, fetched by {r.name}.install()", None))


def _result(s: _State, env: Environment, plan: Plan) -> Environment:
    """The model after every step: environment fixes applied, every load walked again."""
    fixes = plan.stack.env_fixes
    if fixes and any(st.kind == "env-fix" for st in plan.steps):
        s.environ = environ_after(fixes, s.environ)
        s.conf_dirs = [f.value for f in fixes if f.kind == "ld-so-conf"]
        notebook = env.runtime.kind in ("colab", "kaggle") or env.runtime.in_notebook_kernel
        if notebook:
            s.notebook_preloads = [f.value for f in fixes if f.kind == "ipython-preload"]
    loads: List[LoadResolution] = []
    seen: Set[str] = set()
    for ld in env.loads:
        fb = s.frameworks.get(ld.consumer)
        if ld.consumer != "dlopen" and fb is None:
            continue  # the framework is gone
        soname = ld.soname
        if (
            ld.library == "cudnn"
            and fb is not None
            and fb.cudnn
            and ld.consumer in s.changed_frameworks
        ):
            soname = f"libcudnn.so.{version_key(fb.cudnn)[0]}"
        loads.append(s.walk(ld, soname))
        if ld.library == "cudnn":
            seen.add(ld.consumer)
    for name, fb in s.frameworks.items():
        if name not in seen and name in s.changed_frameworks:
            loads += s.new_loads(fb, None)
    views = tuple(
        v
        for v in env.runtime_views
        if v.framework not in s.changed_frameworks and not s.cudnn_touched and not fixes
    )
    python = env.python
    if python is not None:
        python = dataclasses.replace(
            python, distributions=tuple(sorted(s.dists.values(), key=lambda d: d.name))
        )
    return dataclasses.replace(
        env,
        python=python,
        frameworks=tuple(s.frameworks[k] for k in sorted(s.frameworks)),
        libraries=tuple(s.copies),
        loads=tuple(loads),
        env=s.environ,
        runtime_views=views,
        # a cleanup step removes exactly what detection listed as pip's leftovers
        pip_leftovers=() if any(st.kind == "cleanup" for st in plan.steps) else env.pip_leftovers,
    )


# ---------------------------------------------------------------------------------------
# the invariant: a plan is shown as a fix only when its simulated result is healthy
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PlanCheck:
    """What simulating a plan showed."""

    after: Tuple[Finding, ...]  # diagnose(simulate(env, plan)): what would remain
    unfixed: Tuple[Finding, ...]  # errors and warnings among them
    drift: Tuple[str, ...]  # where the result is not the stack the plan claims
    downloads: Tuple[
        Tuple[Download, ...], ...
    ] = ()  # per step: what it downloads (fixer.planner.simulate.downloads)

    @property
    def healthy(self) -> bool:
        return not self.unfixed and not self.drift


def check_plan(env: Environment, plan: Plan, recipes: Recipes) -> PlanCheck:
    """Simulate `plan` on `env` and diagnose the result as the machine is diagnosed (with a
    runtime view that failed, fixer.explainer.diagnose_all; fixer.pipeline.diagnosed)."""
    after_env, per_step = _run(env, plan, recipes)
    if any(v.error for v in after_env.runtime_views):
        # start-up: fixer.explainer costs plan --json a few % of its time; only a failed
        # doctor --deep import needs it (its views are in the file a plan reads)
        # start-up: fixer.explainer +12% on doctor --json (python -X importtime)
        from fixer.explainer import diagnose_all

        after = diagnose_all(after_env, recipes)
    else:
        after = diagnose(after_env, recipes)
    unfixed = tuple(
        f for f in after if f.severity in ("error", "warning") and in_scope(f, env, plan)
    )
    return PlanCheck(
        after=after, unfixed=unfixed, drift=tuple(stack_drift(after_env, plan)), downloads=per_step
    )


def in_scope(finding: Finding, env: Environment, plan: Plan) -> bool:
    """A plan limited by --framework answers for the frameworks it plans: a finding about other
    installed frameworks only (Finding.frameworks, none of them planned) is outside it. A
    finding that names no framework, or one the plan planned, is always in scope."""
    planned = _planned_only(env, plan)
    if planned is None or not finding.frameworks:
        return True
    return bool(set(finding.frameworks) & planned)


def _planned_only(env: Environment, plan: Plan) -> Optional[Set[str]]:
    """The frameworks a plan limited by --framework plans (it chose builds for some, not for
    every framework installed); None for a plan of the whole machine."""
    planned = {c.framework for c in plan.stack.choices}
    installed = {fb.framework for fb in env.frameworks}
    return planned if planned and installed - planned else None


def stack_drift(after: Environment, plan: Plan) -> List[str]:
    """Where the simulated machine differs from the stack the plan chose: a pinned version pip
    would leave elsewhere, a framework that loads another cuDNN copy than the chosen one (e.g.
    a pip wheel brought back by an install after --cudnn-from apt removed it)."""
    stack = plan.stack
    if not plan.steps:
        return []
    out = _pin_drift(after, plan)
    planned = _planned_only(after, plan)
    for major, choice in stack.cudnn_copies.items():
        chosen = choice.package.name if choice.package else None
        for ld in after.loads:
            if (
                ld.consumer == "dlopen"
                or (planned is not None and ld.consumer not in planned)
                or ld.library != "cudnn"
                or ld.soname != f"libcudnn.so.{major}"
                or not ld.directory
                or ld.error
            ):
                continue
            copy = next(
                (
                    c
                    for c in after.libraries
                    if c.library == "cudnn"
                    and c.major in (None, int(major))
                    and _same_dir(c.directory) == _same_dir(ld.directory)
                ),
                None,
            )
            if copy is None or copy.origin == "bundled":
                continue
            have_pkg = copy.package.name if copy.package else None
            if (
                chosen is not None
                and have_pkg != chosen
                or chosen is None
                and _same_dir(choice.directory or choice.source) != _same_dir(copy.directory)
            ):
                out.append(
                    f"{ld.consumer} would load cuDNN {copy.version} from {copy.directory} "
                    f"({copy.package or copy.origin}), not the {choice} the plan chose"
                )
    return list(dict.fromkeys(out))


def _pin_drift(after: Environment, plan: Plan) -> List[str]:
    """The pinned versions the simulated machine does not have after the plan."""
    out: List[str] = []
    have = {d.name: d.version for d in (after.python.distributions if after.python else ())}
    # what the plan reinstalls on purpose to repair a record (files-modified): a dist-info folder
    # named for another version than its METADATA comes back as the version the name gives
    repaired = {
        requirement_name(r): r.split("==", 1)[1]
        for st in plan.steps
        if st.pip is not None and st.pip.reinstall
        for r in st.packages
        if "==" in r
    }
    for p in plan.stack.pins:
        if p.manager != "pip":
            continue
        now = have.get(canonical_name(p.name))
        if p.action == "remove":
            if now is not None:
                out.append(f"{p.name} {now} is still installed after the plan, which removes it")
        elif p.action == "keep" and now is not None and repaired.get(canonical_name(p.name)) == now:
            continue
        elif now != p.version:
            out.append(f"{p.name} would be {now or 'absent'} after the plan, not {p.version}")
    return out


__all__ = [
    "Download",
    "PlanCheck",
    "Requirement",
    "check_plan",
    "downloads",
    "parse_requirement",
    "priced",
    "simulate",
    "stack_drift",
]
