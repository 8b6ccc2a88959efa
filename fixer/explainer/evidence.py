"""The evidence inside a paste decides between readings: ldconfig -p output, file
lists, pip / dpkg lists and nvidia-smi pasted beside an error show what is on the machine.

- A text that needs cuDNN N while the listings show only other majors: cudnn-major-mismatch
  (the copy is there, of the wrong major), not cudnn-missing. Where the failing text names no
  soname (a framework's CUDA plug-in that fails to load), the major it needs is the one the build
  tables (recipes/*.toml, each row with its source) give for the framework release the paste
  names ("onnxruntime 1.19.2", "torch: 2.3.1"), when every build of that release agrees.
- A cuDNN sub-library that failed to load: a listing of the copy's directory that holds
  libcudnn.so.N but not that sub-library makes it cudnn-incomplete; one that holds it makes it a
  search-path problem (cudnn-missing); with no listing both stay, with the check that decides.
- A reading that needs evidence (cuDNN's INTERNAL_ERROR / NOT_INITIALIZED read as memory) is
  raised by that evidence and never ranks above a cuDNN that failed to load. With neither in the
  paste, the text cannot decide: the readings keep the catalogue's order (the emitter's usual
  cause first) and the finding says what would decide.

- A cuDNN sub-library that failed to load in a process whose traceback runs through torch's
  package: torch's wheels bring their cuDNN, so the copy that loaded cannot reach its own part
  (cudnn-incomplete first, cudnn-missing the alternative), unless a listing decided it.
- The runtime's "insufficient driver" beside a driver version (nvidia-smi) that runs every CUDA
  the paste names by minor-version compatibility (recipes/nvidia.toml's floors): no driver
  library reached the process (driver-missing first, e.g. a container without the GPU exposed).
- A message that has a too-old driver among its readings (torch's is_available() False) beside
  a driver version below the minor-version floor of every CUDA the paste's builds name: the
  driver is too old for the build (driver-too-old first).
- A message that no NVIDIA driver answered (torch's "Found no NVIDIA driver", nvidia-smi's
  "couldn't communicate") beside a GPU the paste names: an NVIDIA device makes it driver-missing,
  only another vendor's graphics, or a sentence saying there is no NVIDIA GPU, gpu-missing; the
  runtime's "insufficient driver" (also its answer when no driver loads) beside that same
  no-GPU evidence: gpu-missing (gpu_named).
- TensorFlow's "Ignore above cudart dlerror if you do not have a GPU set up": an NVIDIA GPU shown
  decides for the missing CUDA runtime, a failure after the line ranks above it (cudart_ignored).
- A no-device or unusable-driver answer (cudaErrorNoDevice, the insufficient driver, 803 / 804)
  beside a line that shows the driver itself unreachable (nvidia-smi cannot talk to it, NVML's
  "Driver/library version mismatch", NVRM's API mismatch): driver-missing (driver_unreached).
- torch's "Found no NVIDIA driver" only as device_count()'s warning, with no other failure and
  nothing that shows the GPU or the machine either way: a program that went on, harmless
  (log-noise), the no-GPU and no-driver readings its alternatives (torch_went_on).

Every decision names the line that decided it. Lines that report a failure are not evidence of
what is present."""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple

from fixer.explainer import copies
from fixer.explainer.catalogue import Catalogue
from fixer.explainer.hits import DISPLACED, MAX, Hit, displaced, wanted_major
from fixer.explainer.loader import line_at, line_span
from fixer.model import FindingId
from fixer.rules import decode_cudnn_version, nvcc_archs, nvcc_compiles_for
from fixer.system.versions import version_key

#: More lines of one kind decide nothing more (a log that repeats a listing 10^5 times).
MAX_SEEN = 50

#: A line that reports a failure names what is missing, not what is present; so does a line that
#: tells the user what to provide ("make sure files named as X are placed in ...", "set the path
#: to X", "For example: export CUDNN_PATH=..." in cudnn.torch's ffi.lua at R5/R7).
_FAILURE = re.compile(
    r"cannot open|not found|could not|couldn.t|unable to|no such file|failed|error|missing|"
    r"make sure|set the path to|for example|not in|is not|"
    # the same in Chinese, as the fallback's words read it: cannot find, lacks, missing, not
    # found, does not contain, there is no, failed, error
    r"找不到|缺少|缺失|未找到|不包含|没有|失败|错误",
    re.I,
)
#: "saw X instead of Y", "X rather than Y": the copy named after the phrase is the one looked for
#: and not found, not one that is present
_LOOKED_FOR = re.compile(
    r"(?:\binstead\s{1,4}of|\brather\s{1,4}than)\s{0,4}[`'\"(]{0,2}\s{0,2}$", re.I
)
#: A clause that denies the file it names ("there is no X", "I don't have X", "X isn't there",
#: "X doesn't exist", "without X", "can't find X"): the file is what is missing, not a copy that is
#: present. Clauses end at , ; : . ! ? or a line's end (a listing's lines are clauses of their own).
_DENIED = re.compile(
    r"\b(?:no|not|none|without|never|cannot|lacks?|lacking|absent)\b|n[’']?t\b", re.I
)
#: a clause ends at punctuation, and where a double quote opens or closes: users quote the error
#: inside their sentence ('I have AMD GPU I get this error "Torch not compiled with CUDA enabled"'),
#: and the error's own words deny nothing the sentence says
#: the turn of a sentence after a copy named present: ", but I keep getting this error"
_BUT = re.compile(r",?[ \t]{1,3}but[ \t]{1,3}", re.I)
_CLAUSE_END = re.compile(r"[,;:!?\n\"“”]|\.(?:\s|$)")
#: a parenthetical on one line: its own clause when the match is inside it ("(OSX) Torch not
#: compiled ..."), left out of the clause around it otherwise ("cuDNN 7.4.1 on Windows 10 (Python
#: 3.7) but I can't ...")
_PARENTHETICAL = re.compile(r"\([^()\n]{0,120}\)")
#: a search command before a match on its line: the match is what was searched for
_QUERY = re.compile(
    r"(?:^[ \t]*(?:\S{0,80}[$#>][ \t]{1,4})?(?:sudo[ \t]{1,4})?|[|;&][ \t]{0,4})"
    r"(?:e?grep|rg|find|locate|whereis|which)[ \t][^\n]*$"
)
#: the kinds that show a copy on the machine
_COPY_KINDS = ("cudnn-present", "cudnn-framework-copy")
#: the evidence that the machine has no NVIDIA GPU: another vendor's graphics, or a sentence saying so
_NO_NVIDIA_GPU = ("other-gpu", "no-nvidia-gpu-said")
#: the kinds a denied clause never shows (a copy, a framework's own copy, a GPU: "I don't have a
#: GeForce", "nvidia-smi doesn't work")
_PRESENCE = ("cudnn-present", "cudnn-framework-copy", "nvidia-gpu", "other-gpu", "in-container")
#: kinds read on any line, failure lines included (a failing soname names the major it needs; a
#: GPU is named in the sentence that reports the error: "my Intel Iris laptop gives this error")
_ANY_LINE = (
    "memory-pressure",
    "visible-devices-named",
    "cudnn-major-named",
    "cudnn-part-absent",
    "nvidia-gpu",
    "other-gpu",
    "no-nvidia-gpu-said",
    "in-container",
    "torch-warned-no-driver",
    "torch-raised-no-driver",
    "cuda-toolkit-named",
)
#: a cuDNN file right inside the framework's lib directory (not one reached through it:
#: torch/lib/../../nvidia/cudnn/lib is the nvidia-cudnn wheel's)
_IN_OWN_DIR = re.compile(
    r"[\w\-]{1,40}[\\/]{1,2}lib[\\/]{1,2}(?:libcudnn\w{0,40}\.so\.|cudnn\w{0,30}64_)\d{1,2}"
)
_CUDNN_LOAD_FAILURES = ("cudnn-missing", "cudnn-incomplete", "cudnn-major-mismatch")


@dataclasses.dataclass(frozen=True)
class Seen:
    """One line of evidence."""

    kind: str
    line: str
    offset: int
    major: Optional[int] = None
    name: str = ""
    share: Optional[float] = None  # memory in use / total, from nvidia-smi
    version: str = ""  # a framework's release ("framework-version"), a copy's ("cudnn-present")


#: The cuDNN majors the builds of a framework release were made with (recipes' build tables).
CudnnMajors = Callable[[str, str], Set[int]]
#: The CUDA majors the builds of a framework release were made for (recipes' build tables).
CudaMajors = Callable[[str, str], Set[int]]
#: The lowest driver of a CUDA major's minor-version compatibility (recipes/nvidia.toml's
#: [[driver_floor]] family rows, read by fixer.rules.minor_version_floor); None where none.
DriverFloor = Callable[[int], Optional[str]]
#: Whether a driver version runs a build of a CUDA release ("10.1"): True, False, or None where
#: NVIDIA's table cannot say (fixer.rules.cuda_fit over recipes/nvidia.toml's rows).
DriverRuns = Callable[[str, str], Optional[bool]]
#: the CUDA majors a driver floor is asked for (NVIDIA defines minor-version floors from 11 on)
_CUDA_MAJORS = range(11, 20)
#: how a paste names a framework, to the recipes' framework ids
_FRAMEWORK_IDS = {"jaxlib": "jax", "tensorflow-gpu": "tensorflow", "onnxruntime-gpu": "onnxruntime"}


def _major(g: Dict[str, Optional[str]]) -> Optional[int]:
    if g.get("major"):
        return int(g["major"] or 0)
    v = g.get("version") or ""
    if v.isdigit():  # cudnnGetVersion: 8907 -> 8, 90100 -> 9
        return int(v) // 1000 if int(v) < 10000 else int(v) // 10000
    head = v.split(".")[0]
    return int(head) if head.isdigit() and "." in v else None  # dotted: "8.9.7" -> 8


def _copy_version(g: Dict[str, Optional[str]]) -> str:
    """A present copy's release, where the line gives more than its major (a soname's
    "libcudnn.so.8" names only the major: no release to compare with a build's)."""
    raw = g.get("version") or ""
    if g.get("minor"):  # cudnn_version.h's three #defines
        raw = f"{g.get('major')}.{g.get('minor')}.{g.get('patch') or 0}"
    if "." not in raw and len(raw) < 4:
        return ""
    return decode_cudnn_version(raw) or ""


def _version(kind: str, g: Dict[str, Optional[str]]) -> str:
    """The release a line of evidence names beside its major: a present cuDNN copy's, or the
    CUDA release a build names where its name gives the minor ("cu118", "cuda10.1")."""
    if kind == "cudnn-present":
        return _copy_version(g)
    if kind == "cuda-runtime" and g.get("minor"):
        return f"{g.get('major')}.{g.get('minor')}"
    return ""


def _clause(text: str, start: int, end: int) -> str:
    """The clause around text[start:end]: from the last clause end before it to the next after;
    the parenthetical it sits in, if any; without the parentheticals around it."""
    head = text[max(0, start - 120) : start]
    tail = text[end : end + 120]
    opened = head.rfind("(")
    closed = tail.find(")")
    if opened >= 0 and ")" not in head[opened:] and closed >= 0 and "(" not in tail[:closed]:
        head, tail = head[opened + 1 :], tail[:closed]
    head, tail = _PARENTHETICAL.sub(" ", head), _PARENTHETICAL.sub(" ", tail)
    cut = [m.end() for m in _CLAUSE_END.finditer(head)]
    stop = _CLAUSE_END.search(tail)
    return head[cut[-1] if cut else 0 :] + text[start:end] + tail[: stop.start() if stop else None]


def _denied(text: str, m: "re.Match[str]") -> bool:
    """The match names the copy looked for ("instead of X") or sits in a clause that denies it."""
    if _LOOKED_FOR.search(text[max(0, m.start() - 40) : m.start()]):
        return True
    return bool(_DENIED.search(_clause(text, m.start(), m.end())))


def read_evidence(text: str, cat: Catalogue) -> List[Seen]:
    """Every evidence line in the text, in text order."""
    out: List[Seen] = []
    for ev in cat.evidence:
        for p in ev.patterns:
            for n, m in enumerate(p.finditer(text)):
                if n >= MAX_SEEN:
                    break
                line = line_at(text, m.start())
                if ev.kind == "cudnn-framework-copy" and _FAILURE.search(line):
                    # a file of the framework's own copy that failed to load: no copy shown
                    # present, but which copy the failure is in (copies.own_copy_mixed)
                    if _IN_OWN_DIR.fullmatch(m.group(0)):
                        out.append(
                            Seen(
                                "cudnn-framework-file-failing",
                                line,
                                m.start(),
                                _major(m.groupdict()),
                            )
                        )
                    continue
                if ev.kind not in _ANY_LINE and _FAILURE.search(_before_but(text, m)):
                    continue
                g = m.groupdict()
                share = None
                if g.get("used") and g.get("total") and int(g["total"] or 0) > 0:
                    share = int(g["used"] or 0) / int(g["total"] or 1)
                kind = ev.kind if share is None or share >= 0.9 else "no-" + ev.kind
                name = (g.get("name") or "").strip()
                if kind == "framework-version":
                    name = _FRAMEWORK_IDS.get(name.lower(), name.lower())
                if kind in ("framework-version", "driver-version", "cuda-toolkit-named"):
                    version = g.get("version") or ""
                    out.append(Seen(kind, line, m.start(), None, name, None, version))
                    continue
                if _shows_nothing(kind, text, m):
                    continue
                out.append(Seen(kind, line, m.start(), _major(g), name, share, _version(kind, g)))
    out.sort(key=lambda s: s.offset)
    return out


def _before_but(text: str, m: "re.Match[str]") -> str:
    """The match's line up to a "but" after the match: in "I installed CUDA 9.0 and cuDNN v7, but
    I keep getting this error" the failure is the other clause's, and the copy is still named as
    present. A failure before the match, or with no "but" after it, stays on the line."""
    start, end = line_span(text, m.start(), m.end())
    line = text[start:end]
    turn = _BUT.search(line, m.end() - start)
    return line[: turn.start()] if turn else line


def _shows_nothing(kind: str, text: str, m: "re.Match[str]") -> bool:
    """A match that shows nothing present: in a clause that denies it, or (for a copy) the term
    of a search the user ran ("grep -r 'libcudnn.so.5'"), not its output."""
    if kind in _PRESENCE and _denied(text, m):
        return True
    line_start = text.rfind("\n", 0, m.start()) + 1
    return kind in _COPY_KINDS and bool(_QUERY.search(text[line_start : m.start()]))


def _with(h: Hit, **changes: object) -> None:
    h.finding = dataclasses.replace(h.finding, **changes)  # type: ignore[arg-type]


def _built_major(
    h: Hit, seen: Sequence[Seen], majors: Optional[CudnnMajors]
) -> Tuple[Optional[int], str]:
    """The one cuDNN major of the framework release the paste names, with that line: the
    framework the failing line names (its plug-in), else the only framework the paste versions."""
    named = [s for s in seen if s.kind == "framework-version" and s.version]
    if majors is None or not named:
        return None, ""
    failing = h.finding.evidence[0].lower() if h.finding.evidence else ""
    own = [s for s in named if s.name in failing]
    if not own and len({s.name for s in named}) == 1:
        own = named
    for s in own:
        found = majors(s.name, s.version)
        if len(found) == 1:
            return next(iter(found)), f"{s.name} {s.version}"
    return None, ""


def _major_mismatch(
    hits: List[Hit], seen: Sequence[Seen], majors: Optional[CudnnMajors] = None
) -> List[Hit]:
    present = [s for s in seen if s.kind == "cudnn-present" and s.major is not None]
    if not present:
        return []
    extra: List[Hit] = []
    for h in hits:
        if h.finding.id != "cudnn-missing" or h.alternative_of:
            continue
        want, by_build = wanted_major(h), ""
        if want is None:
            want, by_build = _built_major(h, seen, majors)
            by_build = f"; the build tables give cuDNN {want} for: {by_build}" if by_build else ""
        if want is None:
            continue
        same = [s for s in present if s.major == want]
        if same:
            _with(
                h,
                evidence=h.finding.evidence
                + (
                    f"decided by: {same[0].line} (cuDNN {want} is on disk: its directory is not "
                    "on the loader's search path)",
                ),
            )
            continue
        shown = sorted({s.major for s in present if s.major is not None})
        extra.append(
            Hit(
                finding=dataclasses.replace(
                    h.finding,
                    id="cudnn-major-mismatch",
                    title=(
                        f"The build needs cuDNN {want}, but this paste shows only cuDNN "
                        f"{', '.join(map(str, shown))} on the machine"
                    ),
                    evidence=(h.finding.evidence[0], f"decided by: {present[0].line}{by_build}"),
                    fix=(
                        f"Install cuDNN {want} beside the other major (the nvidia-cudnn wheel of "
                        f"major {want} for this CUDA, or apt's libcudnn{want}), or install a "
                        f"framework build made for cuDNN {shown[-1]}. `colab-cudnn-fix plan` "
                        "picks one."
                    ),
                    confidence=round(min(MAX, h.finding.confidence + 0.04), 3),
                ),
                decisive=True,
                offset=h.offset,
                where=h.where,
                check="ldconfig -p | grep libcudnn and pip list | grep cudnn: the cuDNN majors present",
            )
        )
    return extra


def _sub_library(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    extra: List[Hit] = []
    listed = {s.name.rsplit("/", 1)[-1] for s in seen if s.kind == "cudnn-present"}
    for h in hits:
        part, want = h.captures.get("part", ""), wanted_major(h)
        if h.finding.id != "cudnn-missing" or not part or h.alternative_of:
            continue
        lib = h.captures.get("name", "")
        main = f"libcudnn.so.{want}" if want is not None else "libcudnn.so"
        if any(n.startswith(main) for n in listed) and lib:
            has_part = any(n.startswith(lib.split(".so")[0] + ".so") for n in listed)
            line = next(s.line for s in seen if s.name.rsplit("/", 1)[-1].startswith(main))
            if not has_part:
                _with(
                    h,
                    id="cudnn-incomplete",
                    title=f"{main} is there, but its sub-library {lib} is not: an incomplete cuDNN copy",
                    evidence=h.finding.evidence + (f"decided by: {line} (no {lib} beside it)",),
                    confidence=round(min(MAX, h.finding.confidence + 0.02), 3),
                    fix="Reinstall the cuDNN copy whole (pip install --force-reinstall the nvidia-cudnn wheel of the same version).",
                )
                continue
        extra.append(
            Hit(
                finding=dataclasses.replace(
                    h.finding,
                    id="cudnn-incomplete",
                    title=f"The cuDNN copy that loaded lacks its sub-library {lib or part}",
                    evidence=(
                        h.finding.evidence[0],
                        "an alternative reading: libcudnn itself loaded",
                    ),
                    confidence=round(h.finding.confidence - DISPLACED, 3),
                    fix="Reinstall the cuDNN copy whole (pip install --force-reinstall the nvidia-cudnn wheel of the same version).",
                ),
                decisive=False,
                offset=h.offset,
                where=h.where,
                check=(
                    f"ls the cuDNN lib directory: {main} beside a missing {lib or part} means an "
                    "incomplete copy; both present means the directory is not on the search path"
                ),
                alternative_of="cudnn-missing",
            )
        )
    return extra


def _needs(hits: List[Hit], seen: Sequence[Seen]) -> None:
    kinds = {s.kind: s for s in seen}
    failed_load = max(
        (
            h.finding.confidence
            for h in hits
            if h.finding.id in _CUDNN_LOAD_FAILURES and not h.alternative_of and not h.needs
        ),
        default=None,
    )
    for h in hits:
        if not h.needs:
            continue
        if failed_load is not None:
            _with(
                h,
                confidence=round(min(h.finding.confidence, failed_load - 0.1), 3),
                evidence=h.finding.evidence
                + ("ranked below the cuDNN that failed to load, named in the same paste",),
            )
        elif h.needs in kinds:
            _with(
                h,
                confidence=round(min(MAX, h.finding.confidence + 0.2), 3),
                evidence=h.finding.evidence + (f"decided by: {kinds[h.needs].line}",),
            )
        elif "no-" + h.needs in kinds:  # the paste shows the opposite (memory far from full)
            _with(
                h,
                confidence=round(max(0.05, min(h.finding.confidence, h.alt_best - 0.02)), 3),
                evidence=h.finding.evidence
                + (f"decided against by: {kinds['no-' + h.needs].line}",),
            )
        else:  # nothing in the paste decides: the catalogue's order stands, with what decides
            _with(
                h,
                evidence=h.finding.evidence
                + (
                    f"the paste shows no {h.needs.replace('-', ' ')}: nvidia-smi's memory in use "
                    "while it runs would decide for it",
                ),
            )


def _caller_ships_cudnn(
    hits: List[Hit], seen: Sequence[Seen], frameworks: Sequence[str] = ()
) -> List[Hit]:
    """A cuDNN sub-library that a process whose caller ships its own cuDNN (a traceback frame in
    torch's package) cannot load, with no listing that decided it: the caller's copy cannot
    reach its own part (cudnn-incomplete first); cuDNN absent from the search path stays the
    alternative."""
    caller = next((s for s in seen if s.kind == "cudnn-caller-ships-cudnn"), None)
    if caller is None or any(f != "torch" for f in frameworks):
        return []  # another framework that loads cuDNN itself may be the failing process
    extra: List[Hit] = []
    for h in hits:
        if h.finding.id != "cudnn-missing" or h.alternative_of or not h.captures.get("part"):
            continue
        if any(e.startswith("decided by:") for e in h.finding.evidence):
            continue  # a listing of the copy's directory decided it
        lib = h.captures.get("name", "") or h.captures.get("part", "")
        missing = dataclasses.replace(
            h.finding,
            evidence=(h.finding.evidence[0], "an alternative reading: cuDNN is not installed"),
            confidence=round(h.finding.confidence - DISPLACED, 3),
        )
        _with(
            h,
            id="cudnn-incomplete",
            title=f"The cuDNN copy the failing process ships cannot load its own sub-library {lib}",
            evidence=h.finding.evidence
            + (
                f"decided by: {caller.line} (the caller is torch, whose wheel brings its cuDNN: "
                "libcudnn itself loaded, its sub-library did not)",
            ),
            confidence=round(min(MAX, h.finding.confidence + 0.02), 3),
            fix=(
                "Make the cuDNN copy whole and reachable: reinstall the nvidia-cudnn wheel torch "
                "requires (pip install --force-reinstall), and where the app is frozen or the "
                "libraries are copied, keep every libcudnn_*.so.N beside libcudnn.so.N."
            ),
        )
        h.check = (
            f"ls the directory libcudnn loads from: {lib} missing there (or not reachable from "
            "it: RUNPATH, links) means an incomplete copy"
        )
        extra.append(
            Hit(
                finding=missing,
                decisive=False,
                offset=h.offset,
                where=h.where,
                check="pip list | grep nvidia-cudnn: is the wheel torch requires installed?",
                alternative_of="cudnn-incomplete",
            )
        )
    return extra


def _driver_runs(version: str, floor: DriverFloor) -> List[int]:
    """The CUDA majors whose every minor release this driver runs (minor-version compatibility)."""
    have = version_key(version)
    out: List[int] = []
    for major in _CUDA_MAJORS:
        low = floor(major)
        if low is not None and have >= version_key(low):
            out.append(major)
    return out


def _drivers_and_cudas(seen: Sequence[Seen]) -> Tuple[List[Seen], List[int]]:
    """The driver versions the paste shows (nvidia-smi, /proc) and the CUDA majors its builds
    name (+cuXXX tags, -cuNN wheels, conda build strings), sorted."""
    drivers = [s for s in seen if s.kind == "driver-version" and s.version]
    named = sorted({s.major for s in seen if s.kind == "cuda-runtime" and s.major is not None})
    return drivers, named


def _driver_reached(
    hits: List[Hit],
    seen: Sequence[Seen],
    floor: Optional[DriverFloor],
    cudas: Optional[CudaMajors] = None,
) -> List[Hit]:
    """The runtime's "insufficient driver" (which it also returns when no driver library loads)
    beside a driver version that runs every CUDA the paste names (or, naming none, the newest
    major it runs): no driver reached the process (driver-missing) ranks first. Naming no CUDA
    but a framework release ("torch: 2.1.1"), a build of which the build tables give for a CUDA
    this driver does not run, the driver may be what is too old: nothing is decided."""
    drivers, named = _drivers_and_cudas(seen)
    if floor is None or not drivers:
        return []
    runs = _driver_runs(drivers[-1].version, floor)
    if not runs or any(m not in runs for m in named):
        return []
    if not named and cudas is not None:
        built: Set[int] = set()
        for s in seen:
            if s.kind == "framework-version" and s.version:
                built |= cudas(s.name, s.version)
        if any(m not in runs for m in built):
            return []
    what = ", ".join(f"CUDA {m}" for m in named) or f"every CUDA {runs[-1]}.x runtime"
    extra: List[Hit] = []
    for h in hits:
        if h.finding.id != "driver-too-old" or h.alternative_of or "insufficient" not in h.captures:
            continue
        extra.append(
            Hit(
                finding=dataclasses.replace(
                    h.finding,
                    id="driver-missing",
                    title="The driver is new enough, but no driver library reached this process",
                    evidence=(
                        h.finding.evidence[0],
                        f"decided by: {drivers[-1].line} (driver {drivers[-1].version} runs "
                        f"{what} by NVIDIA's minor-version compatibility; the runtime reports an "
                        "insufficient driver also when it loads none)",
                    ),
                    fix=(
                        "Expose the driver to the process: start the container with the GPU "
                        "(--gpus all, or NVIDIA_VISIBLE_DEVICES and the NVIDIA runtime), and make "
                        "libcuda.so.1 findable (ldconfig -p | grep libcuda)."
                    ),
                    confidence=round(min(MAX, h.finding.confidence + (0.03 if named else 0.02)), 3),
                ),
                decisive=True,
                offset=h.offset,
                where=h.where,
                check="ldconfig -p | grep libcuda.so.1 inside the failing process's container",
            )
        )
    return extra


def _build_runs(
    s: Seen, driver: str, floor: DriverFloor, runs: Optional[DriverRuns]
) -> Optional[bool]:
    """Whether `driver` runs the build whose CUDA the line `s` names: by its release where the line
    gives one the table knows (NVIDIA's table: before CUDA 11 every release needs its own GA
    driver, from 11 on minor-version compatibility within the major; fixer.rules.cuda_fit), else
    by its major's minor-version floor (11 on). None where neither can say."""
    by_release = runs(driver, s.version) if s.version and runs is not None else None
    if by_release is not None:
        return by_release
    if s.major is None or floor(s.major) is None:
        return None
    return s.major in _driver_runs(driver, floor)


def _driver_short(
    hits: List[Hit],
    seen: Sequence[Seen],
    floor: Optional[DriverFloor],
    runs: Optional[DriverRuns] = None,
) -> List[Hit]:
    """A message that names a too-old driver as one of its readings (driver-too-old among its
    alternatives: torch's is_available() False, a CUDA backend that falls back to the CPU) beside
    a driver version (nvidia-smi, torch's collect_env) that runs none of the builds the paste
    names (+cuXXX tags, -cuNN wheels, conda build strings, "CUDA used to build PyTorch"): by the
    release where one is named (`runs`: before CUDA 11 each release needs its own driver), else by
    the major's minor-version floor. The framework then reports no GPU; the too-old driver ranks
    first.

    Sources: torch's device_count() turns cudaErrorInsufficientDriver with a driver present
    into the warning "CUDA initialization: The NVIDIA driver on your system is too old" and zero
    devices, so is_available() is False (pytorch/pytorch c10/cuda/CUDAFunctions.cpp:45-53
    @01a6a16d9bb6424c034f5623c46bfd08ec21613b, device_count's TORCH_WARN not line-checked); the
    floors are NVIDIA's (recipes/nvidia.toml's [[driver_floor]] rows, each with its source)."""
    drivers, named = _drivers_and_cudas(seen)
    if floor is None or not drivers or not named:
        return []
    driver = drivers[-1]
    builds = [s for s in seen if s.kind == "cuda-runtime" and s.major is not None]
    if any(_build_runs(s, driver.version, floor, runs) is not False for s in builds):
        return []
    releases = sorted({s.version or str(s.major) for s in builds}, key=version_key)
    if all("." not in r for r in releases):  # majors only: their minor-version floors decided
        lows = ", ".join(f"{floor(m)} for CUDA {m}.x" for m in named)
        why = f"NVIDIA's minor-version compatibility needs at least {lows}"
    else:
        why = (
            f"by NVIDIA's table driver {driver.version} runs none of CUDA {', '.join(releases)}: "
            "before CUDA 11 every release needs its own driver, from 11 on its major's floor"
        )
    extra: List[Hit] = []
    for alt in hits:
        if alt.finding.id != "driver-too-old" or not alt.alternative_of:
            continue
        main = [
            h
            for h in hits
            if h.alternative_of is None and h.where == alt.where and h.offset == alt.offset
        ]
        base = max((h.finding.confidence for h in main), default=alt.finding.confidence)
        extra.append(
            Hit(
                finding=dataclasses.replace(
                    alt.finding,
                    title=(
                        f"The driver ({driver.version}) is older than the CUDA "
                        f"{', '.join(releases)} the build needs: the framework sees no GPU"
                    ),
                    evidence=(
                        alt.finding.evidence[0],
                        f"decided by: {driver.line} ({why})",
                    ),
                    fix=(
                        "Install a driver that runs the build's CUDA, or a framework build for "
                        "the CUDA this driver runs (`colab-cudnn-fix plan` names it)."
                    ),
                    confidence=round(min(MAX, base + 0.04), 3),
                ),
                decisive=True,
                offset=alt.offset,
                where=alt.where,
                check=alt.check,
            )
        )
    return extra


#: What the process lacks once the paste decided whether there is an NVIDIA GPU.
_GPU_DECIDED = {
    "driver-missing": (
        "An NVIDIA GPU is there (the paste names it), but no NVIDIA driver reached this process",
        "the GPU is there, so its driver is what the process lacks",
        "Install (or load) the NVIDIA driver for this GPU; in a container, start it with the GPU "
        "exposed (--gpus all, or NVIDIA_VISIBLE_DEVICES=all with NVIDIA_DRIVER_CAPABILITIES "
        "including compute); on WSL use WSL 2 with the Windows NVIDIA driver.",
        "nvidia-smi in the failing process's machine or container; ldconfig -p | grep libcuda.so.1",
    ),
    "gpu-missing": (
        "No NVIDIA GPU in this machine: the paste names only another vendor's graphics",
        "that graphics device is not an NVIDIA GPU, and no NVIDIA device is named",
        "Run on a machine (or runtime) with an NVIDIA GPU (Colab: Runtime → Change runtime type "
        "→ a GPU), or run the framework on the CPU (device='cpu').",
        "lspci | grep -i nvidia (empty: no NVIDIA GPU)",
    ),
}


def _asked_about_the_gpu(
    hits: Sequence[Hit], seen: Sequence[Seen], nvidia: Optional[Seen], absent: Optional[Seen]
) -> List[Hit]:
    """The readings whose question the GPU named in the paste answers (gpu_named): a message
    that no driver answered; with no NVIDIA device named, the insufficient-driver answer and any
    reading that no driver reached the process (the loader's missing libcuda / libnvidia-ml too);
    with the NVIDIA GPU named, the driver's "no device"; with only another vendor's graphics, a
    container runtime that has no GPU device driver."""
    asked = [
        h
        for h in hits
        if h.alternative_of is None
        and (
            "nodriver" in h.captures
            # with no NVIDIA device named, the insufficient-driver answer and any reading that no
            # driver reached the process (the loader's missing libcuda / libnvidia-ml too) are
            # asked the same question
            or (
                nvidia is None
                and (
                    "insufficient" in h.captures
                    or h.finding.id in ("driver-missing", "cpu-only-build", "driver-too-old")
                )
            )
        )
    ]
    if nvidia is not None and not any(s.kind == "visible-devices-named" for s in seen):
        # the driver detected no device (the `nodevice` group: cudaErrorNoDevice is "no
        # CUDA-capable device is detected by the installed CUDA driver") while the paste names
        # the NVIDIA GPU: the GPU is there and its driver does not reach it (not loaded, a
        # container without the device nodes, WSL's library path). CUDA_VISIBLE_DEVICES that
        # hides every device is the other way to this answer, and decides nothing here.
        asked += [h for h in hits if "nodevice" in h.captures and h.alternative_of is None]
    if nvidia is None and absent is not None:
        # a container runtime with no GPU device driver (the `runtime_nodriver` group: Docker's
        # "could not select device driver"): on a machine with no NVIDIA GPU there is nothing for
        # it to give; beside an NVIDIA GPU or in a container its own reading stands
        asked += [h for h in hits if "runtime_nodriver" in h.captures and h.alternative_of is None]
    return asked


def gpu_named(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """A message that no NVIDIA driver answered (the `nodriver` group: torch's "Found no NVIDIA
    driver", nvidia-smi's "couldn't communicate with the NVIDIA driver") beside a GPU the paste
    names: an NVIDIA device means the driver is what is missing (driver-missing); only another
    vendor's graphics (Intel, AMD, Apple), or a sentence saying the machine has no NVIDIA GPU
    (no-nvidia-gpu-said), means there is no NVIDIA GPU (gpu-missing). The runtime's "insufficient
    driver" (the `insufficient` group) is also what it answers when no driver library loads at
    all, so the same no-GPU evidence decides it for gpu-missing too, as it does every other
    driver-missing reading (a driver library the loader did not find); an NVIDIA device named
    decides nothing for it (the driver may be there and too old: a driver version decides,
    _driver_reached / _driver_short). A CPU-only build (cpu-only-build: "a framework installed
    without CUDA on a GPU machine", DESIGN's finding table) is a cause only where there is an
    NVIDIA GPU, so the no-GPU evidence decides its readings for gpu-missing as well (PyTorch's
    macOS wheels carry no CUDA: "Torch not compiled with CUDA enabled" on a Mac). The decided
    reading ranks above every reading of those messages; with no such line, nothing is
    decided. A container runtime that has no GPU device driver (`runtime_nodriver`) is asked
    only by the no-GPU evidence."""
    nvidia = next((s for s in seen if s.kind == "nvidia-gpu"), None)
    absent = next((s for s in seen if s.kind in _NO_NVIDIA_GPU), None)
    asked = _asked_about_the_gpu(hits, seen, nvidia, absent)
    line = nvidia or absent
    if line is None and not any(s.kind == "driver-version" for s in seen):
        # no GPU named either way, and no driver version (which decides those answers instead:
        # _driver_reached, _driver_short): a process in a container that no driver answered (or
        # whose runtime found no driver library: the insufficient-driver answer) was started
        # without the GPU (the NVIDIA container toolkit mounts the driver's libraries and device
        # nodes only into a container started with --gpus / the NVIDIA runtime)
        line = next((s for s in seen if s.kind == "in-container"), None)
        asked = [h for h in asked if "nodriver" in h.captures or "insufficient" in h.captures]
    if not asked or line is None:
        return []
    fid: FindingId = (
        "driver-missing" if nvidia is not None or line.kind == "in-container" else "gpu-missing"
    )
    title, why, fix, check = _GPU_DECIDED[fid]
    if line.kind == "no-nvidia-gpu-said":
        title, why = _SAID
    elif line.kind == "in-container":
        title, why, fix, check = _IN_CONTAINER
    if all(h.finding.id == "cpu-only-build" for h in asked):
        title, why = _NO_GPU_FOR_BUILD[0], f"{why}; {_NO_GPU_FOR_BUILD[1]}"
    last = max(asked, key=lambda h: h.offset)
    top = max(h.finding.confidence for h in asked)
    finding = dataclasses.replace(
        last.finding,
        id=fid,
        severity="error",
        title=title,
        evidence=(last.finding.evidence[0], f"decided by: {line.line} ({why})"),
        fix=fix,
        confidence=round(min(MAX, top + 0.04), 3),
    )
    return [Hit(finding=finding, decisive=True, offset=last.offset, where=last.where, check=check)]


def unavailable_beside_gpu(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """CUDA reported not available (torch.cuda.is_available() False and the frameworks' own
    wordings of it: the `unavailable` group of the gpu-missing rule) in a paste that names an
    NVIDIA GPU (nvidia-gpu: a product name, lspci's line, nvidia-smi's header) and neither
    another vendor's graphics, a sentence saying there is none, nor the build's CUDA (which
    rules out a CPU build). torch's is_available() is False for no driver, no device or a
    CPU-only build (cited on the rule); the paste rules out "no device", so the rule's first
    alternative that it leaves, a build without CUDA, ranks first, a driver too old and no
    driver after it, as the rule orders them. The no-GPU reading stays below
    (CUDA_VISIBLE_DEVICES can still hide the GPU). Returns the reading that takes first place,
    or nothing."""
    nvidia = next((s for s in seen if s.kind == "nvidia-gpu"), None)
    if nvidia is None or any(s.kind in (*_NO_NVIDIA_GPU, "cuda-runtime") for s in seen):
        # another vendor's graphics or a sentence: gpu_named decides; the build's CUDA named
        # (cuda-runtime: +cu118, a conda build string): not a CPU build, and the driver's
        # version against it decides (_driver_reached, _driver_short)
        return []
    asked = [
        h
        for h in hits
        if "unavailable" in h.captures and h.finding.id == "gpu-missing" and not h.alternative_of
    ]
    if not asked:
        return []
    last = max(asked, key=lambda h: h.offset)
    build = _alternative(hits, last, "cpu-only-build")
    if build is None:
        return []
    decided = (
        f"decided by: {nvidia.line} (an NVIDIA GPU is there, so CUDA is not available for want "
        "of a CUDA build or a driver that serves it, not for want of a GPU)"
    )
    return [_promoted(build, last, decided, decisive=False)]


def _alternative(hits: Sequence[Hit], reading: Hit, fid: str) -> Optional[Hit]:
    """The reading `fid` that `reading`'s rule ranks below it (its alternative at the same
    place), or None where the rule has none."""
    return next(
        (
            a
            for a in hits
            if a.alternative_of == reading.finding.id
            and a.offset == reading.offset
            and a.finding.id == fid
        ),
        None,
    )


def _promoted(alt: Hit, over: Hit, decided: str, decisive: bool, title: str = "") -> Hit:
    """The alternative `alt` taking first place over the reading `over`: `over`'s line, the line
    that decided (`decided`), a confidence just above `over`'s, and `title` where one is given."""
    finding = dataclasses.replace(
        alt.finding,
        title=title or alt.finding.title,
        evidence=(over.finding.evidence[0], decided),
        confidence=round(min(MAX, over.finding.confidence + 0.02), 3),
    )
    return Hit(
        finding=finding, decisive=decisive, offset=over.offset, where=over.where, check=alt.check
    )


#: nvidia-smi's header names the driver's CUDA, not a toolkit's
_SMI_HEADER = re.compile(r"Driver Version|NVIDIA-SMI")
_ARCH_VALUE = re.compile(r"(?:sm|compute)_(\d{2,3})")


def _release_verdict(value: str, named: Sequence[Seen]) -> Optional[Tuple[str, Seen, str, str]]:
    """(the reading that ranks first, the line that decided, why, its title) for the unknown
    architecture `value` ("compute_86") beside the releases named; None where they leave the
    rule's order."""
    m = _ARCH_VALUE.fullmatch(value)
    if not m:
        return None
    arch = int(m.group(1))
    releases = [(s, version_key(s.version)[:2]) for s in named]
    knows = [s for s, r in releases if nvcc_compiles_for(r, arch)]
    if knows:
        v = knows[0].version
        return (
            "cuda-lib-mismatch",
            knows[0],
            f"CUDA {v} compiles for {value}: the nvcc or ptxas that ran is another, older one",
            f"The nvcc / ptxas that ran is not CUDA {v}'s, which knows {value}: an older toolkit "
            "comes first (PATH, CUDA_HOME, /usr/bin/nvcc)",
        )
    older = all(
        nvcc_compiles_for(r, arch) is False and arch > max(nvcc_archs(r), default=arch)
        for _, r in releases
    )
    if older:
        # every release named predates the architecture (CUDA 7.5 and compute_60): the toolkit
        # never knew it, so it did not drop it either; the toolkit is older than the GPU, the
        # reading most labelled reports give (round twenty-nine (c))
        v = named[0].version
        return (
            "cuda-lib-mismatch",
            named[0],
            f"CUDA {v} predates {value}: the toolkit is older than the GPU",
            f"CUDA {v} is older than {value}: the toolkit that builds predates this GPU (a newer "
            "CUDA release compiles for it)",
        )
    dropped = all(
        nvcc_compiles_for(r, arch) is False and arch < min(nvcc_archs(r), default=arch + 1)
        for _, r in releases
    )
    if not dropped:
        return None
    v = named[0].version
    return (
        "gpu-arch-unsupported",
        named[0],
        f"CUDA {v} no longer compiles for {value}: the toolkit dropped this GPU's architecture",
        f"CUDA {v} no longer builds for {value}: this GPU needs an older CUDA release",
    )


def toolkit_named(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """nvcc's or ptxas's unknown architecture (the `toolchain_arch` group: "nvcc fatal :
    Unsupported gpu architecture 'compute_86'", "Value 'sm_70' is not defined for option
    'gpu-name'") in a paste that names a CUDA toolkit release (cuda-toolkit-named: nvcc --version,
    "CUDA 11.1", /usr/local/cuda-8.0). The architectures each release compiles for
    (fixer.rules.nvcc_compiles_for, CMake's table) decide: a release named that knows the
    architecture means the nvcc or ptxas that ran is another one (cuda-lib-mismatch first, an
    older toolkit earlier on PATH or CUDA_HOME); every release named having dropped it (the
    architecture below the release's lowest) means the toolkit cannot build for this GPU any
    more (gpu-arch-unsupported first); every release named older than the architecture (CUDA
    7.5 and compute_60) means the toolkit predates the GPU (cuda-lib-mismatch first). A table
    that cannot say, releases that disagree, or no release named: the rule's own order stands.
    Returns the reading that
    takes first place where it was the alternative; marks the line that decided on a first
    reading."""
    named = [
        s
        for s in seen
        if s.kind == "cuda-toolkit-named" and s.version and not _SMI_HEADER.search(s.line)
    ]
    out: List[Hit] = []
    for h in hits:
        verdict = _release_verdict(h.captures.get("toolchain_arch", ""), named) if named else None
        if verdict is None or h.alternative_of is not None:
            continue
        want, line, why, title = verdict
        decided = f"decided by: {line.line} ({why})"
        if h.finding.id == want:
            _with(h, evidence=h.finding.evidence + (decided,))
            continue
        other = _alternative(hits, h, want)
        if other is not None:
            out.append(_promoted(other, h, decided, decisive=h.decisive, title=title))
    return out


def driver_unreached(hits: List[Hit]) -> List[Hit]:
    """A process that the driver answered with no device or as unusable (the `nodevice` group:
    the runtime's cudaErrorNoDevice, "no CUDA-capable device is detected", the driver's
    CUDA_ERROR_NO_DEVICE, torch's "No CUDA GPUs are available"; the `insufficient` group: "CUDA
    driver version is insufficient for CUDA runtime version"; the `compat` group: 803 / 804, "forward
    compatibility was attempted on non supported HW") beside a line that shows the driver itself
    unreachable (the `unreached` group: nvidia-smi's "couldn't communicate with the NVIDIA driver",
    NVML's "Driver/library version mismatch", the kernel module's "NVRM: API mismatch"). CUDA
    defines the no-device error as no CUDA-capable device "detected by the installed CUDA driver",
    and 803 / 804 as a user-space driver out of step with the kernel module's (cuda.h, cited in
    recipes/errors.toml beside the `unreached` patterns): a driver whose kernel module is not
    loaded, or is of another release than its user-space library, detects no device and runs no
    CUDA. So the driver's state is what to fix (driver-missing), decided by that line and ranked
    above the answer's own reading, which stays as its alternative. With no such line the answer's
    readings stand."""
    unreached = [h for h in hits if h.alternative_of is None and "unreached" in h.captures]
    nodevice = [
        h
        for h in hits
        if h.alternative_of is None and {"nodevice", "insufficient", "compat"} & set(h.captures)
    ]
    if not unreached or not nodevice:
        return []
    said = max(unreached, key=lambda h: h.offset)
    answer = max(nodevice, key=lambda h: h.offset)
    top = max(h.finding.confidence for h in unreached + nodevice)
    finding = dataclasses.replace(
        answer.finding,
        id="driver-missing",
        severity="error",
        title=(
            "The NVIDIA driver is installed but not reachable (its kernel module is not loaded, "
            "or is of another release): so CUDA sees no usable device"
        ),
        evidence=(
            answer.finding.evidence[0],
            f"decided by: {said.finding.evidence[0]} (the driver answered that it sees no "
            "device or cannot run CUDA, and this line shows the driver itself unreachable)",
        ),
        fix=(
            "Reboot after a driver install or upgrade (the kernel module and the user-space "
            "driver must be the same release), or reinstall the driver; on WSL, update the "
            "Windows NVIDIA driver and WSL; in a container, start it with --gpus all."
        ),
        confidence=round(min(MAX, top + 0.04), 3),
    )
    return [
        Hit(
            finding=finding,
            decisive=True,
            offset=max(h.offset for h in unreached + nodevice),
            where=said.where,
            check="nvidia-smi; cat /proc/driver/nvidia/version against the user-space driver "
            "(a driver upgraded without a reboot); lsmod | grep nvidia",
        )
    ]


#: evidence that leaves torch's no-driver warning to other decisions: the warning raised as well,
#: or the GPU or the machine shown either way (gpu_named's evidence)
_DECIDES_THE_WARNING = (
    "torch-raised-no-driver",
    "nvidia-gpu",
    "other-gpu",
    "no-nvidia-gpu-said",
    "in-container",
)


def _read_from(h: Hit, lines: Set[str]) -> bool:
    """Every line the reading was read from is one of `lines`: an alternative's one line, or a
    reading's lines up to its notes ("source: ...", "decided by: ...")."""
    own: List[str] = []
    for e in h.finding.evidence[: 1 if h.alternative_of else None]:
        if e.startswith(("source: ", "decided by: ")):
            break
        own.append(e)
    return bool(own) and all(e in lines for e in own)


def torch_went_on(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """torch's "Found no NVIDIA driver" only as device_count()'s warning ("CUDA initialization:
    ...", the torch-warned-no-driver evidence; never raised: no torch-raised-no-driver line), and
    no other failure in the paste: every reading that is not harmless was read from a line of that
    warning. torch turned the failed count into a warning and 0 devices and the program went on
    (on the CPU): the lines are harmless (log-noise, decided by the warning's line), and the
    warning's own readings (no GPU, no driver) stay as its alternatives, for a program that was
    meant to use a GPU. A failure read from any other line (an exception, "CUDA available: False",
    nvidia-smi's error) leaves the readings as they are, and so does a paste that shows the GPU or
    the machine either way (a GPU named, a sentence, a container: gpu_named decides those). Returns
    the hits, changed or not."""
    warned = {s.line for s in seen if s.kind == "torch-warned-no-driver"}
    if not warned or any(s.kind in _DECIDES_THE_WARNING for s in seen):
        return hits
    failures = [h for h in hits if not h.benign and h.finding.id != "log-noise"]
    if not failures or any(not _read_from(h, warned) for h in failures):
        return hits
    last = max(failures, key=lambda h: h.offset)
    noise = Hit(
        finding=dataclasses.replace(
            last.finding,
            id="log-noise",
            severity="info",
            title=(
                "torch warned that it found no NVIDIA driver and went on without CUDA (on the "
                "CPU): harmless where no GPU is meant to be used"
            ),
            evidence=(
                last.finding.evidence[0],
                f"decided by: {last.finding.evidence[0]} (torch's warning, \"CUDA initialization: "
                '...": torch counts 0 CUDA devices and goes on; the paste shows no other failure)',
            ),
            fix=(
                "Nothing to fix if the program is meant to run on the CPU (a CPU-only torch build "
                "does not print this). If a GPU was meant to be used, see the next reading."
            ),
            confidence=round(min(MAX, max(h.finding.confidence for h in failures) + 0.04), 3),
        ),
        decisive=True,
        offset=last.offset,
        where=last.where,
        check="python -c 'import torch; print(torch.cuda.is_available())' where the GPU is meant "
        "to be used; nvidia-smi",
        benign=True,
    )
    warned_ids = {id(h) for h in failures}
    return [noise] + [displaced(h, "log-noise") if id(h) in warned_ids else h for h in hits]


#: driver-missing's title and reason when the paste shows a container and names no GPU
_IN_CONTAINER = (
    "In a container, no NVIDIA driver reached the process: the container was started without "
    "the GPU (--gpus all / the NVIDIA runtime)",
    "the paste runs in a container, and the NVIDIA container toolkit gives a container the "
    "driver's libraries and the GPU's device nodes only when it is started with GPU access",
    "Start the container with the GPU: docker run --gpus all (or --runtime=nvidia with "
    "NVIDIA_VISIBLE_DEVICES=all); Docker Compose: a device reservation with capabilities [gpu]; "
    "Kubernetes: a limit of nvidia.com/gpu. The host needs the NVIDIA driver and the NVIDIA "
    "Container Toolkit.",
    "nvidia-smi on the host, then docker run --rm --gpus all IMAGE nvidia-smi",
)


#: gpu-missing's title and reason when a sentence of the paste, not a device, decided it
_SAID = (
    "No NVIDIA GPU in this machine: the paste says so beside the message that no (new enough) "
    "driver answered",
    "the paste says the machine has no NVIDIA GPU (or runs on the CPU, or is a Mac): with no GPU "
    "there is no driver to answer",
)


#: gpu-missing's title, and what it adds to the reason, when the no-GPU evidence decided a reading
#: of a CPU-only build
_NO_GPU_FOR_BUILD = (
    "No NVIDIA GPU in this machine: a CUDA build of the framework would not find one either",
    "a build without CUDA is the cause only where an NVIDIA GPU is there to use",
)


def _cudart_unshown(said: Hit, nvidia: Optional[Seen]) -> List[Hit]:
    """The stub's line without the dlerror (XLA's DSO loader logs it only at VLOG(1)): beside an
    NVIDIA GPU the missing CUDA runtime is the cause; else the line's own readings stand."""
    if nvidia is None:
        return []
    finding = dataclasses.replace(
        said.finding,
        id="cuda-lib-missing",
        severity="error",
        title="The CUDA runtime (cudart) did not load, and the paste shows an NVIDIA GPU: "
        "TensorFlow/XLA runs without it",
        evidence=(
            said.finding.evidence[0],
            f"decided by: {nvidia.line} (an NVIDIA GPU is there: the build needs its CUDA runtime)",
        ),
        fix="Install the CUDA runtime this build needs where the loader finds it (TensorFlow >= "
        "2.15: pip install 'tensorflow[and-cuda]'; JAX: the jax[cuda12] / jax[cuda13] extra).",
        confidence=0.85,
    )
    check = "pip list | grep nvidia-cuda-runtime; python -c 'import tensorflow as tf; print(tf.sysconfig.get_build_info())'"
    return [Hit(finding=finding, decisive=True, offset=said.offset, where=said.where, check=check)]


def cudart_ignored(hits: List[Hit], seen: Sequence[Seen]) -> List[Hit]:
    """TensorFlow's "Ignore above cudart dlerror if you do not have a GPU set up" (the
    `cudart_ignored` group) follows the DSO loader's dlerror of the CUDA runtime, the last
    missing-library reading before it. An NVIDIA GPU the paste shows decides for that missing
    runtime; a failure after the line is the cause (TensorFlow went on past the dlerror), and the
    runtime drops below it; with neither, the missing runtime keeps its rank and says what
    decides. Changes the hits in place; adds a reading only where the paste shows the stub's line
    without the dlerror (_cudart_unshown)."""
    said = [h for h in hits if "cudart_ignored" in h.captures]
    if not said:
        return []
    at = said[-1].offset
    before = [
        h
        for h in hits
        if h.finding.id == "cuda-lib-missing" and h.alternative_of is None and h.offset < at
    ]
    nvidia = next((s for s in seen if s.kind == "nvidia-gpu"), None)
    absent = next((s for s in seen if s.kind in _NO_NVIDIA_GPU), None)
    if not before:
        return _cudart_unshown(said[-1], nvidia)
    cudart = max(before, key=lambda h: h.offset)
    later = [
        h.finding.confidence
        for h in hits
        if h.offset > at
        and not h.benign
        and h.alternative_of is None
        and h.finding.id != "log-noise"
    ]
    if nvidia is not None:
        _with(
            cudart,
            evidence=cudart.finding.evidence
            + (
                f"decided by: {nvidia.line} (an NVIDIA GPU is there: TensorFlow needs this runtime)",
            ),
            confidence=round(min(MAX, cudart.finding.confidence + 0.02), 3),
        )
    elif later:
        _with(
            cudart,
            evidence=cudart.finding.evidence
            + ("TensorFlow went on past this dlerror; the failure after it ranks first",),
            confidence=round(max(0.05, min(cudart.finding.confidence, max(later) - 0.05)), 3),
        )
        cudart.decisive = False
    elif absent is not None:
        _no_gpu_for_cudart(said[-1], before, cudart, absent)
    else:
        _with(
            cudart,
            evidence=cudart.finding.evidence
            + (
                "TensorFlow's next line says to ignore it without a GPU; the paste shows no "
                "NVIDIA GPU: nvidia-smi or lspci | grep -i nvidia decides",
            ),
        )
        cudart.check = said[-1].check
    return []


def _no_gpu_for_cudart(stub: Hit, before: List[Hit], cudart: Hit, absent: Seen) -> None:
    """The machine has no NVIDIA GPU (round thirty): the condition of TensorFlow's own line holds,
    so its harmless reading (`stub`) takes the place of every CUDA library TensorFlow could not
    load before it (`before`, kept as its alternatives; changed in place)."""
    _with(
        stub,
        evidence=stub.finding.evidence
        + (
            f"decided by: {absent.line} (no NVIDIA GPU: TensorFlow runs on the CPU, and its "
            "next line says to ignore the dlerror then)",
        ),
        confidence=round(max(stub.finding.confidence, cudart.finding.confidence), 3),
    )
    stub.decisive = True
    stub.benign = True
    for h in before:
        moved = displaced(h, "log-noise")
        h.finding, h.decisive, h.alternative_of = (
            moved.finding,
            moved.decisive,
            moved.alternative_of,
        )


def _is_failure(line: str) -> bool:
    return bool(_FAILURE.search(line))


def apply_evidence(
    hits: List[Hit],
    seen: Sequence[Seen],
    majors: Optional[CudnnMajors] = None,
    floor: Optional[DriverFloor] = None,
    frameworks: Sequence[str] = (),
    cudas: Optional[CudaMajors] = None,
    runs: Optional[DriverRuns] = None,
) -> List[Hit]:
    """The hits, with the decisions the paste's own evidence makes (see the module's doc);
    `majors` gives a framework release's cuDNN majors from the build tables, `floor` a CUDA
    major's lowest driver from NVIDIA's table, `cudas` a framework release's CUDA majors, `runs`
    whether a driver runs a build of a CUDA release (NVIDIA's table)."""
    extra = _major_mismatch(hits, seen, majors) + _sub_library(hits, seen)
    extra += copies.part_absent(hits, seen)
    extra += _caller_ships_cudnn(hits, seen, frameworks)
    extra += _driver_reached(hits, seen, floor, cudas)
    extra += _driver_short(hits, seen, floor, runs)
    extra += gpu_named(hits, seen)
    extra += unavailable_beside_gpu(hits, seen)
    extra += toolkit_named(hits, seen)
    extra += driver_unreached(hits)
    extra += cudart_ignored(hits, seen)
    extra += copies.shadowed(hits, seen)
    extra += copies.framework_copy(hits + extra, seen)
    extra += copies.own_copy_mixed(hits + extra, seen)
    extra += copies.conflict(hits + extra, seen, frameworks, majors, _is_failure)
    _needs(hits, seen)
    return torch_went_on(hits + extra, seen)
