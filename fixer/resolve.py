"""resolve(Environment, Intent, Recipes) -> Stack: the constraint solve.

Two halves, kept apart the way resolvelib keeps them apart:

1. A domain-free backtracking solver (`Solver`) that only knows identifiers, requirements
   and candidates, and talks to the domain through a provider with resolvelib's five
   methods (identify, get_preference, find_matches, is_satisfied_by, get_dependencies) plus
   one more, `cost`, because our objective is "change as little as possible", not "first fit".
   It is a depth-first branch and bound: candidates are tried in the provider's order, each
   requirement is checked forward (an identifier left with no candidate is a conflict at
   once), and once a full stack is found, branches that cannot beat it are cut.

2. `StackProvider`: the domain. The machine enters as pinned virtual candidates, like
   conda's `__cuda`: `__driver` (a driver version: a build of CUDA X.Y needs the driver floor
   of that CUDA family), `__gpu` (the compute capabilities present: a build needs SASS for
   the same major with a lower or equal minor, or PTX at or below it; cuDNN >= 9.11 needs
   SM >= 7.5) and `__python` (the build's Python specifier). Each framework is an identifier
   `fw:NAME` whose candidates are recipe builds (the installed one first). Each cuDNN major
   is an identifier `cudnn:N`: one process maps one libcudnn.so.N, so every framework in the
   environment shares that one copy and each asks "same major, minor >= the one I was built
   with, built for my CUDA major". A copy of cuDNN from pip or apt is a package version
   (`pip:DIST`, `apt:PKG`), so two majors that would need two versions of one distribution
   (nvidia-cudnn-cu12 8.9 and 9.3) cannot both come from pip.

The objective lives in the candidate order and in `cost`, never in the solver:
(framework versions changed, distributions touched, rank, bytes downloaded) for builds and
(.., bytes, rank) for cuDNN, compared in that order, where rank is the position in the
candidate order (newest first for builds; for cuDNN the version a chosen build pins, then the
smallest step up from the copy loaded now). What is installed and works costs nothing.
"Download the fewest bytes" is carried by the distributions touched (change only the cuDNN
wheel rather than reinstall torch); between two builds that must both be downloaded, the newest
wins and bytes only break ties (TensorFlow 2.15 is not better than 2.17 for being 3% smaller).
"""
from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ._paths import split_ld_preload
from .diagnose import _same_dir, foreign_cudnn_preloads, older_cuda_libraries
from .errors import Unsatisfiable, UsageError
from ._versions import canonical_name, major_minor, public, version_key
from .model import (
    Build,
    Choice,
    EnvFix,
    Environment,
    FrameworkBuild,
    Intent,
    LibraryCopy,
    LoadResolution,
    Pin,
    Recipes,
    Stack,
)

# ---------------------------------------------------------------------------------------
# Part 1: the domain-free solver
# ---------------------------------------------------------------------------------------

Cost = Tuple[int, ...]


@dataclasses.dataclass(frozen=True, eq=False)
class Requirement:
    """A constraint on one identifier. `accepts` decides; `text` says it in words; `parent`
    names who asks (a candidate's label, "this machine", "--keep torch")."""

    identifier: str
    # Called with one candidate. `...` because most are lambdas that bind loop values
    # through default arguments (`lambda c, want=want: ...`), which mypy cannot infer
    # against Callable[[Any], bool].
    accepts: Callable[..., bool]
    text: str
    parent: str = ""
    prefer: Tuple[str, ...] = ()        # exact versions the parent pins (ordering hint)
    intent: bool = False                # comes from what the user asked

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.identifier}: {self.text} ({self.parent})>"


@dataclasses.dataclass(frozen=True)
class Conflict:
    """Why a branch failed: the requirements on `identifier` that no candidate meets, or a
    pinned `candidate` that a new requirement refuses."""

    identifier: str
    requirements: Tuple[Requirement, ...]
    candidate: Any = None


class BaseReporter:
    """Hooks the solver calls (resolvelib's BaseReporter shape). Subclass to trace or draw."""

    def starting(self) -> None: ...
    def pinning(self, identifier: str, candidate: Any) -> None: ...
    def rejecting_candidate(self, conflict: Conflict) -> None: ...
    def backtracking(self, identifier: str, candidate: Any) -> None: ...
    def found(self, cost: Cost) -> None: ...
    def ending(self, result: Optional["Result"]) -> None: ...


@dataclasses.dataclass(frozen=True)
class Result:
    mapping: Dict[str, Any]                      # identifier -> chosen candidate
    criteria: Dict[str, Tuple[Requirement, ...]]  # identifier -> requirements (why it is there)
    cost: Cost
    complete: bool = True                        # False when the node budget cut the search


class NoSolution(Exception):
    def __init__(self, conflicts: Sequence[Conflict]) -> None:
        super().__init__("no solution")
        self.conflicts = tuple(conflicts)


def _add(a: Cost, b: Cost) -> Cost:
    if not a:
        return b
    return tuple(x + y for x, y in zip(a, b))


class Solver:
    """Depth-first branch and bound over a provider.

    Complete: if any assignment satisfies every requirement it is found (the search only cuts
    branches that conflict or cannot beat a stack already found). `max_nodes` bounds the
    optimisation: past it, once a stack has been found, the best so far is returned, marked
    incomplete; the budget never turns a satisfiable input into "no solution"."""

    def __init__(self, provider: Any, reporter: Optional[BaseReporter] = None, max_nodes: int = 50000) -> None:
        self.provider = provider
        self.reporter = reporter or BaseReporter()
        self.max_nodes = max_nodes

    def resolve(self, roots: Iterable[Requirement]) -> Result:
        p = self.provider
        self.reporter.starting()
        criteria: Dict[str, Tuple[Requirement, ...]] = {}
        for r in roots:
            criteria[r.identifier] = criteria.get(r.identifier, ()) + (r,)
        self._best: Optional[Result] = None
        self._nodes = 0
        self._conflicts: List[Conflict] = []
        self._zero: Cost = ()
        for ident, reqs in criteria.items():
            if not p.find_matches(ident, reqs):
                self._conflict(Conflict(ident, reqs))
        if not self._conflicts:
            self._search({}, criteria, ())
        self.reporter.ending(self._best)
        if self._best is None:
            raise NoSolution(self._conflicts)
        return self._best

    def _conflict(self, c: Conflict) -> None:
        self.reporter.rejecting_candidate(c)
        if len(self._conflicts) < 500:
            self._conflicts.append(c)

    def _beaten(self, cost: Cost) -> bool:
        return self._best is not None and cost >= self._best.cost

    def _search(self, pinned: Dict[str, Any], criteria: Dict[str, Tuple[Requirement, ...]], cost: Cost) -> None:
        p = self.provider
        open_ids = [i for i in criteria if i not in pinned]
        if not open_ids:
            if not self._beaten(cost):
                self._best = Result(dict(pinned), dict(criteria), cost, complete=True)
                self.reporter.found(cost)
            return
        ident = min(open_ids, key=lambda i: p.get_preference(i, criteria[i]))
        for candidate in p.find_matches(ident, criteria[ident]):
            self._nodes += 1
            if self._nodes > self.max_nodes and self._best is not None:
                # enough: keep the best stack found (the budget never stops the search for a first one)
                self._best = dataclasses.replace(self._best, complete=False)
                return
            new_cost = _add(cost, p.cost(ident, candidate, pinned))
            if self._beaten(new_cost):
                continue   # candidates come cheapest first, but cost may depend on pins: keep looking
            deps = p.get_dependencies(candidate)
            new_criteria = dict(criteria)
            for d in deps:
                new_criteria[d.identifier] = new_criteria.get(d.identifier, ()) + (d,)
            ok = True
            for d in deps:
                if d.identifier in pinned:
                    if not p.is_satisfied_by(d, pinned[d.identifier]):
                        self._conflict(Conflict(d.identifier, (d,), pinned[d.identifier]))
                        ok = False
                        break
                elif d.identifier != ident and not p.find_matches(d.identifier, new_criteria[d.identifier]):
                    self._conflict(Conflict(d.identifier, new_criteria[d.identifier]))
                    ok = False
                    break
            if not ok:
                continue
            pinned[ident] = candidate
            self.reporter.pinning(ident, candidate)
            self._search(pinned, new_criteria, new_cost)
            del pinned[ident]
            self.reporter.backtracking(ident, candidate)
            if self._nodes > self.max_nodes and self._best is not None:
                return


# ---------------------------------------------------------------------------------------
# Part 2: the domain
# ---------------------------------------------------------------------------------------


def cuda_major(cuda: Optional[str]) -> Optional[int]:
    k = version_key(cuda)
    return k[0] if k else None


_PRETTY = {"torch": "torch", "tensorflow": "TensorFlow", "jax": "JAX", "cupy": "CuPy",
           "onnxruntime": "onnxruntime-gpu", "ctranslate2": "ctranslate2", "paddle": "PaddlePaddle"}


def pretty(framework: str) -> str:
    return _PRETTY.get(framework, framework)


@dataclasses.dataclass(frozen=True)
class Fact:
    """A machine fact as a pinned virtual candidate (conda's __cuda). value None: unknown."""

    name: str
    value: Any
    text: str


@dataclasses.dataclass(frozen=True)
class BuildCandidate:
    build: Build
    installed: bool = False
    installed_version: Optional[str] = None   # what is installed now (any variant)
    self_contained: bool = False              # loads its own bundled cuDNN: no shared copy needed
    touched: int = 1                          # distributions that change when it is chosen
    label: str = ""

    @property
    def framework(self) -> str:
        return self.build.framework


@dataclasses.dataclass(frozen=True)
class CudnnCandidate:
    """The copy of libcudnn.so.N that every framework of the process will map."""

    major: int
    version: str                      # "9.19.0.56" or "9.19.0"
    cuda_major: Optional[int]
    source: str                       # "pip", "apt", "conda", or the origin of an installed copy
    package: Optional[str] = None     # "nvidia-cudnn-cu13", "libcudnn9-cuda-13", "cudnn"
    package_version: Optional[str] = None
    directory: Optional[str] = None   # for a copy on disk
    state: str = "new"                # "loaded" (on disk, everyone loads it), "on-disk", "reinstall", "new"
    min_cc: Optional[str] = None
    max_cc: Optional[str] = None
    size_bytes: Optional[int] = None

    @property
    def label(self) -> str:
        where = f"{self.package} {self.package_version}" if self.package else f"{self.source} copy"
        return f"cuDNN {self.version} ({where}{' in ' + self.directory if self.directory and not self.package else ''})"


@dataclasses.dataclass(frozen=True)
class PackageCandidate:
    manager: str      # "pip" / "apt"
    name: str
    version: Optional[str]    # None: not installed (removed if it is there now)


def _compat_cc(cc: str, build: Build) -> Optional[bool]:
    """True/False when the build's kernel list decides; None when the recipe has no list."""
    have = version_key(cc)[:2]
    if not build.compute_capabilities and not build.ptx:
        return None
    for sass in build.compute_capabilities:
        k = version_key(sass)[:2]
        if k and k[0] == have[0] and k[1:] <= have[1:]:
            return True
    if build.ptx and version_key(build.ptx)[:2] <= have:
        return True
    return False


def _cc_list(build: Build) -> str:
    parts = list(build.compute_capabilities)
    if build.ptx:
        parts.append(f"PTX {build.ptx}")
    return ", ".join(parts) or "unknown"


def _variant_of(fb: FrameworkBuild) -> Optional[str]:
    if fb.variant:
        return fb.variant
    if "+" in fb.version:
        return fb.version.split("+", 1)[1]
    return None


def _intact(copy: LibraryCopy) -> bool:
    """A copy that can serve as it is: a known version, no sub-library missing, none of
    another release, every file a loadable ELF (a truncated or emptied file is not)."""
    return bool(copy.version) and not copy.missing and not copy.mixed and all(f.valid_elf for f in copy.files)


def _parse_package(s: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    """"nvidia-cudnn-cu13 9.19.0.56" -> (name, version)."""
    if not s:
        return None, None
    parts = s.replace("==", " ").replace("=", " ").split()
    if len(parts) >= 2:
        return parts[0], parts[1]
    return parts[0], None


def _cuda_major_of_package(name: Optional[str], version: Optional[str]) -> Optional[int]:
    text = f"{name or ''} {version or ''}"
    m = re.search(r"cu(?:da)?-?(\d{2})", text)
    if m:
        return int(m.group(1))
    return None


def _cudnn_pin(build: Build) -> Tuple[Optional[str], Optional[str]]:
    """The exact cuDNN distribution pin a build declares: ("nvidia-cudnn-cu12", "9.1.0.70")."""
    for r in build.requires:
        m = re.match(r"\s*(nvidia-cudnn-cu\d+)\s*==\s*([\w.]+)", r)
        if m:
            return m.group(1), m.group(2)
    return None, None


class StackProvider:
    """The rules of DESIGN.md as a provider. Built once per resolve from the machine facts,
    the intent and the recipes; answers the solver's questions without I/O."""

    def __init__(self, env: Environment, intent: Intent, recipes: Recipes) -> None:
        self.env = env
        self.intent = intent
        self.recipes = recipes
        self.notes: List[str] = []
        self._matches: Dict[Tuple[str, Tuple[int, ...]], List[Any]] = {}
        self._deps: Dict[int, List[Requirement]] = {}
        self._companions: Dict[str, List[str]] = {}
        self._ranks: Dict[int, Dict[int, int]] = {}
        self._pins_cache: Dict[int, Tuple[Optional[str], Optional[str]]] = {}
        self._fixes_cache: Dict[int, int] = {}
        self._by_framework: Dict[str, Tuple[Build, ...]] = {}
        self._installed_dists = {d.name: d.version for d in (env.python.distributions if env.python else ())}
        self._size_estimates: Dict[Tuple[str, str], int] = {}
        self.gpu_present = bool(env.gpus) or env.runtime.accelerator == "gpu"
        self.facts = self._facts()
        self.frameworks = self._wanted_frameworks()
        self.build_candidates: Dict[str, List[BuildCandidate]] = {
            f: self._build_candidates(f) for f in self.frameworks}
        self.cudnn_candidates: Dict[int, List[CudnnCandidate]] = {}

    # -- machine facts -------------------------------------------------------------------

    def _facts(self) -> Dict[str, Fact]:
        env = self.env
        ccs: List[str] = []
        for g in env.gpus:
            cc = g.compute_capability
            if not cc:
                model = (self.recipes.gpu_by_pci(g.pci_device_id) if g.pci_device_id else None) or \
                    self.recipes.gpu_by_name(g.name)
                cc = model.compute_capability if model else None
            if cc and cc not in ccs:
                ccs.append(cc)
            elif not cc:
                self.notes.append(f"compute capability of {g.name} unknown: kernel lists not checked")
        names = sorted({g.name for g in env.gpus})
        gpu_text = (", ".join(names) + f" (compute capability {', '.join(ccs) or 'unknown'})") if names else "no GPU"
        driver = env.driver.version
        if self.gpu_present and not driver:
            self.notes.append("driver version unknown: driver floors not checked")
        py = env.python.version if env.python else None
        return {
            "__driver": Fact("__driver", driver, f"driver {driver}" if driver else "driver unknown"),
            "__gpu": Fact("__gpu", tuple(ccs), gpu_text),
            "__python": Fact("__python", py, f"Python {py}" if py else "Python unknown"),
        }

    def _wanted_frameworks(self) -> List[str]:
        out: List[str] = []
        for fb in self.env.frameworks:
            if fb.framework not in out:
                out.append(fb.framework)
        for f in self.intent.frameworks:
            if f not in out:
                out.append(f)
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
        dist_version = self._installed_dists.get(_split_req(fb.distribution)[0]) or fb.version
        recipe: Optional[Build] = None
        same = [b for b in self._builds_of(name) if public(b.version) == pub]
        same_variant = [b for b in same if variant and b.variant == variant]
        for b in same_variant:
            if b.packages and _split_req(b.packages[0])[1] == dist_version:
                recipe = b
                break
        if recipe is None and same_variant:
            recipe = same_variant[0]
        if recipe is None and not variant:
            for b in same:
                if fb.cuda and b.cuda and major_minor(b.cuda) == major_minor(fb.cuda) and b.index_url is None:
                    recipe = b
                    break
        cuda_build = fb.is_cuda_build if fb.is_cuda_build is not None else (fb.cuda is not None)
        build = Build(
            framework=name,
            version=fb.version,
            variant=variant or (recipe.variant if recipe else ("cpu" if not cuda_build else "installed")),
            cuda=fb.cuda if fb.cuda else (recipe.cuda if recipe and cuda_build else None),
            cudnn=fb.cudnn or (recipe.cudnn if recipe else None),
            python="",  # it is installed: it runs on this Python
            compute_capabilities=fb.compute_capabilities or (recipe.compute_capabilities if recipe else ()),
            ptx=fb.ptx or (recipe.ptx if recipe else None),
            index_url=recipe.index_url if recipe else None,
            # it is installed: its own distribution pin is what is there, whatever index built it
            packages=(f"{fb.distribution}=={dist_version}",) + tuple(
                r for r in (recipe.packages if recipe else ()) if _split_req(r)[0] != _split_req(fb.distribution)[0]),
            requires=recipe.requires if recipe else ((fb.cudnn_requirement,) if fb.cudnn_requirement else ()),
            companions=recipe.companions if recipe else (),
            size_bytes=recipe.size_bytes if recipe else None,
            source=f"installed ({fb.source or 'detected'})",
        )
        if not cuda_build:
            build = dataclasses.replace(build, cuda=None, cudnn=None)
        bundled = any(
            ld.consumer == name and ld.library == "cudnn" and self._origin_of(ld.directory) == "bundled"
            for ld in self.env.loads)
        return BuildCandidate(build, installed=True, installed_version=dist_version, self_contained=bundled,
                              touched=0, label=f"{pretty(name)} {fb.version} (installed)")

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
            name, ver = _split_req(req)
            if self._installed_dists.get(name) != ver:
                n += 1
        for name in self._companion_names(build.framework):
            if name in self._installed_dists:
                n += 1   # an installed torchvision must change with torch, listed or not
        if installed is None or major_minor(installed.build.cuda) != major_minor(build.cuda):
            n += 1
        return max(n, 1)

    def _builds_of(self, framework: str) -> Tuple[Build, ...]:
        hit = self._by_framework.get(framework)
        if hit is None:
            hit = self._by_framework[framework] = self.recipes.builds_for(framework)
        return hit

    def _companion_names(self, framework: str) -> List[str]:
        """torchvision, torchaudio, ...: every companion any build of `framework` names."""
        hit = self._companions.get(framework)
        if hit is None:
            hit = []
            for b in self.recipes.builds:
                if b.framework == framework:
                    for req in b.companions:
                        n = _split_req(req)[0]
                        if n not in hit:
                            hit.append(n)
            self._companions[framework] = hit
        return hit

    def _build_candidates(self, name: str) -> List[BuildCandidate]:
        installed = self._installed_build(name)
        inst_pub = public(installed.build.version) if installed else None
        out: List[BuildCandidate] = [installed] if installed else []
        for b in self._builds_of(name):
            if installed and public(b.version) == inst_pub and b.variant == installed.build.variant:
                continue
            out.append(BuildCandidate(b, installed=False,
                                      installed_version=installed.installed_version if installed else None,
                                      touched=self._touched(b, installed),
                                      label=f"{pretty(name)} {_label_version(b)}"))

        def key(c: BuildCandidate) -> Tuple[Any, ...]:
            same_version = inst_pub is not None and public(c.build.version) == inst_pub
            return (
                0 if c.installed else 1,
                0 if (same_version or inst_pub is None) else 1,
                tuple(-x for x in version_key(c.build.version)),
                c.touched,
                self.estimated_size(c.build),
                tuple(-x for x in version_key(c.build.cuda)),
            )

        out.sort(key=key)
        return out

    def cuda_runtime_reachable(self, c: BuildCandidate) -> bool:
        """A CUDA build runs only where its CUDA runtime (cudart, cuBLAS) loads: the build
        brings the wheels itself (its requires name them: torch, tensorflow[and-cuda], JAX's
        cuda extra), or the machine has them (for the installed build: its loads find them; for
        another: a copy of that CUDA major is on disk)."""
        b = c.build
        if not b.cuda:
            return True
        if any(canonical_name(_split_req(r)[0]).startswith(("nvidia-cuda-runtime", "nvidia-cublas")) for r in b.requires):
            return True
        if c.installed:
            return not any(ld.consumer == b.framework and ld.library in ("cudart", "cublas", "cublasLt")
                           and (ld.error or not ld.path) for ld in self.env.loads)
        major = cuda_major(b.cuda)
        known = [x for x in self.env.libraries if x.library == "cudart"] or \
            [ld for ld in self.env.loads if ld.library == "cudart"]
        if not known:
            return True                       # the machine description says nothing about cudart
        wheel = f"nvidia-cuda-runtime-cu{major}" if major and major < 13 else "nvidia-cuda-runtime"
        return wheel in self._installed_dists or \
            any(x.library == "cudart" and x.major == major and not x.missing for x in self.env.libraries)

    # -- cuDNN candidates -----------------------------------------------------------------

    def _consumers(self, major: int) -> List[LoadResolution]:
        soname = f"libcudnn.so.{major}"
        return [ld for ld in self.env.loads
                if ld.library == "cudnn" and ld.soname == soname and ld.consumer in self.frameworks
                and self._origin_of(ld.directory) != "bundled"]   # a framework's own copy serves only it

    def cudnn_for(self, major: int) -> List[CudnnCandidate]:
        if major not in self.cudnn_candidates:
            self.cudnn_candidates[major] = self._cudnn_candidates(major)
        return self.cudnn_candidates[major]

    def _cudnn_candidates(self, major: int) -> List[CudnnCandidate]:
        out: List[CudnnCandidate] = []
        consumers = self._consumers(major)
        on_disk: Dict[Tuple[Optional[str], Optional[str]], LibraryCopy] = {}
        for copy in self.env.libraries:
            if copy.library != "cudnn" or copy.major != major or copy.origin == "bundled":
                continue
            pkg, pkg_ver = _parse_package(copy.package)
            intact = _intact(copy)
            rel = self.recipes.cudnn_release(copy.version) if copy.version else None
            if intact:
                loaded = bool(consumers) and all(ld.directory == copy.directory for ld in consumers)
                out.append(CudnnCandidate(
                    major=major, version=pkg_ver if (pkg_ver and copy.origin == "pip") else (copy.version or ""),
                    cuda_major=copy.cuda_major or _cuda_major_of_package(pkg, pkg_ver),
                    source=copy.origin, package=pkg, package_version=pkg_ver, directory=copy.directory,
                    state="loaded" if loaded else "on-disk",
                    min_cc=rel.min_compute_capability if rel else None,
                    max_cc=rel.max_compute_capability if rel else None))
            on_disk[(pkg, pkg_ver)] = copy
        for rel in self.recipes.cudnn:
            if version_key(rel.version)[:1] != (major,):
                continue
            for cm in rel.cuda_majors:
                for source, table in (("pip", rel.pip), ("apt", rel.apt)):
                    for pkg, ver in table.items():
                        if _cuda_major_of_package(pkg, ver) not in (cm, None):
                            continue
                        if _cuda_major_of_package(pkg, ver) is None and len(rel.cuda_majors) > 1:
                            continue
                        have = on_disk.get((pkg, ver))
                        if have is not None and _intact(have):
                            continue   # already a candidate as the copy on disk
                        out.append(CudnnCandidate(
                            major=major, version=ver if source == "pip" else rel.version, cuda_major=cm,
                            source=source, package=pkg, package_version=ver,
                            directory=have.directory if have is not None else None,
                            state="reinstall" if have is not None else "new",
                            min_cc=rel.min_compute_capability, max_cc=rel.max_compute_capability,
                            size_bytes=rel.size_bytes))
                if rel.pip:
                    # conda-forge publishes cuDNN as `cudnn` with the same four-part version
                    ver = sorted(rel.pip.values())[0]
                    out.append(CudnnCandidate(
                        major=major, version=ver, cuda_major=cm, source="conda", package="cudnn",
                        package_version=ver, state="new", min_cc=rel.min_compute_capability,
                        max_cc=rel.max_compute_capability, size_bytes=rel.size_bytes))
        # dedupe (a release listing two CUDA majors with one package)
        seen = set()
        uniq = []
        for c in out:
            k = (c.source, c.package, c.package_version, c.directory, c.cuda_major)
            if k not in seen:
                seen.add(k)
                uniq.append(c)
        if self.intent.cudnn_from:
            uniq = [c for c in uniq if c.source == self.intent.cudnn_from or
                    (c.state == "loaded" and c.source == self.intent.cudnn_from)]
        source_rank = {"pip": 0, "apt": 1, "conda": 2}
        state_rank = {"loaded": 0, "on-disk": 1, "reinstall": 2, "new": 3}
        # copies on disk first; then, when a copy of this major is loaded now, the smallest
        # step up from it (the least change: usually the version a build's == pin names),
        # else the newest release
        step_up = bool(consumers) and any(ld.path for ld in consumers)
        uniq.sort(key=lambda c: (state_rank[c.state], source_rank.get(c.source, 0),
                                 version_key(c.version) if (step_up and c.state in ("new", "reinstall")) else
                                 tuple(-x for x in version_key(c.version))))
        return uniq

    def _loader_fixes(self, c: CudnnCandidate) -> int:
        """1 when a framework would not find a new copy where it goes without a loader fix
        (its search order, as detect walked it, never looks there)."""
        if c.source == "apt":
            return 0
        target = c.directory or _default_dir(self.env, c)
        if not target:
            return 1   # a conda prefix: nothing searches it until a loader fix says so
        for ld in self._consumers(c.major):
            if ld.steps and not _reaches(ld, target):
                return 1
        return 0

    # -- the provider interface -----------------------------------------------------------

    def identify(self, thing: Any) -> str:
        if isinstance(thing, Requirement):
            return thing.identifier
        if isinstance(thing, Fact):
            return thing.name
        if isinstance(thing, BuildCandidate):
            return "fw:" + thing.framework
        if isinstance(thing, CudnnCandidate):
            return f"cudnn:{thing.major}"
        if isinstance(thing, PackageCandidate):
            return f"{thing.manager}:{thing.name}"
        raise TypeError(thing)

    def get_preference(self, identifier: str, requirements: Sequence[Requirement]) -> Tuple[int, int, str]:
        """Machine facts first (one candidate each), then frameworks in the order the user
        named them, then cuDNN majors, then the package versions they imply."""
        if identifier.startswith("__"):
            return (0, 0, identifier)
        if identifier.startswith("fw:"):
            name = identifier[3:]
            pos = self.frameworks.index(name) if name in self.frameworks else 99
            return (1, pos, identifier)
        if identifier.startswith("cudnn:"):
            return (2, -int(identifier.split(":")[1]), identifier)
        return (3, 0, identifier)

    def _all_candidates(self, identifier: str, requirements: Sequence[Requirement]) -> List[Any]:
        if identifier.startswith("__"):
            return [self.facts[identifier]]
        if identifier.startswith("fw:"):
            return list(self.build_candidates.get(identifier[3:], ()))
        if identifier.startswith("cudnn:"):
            cands = list(self.cudnn_for(int(identifier.split(":")[1])))
            prefer = [v for r in requirements for v in r.prefer]
            if prefer:
                # versions a chosen build pins exactly come first among the ones not yet on disk
                cands.sort(key=lambda c: (c.state in ("new", "reinstall"),
                                          c.package_version not in prefer))
            return cands
        manager, name = identifier.split(":", 1)
        versions: List[str] = []
        installed = self._installed_dists.get(name) if manager == "pip" else None
        if installed:
            versions.append(installed)
        for r in requirements:
            for v in r.prefer:
                if v not in versions:
                    versions.append(v)
        return [PackageCandidate(manager, name, v) for v in versions] + [PackageCandidate(manager, name, None)]

    def find_matches(self, identifier: str, requirements: Sequence[Requirement]) -> List[Any]:
        key = (identifier, tuple(sorted(id(r) for r in requirements)))
        hit = self._matches.get(key)
        if hit is None:
            hit = [c for c in self._all_candidates(identifier, requirements)
                   if all(r.accepts(c) for r in requirements)]
            self._matches[key] = hit
        return hit

    def is_satisfied_by(self, requirement: Requirement, candidate: Any) -> bool:
        return bool(requirement.accepts(candidate))

    def estimated_size(self, build: Build) -> int:
        """Bytes to download for `build`: its own size; else a build of the same framework and
        version (the PyPI twin of a PyTorch-index build: the wheels differ little); else the
        largest known build of the framework. Unknown must never look free (0)."""
        if build.size_bytes:
            return build.size_bytes
        key = (build.framework, public(build.version))
        if key not in self._size_estimates:
            same = [b.size_bytes for b in self._builds_of(build.framework)
                    if b.size_bytes and public(b.version) == key[1]]
            anyv = [b.size_bytes for b in self._builds_of(build.framework) if b.size_bytes]
            self._size_estimates[key] = max(same or anyv or [0])
        return self._size_estimates[key]

    def cost(self, identifier: str, candidate: Any, pinned: Mapping[str, Any]) -> Cost:
        """Compared in order: keep the framework versions the user has (their code depends on
        them), change as few distributions as possible, then for builds the newest (rank: the
        position in the candidate order) with bytes breaking ties, for cuDNN the fewest bytes
        then rank (see the module docstring)."""
        if isinstance(candidate, BuildCandidate):
            if candidate.installed:
                return (0, 0, 0, 0)
            changed = int(candidate.installed_version is not None and
                          public(candidate.installed_version) != public(candidate.build.version))
            rank = self._rank(self.build_candidates[candidate.framework], candidate)
            return (changed, candidate.touched, rank, self.estimated_size(candidate.build))
        if isinstance(candidate, CudnnCandidate):
            if candidate.state == "loaded":
                return (0, 0, 0, 0)
            pins = {self._pin_of(c) for c in pinned.values() if isinstance(c, BuildCandidate)}
            # a version a chosen build pins itself comes first: pip installs it with the build anyway
            rank = 0 if (candidate.source == "pip" and (candidate.package, candidate.package_version) in pins) \
                else 1 + self._rank(self.cudnn_for(candidate.major), candidate)
            if candidate.state == "on-disk":
                return (0, 1, 0, rank)      # an environment fix: nothing to download
            fixes = self._fixes_cache.get(id(candidate))
            if fixes is None:
                fixes = self._fixes_cache[id(candidate)] = self._loader_fixes(candidate)
            return (0, 1 + fixes, candidate.size_bytes or 0, rank)
        if isinstance(candidate, PackageCandidate) and candidate.version is None and candidate.manager == "pip" \
                and candidate.name in self._installed_dists:
            return (0, 1, 0, 0)   # a removal
        return (0, 0, 0, 0)

    def _pin_of(self, c: BuildCandidate) -> Tuple[Optional[str], Optional[str]]:
        hit = self._pins_cache.get(id(c))
        if hit is None:
            hit = self._pins_cache[id(c)] = _cudnn_pin(c.build)
        return hit

    def _rank(self, cands: List[Any], candidate: Any) -> int:
        """Position of `candidate` in its (fixed) candidate list, by identity."""
        table = self._ranks.get(id(cands))
        if table is None:
            table = self._ranks[id(cands)] = {id(c): i for i, c in enumerate(cands)}
        return table.get(id(candidate), len(cands))

    def get_dependencies(self, candidate: Any) -> List[Requirement]:
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

    def _build_deps(self, c: BuildCandidate) -> List[Requirement]:
        b = c.build
        who = c.label
        deps: List[Requirement] = []
        if b.cuda:
            floor = self.recipes.min_driver(b.cuda)
            if floor:
                deps.append(Requirement(
                    "__driver", lambda f, floor=floor: f.value is None or version_key(f.value) >= version_key(floor),
                    f"needs driver >= {floor} (CUDA {b.cuda})", who))
            elif self.env.driver.cuda_version:
                top = cuda_major(self.env.driver.cuda_version)
                deps.append(Requirement(
                    "__driver", lambda f, m=cuda_major(b.cuda), top=top: m is None or top is None or m <= top,
                    f"needs a driver for CUDA {b.cuda}", who))
            if b.compute_capabilities or b.ptx:
                deps.append(Requirement(
                    "__gpu", lambda f, b=b: all(_compat_cc(cc, b) is not False for cc in f.value),
                    f"ships kernels for {_cc_list(b)}", who))
            lowest = getattr(b, "min_compute_capability", None)
            if lowest:
                deps.append(Requirement(
                    "__gpu", lambda f, lo=version_key(lowest): all(version_key(cc) >= lo for cc in f.value),
                    f"needs compute capability >= {lowest}", who))
        if b.python and self.facts["__python"].value:
            from packaging.specifiers import InvalidSpecifier, SpecifierSet

            try:
                spec = SpecifierSet(b.python)
            except InvalidSpecifier:
                spec = None
            if spec is not None:
                deps.append(Requirement(
                    "__python", lambda f, spec=spec: f.value is None or spec.contains(public(f.value), prereleases=True),
                    f"needs Python {b.python}", who))
        if b.cuda and b.cudnn and not c.self_contained:
            major, minor = (version_key(b.cudnn) + (0, 0))[:2]
            cm = cuda_major(b.cuda)
            pin_dist, pin_ver = _cudnn_pin(b)

            def ok(x: CudnnCandidate, major: int = major, minor: int = minor, cm: Optional[int] = cm) -> bool:
                return (x.major == major and major_minor(x.version) >= (major, minor)
                        and (x.cuda_major is None or cm is None or x.cuda_major == cm))

            built = ".".join(str(p) for p in version_key(b.cudnn)[:3])
            text = f"needs cuDNN {major}.x >= {major}.{minor} built for CUDA {cm} (built with {built}" + \
                (f"; pins {pin_dist}=={pin_ver})" if pin_ver else ")")
            deps.append(Requirement(f"cudnn:{major}", ok, text, who, prefer=(pin_ver,) if pin_ver else ()))
            if pin_dist and not c.installed and self.intent.cudnn_from in (None, "pip"):
                # installing this build brings its cuDNN wheel, which its RPATH finds first: another
                # copy chosen for this major would not be the one it loads
                deps.append(Requirement(
                    f"cudnn:{major}", lambda x, d=pin_dist: x.source == "pip" and x.package == d,
                    f"brings {pin_dist} (its Requires-Dist), which it loads first", who))
        return deps

    def _cudnn_deps(self, c: CudnnCandidate) -> List[Requirement]:
        deps: List[Requirement] = []
        if c.min_cc or c.max_cc:
            lo, hi = version_key(c.min_cc), version_key(c.max_cc)

            def ok(f: Fact, lo: Tuple[int, ...] = lo, hi: Tuple[int, ...] = hi) -> bool:
                return all((not lo or version_key(cc) >= lo) and (not hi or version_key(cc) <= hi) for cc in f.value)

            rng = f"SM >= {c.min_cc}" if c.min_cc and not c.max_cc else \
                f"SM {c.min_cc or '?'}..{c.max_cc}"
            deps.append(Requirement("__gpu", ok, f"needs {rng}", c.label))
        if c.package and c.package_version and c.source in ("pip", "apt"):
            want = c.package_version
            deps.append(Requirement(
                f"{c.source}:{c.package}", lambda p, want=want: p.version == want,
                f"is {c.package}=={want}", c.label, prefer=(want,)))
        # Every pip cuDNN wheel of this major writes nvidia/cudnn/lib/libcudnn*.so.N, which the
        # frameworks find first through their RPATH: any other one installed must go.
        for name, ver in self._installed_dists.items():
            if name.startswith("nvidia-cudnn-cu") and version_key(ver)[:1] == (c.major,) and \
                    not (c.source == "pip" and c.package == name):
                deps.append(Requirement(
                    f"pip:{name}", lambda p: p.version is None,
                    f"needs {name} {ver} gone (its nvidia/cudnn/lib copy would load first)", c.label))
        return deps

    # -- roots: the frameworks and what the user asked ------------------------------------

    def roots(self) -> List[Requirement]:
        roots: List[Requirement] = []
        intent = self.intent
        keep = set(intent.keep)
        for f in self.frameworks:
            cands = self.build_candidates.get(f, [])
            if not cands:
                raise UsageError(f"no recipe knows a build of {f!r} and it is not installed")
            roots.append(Requirement(f"fw:{f}", lambda c: True, f"{pretty(f)} is wanted", "you"))
            if self.gpu_present:
                roots.append(Requirement(
                    f"fw:{f}", lambda c: c.build.cuda is not None,
                    "a GPU is present: needs a CUDA build", "this machine"))
                roots.append(Requirement(
                    f"fw:{f}", lambda c: self.cuda_runtime_reachable(c),
                    "needs the CUDA runtime libraries of its CUDA major (this machine has none: a build that "
                    "brings them, e.g. tensorflow[and-cuda])", "this machine"))
            want = intent.versions.get(f)
            if want:
                if not any(_version_matches(c.build.version, want) for c in cands):
                    known = ", ".join(sorted({public(c.build.version) for c in cands}, key=version_key, reverse=True)[:12])
                    raise UsageError(f"--{f} {want}: no such {pretty(f)} version in the recipes (known: {known})")
                roots.append(Requirement(
                    f"fw:{f}", lambda c, want=want: _version_matches(c.build.version, want),
                    f"{pretty(f)} {want}", f"--{f} {want}", intent=True))
            dists = {_split_req(p)[0] for c in cands[:1] for p in c.build.packages}
            fb = self.env.framework(f)
            if fb is not None:
                dists.add(fb.distribution)
            if f in keep or dists & keep:
                if not (cands and cands[0].installed):
                    raise UsageError(f"--keep {f}: {pretty(f)} is not installed")
                roots.append(Requirement(
                    f"fw:{f}", lambda c: c.installed, f"{pretty(f)} stays as installed", f"--keep {f}", intent=True))
        if intent.cuda:
            with_cuda = [f for f in self.frameworks
                         if any(_cuda_matches(c.build.cuda, intent.cuda) for c in self.build_candidates[f])]
            if not with_cuda:
                known_cuda = sorted({b.cuda for b in self.recipes.builds if b.cuda}, key=version_key)
                raise UsageError(f"--cuda {intent.cuda}: no build of {', '.join(self.frameworks) or 'any framework'} "
                                 f"uses CUDA {intent.cuda} (known: {', '.join(known_cuda)})")
            for f in with_cuda:
                roots.append(Requirement(
                    f"fw:{f}", lambda c, want=intent.cuda: _cuda_matches(c.build.cuda, want),
                    f"CUDA {intent.cuda}", f"--cuda {intent.cuda}", intent=True))
        framework_dists = set()
        for f in self.frameworks:
            for c in self.build_candidates.get(f, [])[:1]:
                framework_dists |= {_split_req(p)[0] for p in c.build.packages}
            fb = self.env.framework(f)
            if fb:
                framework_dists.add(fb.distribution)
        for name in sorted(keep - set(self.frameworks) - framework_dists):
            from packaging.utils import canonicalize_name

            cname = canonicalize_name(name)
            have = self._installed_dists.get(cname)
            if have is None:
                raise UsageError(f"--keep {name}: no such distribution is installed")
            roots.append(Requirement(
                f"pip:{cname}", lambda p, have=have: p.version == have,
                f"{cname} stays at {have}", f"--keep {name}", prefer=(have,), intent=True))
            if cname.startswith("nvidia-cudnn-cu"):
                # a kept cuDNN wheel also keeps its copy: only that copy can be the one mapped
                major = version_key(have)[0]
                roots.append(Requirement(
                    f"cudnn:{major}", lambda c, cname=cname: c.source != "pip" or c.package == cname,
                    f"{cname} stays at {have}", f"--keep {name}", intent=True))
        return roots


def _local_label(b: Build) -> Optional[str]:
    """"cu128" when the build installs as torch==2.11.0+cu128 (an index build), else None."""
    for req in b.packages[:1]:
        ver = _split_req(req)[1]
        if ver and "+" in ver:
            return ver.split("+", 1)[1]
    return None


def _label_version(b: Build) -> str:
    return b.version if "+" in b.version or not b.variant else f"{b.version}+{b.variant}" \
        if b.variant.startswith("cu") or b.variant == "cpu" else f"{b.version} ({b.variant})"


def _version_matches(version: str, want: str) -> bool:
    pub = public(version)
    return pub == want or pub.startswith(want + ".") or version == want


def _cuda_matches(cuda: Optional[str], want: str) -> bool:
    if not cuda:
        return False
    return cuda == want or cuda.startswith(want + ".") or major_minor(cuda) == major_minor(want) and len(version_key(want)) >= 2


def _split_req(req: str) -> Tuple[str, Optional[str]]:
    """"torch==2.5.1+cu124" -> ("torch", "2.5.1+cu124"); extras dropped, names canonical."""
    m = re.match(r"\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(?:===?\s*([^\s;,]+))?", req)
    if not m:
        return req.strip(), None
    name = canonical_name(m.group(1))
    return name, m.group(3)


# ---------------------------------------------------------------------------------------
# Part 3: from a solution to a Stack, and from a failure to words
# ---------------------------------------------------------------------------------------


def resolve(env: Environment, intent: Intent, recipes: Recipes, *, reporter: Optional[BaseReporter] = None) -> Stack:
    """The stack this machine should run: the frameworks installed (plus those asked for),
    each on a build that fits the driver, the GPU and Python, sharing one cuDNN per major,
    changing as little as possible. Raises Unsatisfiable (exit 1) with the clashes in words
    and the nearest ways out, UsageError (exit 2) for an intent the recipes cannot mean."""
    provider = StackProvider(env, intent, recipes)
    roots = provider.roots()
    try:
        result = Solver(provider, reporter).resolve(roots)
    except NoSolution as exc:
        raise _unsatisfiable(env, intent, recipes, provider, exc.conflicts) from None
    return _to_stack(env, intent, recipes, provider, result)


def _to_stack(env: Environment, intent: Intent, recipes: Recipes, provider: StackProvider, result: Result) -> Stack:
    m = result.mapping
    installed = provider._installed_dists
    choices: List[Choice] = []
    pins: List[Pin] = []
    notes: List[str] = list(provider.notes)
    pinned_names: Dict[str, str] = {}
    changed_builds: List[Build] = []

    def add_pin(name: str, version: str, why: str, index_url: Optional[str] = None,
                size: Optional[int] = None, force: bool = False) -> None:
        if size is None:
            size = recipes.download_size(name, version)
        have = installed.get(name)
        if have is None:
            action = "install"
        elif have == version and not force:
            action = "keep"
        elif have == version:
            action = "install"   # same version again: a reinstall of files that are missing
        else:
            action = "upgrade" if version_key(version) > version_key(have) or (
                version_key(version) == version_key(have) and version != have) else "downgrade"
        pins.append(Pin(name=name, version=version, index_url=index_url, action=action,  # type: ignore[arg-type]
                        installed=have, why=why, size_bytes=size))
        pinned_names[name] = version

    for f in provider.frameworks:
        c: BuildCandidate = m[f"fw:{f}"]
        b = c.build
        if c.installed:
            fb = env.framework(f)
            choices.append(Choice(f, b, "keep", reason="installed and fits this machine"))
            if fb is not None:   # the dist-info version: torch/version.py may add a local tag pip never saw
                add_pin(fb.distribution, c.installed_version or fb.version, f"{pretty(f)} as installed")
            continue
        action = "change" if c.installed_version else "install"
        reason = _why_change(provider, f, c, result)
        choices.append(Choice(f, b, action, reason=reason))  # type: ignore[arg-type]
        changed_builds.append(b)
        for i, req in enumerate(b.packages):
            name, ver = _split_req(req)
            if ver:
                # an extra of the same version (tensorflow -> tensorflow[and-cuda]) is still an install:
                # pip then adds what the extra brings
                add_pin(name, ver, reason if i == 0 else f"part of {pretty(f)} {b.version}",
                        index_url=b.index_url, size=b.size_bytes if i == 0 else None, force="[" in req)
        label = _local_label(b)
        listed = {_split_req(r)[0] for r in b.companions}
        for other in provider._companion_names(f):
            if other in installed and other not in listed:
                notes.append(f"{other} {installed[other]} is installed, but the recipes name no {other} for "
                             f"{pretty(f)} {_label_version(b)}: reinstall it to match")
        for req in b.companions:
            name, ver = _split_req(req)
            if ver and name in installed:
                if label and "+" not in ver:
                    ver = f"{ver}+{label}"   # the companion built for the same CUDA, from the same index
                add_pin(name, ver, f"companion of {pretty(f)} {_label_version(b)}", index_url=b.index_url)
        if c.installed_version:
            notes.append(f"{pretty(f)} {c.installed_version} -> {_label_version(b)}: {reason}")

    cudnn_main: Optional[CudnnCandidate] = None
    apt: Dict[str, str] = {}
    conda: Dict[str, str] = {}
    cudnn_runtime: Dict[str, str] = {}
    cudnn_packages: Dict[str, str] = {}
    for ident in sorted((i for i in m if i.startswith("cudnn:")), key=lambda i: -int(i.split(":")[1])):
        cc: CudnnCandidate = m[ident]
        if cudnn_main is None:
            cudnn_main = cc
        cudnn_runtime[str(cc.major)] = cc.version
        cudnn_packages[str(cc.major)] = f"{cc.package} {cc.package_version}" if cc.package else (cc.directory or cc.source)
        users = [r.parent for r in result.criteria.get(ident, ())]
        why = f"the libcudnn.so.{cc.major} for {', '.join(users)}"
        if cc.source == "pip" and cc.package and cc.package_version:
            repinned = [b for b in changed_builds if _cudnn_pin(b)[0] == cc.package and _cudnn_pin(b)[1] != cc.package_version]
            force = cc.state == "reinstall"
            have = installed.get(cc.package)
            if repinned and have == cc.package_version:
                # the framework install moves it; set it back right after
                pins.append(Pin(cc.package, cc.package_version, action="install", installed=have,
                                why=why + f"; {pretty(repinned[0].framework)} pins {_cudnn_pin(repinned[0])[1]}, "
                                "a newer cuDNN minor is safe at run time", size_bytes=None))
                pinned_names[cc.package] = cc.package_version
            else:
                add_pin(cc.package, cc.package_version,
                        why + (" (its files are missing: reinstall)" if force else ""), size=cc.size_bytes, force=force)
            chosen = [m[f"fw:{f}"].build for f in provider.frameworks]
            pinned_pkgs = {_cudnn_pin(b)[1] for b in chosen if _cudnn_pin(b)[0] == cc.package}
            if any(version_key(cc.package_version) > version_key(v) for v in pinned_pkgs if v):
                notes.append(f"{cc.package} {cc.package_version} is above a framework's == pin: pip reports the "
                             "pin as broken, but a newer cuDNN minor is safe at run time")
        elif cc.source == "apt" and cc.package and cc.package_version:
            if cc.state in ("new", "reinstall"):
                apt[cc.package] = cc.package_version
                have_apt = _apt_installed(env).get(cc.package)
                action = "install" if have_apt is None else "install" if have_apt == cc.package_version else \
                    "upgrade" if version_key(cc.package_version) > version_key(have_apt) else "downgrade"
                pins.append(Pin(cc.package, cc.package_version, index_url=None, action=action,  # type: ignore[arg-type]
                                installed=have_apt, why=why, size_bytes=cc.size_bytes, manager="apt"))
        elif cc.source == "conda" and cc.package and cc.package_version:
            if cc.state == "new":
                conda[cc.package] = cc.package_version
                pins.append(Pin(cc.package, cc.package_version, index_url="conda-forge", action="install",
                                why=why, size_bytes=cc.size_bytes, manager="conda"))
        if cc.state == "loaded":
            notes.append(f"cuDNN {cc.major}: keeps {cc.label}, which every framework already loads")

    # distributions that must go (another pip cuDNN wheel of a major that now comes from elsewhere)
    for ident, cand in sorted(m.items()):
        if isinstance(cand, PackageCandidate) and cand.version is None and cand.manager == "pip" \
                and cand.name in installed and cand.name not in pinned_names:
            whys = [f"{r.parent} {r.text}" for r in result.criteria.get(ident, ()) if not r.accepts(
                PackageCandidate("pip", cand.name, installed[cand.name]))]
            pins.append(Pin(cand.name, installed[cand.name], action="remove", installed=installed[cand.name],
                            why=whys[0] if whys else "no longer needed"))
    env_fixes = _env_fixes(env, provider, m)
    for fx in env_fixes:
        notes.append(fx.why)
    if not result.complete:
        notes.append("the search hit its node budget: this stack fits but may not be the smallest change")
    return Stack(
        choices=tuple(choices),
        pins=tuple(pins),
        cudnn=(".".join(str(x) for x in version_key(cudnn_main.version)[:3]) if cudnn_main else None),
        cudnn_from=(cudnn_main.source if cudnn_main else None),
        env_fixes=tuple(env_fixes),
        apt=apt,
        conda=conda,
        cudnn_runtime=cudnn_runtime,
        cudnn_packages=cudnn_packages,
        notes=tuple(dict.fromkeys(notes)),
    )


def _apt_installed(env: Environment) -> Dict[str, str]:
    """apt packages that own a library copy on disk: {"libcudnn8": "8.9.6.50-1+cuda12.2"}."""
    out: Dict[str, str] = {}
    for c in env.libraries:
        if c.origin == "apt":
            name, ver = _parse_package(c.package)
            if name and ver:
                out[name] = ver
    return out


def _why_change(provider: StackProvider, f: str, c: BuildCandidate, result: Result) -> str:
    """Why the installed build of `f` could not stay, in words (the first requirement it
    fails), or what the user asked."""
    installed = provider.build_candidates[f][0] if provider.build_candidates[f] and \
        provider.build_candidates[f][0].installed else None
    if installed is None:
        return f"{pretty(f)} is wanted and not installed"
    for r in result.criteria.get(f"fw:{f}", ()):
        if r.intent and not r.accepts(installed):
            return f"you asked for {r.text} ({r.parent})"
        if not r.accepts(installed):
            return f"{installed.label} is not a CUDA build and this machine has a GPU" \
                if "CUDA build" in r.text else f"{r.text} ({r.parent})"
    m = result.mapping
    failed: List[str] = []
    for d in provider.get_dependencies(installed):
        target = m.get(d.identifier)
        if target is None and d.identifier.startswith("__"):
            target = provider.facts[d.identifier]
        if target is not None and not d.accepts(target):
            what = target.text if isinstance(target, Fact) else getattr(target, "label", str(target))
            failed.append(f"{d.text}, but {what}")
    if failed:
        return f"{installed.label} " + "; ".join(failed)
    for d in provider.get_dependencies(installed):
        if d.identifier.startswith("cudnn:"):
            other = [r for r in result.criteria.get(d.identifier, ()) if r.parent != c.label]
            if other:
                return f"{installed.label} {d.text}; no cuDNN also fits {other[0].parent} ({other[0].text})"
    return f"{installed.label} cannot share a stack with the other frameworks"


def _env_fixes(env: Environment, provider: StackProvider, mapping: Mapping[str, Any]) -> List[EnvFix]:
    """Loader fixes so that every framework maps the chosen cuDNN: drop an LD_LIBRARY_PATH
    entry that puts another copy first; in a notebook (the kernel's environment cannot change
    after start) preload the chosen copy by absolute path; add an ld.so.conf entry when a
    consumer only searches the default paths and the chosen copy is not on them."""
    fixes: List[EnvFix] = []
    notebook = env.runtime.kind in ("colab", "kaggle") or env.runtime.in_notebook_kernel
    for ident, cand in mapping.items():
        if not ident.startswith("cudnn:"):
            continue
        c: CudnnCandidate = cand
        target = c.directory or _default_dir(env, c)
        if not target:
            continue
        for ld in provider._consumers(c.major):
            if ld.directory == target:
                continue
            if ld.via == "LD_LIBRARY_PATH" and ld.directory:
                fixes.append(EnvFix("ld-library-path-drop", ld.directory,
                                    why=f"LD_LIBRARY_PATH puts {ld.directory} (cuDNN {ld.version or '?'}) ahead of "
                                        f"{target} for {ld.consumer}"))
            elif ld.via in ("LD_PRELOAD",) and ld.path:
                fixes.append(EnvFix("ld-preload-drop", ld.path,
                                    why=f"LD_PRELOAD forces {ld.path} into {ld.consumer}: drop it"))
            elif c.source != "apt" and ld.steps and not _reaches(ld, target):
                fixes.append(EnvFix("ld-so-conf", target,
                                    why=f"{ld.consumer} does not look in {target} by itself"))
            if notebook and ld.via in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
                fixes.append(EnvFix("ipython-preload", f"{target}/libcudnn.so.{c.major}",
                                    why=f"the notebook kernel keeps its LD_LIBRARY_PATH: preload "
                                        f"{target}/libcudnn.so.{c.major} before {ld.consumer} is imported"))
    fixes += _cuda_lib_fixes(env, notebook)
    # a cuDNN library LD_PRELOAD forces in from another copy than the chosen one mixes with it in
    # every process, whether or not a framework loads cuDNN yet (a CPU torch about to become a CUDA one)
    for ident, cand in mapping.items():
        if not ident.startswith("cudnn:"):
            continue
        target = cand.directory or _default_dir(env, cand)
        for p in split_ld_preload(env.env.get("LD_PRELOAD")):
            if target and p.startswith("/") and re.match(rf"^libcudnn(_[a-z_]+)?\.so\.{cand.major}(\.|$)", os.path.basename(p)) \
                    and _same_dir(os.path.dirname(p)) != _same_dir(target):
                fixes.append(EnvFix("ld-preload-drop", os.path.normpath(p),
                                    why=f"LD_PRELOAD forces {p} in, another cuDNN than the chosen {target}: drop it"))
    for path, _copy, mixes in foreign_cudnn_preloads(env):
        fixes.append(EnvFix("ld-preload-drop", path,
                            why=f"LD_PRELOAD forces {path} into {', '.join(sorted({ld.consumer for ld in mixes}))}, "
                                f"which load another cuDNN copy: drop it"))
    uniq: Dict[Tuple[str, str], EnvFix] = {}
    for fx in fixes:
        uniq.setdefault((fx.kind, fx.value), fx)
    return list(uniq.values())


def _cuda_lib_fixes(env: Environment, notebook: bool) -> List[EnvFix]:
    """A CUDA library older than the framework's build that wins over the framework's own copy
    (diagnosis: cuda-lib-mismatch) through LD_LIBRARY_PATH or LD_PRELOAD: drop that entry; in a
    notebook also preload the framework's own copy by path in new kernels."""
    fixes: List[EnvFix] = []
    for ld in older_cuda_libraries(env):
        if not ld.intended:
            continue
        fw = env.framework(ld.consumer)
        why = f"{ld.path} ({ld.library} {ld.version}) is older than the CUDA {fw.cuda if fw else '?'} {ld.consumer} was built with"
        if ld.via == "LD_LIBRARY_PATH" and ld.directory:
            fixes.append(EnvFix("ld-library-path-drop", ld.directory, why=f"LD_LIBRARY_PATH: {why}"))
        elif ld.via == "LD_PRELOAD" and ld.path:
            fixes.append(EnvFix("ld-preload-drop", ld.path, why=f"LD_PRELOAD: {why}"))
        else:
            continue
        if notebook:
            fixes.append(EnvFix("ipython-preload", ld.intended,
                                why=f"the notebook kernel keeps its LD_LIBRARY_PATH: preload {ld.intended} "
                                    f"before {ld.consumer} is imported"))
    return fixes


def searched_dirs(ld: LoadResolution) -> List[str]:
    """The directories a consumer's search order visits, read from LoadResolution.steps as
    detect writes them ("DT_RPATH of /x/libtorch_cuda.so: $ORIGIN/../../nvidia/cudnn/lib",
    "torch preloads by path: /x/libcudnn.so.9", "LD_LIBRARY_PATH: /a:/b",
    "ld.so.cache: /usr/lib/x86_64-linux-gnu/libcudnn.so.9") or in the short form
    "DT_RPATH /dir: found"; $ORIGIN is expanded against the object's directory."""
    import os.path as op

    out: List[str] = []
    for step in ld.steps:
        head, sep, tail = step.partition(": ")
        if not sep:
            continue
        m = re.match(r"^(DT_RPATH|DT_RUNPATH) of (\S+)$", head)
        if m:
            origin = op.dirname(m.group(2))
            for e in tail.split(":"):
                e = e.strip()
                if e and not e.startswith("ignored"):
                    out.append(op.normpath(e.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)))
            continue
        if head.endswith("preloads by path"):
            out += [op.dirname(p.strip()) for p in tail.split(",") if p.strip()]
            continue
        if head in ("LD_LIBRARY_PATH", "LD_PRELOAD"):
            out += [d if head == "LD_LIBRARY_PATH" else op.dirname(d) for d in re.split(r"[: ]", tail) if d and d != "-"]
            continue
        if head == "ld.so.cache":
            if tail.startswith("/"):
                out.append(op.dirname(tail.strip()))
            continue
        parts = head.split(None, 1)          # short form: "VIA /dir"
        if len(parts) == 2 and parts[1].startswith("/"):
            out += [d for d in parts[1].split(":") if d]
    if ld.intended:
        out.append(op.dirname(ld.intended))
    return [op.normpath(d) for d in out]


def _reaches(ld: LoadResolution, target: str) -> bool:
    import os.path as op

    t = op.normpath(target)
    return any(d == t for d in searched_dirs(ld))


def _default_dir(env: Environment, c: CudnnCandidate) -> Optional[str]:
    if c.source == "pip":
        sp = env.python.site_packages[0] if env.python and env.python.site_packages else None
        return f"{sp}/nvidia/cudnn/lib" if sp else None
    if c.source == "apt":
        return "/usr/lib/x86_64-linux-gnu"
    return None


# -- failure -> words ------------------------------------------------------------------------


def _unsatisfiable(env: Environment, intent: Intent, recipes: Recipes, provider: StackProvider,
                   conflicts: Sequence[Conflict]) -> Unsatisfiable:
    clashes = (_explain(provider) or _clash_sentences(provider, conflicts))[:8]
    ways = _ways_out(env, intent, recipes)
    names = ", ".join(pretty(f) for f in provider.frameworks) or "the frameworks"
    return Unsatisfiable(f"no stack fits {names} on this machine", clashes=clashes, ways_out=ways)


def _first_viable(provider: StackProvider, f: str, roots: Sequence[Requirement]) -> Optional[BuildCandidate]:
    """The build of `f` the solver tries first among those the machine and the intent allow."""
    mine = [r for r in roots if r.identifier == f"fw:{f}"]
    for c in provider.build_candidates.get(f, ()):
        if not all(r.accepts(c) for r in mine):
            continue
        if all(d.accepts(provider.facts[d.identifier]) for d in provider.get_dependencies(c)
               if d.identifier.startswith("__")):
            return c
    return None


def _explain(provider: StackProvider) -> List[str]:
    """The clash in the user's words: a framework no build of which fits the machine and the
    intent; or, per cuDNN major, what each framework needs and what stops every copy."""
    out: List[str] = []
    roots = provider.roots()
    firsts: Dict[str, BuildCandidate] = {}
    for f in provider.frameworks:
        c = _first_viable(provider, f, roots)
        if c is None:
            reasons: List[str] = []
            mine = [r for r in roots if r.identifier == f"fw:{f}"]
            for cand in provider.build_candidates.get(f, ()):
                failed = [f"{r.text} ({r.parent})" for r in mine if not r.accepts(cand)]
                if failed:
                    continue   # the intent rules it out; not a reason worth listing per build
                for d in provider.get_dependencies(cand):
                    if d.identifier.startswith("__") and not d.accepts(provider.facts[d.identifier]):
                        reasons.append(f"{cand.label} {d.text}, but {provider.facts[d.identifier].text}")
            asked = [f"{r.text} ({r.parent})" for r in mine if r.intent]
            head = f"{pretty(f)}: no build fits" + (" " + " and ".join(asked) if asked else "")
            out.append(head + (": " + "; ".join(_summarise(reasons)[:3]) if reasons else ""))
        else:
            firsts[f] = c
    if out:
        return out
    majors: Dict[str, List[Requirement]] = {}
    for f, c in firsts.items():
        for d in provider.get_dependencies(c):
            if d.identifier.startswith("cudnn:"):
                majors.setdefault(d.identifier, []).append(d)
    for ident, needs in majors.items():
        held = [r for r in roots if r.identifier == ident]
        reqs = needs + held
        cands = provider.cudnn_for(int(ident.split(":")[1]))
        fits = [c for c in cands if all(r.accepts(c) for r in reqs)]
        words = "; ".join(f"{r.parent} {r.text}" for r in needs)
        if not fits:
            out.append(f"cuDNN {ident.split(':')[1]}: {words}; no cuDNN copy satisfies all of them"
                       + ("" if not held else " and " + "; ".join(f"{r.text} ({r.parent})" for r in held)))
            continue
        blocks: List[str] = []
        for fit in fits:
            for d in provider.get_dependencies(fit):
                if d.identifier.startswith("__"):
                    fact = provider.facts[d.identifier]
                    if not d.accepts(fact):
                        blocks.append(f"{fit.label} {d.text}, but {fact.text}")
                else:
                    for r in roots:
                        if r.identifier == d.identifier and r.intent:
                            probe = PackageCandidate(d.identifier.split(":")[0], d.identifier.split(":", 1)[1],
                                                     (d.prefer or (None,))[0])
                            if not r.accepts(probe) or not d.accepts(probe):
                                blocks.append(f"{r.parent} holds {r.text.replace(' stays at ', ' at ')}")
        if blocks:
            out.append(f"cuDNN {ident.split(':')[1]}: {words}; " + "; ".join(list(dict.fromkeys(blocks))[:2]))
    return out


def _clash_sentences(provider: StackProvider, conflicts: Sequence[Conflict]) -> List[str]:
    out: List[str] = []
    facts = provider.facts
    for c in conflicts:
        if c.candidate is not None:
            cand = c.candidate
            what = cand.text if isinstance(cand, Fact) else getattr(cand, "label", str(cand))
            for r in c.requirements:
                out.append(f"{r.parent} {r.text}, but {what}" if isinstance(cand, Fact)
                           else f"{r.parent} {r.text}, but {what} is already chosen")
            continue
        reqs = c.requirements
        if c.identifier.startswith("fw:"):
            intent_reqs = [r for r in reqs if r.intent or r.parent == "this machine"]
            if intent_reqs:
                out.append(f"{pretty(c.identifier[3:])}: no build is " +
                           " and ".join(f"{r.text} ({r.parent})" for r in intent_reqs))
            continue
        if c.identifier.startswith("cudnn:"):
            major = c.identifier.split(":")[1]
            parts = [f"{r.parent} {r.text}" for r in reqs]
            out.append(f"cuDNN {major}: " + "; ".join(parts) + " - no single copy fits all")
            continue
        if c.identifier.startswith("__"):
            fact = facts[c.identifier]
            for r in reqs:
                out.append(f"{r.parent} {r.text}, but {fact.text}")
            continue
        parts = [f"{r.parent}: {r.text}" for r in reqs]
        out.append(f"{c.identifier.split(':', 1)[1]}: " + "; ".join(parts))
    # most telling first: what the user asked and the hardware, then the rest; dedupe
    uniq = list(dict.fromkeys(out))
    uniq.sort(key=lambda s: (0 if "--" in s else 1 if "driver" in s or "kernels" in s or "SM" in s else 2))
    return _summarise(uniq)[:8]


def _summarise(lines: List[str]) -> List[str]:
    """Many builds fail for one reason: "torch 2.11.0+cu130 needs driver >= 580 ..., but driver
    570" repeated per build becomes one line per distinct reason."""
    seen: Dict[str, List[str]] = {}
    order: List[str] = []
    for line in lines:
        m = re.match(r"^(\S+ \S+(?: \(installed\))?) (needs .*|ships .*)$", line)
        if m:
            reason = m.group(2)
            if reason not in seen:
                seen[reason] = []
                order.append(reason)
            seen[reason].append(m.group(1))
        else:
            order.append(line)
            seen.setdefault(line, [])
    out = []
    for key in order:
        who = seen.get(key)
        if who:
            head = ", ".join(who[:3]) + (f" and {len(who) - 3} more" if len(who) > 3 else "")
            out.append(f"{head} {key}")
        else:
            out.append(key)
    return list(dict.fromkeys(out))


def _ways_out(env: Environment, intent: Intent, recipes: Recipes) -> List[str]:
    """The nearest ways out: drop one thing the user asked at a time and say what the stack
    would then change."""
    ways: List[str] = []
    relaxed: List[Tuple[str, Intent]] = []
    for name in intent.keep:
        relaxed.append((f"without --keep {name}", dataclasses.replace(intent, keep=tuple(k for k in intent.keep if k != name))))
    for f, v in intent.versions.items():
        relaxed.append((f"without --{f} {v}", dataclasses.replace(
            intent, versions={k: w for k, w in intent.versions.items() if k != f})))
    if intent.cuda:
        relaxed.append((f"without --cuda {intent.cuda}", dataclasses.replace(intent, cuda=None)))
    if intent.cudnn_from:
        relaxed.append((f"without --cudnn-from {intent.cudnn_from}", dataclasses.replace(intent, cudnn_from=None)))
    envs: List[Tuple[str, Intent, Environment]] = [(label, it, env) for label, it in relaxed]
    wanted = list(dict.fromkeys([fb.framework for fb in env.frameworks] + list(intent.frameworks)))
    if len(wanted) > 1:
        for f in wanted:
            envs.append((f"without {pretty(f)}",
                         dataclasses.replace(intent, frameworks=tuple(x for x in intent.frameworks if x != f),
                                             versions={k: v for k, v in intent.versions.items() if k != f}),
                         dataclasses.replace(env, frameworks=tuple(x for x in env.frameworks if x.framework != f))))
    for label, it, env in envs:
        try:
            provider = StackProvider(env, it, recipes)
            result = Solver(provider, max_nodes=5000).resolve(provider.roots())
        except (NoSolution, UsageError):
            continue
        stack = _to_stack(env, it, recipes, provider, result)
        changes = [_pin_words(p) for p in stack.pins if p.action != "keep"]
        ways.append(f"{label}: " + ("; ".join(changes[:4]) if changes else "nothing needs to change"))
    if not ways:
        ways.append("a newer driver (R580 or later runs every CUDA 12 and 13 build) or another GPU type")
    return ways


def _pin_words(p: Pin) -> str:
    if p.action == "remove":
        return f"remove {p.name}"
    if p.action == "install" and p.installed == p.version:
        return f"reinstall {p.name} {p.version}"
    if p.installed and public(p.installed) == public(p.version) and p.installed != p.version:
        return f"switch {p.name} {p.installed} to the {p.version} build"
    verb = {"install": "install", "upgrade": "raise", "downgrade": "lower"}.get(p.action, p.action)
    if p.name.startswith("nvidia-cudnn") and p.action == "upgrade":
        return f"raise {p.name} to {p.version} (safe at run time)"
    return f"{verb} {p.name} to {p.version}" if p.installed else f"{verb} {p.name}=={p.version}"


__all__ = [
    "BaseReporter", "BuildCandidate", "Conflict", "CudnnCandidate", "Fact", "NoSolution", "Requirement",
    "Result", "Solver", "StackProvider", "resolve",
]
