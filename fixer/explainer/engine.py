"""Matching, ranking and combining with the machine.

Every rule gives a base confidence; context raises or lowers it (`requires`, `excludes`,
`supports`, machine facts); captured versions are judged by fixer.rules (a pair that is
compatible is said to be benign, not a cause); loader errors are read structurally
(fixer.explainer.loader); ambiguous texts come with ranked alternatives, each with the check that
decides; with an Environment, diagnose's findings re-rank them. A harmless line never outranks a
real cause, and when several errors appear the last one (errors come last in logs) wins a tie.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import string
from typing import AbstractSet, Dict, List, Optional, Sequence, Set, Tuple, Union

from fixer.diagnosis.findings import diagnose, ordered
from fixer.system.versions import version_key
from fixer.model import (
    FINDING_IDS,
    Build,
    Environment,
    Finding,
    LibraryCopy,
    Recipes,
    RuntimeView,
)
from fixer.recipebook import load as load_recipes
from fixer.rules import (
    cudnn_relation,
    decode_cudnn_version,
    display_name,
    driver_runs_build,
    minor_version_floor,
)
from fixer.explainer.catalogue import FACTS, Catalogue, Rule, cudnn_copies, load_catalogue
from fixer.explainer.evidence import apply_evidence, read_evidence
from fixer.explainer.hits import MAX, Hit, displaced
from fixer.explainer.scan import AnchorIndex, ascii_quotes, join_wrapped, unmarked
from fixer.explainer import similar
from fixer.explainer.similar import Model as SimilarModel
from fixer.explainer.loader import (
    Library,
    LoadFailure,
    family_by_name,
    parse_library,
    find_failures,
    join_split_names,
    finding_of,
    keeps_its_line,
    line_at as _line_at,
)

#: frameworks as a text names them (imports, paths, package names)
_FRAMEWORK_WORDS = {
    "torch": r"\bimport torch|\btorch\w*[/\\.]|\bPyTorch\b|\btorch\w*\b",
    # not jaxlib's own log paths: its XLA was built inside TensorFlow's tree (external/org_tensorflow/
    # tensorflow/stream_executor/..., jaxlib 0.1.x)
    "tensorflow": r"\bimport tensorflow\b|(?<!org_tensorflow/)\btensorflow[/\\.]|\bTensorFlow\b|(?<!org_tensorflow/)\btensorflow\b",
    # pip's names count too: "jax[cuda12]", "jax==0.4.30", "paddlepaddle-gpu"
    "jax": r"\bimport jax\b|\bjax[/\\.]|\bjaxlib\b|\bJAX\b|\bjax(?:\[[\w,\-]{1,40}\])?(?:[=<>~]=| \d)|\bjax\[",
    "paddle": r"\bpaddle\b|\bPaddle\b|(?i:\bpaddlepaddle\b)",
    "onnxruntime": r"\bonnxruntime\b",
    "ctranslate2": r"\bctranslate2\b|\bfaster_whisper\b|\bfaster-whisper\b",
}
_WINDOWS_TEXT = re.compile(
    r"\.dll\b|\[WinError \d+\]|\bDLL load failed\b|LoadLibrary failed|[A-Za-z]:\\\\?[\w ]+\\", re.I
)
#: Colab named, or its paths (/content/ is its working directory). Not the packages directory
#: /usr/local/lib/python3.X/dist-packages: every Debian or Ubuntu Python installs pip's packages
#: there when pip runs as root (Debian's Python policy, "site-packages and dist-packages"; Docker
#: images built from ubuntu or nvidia/cuda do), so it names no Colab runtime (round thirty).
_COLAB_TEXT = re.compile(r"/content/|google\.colab|\bcolab\b", re.I)
_LOADER_CONFIDENCE = {
    "missing": 0.9,
    "symbol": 0.88,
    "version": 0.88,
    "damaged": 0.86,
    "wrapper": 0.8,
}


@dataclasses.dataclass(frozen=True)
class Explanation:
    """What explain found: ranked findings (causes first, then alternatives), whether the TEXT
    was recognised (machine-only findings do not count), the check that decides each finding,
    and notes on what was combined or skipped."""

    findings: Tuple[Finding, ...]
    recognised: bool
    rules: Tuple[str, ...] = ()  # where the rules that fired live, "errors.toml:42"
    notes: Tuple[str, ...] = ()
    checks: Tuple[Tuple[str, str], ...] = ()  # (finding id, the one check that decides it)
    benign: bool = False  # only harmless lines were recognised
    ambiguous: bool = False  # the top cause has a close alternative
    windows: bool = False  # a Windows text (the tool works on Linux)
    frameworks: Tuple[str, ...] = ()  # frameworks the text (or the machine) shows
    colab_no_gpu: bool = False  # a Colab runtime without a GPU (exit 3)

    def check_for(self, finding_id: str) -> str:
        return next((c for i, c in self.checks if i == finding_id), "")


class _Format(Dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "?"


def _fmt(template: str, captures: Dict[str, str]) -> str:
    return string.Formatter().vformat(template, (), _Format(captures))


def _norm(raw: str) -> Optional[str]:
    return decode_cudnn_version(re.sub(r"\s+", "", raw)) if raw else None


# ---------------------------------------------------------------------------------------
# the rules
# ---------------------------------------------------------------------------------------


def _version_outcome(
    rule: Rule, captures: Dict[str, str], cat: Catalogue
) -> Tuple[Optional[str], str]:
    """(finding id, title) that the captured versions decide, or (None, "") to keep the rule.
    "benign" only for a message printed whatever the pair (compatible_is_benign) when the pair
    is compatible: a check that the framework printed as failed is never benign."""
    assert rule.versions is not None
    raw_lo, raw_bu = captures.get(rule.versions[0], ""), captures.get(rule.versions[1], "")
    if captures.get("min"):
        raw_bu = captures["min"] if rule.library else raw_bu
    fam = (
        family_by_name(captures.get(rule.library or "", ""), cat.families) if rule.library else None
    )
    if fam is not None and fam.role != "cudnn":
        # another CUDA library: the same function gives both integers, so their order decides
        lo_n, bu_n = version_key(raw_lo), version_key(raw_bu)
        if not lo_n or not bu_n:
            return None, ""
        captures["loaded"], captures["built"] = raw_lo, raw_bu
        if lo_n < bu_n or not rule.compatible_is_benign:
            return None, ""
        return "benign", f"{fam.name} {raw_lo} is not older than the {raw_bu} JAX needs"
    if rule.loaded_form == "thousands":
        raw_lo = _from_thousands(raw_lo)
    lo, bu = _norm(raw_lo), _norm(raw_bu)
    if not lo or not bu:
        return None, ""
    captures["loaded"], captures["built"] = lo, bu
    floor = _norm(captures.get("min", ""))
    if floor and cudnn_relation(lo, floor) == "other-major":
        # JAX's check is `min_supported_version <= version` (jax_plugins/cuda/__init__.py
        # _version_check): the pair that failed is (installed, minimum), not (installed, build)
        captures["built"] = floor
        return "cudnn-major-mismatch", (
            f"The cuDNN installed ({lo}) has another major version than the minimum JAX "
            f"supports ({floor}; built against {bu})"
        )
    return _cudnn_outcome(rule, lo, bu)


def _from_thousands(raw: str) -> str:
    """cudnnGetVersion() // 1000 "." cudnnGetVersion() % 1000 // 100 back to an integer the
    decoder reads: "90.1" (cuDNN 9.1's 90100 read with cuDNN 8's formula) -> "90100", "8.9" ->
    "8900"; the patch level the form drops is 0. Anything else is returned as it came."""
    m = re.fullmatch(r"(\d{1,3})\.(\d)", raw.strip())
    return str(int(m.group(1)) * 1000 + int(m.group(2)) * 100) if m else raw


#: A framework check that wants its build's own cuDNN release failed on a *newer* one: torch 0.3's
#: `(__cudnn_version // 100) != (compile_version // 100)` (pytorch/pytorch
#: torch/backends/cudnn/__init__.py @release:v0.3.0, "cuDNN version mismatch: PyTorch was compiled
#: against {} but linked against {}"), TensorFlow 1.x's compatibility version (major.minor before
#: cuDNN 7.1's rule), the cuDNN < 7 rule of the same minor. The loaded copy is not too old; it is
#: another one than the build's, found first (the read sets' reports of it: 3 of 3 another copy)
_NEWER_COPY = (
    "The framework's own check refused cuDNN {lo}, newer than its build's {bu}: the check wants the "
    "build's own release, so the copy that loaded is another one than the build's, found first on "
    "the search path (LD_LIBRARY_PATH, a system or another environment's copy)"
)


def _cudnn_outcome(rule: Rule, lo: str, bu: str) -> Tuple[Optional[str], str]:
    rel = cudnn_relation(lo, bu)
    if rel == "ok" and rule.compatible_is_benign:
        return "benign", (
            f"cuDNN {lo} satisfies a build against {bu} (same major, minor not older): "
            "this pair is fine, the cause lies elsewhere"
        )
    if (
        rel in ("ok", "other-minor")
        and rule.id == "cudnn-too-old"
        and (version_key(lo) > version_key(bu))
    ):
        return "cudnn-shadowed", _NEWER_COPY.format(lo=lo, bu=bu)
    if rel == "ok":
        return None, (
            f"The framework's own check failed for cuDNN {lo} against its build's {bu}: its check "
            "is stricter than the major/minor rule (a failed check is never harmless)"
        )
    if rel == "other-major":
        return "cudnn-major-mismatch", (
            f"The cuDNN that loaded ({lo}) has another major version than the {bu} "
            "the framework was built with"
        )
    if rel == "other-minor":
        return None, (
            f"The cuDNN that loaded ({lo}) is not the minor the framework was built with ({bu}): "
            "before cuDNN 7 the minor had to match"
        )
    return None, ""


def _applies(rule: Rule, text: str, env: Optional[Environment]) -> bool:
    if any(p.search(text) for p in rule.excludes):
        return False
    if not all(p.search(text) for p in rule.requires):
        return False
    return not (rule.frameworks and len(frameworks_in(text, env)) < rule.frameworks)


def _captures(matches: Sequence["re.Match[str]"]) -> Dict[str, str]:
    captures: Dict[str, str] = {}
    for m in reversed(matches):  # the last occurrence's values: errors come last
        for k, v in m.groupdict().items():
            if v is not None and k not in captures:
                captures[k] = v
    return captures


def _distinct_dirs(rule: Rule, matches: Sequence["re.Match[str]"]) -> List[str]:
    paths: List[str] = []
    for m in matches:
        p = m.groupdict().get(rule.distinct_dirs or "")
        if p and p not in paths:
            paths.append(p)
    return sorted({os.path.dirname(p) for p in paths})


def _env_confidence(rule: Rule, conf: float, env: Optional[Environment]) -> float:
    if env is None or not rule.when_env:
        return conf
    values = []
    for f in rule.when_env:
        v = FACTS[f.lstrip("!")](env)
        values.append(None if v is None else (not v if f.startswith("!") else v))
    if any(v is False for v in values):
        return conf * 0.5
    if all(v is True for v in values):
        return conf + 0.25
    return conf


def _evidence_lines(text: str, matches: Sequence["re.Match[str]"]) -> List[str]:
    evidence: List[str] = []
    for m in reversed(matches):
        line = _line_at(text, m.start())
        if line not in evidence:
            evidence.append(line)
        if len(evidence) >= 3:
            break
    return evidence


_BENIGN_FIX = (
    "Nothing to fix here: this line is benign. The cause of a failure lies in another message; "
    "paste the error (the last E/F line or the Traceback) to explain it."
)


def _match_rule(rule: Rule, text: str, env: Optional[Environment], cat: Catalogue) -> List[Hit]:
    if all(p.absent_from(text) for p in rule.patterns) or not _applies(rule, text, env):
        return []
    matches = sorted((m for p in rule.patterns for m in p.finditer(text)), key=lambda m: m.start())
    if not matches:
        return []
    captures = _captures(matches)
    rid, benign, title_override = rule.id, rule.benign, ""
    if rule.distinct_dirs:
        dirs = _distinct_dirs(rule, matches)
        if len(dirs) < 2:
            return []
        captures["dirs"] = ", ".join(dirs)
    if rule.versions:
        outcome, title_override = _version_outcome(rule, captures, cat)
        if outcome == "benign":
            rid, benign = "log-noise", True
        elif outcome:
            rid = outcome
    conf = rule.base + 0.1 * sum(1 for p in rule.supports if p.search(text))
    conf = _env_confidence(rule, conf, env)
    fix = _fmt(rule.fix, captures)
    if benign:
        conf = min(conf, 0.9)
        fix = _BENIGN_FIX if rule.versions else fix
    evidence = _evidence_lines(text, matches)
    finding = Finding(
        id=rid,  # type: ignore[arg-type]
        severity="info" if benign else rule.severity,  # type: ignore[arg-type]
        title=title_override or _fmt(rule.title, captures),
        evidence=tuple(evidence) + tuple(f"source: {s}" for s in rule.cites[:1]),
        fix=fix,
        confidence=round(min(MAX, conf), 3),
    )
    offset = matches[-1].start()
    hit = Hit(
        finding=finding,
        decisive=rule.decisive,
        offset=offset,
        where=rule.where,
        check=rule.check,
        benign=benign,
        captures=captures,
        absent=any(a.id == "gpu-missing" for a in rule.alternatives),
        needs=rule.needs_evidence,
        alt_best=max((a.confidence for a in rule.alternatives), default=0.0),
    )
    alternatives = _alternative_hits(rule, evidence[:1], offset) if rid == rule.id else []
    if rid == "cudnn-too-old" and rule.versions and len(frameworks_in(text, None)) >= 2:
        return _in_two_frameworks(hit, text) + alternatives
    if rid != rule.id or benign:
        return [hit]
    return [hit] + alternatives


#: where a loaded soname is reused by every later dlopen in the process (the first copy wins)
_FIRST_COPY_WINS = (
    "https://man7.org/linux/man-pages/man8/ld.so.8.html @release:man-pages-6.9 (a soname already "
    "loaded in the process is reused: the first copy of libcudnn.so.N wins for every later user)"
)


def _in_two_frameworks(hit: Hit, text: str) -> List[Hit]:
    """A framework's own check found its cuDNN older than its build. Each GPU framework brings
    or pins its own cuDNN, and in one process the copy loaded first serves every later user
    (ld.so reuses a loaded soname): with two GPU frameworks named in the paste (imports, tracebacks,
    messages) the older copy is most often the other framework's, so the reading is
    cudnn-conflict, with the plain older copy kept as the alternative (the caller keeps the
    reading cudnn-too-old with one framework)."""
    fws = frameworks_in(text, None)
    f = hit.finding
    conflict = dataclasses.replace(
        hit,
        finding=dataclasses.replace(
            f,
            id="cudnn-conflict",
            title=f"{f.title}, with {' and '.join(fws)} in one process: the cuDNN the other "
            "framework loaded first is the one this check found",
            evidence=f.evidence
            + (f"decided by: the paste names {', '.join(fws)}", f"source: {_FIRST_COPY_WINS}"),
            fix=_FIX["cudnn-conflict"],
        ),
        check="import each framework alone in a fresh process and print its cuDNN version "
        "(torch.backends.cudnn.version(); jax: the version in this message): the older copy "
        "belongs to the framework imported first",
    )
    return [conflict, displaced(hit, "cudnn-conflict")]


def _alternative_hits(rule: Rule, first: Sequence[str], offset: int) -> List[Hit]:
    return [
        Hit(
            finding=Finding(
                id=a.id,  # type: ignore[arg-type]
                severity="error",
                title=a.title,
                evidence=tuple(first) + (f"an alternative reading of this message ({rule.where})",),
                fix=_FIX.get(a.id, ""),
                confidence=round(min(MAX, a.confidence), 3),
            ),
            decisive=False,
            offset=offset,
            where=rule.where,
            check=a.check,
            alternative_of=rule.id,
        )
        for a in rule.alternatives
    ]


def _plugin_hits(f: LoadFailure) -> List[Hit]:
    """A framework's CUDA plug-in failed to load and the text does not say which dependency:
    LoadLibrary error 126 / dlopen of the plug-in fails for a missing cuDNN or CUDA library."""
    plugin = f.library
    assert plugin is not None
    check = _plugin_check(plugin.name)
    return [
        Hit(
            finding=Finding(
                id="cudnn-missing",
                severity="error",
                title=f"{plugin.name} (a framework's CUDA plug-in) could not be loaded: a library it depends on, most often cuDNN, is missing",
                evidence=(f.line,) + tuple(f"source: {c}" for c in f.cites[:1]),
                fix=_FIX["cudnn-missing"],
                confidence=0.6,
            ),
            decisive=False,
            offset=f.offset,
            where=f.where,
            check=check,
        ),
        Hit(
            finding=Finding(
                id="cuda-lib-missing",
                severity="error",
                title=f"{plugin.name} could not be loaded: a CUDA library it depends on (cuBLAS, cudart, cuFFT) is missing",
                evidence=(f.line, f"an alternative reading of this message ({f.where})"),
                fix=_FIX["cuda-lib-missing"],
                confidence=0.5,
            ),
            decisive=False,
            offset=f.offset,
            where=f.where,
            check=check,
            alternative_of="cudnn-missing",
        ),
    ]


def _plugin_check(name: str) -> str:
    """The check that decides between a missing cuDNN and a missing CUDA library under a plug-in
    that failed to load. Linux: ldd names each unresolved dependency. Windows: LoadLibrary's error
    126 (ERROR_MOD_NOT_FOUND) names none; a dependent DLL is searched in the plug-in's folder,
    the system folders, then PATH (Microsoft's "Dynamic-link library search order"), so `where`
    on PATH shows which family's DLLs are not there."""
    if not name.lower().endswith(".dll"):
        return f"ldd {name} | grep 'not found': the unresolved library is the missing one"
    return (
        "where cudnn64_*.dll, then where cublasLt64_*.dll cudart64_*.dll cufft64_*.dll: the "
        f"DLLs {name} imports are searched on PATH; a cuDNN DLL not found is cudnn-missing, a "
        "CUDA one cuda-lib-missing"
    )


def _loader_title(f: LoadFailure, fid: str) -> Tuple[str, str]:
    """(title, check) of a failed load."""
    lib = f.library
    check = _LOADER_CHECK.get(fid, "")
    if fid == "system-runtime-too-old" and f.provider is not None:
        rt = f.provider
        needer = f.needer.describe() if f.needer else "a library"
        need = f.node or (f"{f.symbol}'s version" if f.symbol else "a newer version")
        have = f" ({lib.text})" if lib is not None and lib.family is rt else ""
        return (
            f"{needer} needs {need} from {rt.name}, which this system's {rt.name}{have} does not "
            f"define: the system's C/C++ runtime ({rt.name}) is older than the one the library was built "
            "for (not a cuDNN or CUDA mismatch)"
        ), rt.check or check
    if f.kind in ("symbol", "version"):
        needer = f.needer.describe() if f.needer else "a library"
        prov = f.provider.name if f.provider else "its provider"
        why = {
            "cudnn-mixed": "two cuDNN releases are mixed",
            "cudnn-major-mismatch": "an entry a later cuDNN major removed, so the copy loaded is "
            "another major than the build's",
        }.get(fid, "an older copy was loaded")
        if f.needer is None and f.symbol is None and lib is not None:
            # a Windows error number (127): the DLL and its imports were found, and one lacks
            # a procedure another imports
            needer = f"{lib.describe()} or a DLL it imports"
        code = f" ({f.detail})" if f.detail else ""
        return (
            f"{needer} needs {f.symbol or 'a symbol'} from {prov}, which the loaded {prov} "
            f"lacks{code}: {why}"
        ), check
    what = {
        "missing": "cannot be found by the dynamic loader",
        "wrapper": "could not be loaded",
        "damaged": f"is damaged or of the wrong kind ({f.detail})" if f.detail else "is damaged",
        "symbol": "lacks a symbol",
        "version": "lacks a symbol version",
    }[f.kind]
    return f"{lib.describe() if lib else 'A library'} {what}", check


def _loader_hit(f: LoadFailure, fid: str) -> Hit:
    lib = f.library
    conf = _LOADER_CONFIDENCE[f.kind] - (0.1 if f.inner else 0.0)  # an inner dlerror is read too
    title, check = _loader_title(f, fid)
    ev = [f.line]
    if lib is not None and lib.windows:
        ev.append(
            "a Windows library name: colab-cudnn-fix repairs Linux machines (Colab, Kaggle, WSL, "
            "containers); on Windows put the DLL's directory on PATH"
        )
    captures = _cudnn_captures(lib)
    return Hit(
        finding=Finding(
            id=fid,  # type: ignore[arg-type]
            severity="error",
            title=title,
            evidence=tuple(ev) + tuple(f"source: {c}" for c in f.cites[:1]),
            fix=_FIX.get(fid, ""),
            confidence=round(conf, 3),
        ),
        decisive=not f.inner,
        offset=f.offset,
        where=f.where,
        check=check,
        absent=f.kind in ("missing", "wrapper"),
        captures=captures,
    )


def _how_it_failed(read: Sequence[Tuple[LoadFailure, Optional[str]]]) -> Dict[Tuple[str, str], str]:
    """For each (line, library file) whose load a wording reads by HOW it failed (not a
    wrapper's "could not load": a Windows error number, dlerror's reason), that reading."""
    return {
        (f.line, f.library.name): fid
        for f, fid in read
        if fid is not None and f.kind != "wrapper" and f.library is not None
    }


def _loader_hits(text: str, cat: Catalogue) -> List[Hit]:
    hits: List[Hit] = []
    read = [(f, finding_of(f)) for f in find_failures(text, cat)]
    how = _how_it_failed(read)
    for f, fid in read:
        lib = f.library
        if f.kind == "wrapper" and lib is not None and how.get((f.line, lib.name), fid) != fid:
            continue  # one load: the wording that says how it failed reads it, not the wrapper
        if fid is None and f.kind == "wrapper" and not f.inner and lib and lib.role == "framework":
            hits.extend(_plugin_hits(f))
        elif fid is not None:
            hits.append(_loader_hit(f, fid))
    return hits


_FIX = {
    "cudnn-missing": (
        "Install the cuDNN this build needs (for pip builds: the nvidia-cudnn-cuXX wheel of the right major) "
        "and make its lib directory findable (the framework's own wheel path, or LD_LIBRARY_PATH). "
        "`colab-cudnn-fix apply` does both."
    ),
    "cuda-lib-missing": (
        "Install the CUDA runtime wheels the framework needs (nvidia-cuda-nvrtc-cuXX, nvidia-cublas-cuXX, "
        "nvidia-cuda-runtime-cuXX, ...) of its CUDA major, or the matching CUDA toolkit libraries, and "
        "make them findable."
    ),
    "cudnn-mixed": (
        "Load every cuDNN library from one copy: remove the other copy's directory from LD_LIBRARY_PATH / "
        "LD_PRELOAD / ld.so.conf, or reinstall the nvidia-cudnn wheel whole. `colab-cudnn-fix doctor` names "
        "both copies."
    ),
    "cudnn-too-old": (
        "Make the framework load a cuDNN at least as new as its build (the nvidia-cudnn wheel it requires) "
        "and drop older copies from LD_LIBRARY_PATH."
    ),
    "cuda-lib-mismatch": (
        "Another CUDA installation's library wins the search: remove the older CUDA toolkit (or conda) "
        "directory from LD_LIBRARY_PATH, or put the framework's own nvidia/*/lib directories first; within "
        "a CUDA major only a library at least as new as the build works. `colab-cudnn-fix doctor` names the "
        "copy that loads and `apply` writes the fix."
    ),
    "system-runtime-too-old": (
        "The library was built for a newer glibc / libstdc++ / libgcc than this system has: use a "
        "newer base image or OS (e.g. Ubuntu 22.04+ for GLIBC_2.35), or install a framework / "
        "library build made for an older glibc (a wheel whose manylinux tag, manylinux_2_X, is at "
        "most this system's glibc). For GLIBCXX_/CXXABI_/GCC_, a newer libstdc++ / libgcc "
        "(conda install -c conda-forge libstdcxx-ng, or the OS's) found before the old one also works."
    ),
    "cudnn-incomplete": "Reinstall the cuDNN copy whole (pip install --force-reinstall the nvidia-cudnn wheel).",
    "driver-missing": (
        "Install (or load) the NVIDIA driver; in a container, start it with the GPU exposed (--gpus all). "
        "On Colab: Runtime → Change runtime type → a GPU."
    ),
    "driver-too-old": "Update the NVIDIA driver, or install a framework build for an older CUDA that this driver supports.",
    "gpu-missing": (
        "Pick a GPU runtime (Colab: Runtime → Change runtime type → a GPU), and unset CUDA_VISIBLE_DEVICES or "
        "set it to an existing GPU index."
    ),
    "cpu-only-build": "Install the CUDA build of the framework (the cuXXX wheel for this driver); `colab-cudnn-fix plan` names it.",
    "out-of-memory": "Free GPU memory (other processes, earlier models), lower the batch size, or let the framework grow its memory.",
    "cudnn-shadowed": (
        "Remove the other cuDNN directory from LD_LIBRARY_PATH / LD_PRELOAD (or import the framework whose "
        "cuDNN is newest first); `colab-cudnn-fix apply` writes the loader fix."
    ),
    "gpu-arch-unsupported": "Install a build that ships kernels for this GPU; `colab-cudnn-fix plan` picks one.",
    "cudnn-conflict": "Give all frameworks one cuDNN at least as new as every build, or run them in separate processes.",
}
_LOADER_CHECK = {
    "cudnn-missing": "`colab-cudnn-fix doctor`: the cuDNN copies on disk and the directories the loader searches",
    "cuda-lib-missing": "pip list | grep nvidia- and `colab-cudnn-fix doctor`: the CUDA library copies",
    "cudnn-mixed": "LD_DEBUG=libs python ... 2>&1 | grep libcudnn: the libcudnn* files come from two directories",
    "cuda-lib-mismatch": "LD_DEBUG=libs: the directory the named library loads from (an older CUDA toolkit on LD_LIBRARY_PATH)",
    "driver-missing": "nvidia-smi",
}


# ---------------------------------------------------------------------------------------
# ranking
# ---------------------------------------------------------------------------------------


def rank(hits: List[Hit]) -> List[Hit]:
    """Best hit per finding id; by confidence, then decisive, then LATER in the text (errors
    come last in logs). A harmless line never outranks a real cause; an alternative never
    outranks a direct reading of the same id."""
    best: Dict[str, Hit] = {}
    for h in hits:
        cur = best.get(h.finding.id)
        key = (h.alternative_of is None, h.finding.confidence, h.decisive, h.offset)
        if cur is None or key > (
            cur.alternative_of is None,
            cur.finding.confidence,
            cur.decisive,
            cur.offset,
        ):
            best[h.finding.id] = h
    ranked = list(best.values())
    # A message that names its cause (decisive, sure) makes the generic failures around it its
    # symptoms ("Failed to get convolution algorithm ... see if a warning log message was
    # printed above"): ambiguous readings and their alternatives drop to half.
    if any(h.decisive and not h.benign and h.finding.confidence >= 0.85 for h in ranked):
        for h in ranked:
            if not h.decisive and not h.benign:
                h.finding = dataclasses.replace(
                    h.finding, confidence=round(h.finding.confidence * 0.5, 3)
                )
    # (an alternative of a harmless reading, "if there is a GPU, this library is missing", is not
    # a failure the text reports)
    if any(
        not h.benign and h.finding.id != "log-noise" and h.alternative_of != "log-noise"
        for h in ranked
    ):
        for h in ranked:
            if h.benign or h.finding.id == "log-noise":
                h.finding = dataclasses.replace(
                    h.finding, confidence=round(h.finding.confidence * 0.3, 3)
                )
    ranked.sort(key=lambda h: (-h.finding.confidence, not h.decisive, -h.offset))
    return ranked


# ---------------------------------------------------------------------------------------
# combining with the detected machine
# ---------------------------------------------------------------------------------------


def _describe(c: LibraryCopy) -> str:
    pkg = f", {c.package}" if c.package else ""
    return f"{c.origin} cuDNN {c.version or '?'} in {c.directory}{pkg}"


def _with_environment(hits: List[Hit], env: Environment) -> List[Hit]:
    """Name the exact copies behind a version finding; add (or confirm) cudnn-shadowed when a
    copy that would satisfy the build exists on disk but lost to the older one; drop the
    shadowing reading when the machine has no such copy."""
    extra: List[Hit] = []
    drop: List[Hit] = []
    copies = cudnn_copies(env)
    for h in hits:
        f = h.finding
        if f.id not in ("cudnn-too-old", "cudnn-major-mismatch", "cudnn-shadowed"):
            continue
        if "loaded" not in h.captures or "built" not in h.captures:
            continue
        lo, bu = version_key(h.captures["loaded"]), version_key(h.captures["built"])
        loaded = [c for c in copies if c.version and version_key(c.version)[:2] == lo[:2]]
        good = [
            c
            for c in copies
            if c.version and cudnn_relation(c.version, ".".join(map(str, bu))) == "ok"
        ]
        ev = tuple(f"loaded: {_describe(c)}" for c in loaded) + tuple(
            f"would satisfy the build: {_describe(c)}" for c in good
        )
        h.finding = dataclasses.replace(f, evidence=f.evidence + ev)
        for (
            alt
        ) in hits:  # the other readings of the same message: the same copies are their evidence
            if (
                alt.alternative_of == f.id
                and alt.offset == h.offset
                and "loaded" not in alt.captures
            ):
                alt.finding = dataclasses.replace(alt.finding, evidence=alt.finding.evidence + ev)
        if loaded and good:
            winner, want = loaded[0], good[0]
            title = f"cuDNN {winner.version} in {winner.directory} is loaded ahead of cuDNN {want.version} in {want.directory}"
            fix = (
                f"Put {want.directory} first (or drop {winner.directory} from LD_LIBRARY_PATH / LD_PRELOAD / ld.so.conf), "
                "or remove the older copy. `colab-cudnn-fix apply` plans it."
            )
            if f.id == "cudnn-shadowed":
                # the text already reads it as shadowing: the machine names the two copies
                h.finding = dataclasses.replace(h.finding, title=title, fix=fix)
                continue
            extra.append(
                Hit(
                    finding=Finding(
                        id="cudnn-shadowed",
                        severity="error",
                        title=title,
                        evidence=ev + f.evidence[:1],
                        fix=fix,
                        confidence=round(min(MAX, f.confidence + 0.02), 3),
                    ),
                    decisive=True,
                    offset=h.offset,
                    where=h.where,
                    check="LD_DEBUG=libs: the directory libcudnn.so loads from",
                )
            )
        elif copies and not good:
            # no copy on this machine would satisfy the build: nothing is shadowed, the copy is old
            drop.extend(x for x in hits if x.finding.id == "cudnn-shadowed")
    for d in drop:
        if d in hits:
            hits.remove(d)
    return extra


def _diagnose(env: Environment, recipes: Optional[Recipes]) -> Tuple[List[Finding], Optional[str]]:
    try:
        if recipes is None:
            recipes = load_recipes()
        return list(diagnose_all(env, recipes)), None
    except Exception as exc:  # noqa: BLE001 - a failure there must not hide what the text says
        return [], f"diagnose failed: {type(exc).__name__}: {exc}"


@functools.lru_cache(maxsize=8)
def _frameworks_named(text: str) -> Tuple[str, ...]:
    """The frameworks a text names (one scan per text: several steps ask)."""
    return tuple(fw for fw, rx in _FRAMEWORK_WORDS.items() if re.search(rx, text))


def frameworks_in(text: str, env: Optional[Environment]) -> Tuple[str, ...]:
    found = list(_frameworks_named(text))
    if env is not None:
        for fb in env.frameworks:
            if fb.is_cuda_build and fb.framework not in found:
                found.append(fb.framework)
    return tuple(found)


def colab_without_gpu(env: Optional[Environment]) -> bool:
    return bool(
        env is not None
        and env.runtime.kind == "colab"
        and env.runtime.accelerator != "gpu"
        and not env.gpus
    )


#: Above this size only the lines that can matter (and 3 lines around each) are matched: Python's
#: regular expressions take ~0.2 s per pattern over 5 MB, the catalogue has ~100 patterns.
LARGE_TEXT = 200_000
_RELEVANT = (
    "cuda",
    "cudnn",
    "dnn",
    ".so",
    ".dll",
    "nvidia",
    "gpu",
    "driver",
    "segmentation",
    "sigsegv",
    "core dumped",
    "kernel image",
    "memory",
    "oom",
    "librar",
    "symbol",
    "elf",
    "torch",
    "tensorflow",
    "jax",
    "paddle",
    "onnxruntime",
    "ctranslate2",
    "whisper",
    "loadlibrary",
    "winerror",
    "calling init",
    "version",
    "installed",
    "package:",
    "unable",
    "could not",
    "couldn't",
    "cannot",
    "failed",
    "error",
    "loaded",
    "created device",
    "numa",
    "tensorrt",
    "absl",
    "onednn",
    "compiled",
    "cpu instructions",
    "placer",
    "is_available",
    "backend",
    "import",
)
#: What is left of a large text after the filter is cut to its head and tail (errors come last).
KEEP_HEAD, KEEP_TAIL = 100_000, 900_000


def relevant_lines(text: str) -> str:
    """The lines of a large text that any catalogue pattern could need, with 3 lines of context
    each (multi-line messages such as JAX's version report), in order; when still large, its
    head and tail."""
    import bisect

    low = text.lower()
    starts = [0]
    pos = low.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = low.find("\n", pos + 1)
    keep = bytearray(len(starts))
    for word in _RELEVANT:
        pos = low.find(word)
        while pos >= 0:
            i = bisect.bisect_right(starts, pos) - 1
            for j in range(max(0, i - 3), min(len(starts), i + 4)):
                keep[j] = 1
            nxt = starts[i + 1] if i + 1 < len(starts) else len(low)
            pos = low.find(word, nxt)
    lines = text.split("\n")
    out = "\n".join(line for line, k in zip(lines, keep) if k)
    if len(out) > KEEP_HEAD + KEEP_TAIL:
        out = out[:KEEP_HEAD] + "\n" + out[-KEEP_TAIL:]
    return out


def _colab_no_gpu(hits: List[Hit], text: str, colab_cpu: bool) -> List[Hit]:
    """No driver on Colab: the runtime has no GPU (Colab's GPU runtimes come with the driver)."""
    driver = [h for h in hits if h.finding.id == "driver-missing" and h.absent]
    if not driver or not (_COLAB_TEXT.search(text) or colab_cpu):
        return hits
    hits = [h for h in hits if h.finding.id != "gpu-missing"]
    hits.append(
        Hit(
            finding=Finding(
                id="gpu-missing",
                severity="error",
                title="This Colab runtime has no GPU (Colab's GPU runtimes come with the NVIDIA driver)",
                evidence=(
                    driver[0].finding.evidence[0],
                    "Colab: the runtime was started without a GPU",
                ),
                fix="On Colab: Runtime → Change runtime type → a GPU (T4 or better), then rerun.",
                confidence=0.95 if colab_cpu else 0.92,
            ),
            decisive=True,
            offset=driver[0].offset,
            where=driver[0].where,
            check="Colab: Runtime → Change runtime type shows 'CPU'; nvidia-smi is missing",
        )
    )
    return hits


def _merge_extra(ranked: List[Hit], extra: List[Hit]) -> List[Hit]:
    for e in extra:
        ranked = [
            h
            for h in ranked
            if not (h.finding.id == e.finding.id and h.finding.confidence <= e.finding.confidence)
        ]
        if all(h.finding.id != e.finding.id for h in ranked):
            idx = next(
                (
                    i
                    for i, h in enumerate(ranked)
                    if h.finding.id in ("cudnn-too-old", "cudnn-major-mismatch")
                ),
                len(ranked),
            )
            ranked.insert(idx, e)
    return ranked


#: A framework's own files in a line: the framework whose failure that line reports.
_FRAMEWORK_PATHS = {
    "torch": re.compile(r"\btorch[/\.]|\bPyTorch\b|\bc10\b|\bATen\b"),
    "tensorflow": re.compile(r"\btensorflow[/\.]|\bTensorFlow\b|\btf2tensorrt\b"),
    "jax": re.compile(r"\bjax(?:lib)?[/\._]|\bJAX\b|\bXlaRuntimeError\b"),
    "paddle": re.compile(r"\bpaddle[/\.]|\bPaddle\b"),
    "onnxruntime": re.compile(r"\bonnxruntime\b"),
    "ctranslate2": re.compile(r"\bctranslate2\b|\bfaster_whisper\b"),
}


def _framework_of(f: Finding, fws: Sequence[str]) -> Optional[str]:
    """The framework whose failure a finding's own lines name, when exactly one does."""
    lines = [e for e in f.evidence[:3] if not e.startswith(("source:", "decided by:"))]
    named = [fw for fw in fws if any(_FRAMEWORK_PATHS[fw].search(e) for e in lines)]
    return named[0] if len(named) == 1 else None


def _several_frameworks(findings: List[Finding], fws: Sequence[str]) -> None:
    """With several frameworks in the paste, the top finding says whose failure it is."""
    if len(fws) < 2 or not findings:
        return
    top = findings[0]
    owner = _framework_of(top, [fw for fw in fws if fw in _FRAMEWORK_PATHS])
    others = ", ".join(fws)
    belongs = (
        f"the cause belongs to {owner}'s failure (its own line above names it); frameworks in this "
        f"paste: {others}"
        if owner
        else f"frameworks in this paste: {others}; the lines do not say whose failure this is"
    )
    fix = top.fix
    if top.id in ("cudnn-too-old", "cudnn-major-mismatch", "cudnn-shadowed"):
        fix += (
            f" With {others} in one process, the framework imported first decides which cuDNN copy "
            "all of them use: one cuDNN of the shared major at least as new as every build serves all "
            "(or import the one with the newest requirement first)."
        )
    findings[0] = dataclasses.replace(top, evidence=top.evidence + (belongs,), fix=fix)


def _with_machine(
    findings: List[Finding], env: Environment, recipes: Optional[Recipes], notes: List[str]
) -> List[Finding]:
    machine, note = _diagnose(env, recipes)
    if note:
        notes.append(note)
    for m in machine:
        same = next((i for i, f in enumerate(findings) if f.id == m.id), None)
        if same is not None:
            f = findings[same]
            findings[same] = dataclasses.replace(
                f,
                evidence=f.evidence
                + tuple(e for e in m.evidence if e not in f.evidence)
                + ("confirmed on this machine",),
                confidence=round(min(MAX, f.confidence + 0.1 + (0.3 if same > 0 else 0)), 3),
                fix=f.fix or m.fix,
            )
        else:
            findings.append(
                dataclasses.replace(
                    m,
                    confidence=round(min(m.confidence, 0.35), 3),
                    evidence=m.evidence + ("found on this machine (not named by the text)",),
                )
            )
    findings.sort(key=lambda f: -f.confidence)
    return findings


def _notes(findings: Sequence[Finding], colab_cpu: bool, windows: bool, notes: List[str]) -> bool:
    """Adds the notes; returns whether only benign lines were recognised."""
    if colab_cpu and any(f.id in ("gpu-missing", "driver-missing") for f in findings):
        notes.append("this is a Colab runtime without a GPU: Runtime → Change runtime type → a GPU")
    if windows:
        notes.append(
            "this text comes from Windows (DLL names / Windows paths): colab-cudnn-fix inspects and repairs "
            "Linux machines only (Colab, Kaggle, Linux VMs and containers, WSL); the explanation of the "
            "message still holds"
        )
    benign = bool(findings) and all(f.id == "log-noise" for f in findings)
    if benign:
        notes.append(
            "only benign lines were recognised: the failure, if any, is reported by another message"
        )
    return benign


#: id(a catalogue's rules) -> (those rules, kept alive so that the id is not reused; their
#: scan.AnchorIndex). A process reads one catalogue, two with a --recipes directory.
_ANCHOR_INDEXES: Dict[int, Tuple[Tuple[Rule, ...], AnchorIndex]] = {}


def _anchor_index(rules: Tuple[Rule, ...]) -> AnchorIndex:
    hit = _ANCHOR_INDEXES.get(id(rules))
    if hit is None or hit[0] is not rules:
        if len(_ANCHOR_INDEXES) > 16:
            _ANCHOR_INDEXES.clear()
        hit = _ANCHOR_INDEXES[id(rules)] = (rules, AnchorIndex([r.patterns for r in rules]))
    return hit[1]


def _text_hits(
    text: str,
    cat: Catalogue,
    env: Optional[Environment],
    rules: Optional[Sequence[Rule]],
    similar_guess: Union[bool, SimilarModel],
    pasted: str,
) -> List[Hit]:
    """The readings of the text (as read: wrapped lines joined); `pasted` is the text as the
    user pasted it, which the guess by similarity reads (its model learnt from pastes, and the
    line it quotes is one of the user's lines)."""
    hits: List[Hit] = []
    if rules is None:
        # only the rules one of whose anchors the text holds (_match_rule finds nothing in the others)
        possible = _anchor_index(cat.rules).possible(text)
        chosen = [r for i, r in enumerate(cat.rules) if i in possible]
    else:
        chosen = list(rules)
    for r in chosen:
        hits.extend(_match_rule(r, text, env, cat))
    if rules is None:
        hits.extend(_unquoted(_loader_hits(text, cat), hits, text))
        if all(h.benign or h.finding.id == "log-noise" for h in hits):
            # nothing read but harmless lines: the failure, if any, is in words no message holds
            hits.extend(_fallback_hits(text, cat, _lines_of(hits)))
        if not hits and similar_guess is not False:
            # nothing read at all: the labelled reports most like the text (explainer.similar)
            model = similar.load() if similar_guess is True else similar_guess
            hits.extend(_similar_hits(pasted, text, cat, model))
        hits = apply_evidence(
            hits,
            read_evidence(text, cat),
            _cudnn_majors,
            _driver_floor,
            frameworks_in(text, None),
            _cuda_majors,
            _driver_runs_build,
        )
    return hits


#: a reading from a finding's words alone: below every reading of a message the catalogue knows
FALLBACK_CONFIDENCE = 0.3
#: the matches of one fallback pattern read at most (a long log repeats its lines)
_FALLBACK_MATCHES = 20


def _lines_of(hits: Sequence[Hit]) -> Set[str]:
    """The lines each hit was read from (its finding's evidence lines)."""
    return {e for h in hits for e in h.finding.evidence if not e.startswith("source: ")}


def _fallback_hits(
    text: str, cat: Catalogue, harmless: AbstractSet[str] = frozenset()
) -> List[Hit]:
    """Where no message of the catalogue but harmless lines is recognised: the readings the text's words point to
    ([[fallback]]), each a guess at FALLBACK_CONFIDENCE with the check that decides; the last in
    the text ranks first, as for messages. A `family` fallback takes the finding from the family
    of the library (`lib`) or display name (`name`) it matched; none when that names no family.
    Words on the lines of a harmless message (`harmless`) are that message's own ("ran out of
    memory ... this is not a failure"): they are not read."""
    hits: List[Hit] = []
    for fb in cat.fallbacks:
        if any(x.search(text) for x in fb.excludes):
            continue
        for p in fb.patterns:
            for n, m in enumerate(p.finditer(text)):
                if n >= _FALLBACK_MATCHES:
                    break
                line = _line_at(text, m.start())
                if line in harmless:
                    continue
                fid = fb.id or _family_finding(m, fb.family, cat)
                if not fid:
                    continue
                captures = {k: v for k, v in m.groupdict().items() if v}
                if fid == "cudnn-missing":
                    lib = captures.get("lib", "")
                    captures.update(
                        _cudnn_captures(parse_library(lib, cat.families) if lib else None)
                    )
                hits.append(
                    _guess(
                        fid,
                        _fmt(fb.title, captures),
                        (line, f"read from its words: {fb.basis}"),
                        fb.fix,
                        fb.check,
                        where=fb.where,
                        offset=m.start(),
                        captures=captures,
                    )
                )
    return hits


def _guess(
    fid: str,
    title: str,
    evidence: Tuple[str, str],
    fix: str,
    check: str,
    where: str,
    offset: int,
    captures: Optional[Dict[str, str]] = None,
) -> Hit:
    """A reading that is a guess (from a finding's words, or by similarity): at
    FALLBACK_CONFIDENCE, never decisive, and it leaves the text unrecognised."""
    return Hit(
        finding=Finding(
            id=fid,  # type: ignore[arg-type]
            severity="error",
            title=title,
            evidence=evidence,
            fix=fix,
            confidence=FALLBACK_CONFIDENCE,
        ),
        decisive=False,
        offset=offset,
        where=where,
        check=check,
        captures=captures or {},
        fallback=True,
    )


#: where a guess by similarity comes from (Explanation.rules names it)
SIMILAR_WHERE = "recipes/similar_reports.json"


def _similar_hits(text: str, read: str, cat: Catalogue, model: Optional[SimilarModel]) -> List[Hit]:
    """The cause whose labelled public reports are most like the text as pasted (explainer.similar),
    as a guess at FALLBACK_CONFIDENCE with the check that decides; none below similar.MIN_SCORE,
    none where no line's words weigh for that cause, never a cause the text already answers "no"
    (_one_copy_causes), and none without a model. `read` is the text as the rules read it
    (wrapped lines joined)."""
    if model is None:
        return []
    found = similar.nearest(text, model)
    noise = next((fb for fb in cat.fallbacks if fb.id == "log-noise"), None)
    if noise is None or any(x.search(t) for x in noise.excludes for t in (text, read)):
        # a line that reports an error is never guessed harmless (the log-noise fallback's own
        # test of one: its excludes)
        found = [(c, s) for c, s in found if c != "log-noise"]
    # a cause whose own check the paste already answers "no" is not guessed: the load lines a
    # distinct-directories rule reads, all in one directory, are that rule's check answered
    answered = _one_copy_causes(read, cat)
    found = [(c, s) for c, s in found if c not in answered]
    if not found or found[0][1] < similar.MIN_SCORE:
        return []
    cause, score = found[0]
    line = similar.telling_line(text, model, cause)
    if not line:
        return []  # no line's words weigh for the cause: "words like these" would say nothing
    own = next((fb for fb in cat.fallbacks if fb.id == cause), None)
    return [
        _guess(
            cause,
            f"Public reports with words like these were most often this cause: "
            f"{similar.MEANING.get(cause, cause)} (not a message explain knows)",
            (
                line,
                f"read by similarity: a classifier trained on {model.reports} labelled public "
                f"reports gives {cause} the highest probability ({score:.2f}) for words like these",
            ),
            _FIX.get(cause) or (own.fix if own else _DOCTOR_DECIDES),
            own.check if own else _LOADER_CHECK.get(cause, _DOCTOR_DECIDES),
            where=SIMILAR_WHERE,
            offset=len(text),
        )
    ]


_DOCTOR_DECIDES = "`colab-cudnn-fix doctor` on the failing machine: it checks this cause directly"


def _one_copy_causes(text: str, cat: Catalogue) -> Set[str]:
    """The causes of the rules that read distinct directories (cudnn-mixed's "calling init:",
    ldd and /proc/PID/maps lines) whose load lines the text holds, all in one directory: the text
    then shows what such a rule's check asks, and answers it "one copy"."""
    answered: Set[str] = set()
    for rule in cat.rules:
        if not rule.distinct_dirs:
            continue
        matches = [m for p in rule.patterns for m in p.finditer(text)]
        if matches and len(_distinct_dirs(rule, matches)) == 1:
            answered.add(rule.id)
    return answered


def _cudnn_captures(lib: Optional[Library]) -> Dict[str, str]:
    """The captures a cuDNN file named in the text gives its reading, whether the loader's
    message or a user's words name it ("not able to find libcudnn.so.7", "没有包含
    cudnn_ops_infer64_8.dll"): the major its name carries, its sub-library part and its name, so
    that the evidence weighs it against the copies the paste shows (cudnn-major-mismatch,
    cudnn-incomplete); empty for a file of another family."""
    if lib is None or lib.role != "cudnn":
        return {}
    return {"major": lib.major, "part": lib.part, "name": lib.name}


def _family_finding(m: "re.Match[str]", kind: str, cat: Catalogue) -> Optional[str]:
    groups = m.groupdict()
    family = None
    if groups.get("lib"):
        lib = parse_library(groups["lib"], cat.families)
        family = lib.family if lib is not None else None
    elif groups.get("name"):
        family = family_by_name(groups["name"], cat.families)
    if family is None or family.role == "framework":
        return None
    found = getattr(family, kind, None)
    return str(found) if found else None


def _unquoted(loader: List[Hit], rule_hits: Sequence[Hit], text: str) -> List[Hit]:
    """The loader readings that are not quoted on the line of a message read as harmless. An
    emitter that warns about a failed load and goes on (torch's early dlopen of cuDNN 8's
    cnn_infer) quotes dlerror's text in its warning: that text is the warning's content, and a
    load that really fails is reported again on a line of its own (cuDNN's own loader). What
    loader.keeps_its_line names stays."""
    spans = []
    for h in rule_hits:
        if h.benign:
            start = text.rfind("\n", 0, h.offset) + 1
            end = text.find("\n", h.offset)
            spans.append((start, len(text) if end < 0 else end))
    return [
        h
        for h in loader
        if keeps_its_line(h.finding.id) or not any(a <= h.offset < b for a, b in spans)
    ]


def _recipes() -> Optional[Recipes]:
    """The shipped recipes, or None where they do not load: a broken recipe file must not hide
    what the text says (the evidence that asks them then decides nothing)."""
    try:
        return load_recipes()
    except Exception:  # noqa: BLE001 - any failure to load is the same "cannot say"
        return None


def _driver_runs_build(driver: str, cuda: str) -> Optional[bool]:
    """Whether the driver runs a build of CUDA release `cuda` (fixer.rules.driver_runs_build over
    recipes/nvidia.toml's rows)."""
    recipes = _recipes()
    return None if recipes is None else driver_runs_build(driver, cuda, recipes.driver_floors)


def _driver_floor(major: int) -> Optional[str]:
    """The lowest driver that runs every CUDA `major`.x (recipes/nvidia.toml's floors)."""
    recipes = _recipes()
    return None if recipes is None else minor_version_floor(major, recipes.driver_floors)


def _release_builds(framework: str, version: str) -> Tuple[Build, ...]:
    """The recipes' builds of this framework release, or of its release series ("1.19" for
    "1.19.2": the tables' sources give rows per series); none when the recipes do not load."""
    recipes = _recipes()
    if recipes is None:
        return ()
    parts = version.split(".")
    return tuple(
        recipes.builds_for(framework, version) or recipes.builds_for(framework, ".".join(parts[:2]))
    )


def _cuda_majors(framework: str, version: str) -> Set[int]:
    """The CUDA majors the recipes' builds of this framework release were made for."""
    return {int(b.cuda.split(".")[0]) for b in _release_builds(framework, version) if b.cuda}


def _cudnn_majors(framework: str, version: str) -> Set[int]:
    """The cuDNN majors the recipes' builds of this framework release were made with."""
    return {
        int(b.cudnn.split(".")[0])
        for b in _release_builds(framework, version)
        if b.cudnn and b.cuda
    }


def analyze_text(
    text: str,
    cat: Catalogue,
    env: Optional[Environment] = None,
    recipes: Optional[Recipes] = None,
    rules: Optional[Sequence[Rule]] = None,
    notes: Sequence[str] = (),
    similar: Union[bool, SimilarModel] = True,
) -> Explanation:
    text = ascii_quotes(text)
    if len(text) > LARGE_TEXT:
        text = relevant_lines(text)
    pasted = text
    text = join_split_names(join_wrapped(unmarked(text), cat.wrapped), cat)
    colab_cpu = colab_without_gpu(env)
    hits = _colab_no_gpu(_text_hits(text, cat, env, rules, similar, pasted), text, colab_cpu)
    ranked = _lower_layer_first(rank(hits))
    out_notes: List[str] = list(notes)
    if env is not None:
        ranked = _env_rerank(ranked, env)
        ranked = _merge_extra(ranked, _with_environment(ranked, env))
    findings = [h.finding for h in ranked]
    checks = [(h.finding.id, h.check) for h in ranked if h.check]
    fws = frameworks_in(text, env)
    _several_frameworks(findings, fws)
    # a reading from the words alone ([[fallback]]) is a guess: the text stays unrecognised
    recognised = any(not h.fallback for h in ranked)
    if env is not None:
        findings = _with_machine(findings, env, recipes, out_notes)
    windows = bool(_WINDOWS_TEXT.search(text))
    benign = _notes(findings, colab_cpu, windows, out_notes)
    ambiguous = (
        len(findings) >= 2
        and findings[1].confidence >= findings[0].confidence - 0.15
        and findings[1].id != "log-noise"
    )
    return Explanation(
        findings=tuple(findings),
        recognised=recognised,
        rules=tuple(dict.fromkeys(h.where for h in ranked)),
        notes=tuple(out_notes),
        checks=tuple(dict.fromkeys(checks)),
        benign=benign,
        ambiguous=ambiguous,
        windows=windows,
        frameworks=fws,
        colab_no_gpu=colab_cpu,
    )


def _lower_layer_first(ranked: List[Hit]) -> List[Hit]:
    """cuDNN sits on the CUDA libraries: when both are reported missing with about the same
    certainty, the missing CUDA libraries are the cause to fix first."""
    if len(ranked) >= 2 and ranked[0].finding.id == "cudnn-missing":
        lower = next(
            (
                h
                for h in ranked[1:]
                if h.finding.id == "cuda-lib-missing"
                and h.finding.confidence >= ranked[0].finding.confidence - 0.05
                and h.alternative_of is None
            ),
            None,
        )
        if lower is not None:
            ranked.remove(lower)
            ranked.insert(0, lower)
    return ranked


def _env_rerank(ranked: List[Hit], env: Environment) -> List[Hit]:
    """The machine decides between alternatives: facts it shows promote the matching reading."""
    promote: Dict[str, float] = {}
    if colab_without_gpu(env) or (env.runtime.accelerator == "cpu" and not env.gpus):
        promote["gpu-missing"] = 0.95
    fws = [fb for fb in env.frameworks if fb.framework == "torch"]
    if fws and all(fb.is_cuda_build is False for fb in fws):
        promote["cpu-only-build"] = 0.93
    if env.driver is not None and env.driver.cuda_version:
        for fb in env.frameworks:
            if fb.cuda and version_key(env.driver.cuda_version)[:2] < version_key(fb.cuda)[:2]:
                promote["driver-too-old"] = 0.93
    if not promote:
        return ranked
    changed = False
    for h in ranked:
        if h.finding.id in promote and h.finding.confidence < promote[h.finding.id]:
            h.finding = dataclasses.replace(
                h.finding,
                confidence=promote[h.finding.id],
                evidence=h.finding.evidence + ("decided by this machine",),
            )
            changed = True
    if changed:
        ranked.sort(key=lambda h: (-h.finding.confidence, not h.decisive, -h.offset))
    return ranked


# ---------------------------------------------------------------------------------------
# doctor --deep's runtime views: an import error is a text, and classifying texts is the
# explainer's job, so this step lives here and not in diagnose (diagnose imports no explainer)
# ---------------------------------------------------------------------------------------


def diagnose_all(env: Environment, recipes: Recipes) -> Tuple[Finding, ...]:
    """diagnose(), then the runtime views' errors (view_findings), in diagnose's order. Every
    caller that may hold runtime views (doctor, plan's simulation, the check after apply,
    explain with a machine) uses this."""
    found = diagnose(env, recipes)
    return ordered([*found, *view_findings(env, found)])


def view_findings(env: Environment, found: Sequence[Finding]) -> List[Finding]:
    """doctor --deep: what each framework did when imported in a child. An error becomes a
    finding, classified by the catalogue (the text alone: explain with this machine would
    diagnose it again), else import-failed; one already found (in `found`, by reading files, or
    from an earlier view) is not repeated."""
    added: List[Finding] = []
    for v in env.runtime_views:
        if not v.error:
            continue
        top = _classified(v.error)
        fid = top.id if top is not None else "import-failed"
        if any(f.id == fid and v.framework in f.frameworks for f in (*found, *added)):
            continue
        added.append(_view_finding(env, v, fid, top))
    return added


def _classified(error: str) -> Optional[Finding]:
    """The catalogue's first error or warning for `error` alone (no machine), or None. Never the
    guess by similarity: a finding of the machine does not rest on words like those of other
    reports."""
    if not error.strip():
        return None
    try:
        found = analyze_text(error, load_catalogue(()), similar=False).findings
    except Exception:  # noqa: BLE001 - a catalogue problem must not hide the import failure
        return None
    known = [f for f in found if f.severity in ("error", "warning") and f.id in FINDING_IDS]
    return known[0] if known else None


def _view_finding(env: Environment, v: RuntimeView, fid: str, top: Optional[Finding]) -> Finding:
    what = "fails to import" if not v.imported else "imports, then fails"
    error = v.error or ""
    first = error.strip().splitlines()[0] if error.strip() else error
    fb = env.framework(v.framework)
    dist = fb.distribution if fb is not None else v.framework
    return Finding(
        id=fid,  # type: ignore[arg-type]
        severity="error",
        title=f"{display_name(v.framework)} {what}: {first[:160]}",
        evidence=(
            f"doctor --deep imported {v.framework} in a child: {error.strip()[:600]}",
            *((f"explain reads it as {top.id}: {top.title}",) if top is not None else ()),
        ),
        fix=(
            top.fix
            if top is not None and top.fix
            else f"Reinstall {display_name(v.framework)} (pip install --force-reinstall {dist}) "
            "or read the error above; `colab-cudnn-fix explain` classifies pasted errors."
        ),
        frameworks=(v.framework,),
    )
