"""Which cuDNN copy a paste shows, beside the one that loaded: the decisions between the cuDNN
readings that the copies named in the paste make (fixer.explainer.evidence reads the lines).

- shadowed, not too old: a framework's own check found the loaded cuDNN older than its build
  (TF/XLA cuda_dnn.cc, torch's backends/cudnn, PaddlePaddle's gpu_context, JAX's plugin check
  all print the version the PROCESS loaded, cudnnGetVersion) while the paste shows another copy
  whose version satisfies the build (a listing, pip/conda list, a file named by its release).
  The loader takes the first libcudnn.so.N in its search order (ld.so: DT_RPATH, LD_LIBRARY_PATH,
  DT_RUNPATH, the ld.so cache, the default directories; a soname already loaded is reused), so a
  fitting copy that is present but not loaded is shadowed by the older one: cudnn-shadowed, with
  the plain older copy kept as the alternative.
- conflict, not a missing or other-major cuDNN: a paste that names two GPU frameworks (each
  brings or pins its own cuDNN: torch's wheel requires one nvidia-cudnn release, CTranslate2,
  ONNX Runtime, PaddlePaddle, TensorFlow and JAX are each built against one cuDNN major) and ties
  cuDNN to two majors (a failing soname of one, a listing, a pin or "cuDNN N" of the other, or
  the build tables' major of a framework release it names): no one cuDNN serves both, so the
  reading is cudnn-conflict, with the loader failure kept as the alternative.
- conflict, from torch's own copy: a cuDNN of major N that cannot load, while the paste lists
  torch's own cuDNN (a file in torch/lib: its Windows wheels, and its Linux wheels before the
  nvidia-* split, carry one cuDNN major there) of another major and no copy of N. torch loads the
  major it ships, so what asks for N is a second cuDNN user in torch's environment
  (CTranslate2, ONNX Runtime, a plug-in): cudnn-conflict, the loader's reading kept below it.
- incomplete, not missing: a cuDNN sub-library that libcudnn itself failed to load (cuDNN 8's
  "Could not load library", cuDNN 9's "Unable to load any of"), where the paste says the file is
  not inside the copy (wheel, jar, directory): cudnn-incomplete, decided by that line.

Every decision names the lines that decided it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable, Dict, List, Optional, Sequence, Set

from fixer.explainer.hits import MAX, Hit, displaced, wanted_major
from fixer.model import Finding
from fixer.rules import cudnn_relation
from fixer.system.versions import version_key

if TYPE_CHECKING:
    from fixer.explainer.evidence import Seen

#: The cuDNN majors the builds of a framework release were made with (the build tables).
CudnnMajors = Callable[[str, str], Set[int]]

_LOADER_ORDER = (
    "https://man7.org/linux/man-pages/man8/ld.so.8.html @release:man-pages-6.9 (search order: "
    "DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, /etc/ld.so.cache, default paths; the first "
    "libcudnn.so.N found is loaded, and a soname already loaded is reused)"
)
_SHADOWED_FIX = (
    "Make the process load the cuDNN copy that fits the build: remove the directory of the older "
    "copy from LD_LIBRARY_PATH (or LD_PRELOAD, /etc/ld.so.conf.d), put the fitting copy's "
    "directory first, or delete the older copy. `colab-cudnn-fix doctor` names both copies and "
    "`apply` writes the loader fix."
)
#: the readings of a cuDNN that failed to load (the loader's, and the evidence's refinement)
_LOAD_FAILURES = ("cudnn-missing", "cudnn-major-mismatch", "cudnn-incomplete")
_CONFLICT_FIX = (
    "Give the frameworks one cuDNN major: install releases of them built for the same cuDNN "
    "major (e.g. a CTranslate2 / ONNX Runtime release for the cuDNN that torch brings), or run "
    "them in separate environments. `colab-cudnn-fix plan` finds a pair."
)


def _same_release(a: str, b: str) -> bool:
    ka, kb = version_key(a), version_key(b)
    n = min(len(ka), len(kb), 3)
    return ka[:n] == kb[:n]


def _replace(h: Hit, **changes: object) -> Hit:
    return dataclasses.replace(h, finding=dataclasses.replace(h.finding, **changes))  # type: ignore[arg-type]


def shadowed(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """A too-old check beside a present copy that fits the build: cudnn-shadowed (in place),
    with the older copy as the alternative (returned)."""
    present = [s for s in seen if s.kind == "cudnn-present" and s.version]
    extra: List[Hit] = []
    for i, h in enumerate(hits):
        lo, bu = h.captures.get("loaded", ""), h.captures.get("built", "")
        if h.finding.id != "cudnn-too-old" or h.alternative_of or not lo or not bu:
            continue
        fits = [
            s
            for s in present
            if cudnn_relation(s.version, bu) == "ok" and not _same_release(s.version, lo)
        ]
        if not fits:
            continue
        old = h.finding
        hits[i] = dataclasses.replace(
            _replace(
                h,
                id="cudnn-shadowed",
                title=(
                    f"cuDNN {fits[0].version}, which fits the build's {bu}, is on the machine, but "
                    f"an older copy ({lo}) is found first and loads"
                ),
                evidence=old.evidence[:1]
                + (
                    f"decided by: {fits[0].line} (a copy that fits the build, not the one loaded)",
                    f"source: {_LOADER_ORDER}",
                ),
                fix=_SHADOWED_FIX,
                confidence=round(min(MAX, old.confidence + 0.03), 3),
            ),
            check=(
                "LD_DEBUG=libs python ... 2>&1 | grep libcudnn: the directory the older copy "
                "loads from, ahead of the fitting one"
            ),
        )
        extra.append(displaced(h, "cudnn-shadowed"))
    return extra


def _majors(seen: Sequence[Seen], majors: Optional[CudnnMajors]) -> Dict[int, str]:
    """Each cuDNN major the paste ties to cuDNN, with the first line that names it."""
    out: Dict[int, str] = {}
    for s in seen:
        if s.kind in ("cudnn-major-named", "cudnn-present") and s.major is not None:
            out.setdefault(s.major, s.line)
        elif s.kind == "framework-version" and majors is not None and s.version:
            found = majors(s.name, s.version)
            if len(found) == 1:
                out.setdefault(
                    next(iter(found)),
                    f"{s.line} (the build tables' cuDNN for {s.name} {s.version})",
                )
    return out


def conflict(
    hits: List[Hit],
    seen: Sequence[Seen],
    frameworks: Sequence[str],
    majors: Optional[CudnnMajors] = None,
    failure: Optional[Callable[[str], bool]] = None,
) -> List[Hit]:
    """Two GPU frameworks and two cuDNN majors in one paste: cudnn-conflict ranks first."""
    if len(frameworks) < 2 or any(h.finding.id == "cudnn-conflict" for h in hits):
        return []
    named = _majors(seen, majors)
    if len(named) < 2:
        return []
    direct = [h for h in hits if not h.alternative_of and not h.benign]
    cudnn = [h for h in direct if h.finding.id.startswith("cudnn-")]
    other = max((h.finding.confidence for h in direct if h not in cudnn), default=0.0)
    if cudnn:
        base = max(cudnn, key=lambda h: h.finding.confidence)
        if other > base.finding.confidence:
            return []
        conf, first, offset, where = (
            base.finding.confidence + 0.03,
            base.finding.evidence[0],
            base.offset,
            base.where,
        )
    else:
        failing = [s for s in seen if s.kind == "cudnn-major-named" and failure and failure(s.line)]
        if direct or not failing:
            return []
        conf, first, offset, where = (
            0.7,
            failing[-1].line,
            failing[-1].offset,
            "the paste's own lines",
        )
    shown = sorted(named)
    decided = "; ".join(f"cuDNN {m}: {named[m]}" for m in shown)
    title = (
        f"{' and '.join(frameworks)} in one environment need different cuDNN majors "
        f"({', '.join(map(str, shown))}): no one cuDNN serves both"
    )
    check = (
        "import each framework alone in a fresh process and print the cuDNN it loads; "
        "pip list | grep -i cudnn: which framework's requirement each copy satisfies"
    )
    return [_conflict_hit(title, first, decided, conf, offset, where, check)]


def _conflict_hit(
    title: str, first: str, decided: str, conf: float, offset: int, where: str, check: str
) -> Hit:
    """The cudnn-conflict reading: `first` the line it reads, `decided` the lines that decided it."""
    return Hit(
        finding=Finding(
            id="cudnn-conflict",
            severity="error",
            title=title,
            evidence=(first, f"decided by: {decided}", f"source: {_LOADER_ORDER}"),
            fix=_CONFLICT_FIX,
            confidence=round(min(MAX, conf), 3),
        ),
        decisive=True,
        offset=offset,
        where=where,
        check=check,
    )


def framework_copy(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """A cuDNN major that cannot load beside torch's own copy of another major: cudnn-conflict."""
    own = [s for s in seen if s.kind == "cudnn-framework-copy" and s.major is not None]
    if not own or any(h.finding.id == "cudnn-conflict" for h in hits):
        return []
    present = {s.major for s in seen if s.kind == "cudnn-present"}
    for h in hits:
        want = wanted_major(h)
        if h.alternative_of or h.finding.id not in _LOAD_FAILURES or want is None:
            continue
        other = next((s for s in own if s.major != want), None)
        if other is None or want in present:
            continue
        conf = max(x.finding.confidence for x in hits if not x.alternative_of) + 0.03
        title = (
            f"torch's own cuDNN here is cuDNN {other.major}, but a library loaded beside torch "
            f"needs cuDNN {want}: no one cuDNN serves both"
        )
        decided = f"{other.line} (torch's own copy, in {other.name})"
        check = (
            f"pip list: which package needs cuDNN {want} (CTranslate2, ONNX Runtime, ...) and "
            f"which torch brings cuDNN {other.major}"
        )
        first = h.finding.evidence[0]
        return [_conflict_hit(title, first, decided, conf, h.offset, h.where, check)]
    return []


#: Where a process looks first for a library it was asked to load by name: Windows' loaded-module
#: list, ld.so's loaded sonames.
_ALREADY_LOADED = (
    "https://learn.microsoft.com/windows/win32/dlls/dynamic-link-library-search-order "
    "@release:learn-2025 (Loaded-module list: the system can check whether a DLL with the same "
    "module name is already loaded into memory, no matter which folder it was loaded from; a "
    "DLL's dependencies are searched as if loaded with just their module names, even when the "
    "first DLL was loaded by its full path)"
)


def own_copy_mixed(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """A file of a framework's own cuDNN copy (torch/lib) that lacks a procedure or symbol
    another of its files imports (cudnn-mixed, read from a load failure on that file's line):
    that copy is one release, so its import was bound to a same-named cuDNN file of another
    release ALREADY LOADED in the process (Windows' loaded-module list, ld.so's loaded sonames),
    by a second cuDNN user beside the framework: cudnn-conflict, the mixed reading kept below."""
    own = [s for s in seen if s.kind == "cudnn-framework-file-failing" and s.major is not None]
    if not own or any(h.finding.id == "cudnn-conflict" for h in hits):
        return []
    for h in hits:
        if h.alternative_of or h.finding.id != "cudnn-mixed" or not h.finding.evidence:
            continue
        line = h.finding.evidence[0]
        copy = next((s for s in own if s.line == line), None)
        if copy is None:
            continue
        conf = max(x.finding.confidence for x in hits if not x.alternative_of) + 0.03
        title = (
            f"torch's own cuDNN {copy.major} (in torch's lib directory) was bound to a cuDNN file of "
            "another release already loaded in the process: a second cuDNN user beside torch "
            "(another framework, a preloaded cuDNN) needs another cuDNN"
        )
        decided = f"{copy.line} (a file of torch's own copy; source: {_ALREADY_LOADED})"
        check = (
            "import torch alone in a fresh process (it loads); then import the other framework "
            "(or its preload) first: which cuDNN release each one brings (pip list | grep -i "
            "cudnn, the DLLs/sonames in each package)"
        )
        return [_conflict_hit(title, line, decided, conf, h.offset, h.where, check)]
    return []


def part_absent(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """A sub-library libcudnn could not load, and the paste says the file is not inside the copy:
    cudnn-incomplete (in place), cuDNN absent from the search path the alternative (returned)."""
    said = next((s for s in seen if s.kind == "cudnn-part-absent"), None)
    if said is None:
        return []
    extra: List[Hit] = []
    for i, h in enumerate(hits):
        if h.finding.id != "cudnn-missing" or h.alternative_of or not h.captures.get("part"):
            continue
        if any(e.startswith("decided by:") for e in h.finding.evidence):
            continue  # a listing of the copy's directory decided it
        lib = h.captures.get("name", "") or h.captures.get("part", "")
        old = h.finding
        hits[i] = _replace(
            h,
            id="cudnn-incomplete",
            title=(
                f"The paste says the cuDNN copy lacks its sub-library {lib}: an incomplete cuDNN copy"
                if h.fallback  # read from words: nothing shows that libcudnn itself loaded
                else f"libcudnn loaded, but its sub-library {lib} is not inside the copy: an "
                "incomplete cuDNN copy"
            ),
            evidence=old.evidence + (f"decided by: {said.line}",),
            confidence=round(min(MAX, old.confidence + 0.02), 3),
            fix=(
                "Complete the cuDNN copy: reinstall it whole (the nvidia-cudnn wheel, or a release of "
                "the package that ships every libcudnn_*.so.N of its cuDNN), or use a full cuDNN of "
                "the same release."
            ),
        )
        extra.append(
            displaced(
                h,
                "cudnn-incomplete",
                evidence=(old.evidence[0], "an alternative reading: the directory is not searched"),
            )
        )
    return extra
