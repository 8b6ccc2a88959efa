"""Loader errors, read structurally: which library failed (its family, version, directory and
role) and how (missing, a symbol or version it lacks, a damaged file), from any wording the
catalogue's [[loader]] tables know. No rule is written per library name: the family table
(keyed by file stem) decides what a failure of that library means."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from fixer.explainer.catalogue import Catalogue, Family

_LINUX = re.compile(r"^(?P<stem>lib[\w+\-]*?)\.so(?:\.(?P<ver>[\d.]+))?$")
_LINUX_LOOSE = re.compile(r"^(?P<stem>[\w+\-]+?)\.so(?:\.(?P<ver>[\d.]+))?$")
# cudnn64_8.dll, cudnn_ops64_9.dll, cublasLt64_12.dll, cudart64_110.dll, nvrtc64_120_0.dll, nvcuda.dll
_WINDOWS = re.compile(r"^(?P<stem>[\w+\-]+?)(?:64)?(?:_(?P<ver>\d+)(?:_\d+)?)?\.dll$", re.I)
# A Python extension module: CPython's importer looks for NAME + one of the suffixes of
# importlib.machinery.EXTENSION_SUFFIXES (".cpython-310-x86_64-linux-gnu.so", ".abi3.so", ".so";
# PyPy ".pypy39-pp73-x86_64-linux-gnu.so"; Windows ".cp310-win_amd64.pyd", ".pyd"). It is a
# framework's own compiled module (cupy/cuda/cudnn.cpython-*.so, torch/_C.cpython-*.so), never a
# file of the library family its name happens to share ("cudnn").
_PY_EXTENSION = re.compile(
    r"^(?P<stem>[\w\-]+)\.(?:cpython-[\w\-]{1,64}|abi3|pypy[\w\-]{1,64})\.so$"
    r"|^(?P<pyd>[\w\-]+)(?:\.cp\d{2,3}-[\w\-]{1,32})?\.pyd$",
    re.I,
)


@dataclasses.dataclass(frozen=True)
class Library:
    """A library file named in an error text."""

    text: str  # as written: "/venv/.../libcudnn_ops.so.9"
    name: str  # file name: "libcudnn_ops.so.9"
    stem: str  # "libcudnn_ops"
    version: Optional[str]  # "9", "12.4", "11.0" (Windows cudart64_110 -> "11.0")
    directory: Optional[str]  # "/venv/.../nvidia/cudnn/lib"
    windows: bool
    family: Optional[Family]
    part: str = ""  # the part after the family stem: "ops", "builtins", "Lt", "" (the main library)

    @property
    def role(self) -> Optional[str]:
        return self.family.role if self.family else None

    @property
    def major(self) -> str:
        """The major its name carries ("9" for libcudnn_ops.so.9.1.0, "8" for cudnn64_8.dll), or
        "" where the name carries no version."""
        return (self.version or "").split(".")[0]

    def describe(self) -> str:
        fam = self.family.name if self.family else "unknown library"
        bits = [f"{self.name} ({fam}"]
        if self.part:
            bits.append(f", part {self.part}")
        if self.version:
            bits.append(f", version {self.version}")
        bits.append(")")
        if self.directory:
            bits.append(f" in {self.directory}")
        return "".join(bits)


#: Variant libraries named by a suffix glued to the stem: cuBLAS's libcublasLt, cuFFT's libcufftw,
#: cuSOLVER's libcusolverMg and cuTENSOR's libcutensorMg / libcutensorMp (the cutensor-cu12 2.8.1
#: wheel's cutensor/lib/).
_VARIANTS = ("Lt", "w", "Mg", "Mp")


def _family_of_stem(stem: str, families: Sequence[Family]) -> Tuple[Optional[Family], str]:
    """The family whose stem is this stem or a prefix of it followed by '_' or '-' (longest wins)."""
    best: Tuple[int, Optional[Family], str] = (0, None, "")
    low = stem.lower()
    for fam in families:
        for s in fam.stems:
            sl = s.lower()
            if low == sl or (low.startswith(sl) and low[len(sl)] in "_-"):
                if len(sl) > best[0]:
                    best = (len(sl), fam, stem[len(sl) :].lstrip("_-"))
            elif low.startswith(sl) and len(sl) > best[0] and stem[len(sl) :] in _VARIANTS:
                best = (len(sl), fam, stem[len(sl) :])
    return best[1], best[2]


def parse_library(text: str, families: Sequence[Family]) -> Optional[Library]:
    """A library reference ("libcudnn_ops.so.9", "/x/libcublasLt.so.12", "cudnn64_8.dll") with its
    family; None when the text is no library file name."""
    t = text.strip().strip("'\"`")
    if not t:
        return None
    windows = "\\" in t or t.lower().endswith(".dll")
    sep = max(t.rfind("/"), t.rfind("\\"))
    name, directory = (t[sep + 1 :], t[:sep] or "/") if sep >= 0 else (t, None)
    ext = _PY_EXTENSION.match(name)
    if ext:
        return _python_extension(
            t, name, ext.group("stem") or ext.group("pyd"), directory, families
        )
    m = _WINDOWS.match(name) if windows else (_LINUX.match(name) or _LINUX_LOOSE.match(name))
    if not m:
        return None
    stem, ver = m.group("stem"), m.group("ver")
    if windows and ver and len(ver) >= 3 and stem.lower().startswith(("cudart", "nvrtc")):
        ver = f"{ver[:-1]}.{ver[-1]}"  # cudart64_110.dll: CUDA 11.0
    fam, part = _family_of_stem(stem, families)
    if fam is None and not stem.startswith("lib") and not windows:
        fam, part = _family_of_stem("lib" + stem, families)
    return Library(
        text=t,
        name=name,
        stem=stem,
        version=ver,
        directory=directory,
        windows=windows,
        family=fam,
        part=part,
    )


def _python_extension(
    text: str, name: str, stem: str, directory: Optional[str], families: Sequence[Family]
) -> Library:
    """A framework's compiled Python module, as a library of the framework family."""
    fam = next((f for f in families if f.role == "framework"), None)
    return Library(
        text=text,
        name=name,
        stem=stem,
        version=None,
        directory=directory,
        windows=name.lower().endswith(".pyd"),
        family=fam,
    )


def family_by_name(name: str, families: Sequence[Family]) -> Optional[Family]:
    """The family a framework's printed name ("cuDNN", "cuBLAS", "CUDA") belongs to."""
    for fam in families:
        if name in fam.names:
            return fam
    low = name.lower()
    for fam in families:
        if low in (n.lower() for n in fam.names):
            return fam
    return None


def family_of_node(node: str, families: Sequence[Family]) -> Optional[Family]:
    """The family whose libraries define this symbol-version node. glibc's match_symbol reports the
    node the needer asked for and the object that lacks it ("version `GLIBC_2.34' not found"): a node
    in a family's namespace (GLIBC_, GLIBCXX_/CXXABI_, GCC_) belongs to that family; a node named
    like a library (CUDA libraries name theirs by soname, "libcudart.so.12") to that library's family."""
    n = node.strip().strip("'\"`")
    for fam in families:
        if any(rx.match(n) for rx in fam.nodes):
            return fam
    lib = parse_library(n, families)
    return lib.family if lib is not None else None


def family_of_symbol(sym: str, families: Sequence[Family]) -> Optional[Family]:
    """The family that provides a symbol, by its name (longest matching prefix wins)."""
    best: Tuple[int, Optional[Family]] = (0, None)
    for fam in families:
        for rx in fam.symbols:
            m = rx.search(sym)
            if m and m.start() == 0 and m.end() > best[0]:
                best = (m.end(), fam)
    return best[1]


@dataclasses.dataclass(frozen=True)
class LoadFailure:
    """One failed load found in the text."""

    kind: str  # missing | symbol | version | damaged | wrapper
    library: Optional[Library]  # the library that is missing / lacks the symbol's provider
    needer: Optional[Library]  # the library that needed it (symbol/version errors)
    symbol: Optional[str]
    provider: Optional[Family]  # the family that should provide the symbol or version
    detail: str  # the dlerror detail ("No such file or directory", "file too short")
    offset: int
    line: str
    where: str  # the [[loader]] table, "errors.toml:123"
    cites: Tuple[str, ...]
    inner: bool = False  # a wrapper whose own dlerror text names the real failure
    node: Optional[str] = (
        None  # the symbol-version node asked for ("GLIBC_2.34", "libcudnn_graph.so.9")
    )


#: Evidence shows at most this much of a line, around the match.
LINE_CUT = 300


def line_span(text: str, start: int, end: Optional[int] = None) -> Tuple[int, int]:
    """Where the line(s) around text[start:end] begin and end. Only LINE_CUT characters either side
    are searched for the line's ends, so that many matches on one very long line cost linear time,
    not the line's length each."""
    end = start if end is None else end
    lo, hi = max(0, start - LINE_CUT), min(len(text), end + LINE_CUT)
    nl = text.rfind("\n", lo, start)
    first = nl + 1 if nl >= 0 else lo
    nl = text.find("\n", end, hi)
    return first, nl if nl >= 0 else hi


def line_at(text: str, offset: int) -> str:
    """The line around an offset (line_span), stripped and cut to LINE_CUT characters (for
    evidence)."""
    start, end = line_span(text, offset)
    line = text[start:end].strip()
    return line if len(line) <= LINE_CUT else line[: LINE_CUT - 3] + "..."


_INNER = re.compile(
    r"cannot open shared object file|undefined symbol|not found \(required by|file too short|"
    r"invalid ELF header|wrong ELF class"
)


def _libraries(g: Dict[str, Optional[str]], fams: Sequence[Family]) -> List[Optional[Library]]:
    if g.get("libs"):
        for piece in (g.get("libs") or "").split(","):
            lib = parse_library(piece, fams)
            # cuDNN 9 lists one library's names, most specific first: the first one names it
            return [lib] if lib is not None else []
        return []
    if g.get("lib"):
        return [parse_library(g["lib"] or "", fams)]
    return []


def _provider(
    kind: str,
    node: Optional[str],
    sym: Optional[str],
    libs: List[Optional[Library]],
    fams: Sequence[Family],
) -> Optional[Family]:
    """The family that should provide a symbol or version: the node's namespace decides, then
    the symbol's name, then the library named."""
    if kind not in ("symbol", "version"):
        return None
    provider = family_of_node(node, fams) if node else None
    if provider is None and sym:
        provider = family_of_symbol(sym, fams)
    if provider is None and libs and libs[0] is not None:
        provider = libs[0].family
    return provider


def _failures_of(
    rule: Any, m: "re.Match[str]", text: str, fams: Sequence[Family]
) -> List[LoadFailure]:
    g: Dict[str, Optional[str]] = m.groupdict()
    libs = _libraries(g, fams)
    needer = parse_library(g["needer"] or "", fams) if g.get("needer") else None
    sym = g.get("sym")
    node = (g.get("verlib") or "").strip() or None
    provider = _provider(rule.kind, node, sym, libs, fams)
    if rule.kind in ("symbol", "version") and not libs and node:
        verlib = parse_library(node, fams)
        libs = [verlib] if verlib is not None else []
    err = g.get("err") or g.get("why") or ""
    inner = bool(rule.kind == "wrapper" and err and _INNER.search(err))
    return [
        LoadFailure(
            kind=rule.kind,
            library=lib,
            needer=needer,
            symbol=sym,
            provider=provider,
            detail=err.strip(),
            offset=m.start(),
            line=line_at(text, m.start()),
            where=rule.where,
            cites=rule.cites,
            inner=inner,
            node=node,
        )
        for lib in libs or [None]
        if not (lib is None and needer is None and not sym)
    ]


#: At most this many line breaks are tried as splits of a loader message (a long log's breaks
#: near a loader wording's anchor; each try runs the patterns on two lines).
MAX_SPLIT_TRIES = 200


def _split_breaks(text: str, cat: Catalogue) -> List[int]:
    """The line breaks that fall inside a token (no white space on either side) within reach of
    a loader wording's anchor: where a renderer may have wrapped a message mid-token."""
    out: Set[int] = set()
    for rule in cat.loaders:
        for p in rule.patterns:
            for lo, hi in p.windows(text):
                b = text.find("\n", lo, hi)
                while b >= 0:
                    if 0 < b < len(text) - 1 and not (
                        text[b - 1].isspace() or text[b + 1].isspace()
                    ):
                        out.add(b)
                    b = text.find("\n", b + 1, hi)
    return sorted(out)[:MAX_SPLIT_TRIES]


def _names_a_family(m: "re.Match[str]", fams: Sequence[Family]) -> bool:
    """Whether a loader wording's match names a library (or a version node) of a known family."""
    g: Dict[str, Optional[str]] = m.groupdict()
    libs = _libraries(g, fams)
    if g.get("needer"):
        libs.append(parse_library(g["needer"] or "", fams))
    if any(lib is not None and lib.family is not None for lib in libs):
        return True
    return bool(g.get("verlib")) and family_of_node(g["verlib"] or "", fams) is not None


def _splits(line: str, cut: int, cat: Catalogue) -> bool:
    """Whether the break at `cut` of `line` (two lines, the break at line[cut]) split a loader
    message: with the break gone a wording matches across it and names a library of a known
    family, while with the break in place no match from that start names one (the message was
    not already whole: a greedy tail that runs on is no split) and the line after the break
    starts no such message of its own (a new message, not the wrapped rest of one)."""
    joined = line[:cut] + line[cut + 1 :]
    fams = cat.families
    for rule in cat.loaders:
        for p in rule.patterns:
            for m in p.rx.finditer(joined):
                if not m.start() < cut < m.end() or not _names_a_family(m, fams):
                    continue
                whole = (p.rx.match(line, m.start()), p.rx.match(line, cut + 1))
                if not any(w is not None and _names_a_family(w, fams) for w in whole):
                    return True
    return False


def join_split_names(text: str, cat: Catalogue) -> str:
    """The text with the line breaks joined that a renderer put inside a token of a loader
    message (ld.so's, dlopen's and the wrappers' wordings): "version `GLIBC_2.3\n4' not found",
    "/usr/lib/libcu\ndnn.so.8: cannot open shared object file". scan.join_wrapped joins a break
    inside the catalogue's literal text; this one a break inside a name or a version, the part
    a pattern matches by class: it is joined only when the two lines read as ONE message of a
    loader wording that neither line completes alone (_splits)."""
    if "\n" not in text:
        return text
    drop: List[int] = []
    for b in _split_breaks(text, cat):
        start = text.rfind("\n", 0, b) + 1
        end = text.find("\n", b + 1)
        end = len(text) if end < 0 else end
        if (
            b - start <= LINE_CUT * 2
            and end - b <= LINE_CUT * 2
            and _splits(text[start:end], b - start, cat)
        ):
            drop.append(b)
    if not drop:
        return text
    out: List[str] = []
    prev = 0
    for b in drop:
        out.append(text[prev:b])
        prev = b + 1
    out.append(text[prev:])
    return "".join(out)


def find_failures(text: str, cat: Catalogue) -> List[LoadFailure]:
    """Every failed load the catalogue's loader wordings find in the text, in text order."""
    out: List[LoadFailure] = []
    for rule in cat.loaders:
        for rx in rule.patterns:
            for m in rx.finditer(text):
                out.extend(_failures_of(rule, m, text, cat.families))
    out.sort(key=lambda f: f.offset)
    return _without_optional(_without_shadowed(out))


# cuDNN 4 to 7 kept an older major's API beside the new one under a version suffix (cudnn.h: "DEPRECATED
# routines to be removed next release ... Routines with _v3 suffix has the functionality of the
# non-suffixed routines in the CUDNN V4"; cuDNN 7's header the same for _v5): such an entry is
# dropped by the next major. cuDNN 8 started naming its new API _v8 (added within the major).
_CUDNN_DEPRECATED_SUFFIX = re.compile(r"^cudnn\w{1,80}_v[2-7]$")


def _cudnn_symbol_reading(symbol: Optional[str]) -> str:
    """A framework's module lacks a cuDNN symbol. Its DT_NEEDED names libcudnn.so.<major> (the
    soname), so ld.so bound a cuDNN of the build's major: an older minor lacks an entry the
    build used (NVIDIA: minor releases are backward compatible only). An entry of the deprecated
    _v2.._v7 suffixes is one a later major removed, a copy of another major behind that name."""
    if symbol and _CUDNN_DEPRECATED_SUFFIX.match(symbol):
        return "cudnn-major-mismatch"
    return "cudnn-too-old"  # a program built against a newer cuDNN than the one loaded


def _without_shadowed(failures: List[LoadFailure]) -> List[LoadFailure]:
    """glibc prints one "OBJECT: undefined symbol: SYM" per failed lookup (elf/dl-lookup.c): the
    catalogue's wording without OBJECT matches inside the same text, and would read it as if no
    object were named. A needer-less failure of a symbol that a failure on the same line names
    with its needer is that same lookup: only the one with its needer stays."""
    named = {(f.line, f.kind, f.symbol) for f in failures if f.needer is not None}
    return [
        f
        for f in failures
        if f.needer is not None or f.kind != "symbol" or (f.line, f.kind, f.symbol) not in named
    ]


def _without_optional(failures: List[LoadFailure]) -> List[LoadFailure]:
    """A framework's wrapper that failed to load a library of an optional family (TF-TRT's
    TensorRT) names a load the framework runs without: what its dlerror says is missing was
    needed by that optional library only, so nothing on that line is a cause, but what
    keeps_its_line names."""
    optional = {
        f.line
        for f in failures
        if f.kind == "wrapper" and f.library is not None and f.library.role == "optional"
    }
    if not optional:
        return failures
    return [f for f in failures if f.line not in optional or keeps_its_line(finding_of(f))]


def keeps_its_line(finding: Optional[str]) -> bool:
    """A failed load's reading that stays a cause on the line of a load the framework runs
    without (an optional library) or of a message read as harmless: a C/C++ runtime older than
    the symbol version asked for (glibc's "version `GLIBC_2.27' not found"). That is the
    machine's own runtime, older than NVIDIA's libraries were built for, whichever library met
    it first."""
    return finding == "system-runtime-too-old"


def finding_of(f: LoadFailure) -> Optional[str]:
    """The finding id a failed load means, decided by the library family."""
    if f.kind in ("missing", "wrapper"):
        if f.library is None or f.library.family is None:
            return None
        if f.kind == "wrapper" and f.library.role == "framework":
            return None  # a framework's own plug-in: its dependency is the cause
        return f.library.family.missing
    if f.kind == "damaged":
        return f.library.family.damaged if f.library and f.library.family else None
    # symbol / version: what the provider lacks. Two cuDNN releases mixed when a cuDNN library
    # needs a cuDNN symbol (or names no provider); an older CUDA library otherwise.
    fam = f.provider
    needer_fam = f.needer.family if f.needer else None
    if fam is None:
        fam = needer_fam
    if fam is None:
        return None
    if fam.role == "framework":
        return None
    if fam.role == "system-runtime":
        return fam.mismatch  # the C/C++ runtime is older than the one the needer was built for
    if (
        fam.role == "cudnn"
        and f.needer is not None
        and (needer_fam is None or needer_fam.role != "cudnn")
    ):
        return _cudnn_symbol_reading(f.symbol)
    return fam.mismatch
