"""The domain as a provider for the solver: the rules of docs/design.md over one machine.

The machine enters as pinned virtual candidates, like conda's `__cuda`: DRIVER (a driver
version: a build of CUDA X.Y needs the driver floor of that CUDA family), GPU (the compute
capabilities present: a build needs kernels that run on each, `rules.runs_on`; a cuDNN release
may need a minimum) and PYTHON (the build's Python specifier). Each framework is an identifier
`framework_id(NAME)` whose candidates are recipe builds (the installed one first). Each cuDNN
major is an identifier `cudnn_id(N)`: one process maps one libcudnn.so.N, so every framework in
the environment shares that one copy and each asks `rules.cudnn_compatible` of it, built for its
CUDA major. A copy of cuDNN from pip or apt is a package version (`package_id("pip", DIST)`),
so two majors that would need two versions of one distribution (nvidia-cudnn-cu12 8.9 and 9.3)
cannot both come from pip.

The objective lives in the candidate order and in `cost`, never in the solver:
(framework versions changed, distributions touched, rank, bytes downloaded) for builds and
(.., bytes, rank) for cuDNN, compared in that order, where rank is the position in the
candidate order (newest first for builds; for cuDNN the version a chosen build pins, then
with --cudnn-from apt its apt twin (the same release), then the smallest step up from the copy loaded now). What
is installed and works costs nothing. A cuDNN wheel that a build being installed pins (its
Requires-Dist ==) comes with that install: it touches no further distribution and downloads
nothing more (the build's own count holds its CUDA libraries); a copy already on disk costs only
the loader fix it needs; anything else (another wheel, an apt package: a change of the system
too) is one more distribution touched.
"Download the fewest bytes" is carried by the distributions touched (change only the cuDNN
wheel rather than reinstall torch); between two builds that must both be downloaded, the newest
wins and bytes only break ties (TensorFlow 2.15 is not better than 2.17 for being 3% smaller).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, FrozenSet, List, Mapping, NamedTuple, Optional, Sequence, Tuple

from fixer.system.versions import (
    canonical_name,
    split_requirement,
    major_minor,
    newest_first,
    public,
    version_key,
)
from fixer.model import (
    Build,
    CudnnRelease,
    Environment,
    FrameworkBuild,
    Intent,
    LibraryCopy,
    LoadResolution,
    Recipes,
)
from fixer.rules import (
    build_runs_on,
    cuda_fit,
    cuda_major_of_package,
    cudnn_compatible,
    cudnn_pin,
    display_name,
    driver_cuda,
    gpu_compute_capability,
    is_usable,
    kernel_list,
    pick_cuda_variant,
    runs_under,
)
from fixer.resolver.loader_fixes import default_dir, reaches
from fixer.resolver.solver import Cost, Requirement

Req = Requirement["Ident"]


class BadIntent(ValueError):
    """What was asked names something the recipes or the machine do not have (`--torch 9.9`,
    `--keep nosuch`): the message says which. fixer.pipeline.resolve raises it as UsageError."""


class Ident(NamedTuple):
    """A solver identifier: what kind of thing, and which one."""

    kind: str  # "fact", "framework", "cudnn" (name: the major), "pip", "apt"
    name: str


DRIVER = Ident("fact", "driver")
GPU = Ident("fact", "gpu")
PYTHON = Ident("fact", "python")


def framework_id(name: str) -> Ident:
    return Ident("framework", name)


def cudnn_id(major: int) -> Ident:
    return Ident("cudnn", str(major))


def package_id(manager: str, name: str) -> Ident:
    return Ident(manager, name)


def cuda_major(cuda: Optional[str]) -> Optional[int]:
    k = version_key(cuda)
    return k[0] if k else None


@dataclasses.dataclass(frozen=True)
class Fact:
    """A machine fact as a pinned virtual candidate (conda's __cuda). value None: unknown."""

    name: Ident
    value: Any
    text: str


@dataclasses.dataclass(frozen=True)
class BuildCandidate:
    build: Build
    installed: bool = False
    installed_version: Optional[str] = None  # what is installed now (any variant)
    self_contained: bool = False  # loads its own bundled cuDNN: no shared copy needed
    touched: int = 1  # distributions that change when it is chosen
    # `touched` of the variant of this release the wheel-index rule picks (rules.pick_cuda_variant):
    # releases are compared by what installing them the rule's way changes, variants by the rule
    release_touched: int = 1
    label: str = ""

    @property
    def framework(self) -> str:
        return self.build.framework


@dataclasses.dataclass(frozen=True)
class CudnnCandidate:
    """The copy of libcudnn.so.N that every framework of the process will map."""

    major: int
    version: str  # "9.19.0.56" or "9.19.0"
    cuda_major: Optional[int]
    source: str  # "pip", "apt", "conda", or the origin of an installed copy
    package: Optional[str] = None  # "nvidia-cudnn-cu13", "libcudnn9-cuda-13", "cudnn"
    package_version: Optional[str] = None
    directory: Optional[str] = None  # for a copy on disk
    state: str = "new"  # "loaded" (on disk, everyone loads it), "on-disk", "reinstall", "new"
    min_cc: Optional[str] = None
    max_cc: Optional[str] = None
    size_bytes: Optional[int] = None

    @property
    def label(self) -> str:
        where = f"{self.package} {self.package_version}" if self.package else f"{self.source} copy"
        return f"cuDNN {self.version} ({where}{' in ' + self.directory if self.directory and not self.package else ''})"


@dataclasses.dataclass(frozen=True)
class PackageCandidate:
    manager: str  # "pip" / "apt"
    name: str
    version: Optional[str]  # None: not installed (removed if it is there now)


#: rules.pick_cuda_variant's answers, shared by every provider of the process: (id of the recipes,
#: (framework, release), driver version, driver CUDA, compute capabilities) -> (those recipes, the
#: pick). The answer is a function of that key alone (the release's builds and the driver floors
#: come from the recipes); each entry keeps its recipes alive, so no other object takes their id.
_VARIANT_PICKS: Dict[Tuple[Any, ...], Tuple[Recipes, Optional[Tuple[str, str]]]] = {}


def _variant_of(fb: FrameworkBuild) -> Optional[str]:
    if fb.variant:
        return fb.variant
    if "+" in fb.version:
        return fb.version.split("+", 1)[1]
    return None


#: (id(release), major) -> (the release, kept alive so that the id is not reused; its packages
#: as _release_packages gives them). The recipes' releases are the same for every provider
#: of a process: a plan's ways out, a fleet's nodes and each resolve ask them again.
_RELEASE_PACKAGES: Dict[
    Tuple[int, int],
    Tuple[CudnnRelease, Tuple[Tuple[Optional[Tuple[str, str]], CudnnCandidate], ...]],
] = {}


def _release_packages(
    major: int, rel: CudnnRelease
) -> Tuple[Tuple[Optional[Tuple[str, str]], CudnnCandidate], ...]:
    """The new-package candidates of one release, per CUDA major it is built for, in the
    candidate order: each with its (package, version) when a copy on disk can stand for it (pip
    and apt; none for conda). Immutable, and the same for every machine: made once."""
    hit = _RELEASE_PACKAGES.get((id(rel), major))
    if hit is not None and hit[0] is rel:
        return hit[1]
    out: List[Tuple[Optional[Tuple[str, str]], CudnnCandidate]] = []
    for cm in rel.cuda_majors:
        for source, table in (("pip", rel.pip), ("apt", rel.apt)):
            for pkg, ver in table.items():
                pkg_cuda = cuda_major_of_package(pkg, ver)
                if pkg_cuda not in (cm, None) or (pkg_cuda is None and len(rel.cuda_majors) > 1):
                    continue
                new = CudnnCandidate(
                    major=major,
                    version=ver if source == "pip" else rel.version,
                    cuda_major=cm,
                    source=source,
                    package=pkg,
                    package_version=ver,
                    state="new",
                    min_cc=rel.min_compute_capability,
                    max_cc=rel.max_compute_capability,
                    size_bytes=rel.size_bytes,
                )
                out.append(((pkg, ver), new))
        if rel.pip:
            # conda-forge publishes cuDNN as `cudnn` with the same four-part version
            ver = sorted(rel.pip.values())[0]
            conda = CudnnCandidate(
                major=major,
                version=ver,
                cuda_major=cm,
                source="conda",
                package="cudnn",
                package_version=ver,
                state="new",
                min_cc=rel.min_compute_capability,
                max_cc=rel.max_compute_capability,
                size_bytes=rel.size_bytes,
            )
            out.append((None, conda))
    if len(_RELEASE_PACKAGES) > 4096:
        _RELEASE_PACKAGES.clear()
    _RELEASE_PACKAGES[(id(rel), major)] = (rel, tuple(out))
    return tuple(out)


#: The identifiers whose candidates are the same objects in every find_matches (a fact, a
#: framework's builds, a cuDNN major's copies); a package's are made per call.
_STABLE = frozenset({"fact", "framework", "cudnn"})


class StackProvider:
    """The rules of docs/design.md as a provider. Built once per resolve from the machine facts,
    the intent and the recipes; answers the solver's questions without I/O."""

    def __init__(self, env: Environment, intent: Intent, recipes: Recipes) -> None:
        self.env = env
        self.intent = intent
        self.recipes = recipes
        self.notes: List[str] = []
        # keyed by the requirements' ids; each entry keeps its requirements alive, so that an id
        # is never reused by another requirement while the entry stands
        self._matches: Dict[
            Tuple[Ident, Tuple[int, ...], Tuple[str, ...]], Tuple[Tuple[Req, ...], List[Any]]
        ] = {}
        self._deps: Dict[int, List[Req]] = {}
        self._accepts: Dict[int, Tuple[Req, FrozenSet[int]]] = {}
        # (cuDNN major, preferred versions) -> its candidates in that order
        self._preferred: Dict[Tuple[int, FrozenSet[str]], List[CudnnCandidate]] = {}
        self._companions: Dict[str, List[str]] = {}
        self._ranks: Dict[int, Dict[int, int]] = {}
        self._pins_cache: Dict[int, Tuple[Optional[str], Optional[str]]] = {}
        self._fixes_cache: Dict[Tuple[int, FrozenSet[str]], int] = {}
        self._twin_pins: Dict[
            Tuple[str, str, Optional[str]], Tuple[Optional[str], Optional[str]]
        ] = {}
        self._by_framework: Dict[str, Tuple[Build, ...]] = {}
        # cost memos, keyed by ids; each entry keeps its objects alive (no id is reused meanwhile)
        self._build_costs: Dict[int, Tuple[Any, Cost]] = {}
        self._cudnn_costs: Dict[Tuple[int, Tuple[int, ...]], Tuple[Any, Tuple[Any, ...], Cost]] = {}
        self._installed_dists = {
            d.name: d.version for d in (env.python.distributions if env.python else ())
        }
        self._size_estimates: Dict[Tuple[str, str], int] = {}
        self.gpu_present = bool(env.gpus) or env.runtime.accelerator == "gpu"
        self.facts = self._facts()
        self.driver_cuda = driver_cuda(
            env.driver.version, env.driver.cuda_version, recipes.driver_floors
        )
        self._variant_picks: Dict[Tuple[str, str], Optional[Tuple[str, str]]] = {}
        self._releases: Dict[str, Dict[str, List[Build]]] = {}
        self._off_rule: Dict[int, Tuple[Build, int]] = {}
        self.frameworks = self._wanted_frameworks()
        self._framework_ids = tuple(framework_id(f) for f in self.frameworks)
        self.build_candidates: Dict[str, List[BuildCandidate]] = {
            f: self._build_candidates(f) for f in self.frameworks
        }
        self.cudnn_candidates: Dict[int, List[CudnnCandidate]] = {}

    # -- machine facts -------------------------------------------------------------------

    def _facts(self) -> Dict[Ident, Fact]:
        env = self.env
        ccs: List[str] = []
        for g in env.gpus:
            cc = gpu_compute_capability(g, self.recipes)
            if cc and cc not in ccs:
                ccs.append(cc)
            elif not cc:
                self.notes.append(
                    f"compute capability of {g.name} unknown: kernel lists not checked"
                )
        names = sorted({g.name for g in env.gpus})
        gpu_text = (
            (", ".join(names) + f" (compute capability {', '.join(ccs) or 'unknown'})")
            if names
            else "no GPU"
        )
        driver = env.driver.version
        if self.gpu_present and not driver:
            self.notes.append("driver version unknown: driver floors not checked")
        py = env.python.version if env.python else None
        return {
            DRIVER: Fact(DRIVER, driver, f"driver {driver}" if driver else "driver unknown"),
            GPU: Fact(GPU, tuple(ccs), gpu_text),
            PYTHON: Fact(PYTHON, py, f"Python {py}" if py else "Python unknown"),
        }

    def _wanted_frameworks(self) -> List[str]:
        """--framework NAME (repeatable) limits the stack to those frameworks: the plan touches
        only what they need.
        Without it, every framework installed."""
        if self.intent.frameworks:
            return list(dict.fromkeys(self.intent.frameworks))
        out: List[str] = []
        for fb in self.env.frameworks:
            if fb.framework not in out:
                out.append(fb.framework)
        return out

    # -- framework candidates ---------------------------------------------------------------

    def _installed_build(self, name: str) -> Optional[BuildCandidate]:
        fb = self.env.framework(name)
        if fb is None:
            return None
        pub = public(fb.version)
        variant = _variant_of(fb)
        # What pip installed: the PyPI torch wheel's metadata says "2.11.0" while its
        # torch/version.py says "2.11.0+cu130" (seen on the GPU machine). The installed build is
        # the recipe whose package pin equals the dist-info version, not the cu130-index twin.
        dist_version = (
            self._installed_dists.get(split_requirement(fb.distribution)[0]) or fb.version
        )
        recipe: Optional[Build] = None
        same = self._release_builds(name, pub)
        same_variant = [b for b in same if variant and b.variant == variant]
        for b in same_variant:
            if b.packages and split_requirement(b.packages[0])[1] == dist_version:
                recipe = b
                break
        if recipe is None and same_variant:
            recipe = same_variant[0]
        if recipe is None and not variant:
            for b in same:
                if (
                    fb.cuda
                    and b.cuda
                    and major_minor(b.cuda) == major_minor(fb.cuda)
                    and b.index_url is None
                ):
                    recipe = b
                    break
        cuda_build = fb.is_cuda_build if fb.is_cuda_build is not None else (fb.cuda is not None)
        build = Build(
            framework=name,
            version=fb.version,
            variant=variant
            or (recipe.variant if recipe else ("cpu" if not cuda_build else "installed")),
            cuda=fb.cuda if fb.cuda else (recipe.cuda if recipe and cuda_build else None),
            cudnn=fb.cudnn or (recipe.cudnn if recipe else None),
            python="",  # it is installed: it runs on this Python
            compute_capabilities=fb.compute_capabilities
            or (recipe.compute_capabilities if recipe else ()),
            ptx=fb.ptx or (recipe.ptx if recipe else None),
            index_url=recipe.index_url if recipe else None,
            # it is installed: its own distribution pin is what is there, whatever index built it
            packages=(f"{fb.distribution}=={dist_version}",)
            + tuple(
                r
                for r in (recipe.packages if recipe else ())
                if split_requirement(r)[0] != split_requirement(fb.distribution)[0]
            ),
            requires=recipe.requires
            if recipe
            else ((fb.cudnn_requirement,) if fb.cudnn_requirement else ()),
            companions=recipe.companions if recipe else (),
            size_bytes=recipe.size_bytes if recipe else None,
            source=f"installed ({fb.source or 'detected'})",
        )
        if not cuda_build:
            build = dataclasses.replace(build, cuda=None, cudnn=None)
        bundled = any(
            ld.consumer == name
            and ld.library == "cudnn"
            and self._origin_of(ld.directory) == "bundled"
            for ld in self.env.loads
        )
        return BuildCandidate(
            build,
            installed=True,
            installed_version=dist_version,
            self_contained=bundled,
            touched=0,
            label=f"{display_name(name)} {fb.version} (installed)",
        )

    def _origin_of(self, directory: Optional[str]) -> Optional[str]:
        for c in self.env.libraries:
            if c.directory == directory:
                return c.origin
        return None

    def _touched(self, build: Build, installed: Optional[BuildCandidate]) -> int:
        """How many distributions change if `build` replaces what is installed: its own
        packages, the companions that are installed (they must match it), and its CUDA
        libraries when the CUDA version changes. (The recipes do not know every build's
        exact nvidia-* pins, so those are counted as one group, not one by one.)"""
        n = 0
        for req in build.packages:
            name, ver = split_requirement(req)
            if self._installed_dists.get(name) != ver:
                n += 1
        for name in self._companion_names(build.framework):
            if name in self._installed_dists:
                n += 1  # an installed torchvision must change with torch, listed or not
        if installed is None or major_minor(installed.build.cuda) != major_minor(build.cuda):
            n += 1
        return max(n, 1)

    def _builds_of(self, framework: str) -> Tuple[Build, ...]:
        hit = self._by_framework.get(framework)
        if hit is None:
            hit = self._by_framework[framework] = self.recipes.builds_for(framework)
        return hit

    def _release_builds(self, framework: str, release: str) -> List[Build]:
        """The builds of `framework` whose public version is `release`, in recipe order."""
        index = self._releases.get(framework)
        if index is None:
            index = self._releases[framework] = {}
            for b in self._builds_of(framework):
                index.setdefault(public(b.version), []).append(b)
        return index.get(release, [])

    def _companion_names(self, framework: str) -> List[str]:
        """torchvision, torchaudio, ...: every companion any build of `framework` names."""
        hit = self._companions.get(framework)
        if hit is None:
            hit = []
            for b in self.recipes.builds:
                if b.framework == framework:
                    for req in b.companions:
                        n = split_requirement(req)[0]
                        if n not in hit:
                            hit.append(n)
            self._companions[framework] = hit
        return hit

    def _build_candidates(self, name: str) -> List[BuildCandidate]:
        installed = self._installed_build(name)
        inst_pub = public(installed.build.version) if installed else None
        others = [
            b
            for b in self._builds_of(name)
            if not (
                installed and public(b.version) == inst_pub and b.variant == installed.build.variant
            )
        ]
        touched = [self._touched(b, installed) for b in others]
        by_release: Dict[str, List[Tuple[Build, int]]] = {}
        for b, t in zip(others, touched):
            by_release.setdefault(public(b.version), []).append((b, t))
        release_touched: Dict[str, int] = {}
        for release, group in by_release.items():
            picked = [t for b, t in group if self.off_rule(b) == 0] or [t for _, t in group]
            release_touched[release] = min(picked)
        installed_version = installed.installed_version if installed else None
        shown = display_name(name)
        out: List[BuildCandidate] = [installed] if installed else []
        out += [
            BuildCandidate(
                b,
                installed=False,
                installed_version=installed_version,
                touched=t,
                release_touched=release_touched[public(b.version)],
                label=f"{shown} {_label_version(b)}",
            )
            for b, t in zip(others, touched)
        ]

        def key(c: BuildCandidate) -> Tuple[Any, ...]:
            same_version = inst_pub is not None and public(c.build.version) == inst_pub
            return (
                0 if c.installed else 1,
                0 if (same_version or inst_pub is None) else 1,
                newest_first(c.build.version),
                0
                if c.installed
                else self.off_rule(c.build),  # the wheel-index rule's variant first
                c.touched,
                self.estimated_size(c.build),
                newest_first(c.build.cuda),
            )

        out.sort(key=key)
        return out

    # -- cuDNN candidates -----------------------------------------------------------------

    def _consumers(self, major: int) -> List[LoadResolution]:
        soname = f"libcudnn.so.{major}"
        return [
            ld
            for ld in self.env.loads
            if ld.library == "cudnn"
            and ld.soname == soname
            and ld.consumer in self.frameworks
            and self._origin_of(ld.directory) != "bundled"
        ]  # a framework's own copy serves only it

    def cudnn_for(self, major: int) -> List[CudnnCandidate]:
        if major not in self.cudnn_candidates:
            self.cudnn_candidates[major] = self._cudnn_candidates(major)
        return self.cudnn_candidates[major]

    def _cudnn_candidates(self, major: int) -> List[CudnnCandidate]:
        consumers = self._consumers(major)
        out, on_disk = self._disk_candidates(major, consumers)
        for rel in self.recipes.cudnn:
            if version_key(rel.version)[:1] == (major,):
                out += self._release_candidates(major, rel, on_disk)
        # dedupe (a release listing two CUDA majors with one package)
        seen = set()
        uniq = []
        for c in out:
            k = (c.source, c.package, c.package_version, c.directory, c.cuda_major)
            if k not in seen:
                seen.add(k)
                uniq.append(c)
        if self.intent.cudnn_from:
            # --cudnn-from names where a NEW copy comes from; a copy every consumer of this
            # major already loads stays (never take a working major away from a framework)
            uniq = [c for c in uniq if c.source == self.intent.cudnn_from or c.state == "loaded"]
        return self._order_candidates(uniq, consumers, list(on_disk.values()))

    def _disk_candidates(
        self, major: int, consumers: Sequence[LoadResolution]
    ) -> Tuple[List[CudnnCandidate], Dict[Tuple[Optional[str], Optional[str]], LibraryCopy]]:
        """The usable copies of this major on disk (not a framework's own), and every copy by
        its (package, version)."""
        out: List[CudnnCandidate] = []
        on_disk: Dict[Tuple[Optional[str], Optional[str]], LibraryCopy] = {}
        for copy in self.env.libraries:
            if copy.library != "cudnn" or copy.major != major or copy.origin == "bundled":
                continue
            pkg, pkg_ver = (
                (copy.package.name, copy.package.version) if copy.package else (None, None)
            )
            rel = self.recipes.cudnn_release(copy.version) if copy.version else None
            if is_usable(copy):
                loaded = bool(consumers) and all(ld.directory == copy.directory for ld in consumers)
                out.append(
                    CudnnCandidate(
                        major=major,
                        version=pkg_ver
                        if (pkg_ver and copy.origin == "pip")
                        else (copy.version or ""),
                        cuda_major=copy.cuda_major or cuda_major_of_package(pkg, pkg_ver),
                        source=copy.origin,
                        package=pkg,
                        package_version=pkg_ver,
                        directory=copy.directory,
                        state="loaded" if loaded else "on-disk",
                        min_cc=rel.min_compute_capability if rel else None,
                        max_cc=rel.max_compute_capability if rel else None,
                    )
                )
            on_disk[(pkg, pkg_ver)] = copy
        return out, on_disk

    def _release_candidates(
        self,
        major: int,
        rel: CudnnRelease,
        on_disk: Mapping[Tuple[Optional[str], Optional[str]], LibraryCopy],
    ) -> List[CudnnCandidate]:
        """The pip, apt and conda packages of one release, per CUDA major it is built for (a
        package already on disk and usable is a candidate as that copy; one on disk that is not
        usable is reinstalled)."""
        out: List[CudnnCandidate] = []
        for key, new in _release_packages(major, rel):
            have = on_disk.get(key) if key is not None else None
            if have is None:
                out.append(new)
            elif not is_usable(have):
                out.append(dataclasses.replace(new, directory=have.directory, state="reinstall"))
            # else: already a candidate as the copy on disk
        return out

    @staticmethod
    def _order_candidates(
        cands: List[CudnnCandidate],
        consumers: Sequence[LoadResolution],
        copies: Sequence[LibraryCopy],
    ) -> List[CudnnCandidate]:
        """Copies on disk first. Then, for a new pip wheel while a copy of this major is loaded
        now, the smallest step up from it (the least change: usually the version a build's ==
        pin names). For a new apt or conda package (no framework pins one): the twin of a copy
        on disk (the same release, built for another CUDA: _same_release), then the
        newest release; the solver takes the first that fits."""
        source_rank = {"pip": 0, "apt": 1, "conda": 2}
        state_rank = {"loaded": 0, "on-disk": 1, "reinstall": 2, "new": 3}
        step_up = bool(consumers) and any(ld.path for ld in consumers)
        releases = [
            _release_key(c.version, c.package.version if c.package else None) for c in copies
        ]

        def key(c: CudnnCandidate) -> Tuple[Any, ...]:
            fresh = c.state in ("new", "reinstall")
            if fresh and c.source in ("apt", "conda"):
                mine = _release_key(c.version, c.package_version)
                twin = any(_same_release(mine, r) for r in releases)
                newest = newest_first(c.version)
                return (state_rank[c.state], source_rank[c.source], not twin, newest)
            order = version_key(c.version) if (step_up and fresh) else newest_first(c.version)
            return (state_rank[c.state], source_rank.get(c.source, 0), False, order)

        return sorted(cands, key=key)

    def _loader_fixes(self, c: CudnnCandidate, skip: FrozenSet[str] = frozenset()) -> int:
        """1 when a framework would not find a copy where it is without a loader fix (its
        search order, as detect walked it, never looks there). Frameworks in `skip` are
        reinstalled and find their own pinned wheel."""
        key = (id(c), skip)
        hit = self._fixes_cache.get(key)
        if hit is not None:
            return hit
        hit = 0
        if c.source != "apt":
            target = c.directory or default_dir(self.env, c)
            if not target:
                hit = 1  # a conda prefix: nothing searches it until a loader fix says so
            elif any(
                ld.search and ld.consumer not in skip and not reaches(ld, target)
                for ld in self._consumers(c.major)
            ):
                hit = 1
        self._fixes_cache[key] = hit
        return hit

    # -- the provider interface -----------------------------------------------------------

    def identify(self, thing: Any) -> Ident:
        if isinstance(thing, Requirement):
            ident: Ident = thing.identifier
            return ident
        if isinstance(thing, Fact):
            return thing.name
        if isinstance(thing, BuildCandidate):
            return framework_id(thing.framework)
        if isinstance(thing, CudnnCandidate):
            return cudnn_id(thing.major)
        if isinstance(thing, PackageCandidate):
            return package_id(thing.manager, thing.name)
        raise TypeError(thing)

    def get_preference(
        self, identifier: Ident, requirements: Sequence[Req]
    ) -> Tuple[int, int, Ident]:
        """Machine facts first (one candidate each), then frameworks in the order the user
        named them, then cuDNN majors, then the package versions they imply."""
        if identifier.kind == "fact":
            return (0, 0, identifier)
        if identifier.kind == "framework":
            name = identifier.name
            pos = self.frameworks.index(name) if name in self.frameworks else 99
            return (1, pos, identifier)
        if identifier.kind == "cudnn":
            return (2, -int(identifier.name), identifier)
        return (3, 0, identifier)

    def _all_candidates(self, identifier: Ident, requirements: Sequence[Req]) -> List[Any]:
        if identifier.kind == "fact":
            return [self.facts[identifier]]
        if identifier.kind == "framework":
            return list(self.build_candidates.get(identifier.name, ()))
        if identifier.kind == "cudnn":
            major = int(identifier.name)
            prefer = frozenset(v for r in requirements for v in r.prefer)
            if not prefer:
                return list(self.cudnn_for(major))
            ordered = self._preferred.get((major, prefer))
            if ordered is None:
                # versions a chosen build pins exactly come first among the ones not yet on disk
                ordered = self._preferred[(major, prefer)] = sorted(
                    self.cudnn_for(major),
                    key=lambda c: (
                        c.state in ("new", "reinstall"),
                        c.package_version not in prefer,
                    ),
                )
            return list(ordered)
        manager, name = identifier.kind, identifier.name
        versions: List[str] = []
        installed = self._installed_dists.get(name) if manager == "pip" else None
        if installed:
            versions.append(installed)
        for r in requirements:
            for v in r.prefer:
                if v not in versions:
                    versions.append(v)
        return [PackageCandidate(manager, name, v) for v in versions] + [
            PackageCandidate(manager, name, None)
        ]

    @staticmethod
    def _prefer_key(identifier: Ident, requirements: Sequence[Req]) -> Tuple[str, ...]:
        """What of the requirements' `prefer` versions the candidate list depends on: nothing for
        facts and frameworks, which versions for cuDNN, which versions in which order for a
        package (_all_candidates lists them in that order)."""
        if identifier.kind in ("fact", "framework"):
            return ()
        prefer = [v for r in requirements for v in r.prefer]
        if not prefer:
            return ()
        return (
            tuple(sorted(set(prefer)))
            if identifier.kind == "cudnn"
            else tuple(dict.fromkeys(prefer))
        )

    def find_matches(self, identifier: Ident, requirements: Sequence[Req]) -> List[Any]:
        # The answer depends on the set of requirements and on their `prefer` versions (for a
        # package, in order): two orders of one set share an entry only when those agree
        key = (
            identifier,
            tuple(sorted(id(r) for r in requirements)),
            self._prefer_key(identifier, requirements),
        )
        entry = self._matches.get(key)
        if entry is None:
            # the solver adds one requirement at a time: when the matches of all but the last are
            # known, they are the candidates to filter (the candidate list depends on each
            # requirement's `prefer` as well, so only when the last adds no preferred version)
            last = requirements[-1] if requirements else None
            known = None
            if last is not None and not last.prefer and len(requirements) > 1:
                prefix = self._matches.get(
                    (identifier, tuple(sorted(id(r) for r in requirements[:-1])), key[2])
                )
                known = prefix[1] if prefix is not None else None
            if identifier.kind in _STABLE:
                # the candidates are the same objects in every call: each requirement is asked
                # of each of them once (_accepted), and the matches are those all accept
                ok = [self._accepted(identifier, r) for r in requirements]
                base = (
                    known if known is not None else self._all_candidates(identifier, requirements)
                )
                both = frozenset.intersection(*ok) if ok else None
                hit = [c for c in base if both is None or id(c) in both]
            elif known is not None and last is not None:
                hit = [c for c in known if last.accepts(c)]
            else:
                # one requirement at a time over what the ones before it left (the same
                # candidates in the same order as all() of them over each candidate)
                hit = self._all_candidates(identifier, requirements)
                for r in requirements:
                    accepts = r.accepts
                    hit = [c for c in hit if accepts(c)]
            entry = (tuple(requirements), hit)
            self._matches[key] = entry
        return entry[1]

    def _accepted(self, identifier: Ident, requirement: Req) -> FrozenSet[int]:
        """The ids of the candidates of `identifier` (a fact, a framework or a cuDNN major: the
        same objects in every call) that `requirement` accepts, asked once per requirement."""
        hit = self._accepts.get(id(requirement))
        if hit is None:
            every = self._all_candidates(identifier, ())  # the set, whatever its order
            accepts = requirement.accepts
            hit = self._accepts[id(requirement)] = (
                requirement,
                frozenset(id(c) for c in every if accepts(c)),
            )  # keeps the requirement alive: no id reuse
        return hit[1]

    def is_satisfied_by(self, requirement: Req, candidate: Any) -> bool:
        return bool(requirement.accepts(candidate))

    def estimated_size(self, build: Build) -> int:
        """Bytes to download for `build`: its own size; else a build of the same framework and
        version (the PyPI twin of a PyTorch-index build: the wheels differ little); else the
        largest known build of the framework. Unknown must never look free (0)."""
        if build.size_bytes:
            return build.size_bytes
        key = (build.framework, public(build.version))
        if key not in self._size_estimates:
            same = [
                b.size_bytes for b in self._release_builds(build.framework, key[1]) if b.size_bytes
            ]
            anyv = [b.size_bytes for b in self._builds_of(build.framework) if b.size_bytes]
            self._size_estimates[key] = max(same or anyv or [0])
        return self._size_estimates[key]

    def cost(self, identifier: Ident, candidate: Any, pinned: Mapping[Ident, Any]) -> Cost:
        """Compared in order: keep the framework versions the user has (their code depends on
        them), change as few distributions as possible, then for builds the newest (rank: the
        position in the candidate order) with bytes breaking ties, for cuDNN the fewest bytes
        then rank (see the module docstring)."""
        if isinstance(candidate, BuildCandidate):
            # depends on the candidate alone: computed once
            memo = self._build_costs.get(id(candidate))
            if memo is None:
                memo = self._build_costs[id(candidate)] = (candidate, self._build_cost(candidate))
            return memo[1]
        if isinstance(candidate, CudnnCandidate):
            if candidate.state == "loaded":
                return (0, 0, 0, 0)
            # depends on the candidate and the builds pinned, which are pinned only under their
            # framework's identifier (find_matches gives BuildCandidates for those alone)
            builds = tuple(b for b in (pinned.get(i) for i in self._framework_ids) if b is not None)
            key = (id(candidate), tuple(id(b) for b in builds))
            hit = self._cudnn_costs.get(key)
            if hit is None:
                hit = self._cudnn_costs[key] = (
                    candidate,
                    builds,
                    self._cudnn_cost(candidate, builds),
                )
            return hit[2]
        if (
            isinstance(candidate, PackageCandidate)
            and candidate.version is None
            and candidate.manager == "pip"
            and candidate.name in self._installed_dists
        ):
            return (0, 1, 0, 0)  # a removal
        return (0, 0, 0, 0)

    def _build_cost(self, candidate: BuildCandidate) -> Cost:
        if candidate.installed:
            return (0, 0, 0, 0)
        changed = int(
            candidate.installed_version is not None
            and public(candidate.installed_version) != public(candidate.build.version)
        )
        rank = self._rank(self.build_candidates[candidate.framework], candidate)
        return (changed, candidate.release_touched, rank, self.estimated_size(candidate.build))

    def _cudnn_cost(self, candidate: CudnnCandidate, builds: Tuple[BuildCandidate, ...]) -> Cost:
        pinning = [
            c
            for c in builds
            if candidate.source == "pip"
            and self._pin_of(c) == (candidate.package, candidate.package_version)
        ]
        # a version a chosen build pins itself comes first, then its apt twin
        # (the same release for the same CUDA major), then the candidate order
        rank = (
            0
            if pinning
            else 1
            if self._is_twin(candidate, builds)
            else 2 + self._rank(self.cudnn_for(candidate.major), candidate)
        )
        # a build that is installed now brings its pinned wheel with it (its Requires-Dist,
        # counted in its own distributions touched) and finds it by its own RPATH
        brought = frozenset(c.framework for c in pinning if not c.installed)
        fixes = self._loader_fixes(candidate, skip=brought)
        if candidate.state == "on-disk" or (brought and candidate.state == "new"):
            return (0, fixes, 0, rank)  # nothing more to download: at most a loader fix
        return (0, 1 + fixes, candidate.size_bytes or 0, rank)

    def variant_pick(self, framework: str, version: str) -> Optional[Tuple[str, str]]:
        """rules.pick_cuda_variant over the CUDA variants the recipes know of this release, for
        this driver and these GPUs: (CUDA "major.minor", "native" | "minor-version")."""
        key = (framework, public(version))
        if key not in self._variant_picks:
            # the same question for another provider of this process (a plan's ways out, a fleet's
            # nodes, one more resolve on the same machine) has the same answer: asked once
            shared = (
                id(self.recipes),
                key,
                self.env.driver.version,
                self.driver_cuda,
                self.facts[GPU].value,
            )
            hit = _VARIANT_PICKS.get(shared)
            if hit is None:
                variants = [
                    (b.cuda, b.compute_capabilities, b.ptx)
                    for b in self._release_builds(framework, key[1])
                    if b.cuda
                ]
                pick = (
                    pick_cuda_variant(
                        variants,
                        self.env.driver.version,
                        self.driver_cuda,
                        self.facts[GPU].value,
                        self.recipes.driver_floors,
                    )
                    if variants
                    else None
                )
                if len(_VARIANT_PICKS) > 50000:
                    _VARIANT_PICKS.clear()
                hit = _VARIANT_PICKS[shared] = (
                    self.recipes,
                    pick,
                )  # keeps the recipes alive: no id reuse
            self._variant_picks[key] = hit[1]
        return self._variant_picks[key]

    def off_rule(self, build: Build) -> int:
        """Where `build` stands among the CUDA variants of its release by the wheel-index rule
        (rules.pick_cuda_variant): 0 the rule's pick (also CPU builds, and when the rule cannot
        decide), 1 another variant within the driver's own CUDA, 2 one that runs only by
        minor-version compatibility, 3 one that does not run here. The candidate order, so a
        variant other than the pick is chosen only when the pick does not fit the stack."""
        hit = self._off_rule.get(id(build))
        if hit is None:
            hit = self._off_rule[id(build)] = (
                build,
                self._off_rule_of(build),
            )  # keeps `build` alive
        return hit[1]

    def _off_rule_of(self, build: Build) -> int:
        if not build.cuda:
            return 0
        pick = self.variant_pick(build.framework, build.version)
        if pick is None or major_minor(build.cuda) == major_minor(pick[0]):
            return 0
        return {"native": 1, "minor-version": 2}.get(self.fit(build) or "", 3)

    def fit(self, build: Build) -> Optional[str]:
        """How `build` runs under this machine's driver (rules.cuda_fit)."""
        return cuda_fit(
            build.cuda, self.env.driver.version, self.driver_cuda, self.recipes.driver_floors
        )

    def _is_twin(self, candidate: CudnnCandidate, builds: Sequence[BuildCandidate]) -> bool:
        """The apt package of the very release the pip path would install for a chosen build
        (nvidia-cudnn-cu12==9.3.0.75 <-> libcudnn9-cuda-12 9.3.0.75-1: data/apt_cudnn.toml, each
        row with its source). Not conda: its candidates are pip versions assumed on conda-forge,
        not a catalogue, so no one release of them is preferred."""
        if candidate.source != "apt" or self.intent.cudnn_from != "apt":
            return False  # asked for apt: the same fix as the pip path, from apt
        for c in builds:
            pkg, ver = self._pip_version_of(c.build)
            # a Debian version is the upstream release, then "-" and the package revision
            if (
                pkg
                and ver
                and public(ver) == (candidate.package_version or candidate.version).split("-")[0]
                and cuda_major_of_package(pkg, ver) in (candidate.cuda_major, None)
            ):
                return True
        return False

    def _pip_version_of(self, build: Build) -> Tuple[Optional[str], Optional[str]]:
        """The pip cuDNN that goes with `build`: its own == pin, else the pin of its twin build
        (same framework and version, same CUDA major: TensorFlow's plain wheel and its
        [and-cuda] extra)."""
        key = (build.framework, build.version, build.variant)
        if key not in self._twin_pins:
            hit = cudnn_pin(build.requires)
            if not hit[0]:
                for b in self._release_builds(build.framework, public(build.version)):
                    if cuda_major(b.cuda) == cuda_major(build.cuda):
                        pin = cudnn_pin(b.requires)
                        if pin[0]:
                            hit = pin
                            break
            self._twin_pins[key] = hit
        return self._twin_pins[key]

    def _pin_of(self, c: BuildCandidate) -> Tuple[Optional[str], Optional[str]]:
        hit = self._pins_cache.get(id(c))
        if hit is None:
            hit = self._pins_cache[id(c)] = cudnn_pin(c.build.requires)
        return hit

    def _rank(self, cands: List[Any], candidate: Any) -> int:
        """Position of `candidate` in its (fixed) candidate list, by identity."""
        table = self._ranks.get(id(cands))
        if table is None:
            table = self._ranks[id(cands)] = {id(c): i for i, c in enumerate(cands)}
        return table.get(id(candidate), len(cands))

    def get_dependencies(self, candidate: Any) -> List[Req]:
        hit = self._deps.get(id(candidate))
        if hit is None:
            if isinstance(candidate, BuildCandidate):
                hit = self._build_deps(candidate)
            elif isinstance(candidate, CudnnCandidate):
                hit = self._cudnn_deps(candidate)
            else:
                hit = []
            self._deps[id(candidate)] = hit
        return hit

    # -- requirements ---------------------------------------------------------------------

    def cuda_runtime_reachable(self, c: BuildCandidate) -> bool:
        """A CUDA build runs only where its CUDA runtime (cudart, cuBLAS) loads: the build
        brings the wheels itself (its requires name them: torch, tensorflow[and-cuda], JAX's
        cuda extra), or the machine has them (for the installed build: its loads find them; for
        another: a copy of that CUDA major is on disk, or its runtime wheel is installed)."""
        b = c.build
        if not b.cuda:
            return True
        if any(
            split_requirement(r)[0].startswith(("nvidia-cuda-runtime", "nvidia-cublas"))
            for r in b.requires
        ):
            return True
        if c.installed:
            return not any(
                ld.consumer == b.framework
                and ld.library in ("cudart", "cublas", "cublasLt")
                and (ld.error or not ld.path)
                for ld in self.env.loads
            )
        major = cuda_major(b.cuda)
        if not any(x.library == "cudart" for x in self.env.libraries) and not any(
            ld.library == "cudart" for ld in self.env.loads
        ):
            return True  # the machine description says nothing about cudart
        wheel = f"nvidia-cuda-runtime-cu{major}" if major and major < 13 else "nvidia-cuda-runtime"
        return wheel in self._installed_dists or any(
            x.library == "cudart" and x.major == major and not x.missing for x in self.env.libraries
        )

    def _build_deps(self, c: BuildCandidate) -> List[Req]:
        b = c.build
        deps: List[Req] = []
        if b.cuda:
            deps += self._driver_deps(b, c.label)
            deps += self._gpu_deps(c)
        if b.python and self.facts[PYTHON].value:
            deps += self._python_deps(b, c.label)
        if b.cuda and b.cudnn and not c.self_contained:
            deps += self._cudnn_build_deps(c)
        return deps

    def _driver_deps(self, b: Build, who: str) -> List[Req]:
        assert b.cuda
        floor = self.recipes.min_driver(b.cuda)
        if floor:
            return [
                Requirement(
                    DRIVER,
                    lambda f, floor=floor: (
                        f.value is None or version_key(f.value) >= version_key(floor)
                    ),
                    f"needs driver >= {floor} (CUDA {b.cuda})",
                    who,
                )
            ]
        if self.env.driver.cuda_version:
            top = cuda_major(self.env.driver.cuda_version)
            return [
                Requirement(
                    DRIVER,
                    lambda f, m=cuda_major(b.cuda), top=top: m is None or top is None or m <= top,
                    f"needs a driver for CUDA {b.cuda}",
                    who,
                )
            ]
        return []

    def _gpu_deps(self, c: BuildCandidate) -> List[Req]:
        b, who = c.build, c.label
        deps: List[Req] = []
        if b.compute_capabilities or b.ptx:
            deps.append(
                Requirement(
                    GPU,
                    lambda f, b=b: all(build_runs_on(cc, b) is not False for cc in f.value),
                    f"ships kernels for {kernel_list(b.compute_capabilities, b.ptx)}",
                    who,
                )
            )
            if b.ptx and not c.installed and self.fit(b) == "minor-version":
                # the older driver cannot JIT the newer toolkit's PTX: SASS must cover the GPU
                deps.append(
                    Requirement(
                        GPU,
                        lambda f, b=b: all(
                            runs_under(cc, b.compute_capabilities, b.ptx, "minor-version")
                            for cc in f.value
                        ),
                        f"runs by minor-version compatibility on driver CUDA {self.driver_cuda}: needs SASS "
                        f"for the GPU ({kernel_list(b.compute_capabilities, None)}), its PTX {b.ptx} cannot be "
                        "JIT-compiled by the older driver",
                        who,
                    )
                )
        lowest = getattr(b, "min_compute_capability", None)
        if lowest:
            deps.append(
                Requirement(
                    GPU,
                    lambda f, lo=version_key(lowest): all(version_key(cc) >= lo for cc in f.value),
                    f"needs compute capability >= {lowest}",
                    who,
                )
            )
        return deps

    def _python_deps(self, b: Build, who: str) -> List[Req]:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            spec = SpecifierSet(b.python)
        except InvalidSpecifier:
            return []
        return [
            Requirement(
                PYTHON,
                lambda f, spec=spec: (
                    f.value is None or spec.contains(public(f.value), prereleases=True)
                ),
                f"needs Python {b.python}",
                who,
            )
        ]

    def _cudnn_build_deps(self, c: BuildCandidate) -> List[Req]:
        b, who = c.build, c.label
        assert b.cuda and b.cudnn
        major, minor = (version_key(b.cudnn) + (0, 0))[:2]
        cm = cuda_major(b.cuda)
        pin_dist, pin_ver = cudnn_pin(b.requires)

        def ok(x: CudnnCandidate, built: str = f"{major}.{minor}", cm: Optional[int] = cm) -> bool:
            return cudnn_compatible(x.version, built) is True and (
                x.cuda_major is None or cm is None or x.cuda_major == cm
            )

        built = ".".join(str(p) for p in version_key(b.cudnn)[:3])
        text = (
            f"needs cuDNN {major}.x >= {major}.{minor} built for CUDA {cm} (built with {built}"
            + (f"; pins {pin_dist}=={pin_ver})" if pin_ver else ")")
        )
        deps: List[Req] = [
            Requirement(cudnn_id(major), ok, text, who, prefer=(pin_ver,) if pin_ver else ())
        ]
        if pin_dist and not c.installed and self.intent.cudnn_from in (None, "pip"):
            # installing this build brings its cuDNN wheel, which its RPATH finds first: another
            # copy chosen for this major would not be the one it loads
            deps.append(
                Requirement(
                    cudnn_id(major),
                    lambda x, d=pin_dist: x.source == "pip" and x.package == d,
                    f"brings {pin_dist} (its Requires-Dist), which it loads first",
                    who,
                )
            )
        return deps

    def _cudnn_deps(self, c: CudnnCandidate) -> List[Req]:
        deps: List[Req] = []
        if c.min_cc or c.max_cc:
            lo, hi = version_key(c.min_cc), version_key(c.max_cc)

            def ok(f: Fact, lo: Tuple[int, ...] = lo, hi: Tuple[int, ...] = hi) -> bool:
                return all(
                    (not lo or version_key(cc) >= lo) and (not hi or version_key(cc) <= hi)
                    for cc in f.value
                )

            rng = (
                f"SM >= {c.min_cc}"
                if c.min_cc and not c.max_cc
                else f"SM {c.min_cc or '?'}..{c.max_cc}"
            )
            deps.append(Requirement(GPU, ok, f"needs {rng}", c.label))
        if self.intent.cudnn_from and c.state == "loaded" and c.source != self.intent.cudnn_from:
            # kept against --cudnn-from only because the frameworks that load it now keep a build
            # of this major: for any other framework it is a new copy, which comes from the asked source
            for fw in sorted({ld.consumer for ld in self._consumers(c.major)}):
                deps.append(
                    Requirement(
                        framework_id(fw),
                        lambda b, major=c.major: bool(
                            b.build.cuda
                            and b.build.cudnn
                            and not b.self_contained
                            and version_key(b.build.cudnn)[:1] == (major,)
                        ),
                        f"is kept against --cudnn-from {self.intent.cudnn_from} only while {fw} keeps loading it",
                        c.label,
                    )
                )
        if c.package and c.package_version and c.source in ("pip", "apt", "conda"):
            # one version per package and prefix: conda-forge's `cudnn` holds one major at a time
            want = c.package_version
            deps.append(
                Requirement(
                    package_id(c.source, c.package),
                    lambda p, want=want: p.version == want,
                    f"is {c.package}=={want}",
                    c.label,
                    prefer=(want,),
                )
            )
        # Every pip cuDNN wheel of this major writes nvidia/cudnn/lib/libcudnn*.so.N, which the
        # frameworks find first through their RPATH: any other one installed must go.
        for name, ver in self._installed_dists.items():
            if (
                name.startswith("nvidia-cudnn-cu")
                and version_key(ver)[:1] == (c.major,)
                and not (c.source == "pip" and c.package == name)
            ):
                # gone, or moved to another cuDNN major (then it no longer writes libcudnn*.so.N)
                deps.append(
                    Requirement(
                        package_id("pip", name),
                        lambda p, major=c.major: (
                            p.version is None or version_key(p.version)[:1] != (major,)
                        ),
                        f"needs {name} {ver} gone (its nvidia/cudnn/lib copy would load first)",
                        c.label,
                    )
                )
        return deps

    # -- roots: the frameworks and what the user asked ------------------------------------

    def roots(self) -> List[Req]:
        roots: List[Req] = []
        for f in self.frameworks:
            roots += self._framework_roots(f)
        if self.intent.cuda:
            roots += self._cuda_roots(self.intent.cuda)
        roots += self._keep_roots()
        return roots

    def _framework_roots(self, f: str) -> List[Req]:
        """Framework `f` is wanted, with a CUDA build on a GPU machine, at the version and as
        installed when the user asked so."""
        cands = self.build_candidates.get(f, [])
        if not cands:
            raise BadIntent(f"no recipe knows a build of {f!r} and it is not installed")
        roots: List[Req] = [
            Requirement(framework_id(f), lambda c: True, f"{display_name(f)} is wanted", "you")
        ]
        if self.gpu_present:
            roots.append(
                Requirement(
                    framework_id(f),
                    lambda c: c.build.cuda is not None,
                    "a GPU is present: needs a CUDA build",
                    "this machine",
                )
            )
            roots.append(
                Requirement(
                    framework_id(f),
                    lambda c: self.cuda_runtime_reachable(c),
                    "needs the CUDA runtime libraries of its CUDA major (this machine has none: a build that "
                    "brings them, e.g. tensorflow[and-cuda])",
                    "this machine",
                )
            )
        want = self.intent.versions.get(f)
        if want:
            roots.append(self._version_root(f, want, cands))
        dists = {split_requirement(p)[0] for c in cands[:1] for p in c.build.packages}
        fb = self.env.framework(f)
        if fb is not None:
            dists.add(fb.distribution)
        keep = set(self.intent.keep)
        if f in keep or dists & keep:
            if not (cands and cands[0].installed):
                raise BadIntent(f"--keep {f}: {display_name(f)} is not installed")
            roots.append(
                Requirement(
                    framework_id(f),
                    lambda c: c.installed,
                    f"{display_name(f)} stays as installed",
                    f"--keep {f}",
                    intent=True,
                )
            )
        return roots

    def _version_root(self, f: str, want: str, cands: Sequence[BuildCandidate]) -> Req:
        if not any(_version_matches(c.build.version, want) for c in cands):
            known = ", ".join(
                sorted({public(c.build.version) for c in cands}, key=version_key, reverse=True)[:12]
            )
            raise BadIntent(
                f"--{f} {want}: no such {display_name(f)} version in the recipes (known: {known})"
            )
        return Requirement(
            framework_id(f),
            lambda c, want=want: _version_matches(c.build.version, want),
            f"{display_name(f)} {want}",
            f"--{f} {want}",
            intent=True,
        )

    def _cuda_roots(self, cuda: str) -> List[Req]:
        with_cuda = [
            f
            for f in self.frameworks
            if any(_cuda_matches(c.build.cuda, cuda) for c in self.build_candidates[f])
        ]
        if not with_cuda:
            known_cuda = sorted({b.cuda for b in self.recipes.builds if b.cuda}, key=version_key)
            raise BadIntent(
                f"--cuda {cuda}: no build of {', '.join(self.frameworks) or 'any framework'} "
                f"uses CUDA {cuda} (known: {', '.join(known_cuda)})"
            )
        return [
            Requirement(
                framework_id(f),
                lambda c, want=cuda: _cuda_matches(c.build.cuda, want),
                f"CUDA {cuda}",
                f"--cuda {cuda}",
                intent=True,
            )
            for f in with_cuda
        ]

    def _keep_roots(self) -> List[Req]:
        """--keep NAME of a distribution that is not a framework's: it stays at its version (and
        a kept cuDNN wheel keeps its copy)."""
        keep = set(self.intent.keep)
        framework_dists = set()
        for f in self.frameworks:
            for c in self.build_candidates.get(f, [])[:1]:
                framework_dists |= {split_requirement(p)[0] for p in c.build.packages}
            fb = self.env.framework(f)
            if fb:
                framework_dists.add(fb.distribution)
        roots: List[Req] = []
        for name in sorted(keep - set(self.frameworks) - framework_dists):
            cname = canonical_name(name)
            have = self._installed_dists.get(cname)
            if have is None:
                raise BadIntent(f"--keep {name}: no such distribution is installed")
            roots.append(
                Requirement(
                    package_id("pip", cname),
                    lambda p, have=have: p.version == have,
                    f"{cname} stays at {have}",
                    f"--keep {name}",
                    prefer=(have,),
                    intent=True,
                )
            )
            if cname.startswith("nvidia-cudnn-cu"):
                # a kept cuDNN wheel also keeps its copy: only that copy can be the one mapped
                major = version_key(have)[0]
                roots.append(
                    Requirement(
                        cudnn_id(major),
                        lambda c, cname=cname: c.source != "pip" or c.package == cname,
                        f"{cname} stays at {have}",
                        f"--keep {name}",
                        intent=True,
                    )
                )
        return roots


def _release_key(version: Optional[str], package_version: Optional[str]) -> Tuple[int, ...]:
    """The cuDNN release a copy or package is, as far as it is known: 8.9.7.29 from the apt
    version 8.9.7.29-1+cuda11.8 (Debian: upstream version, "-", revision) or the pip version,
    else the library's own 8.9.7."""
    upstream = package_version.split("-")[0] if package_version else ""
    key = version_key(upstream) if upstream else ()
    return key if len(key) >= 4 else version_key(version or "")


def _same_release(a: Tuple[int, ...], b: Tuple[int, ...]) -> bool:
    """Two release keys name the same release as far as both are known (at least x.y.z):
    8.9.7.29 and 8.9.7 agree; 8.9.5.29 and 8.9.5.30 do not."""
    n = min(len(a), len(b))
    return n >= 3 and a[:n] == b[:n]


def _local_label(b: Build) -> Optional[str]:
    """ "cu128" when the build installs as torch==2.11.0+cu128 (an index build), else None."""
    for req in b.packages[:1]:
        ver = split_requirement(req)[1]
        if ver and "+" in ver:
            return ver.split("+", 1)[1]
    return None


def _label_version(b: Build) -> str:
    return (
        b.version
        if "+" in b.version or not b.variant
        else f"{b.version}+{b.variant}"
        if b.variant.startswith("cu") or b.variant == "cpu"
        else f"{b.version} ({b.variant})"
    )


def _version_matches(version: str, want: str) -> bool:
    pub = public(version)
    return pub == want or pub.startswith(want + ".") or version == want


def _cuda_matches(cuda: Optional[str], want: str) -> bool:
    if not cuda:
        return False
    return (
        cuda == want
        or cuda.startswith(want + ".")
        or major_minor(cuda) == major_minor(want)
        and len(version_key(want)) >= 2
    )
