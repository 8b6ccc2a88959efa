"""The message catalogue (recipes/errors.toml): library families, loader wordings and rules,
each citing the code that prints it. Checked on load; the first problem raises RecipeError
naming FILE:LINE."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import string
import threading
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from fixer.system.compat import tomllib
from fixer.system import cachefile
from fixer.system.paths import cache_dir, recipes_dir, write_cache
from fixer.errors import RecipeError
from fixer.model import FINDING_IDS, Environment, LibraryCopy
from fixer.recipebook import _did_you_mean, _Lines
from fixer.explainer import scan
from fixer.explainer.scan import MAX_WIDTH, Facts, Pattern, UnboundedPattern

RULES_FILE = "errors.toml"
SCHEMA_VERSION = 2
BASE_DECISIVE = 0.9
BASE_PLAIN = 0.5

LOADER_KINDS = ("missing", "symbol", "version", "damaged", "wrapper")
ROLES = ("cudnn", "cuda-lib", "driver", "framework", "system-runtime", "optional")
#: Slots a template may use (tests fill them with generated values).
TEMPLATE_SLOTS = frozenset(
    {
        "loaded",
        "built",
        "loaded_int",
        "built_int",
        "loaded_tuple",
        "built_tuple",
        "loaded_mm",
        "built_mm",
        "loaded_k",
        "lib",
        "lib2",
        "dll",
        "dir",
        "sym",
        "n",
        "name",
        "version_int",
        "build_int",
    }
)


#: A citation names where the text comes from, down to the line or the release:
#:   "owner/repo path:LINES@REF (...)"  a source file at a tag or commit, LINES "97", "60-67" or "60-67,76"
#:   "pypi:NAME path:LINES@VERSION (...)" a file shipped in a released wheel (headers, Python sources)
#:   "WHAT @release:RELEASE (...)"      a released binary's strings, or a page of a named release
CITE_SOURCE = re.compile(
    r"^(?P<source>[\w.\-]+/[\w.\-]+|pypi:[\w.\-]+) (?P<path>[^\s:@]+):"
    r"(?P<lines>\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)@(?P<ref>[\w.+\-]+)(?=\s|$)"
)
CITE_RELEASE = re.compile(r"^(?P<source>\S.*?) @release:(?P<ref>[\w.+\-]+)(?=\s|$)")


@dataclasses.dataclass(frozen=True)
class Cite:
    """One parsed citation."""

    source: str  # "pytorch/pytorch", "pypi:torch", "pypi:nvidia-cudnn-cu13 libcudnn_graph.so.9"
    path: Optional[str]  # "torch/backends/cudnn/__init__.py" (None for a release-wide cite)
    lines: Optional[str]  # "60-67" (None for a release-wide cite)
    ref: str  # tag, commit or release
    text: str  # the whole citation

    def short(self) -> str:
        """file:line@tag, or what@release."""
        if self.path is not None:
            return f"{self.source} {self.path}:{self.lines}@{self.ref}"
        return f"{self.source} @release:{self.ref}"


def parse_cite(text: str) -> Optional[Cite]:
    """The citation's source, file, lines and ref; None when it names neither a line nor a release."""
    m = CITE_SOURCE.match(text)
    if m:
        return Cite(
            source=m.group("source"),
            path=m.group("path"),
            lines=m.group("lines"),
            ref=m.group("ref"),
            text=text,
        )
    m = CITE_RELEASE.match(text)
    if m:
        return Cite(source=m.group("source"), path=None, lines=None, ref=m.group("ref"), text=text)
    return None


@dataclasses.dataclass(frozen=True)
class Family:
    """One library family: which file stems, printed names and symbols are its own."""

    name: str
    role: str
    stems: Tuple[str, ...]
    names: Tuple[str, ...]
    symbols: Tuple[Pattern, ...]
    missing: Optional[str]
    mismatch: Optional[str]
    damaged: Optional[str]
    cites: Tuple[str, ...]
    #: version-node names this family's libraries define (GLIBC_2.34, GLIBCXX_3.4.29): in "version `X' not
    #: found" the node, not the file name, says whose version is missing
    nodes: Tuple[Pattern, ...] = ()
    check: str = ""  # how to see which versions the system's copy defines


@dataclasses.dataclass(frozen=True)
class LoaderRule:
    """One wording of a failed library load."""

    kind: str
    patterns: Tuple[Pattern, ...]
    templates: Tuple[str, ...]
    cites: Tuple[str, ...]
    where: str = ""


@dataclasses.dataclass(frozen=True)
class Alternative:
    id: str
    confidence: float
    title: str
    check: str


@dataclasses.dataclass(frozen=True)
class Rule:
    """One [[rule]]: a message with its finding, or ranked alternatives."""

    id: str
    title: str
    patterns: Tuple[Pattern, ...]
    fix: str
    cites: Tuple[str, ...]
    templates: Tuple[str, ...] = ()
    sources: Tuple[str, ...] = ()
    decisive: bool = False
    confidence: Optional[float] = None
    requires: Tuple[Pattern, ...] = ()
    excludes: Tuple[Pattern, ...] = ()
    supports: Tuple[Pattern, ...] = ()
    when_env: Tuple[str, ...] = ()
    versions: Optional[Tuple[str, str]] = None  # (loaded group, built group)
    library: Optional[str] = None  # group naming the library of `versions` (else cuDNN)
    distinct_dirs: Optional[str] = None
    severity: str = "error"
    benign: bool = False
    check: str = ""
    alternatives: Tuple[Alternative, ...] = ()
    frameworks: int = 0  # fires only when the text names this many GPU frameworks
    where: str = ""  # "errors.toml:123", for reports
    #: the message is printed also when the versions are compatible (a warning, not a failed
    #: check): a compatible pair is then benign. A failed check is never benign.
    compatible_is_benign: bool = False
    #: how the emitter prints the loaded version: "" (as it is), or "thousands": cudnnGetVersion()
    #: // 1000 "." cudnnGetVersion() % 1000 // 100 (cuDNN 8's formula, which reads 9.1 as "90.1")
    loaded_form: str = ""
    #: an [[evidence]] kind this reading needs to rank first (else it drops below its alternatives)
    needs_evidence: str = ""

    @property
    def base(self) -> float:
        if self.confidence is not None:
            return self.confidence
        return BASE_DECISIVE if self.decisive else BASE_PLAIN


#: What a line of evidence inside a paste shows (fixer.explainer.evidence reads it).
EVIDENCE_KINDS = (
    "cudnn-present",
    "cudnn-loaded",
    "memory-pressure",
    "framework-version",
    "cudnn-caller-ships-cudnn",
    "driver-version",
    "cuda-runtime",
    "cuda-toolkit-named",
    "cudnn-major-named",
    "cudnn-part-absent",
    "cudnn-framework-copy",
    "nvidia-gpu",
    "other-gpu",
    "no-nvidia-gpu-said",
    "in-container",
    "torch-warned-no-driver",
    "torch-raised-no-driver",
    "visible-devices-named",
)


@dataclasses.dataclass(frozen=True)
class Evidence:
    """One [[evidence]] table: output a user pastes beside an error (ldconfig -p, ls, pip list,
    nvidia-smi) that shows what is on the machine; named groups `major`, `version`, `name`,
    `used` / `total`."""

    kind: str
    patterns: Tuple[Pattern, ...]
    cites: Tuple[str, ...]
    where: str = ""


@dataclasses.dataclass(frozen=True)
class Fallback:
    """One [[fallback]]: the words of a finding (its definition's nouns and verbs: "no GPU ...
    found", "out of memory", a library of a family beside "not found"), read only where no message
    of the catalogue is recognised but harmless lines. It ranks what such a text shows, as a guess with the check
    that decides; it is no rule about a message, so it has a `basis` (what the words mean) and
    no emitter cite. `id` is a finding id; or `family` names the kind of failure ("missing") and
    the family of the library the `lib` group names, or of the display name in `name`, decides."""

    id: str
    title: str
    patterns: Tuple[Pattern, ...]
    check: str
    fix: str
    basis: str
    examples: Tuple[str, ...] = ()
    family: str = ""
    where: str = ""
    #: words that keep it from being read at all (log-noise's: any line that reports an error)
    excludes: Tuple[Pattern, ...] = ()


@dataclasses.dataclass(frozen=True)
class Catalogue:
    families: Tuple[Family, ...]
    loaders: Tuple[LoaderRule, ...]
    rules: Tuple[Rule, ...]
    path: str = RULES_FILE
    evidence: Tuple[Evidence, ...] = ()
    #: the [[fallback]] tables, in the file's order
    fallbacks: Tuple[Fallback, ...] = ()
    #: every literal of the rules' and loaders' patterns (scan.wrapped_needles), for join_wrapped
    wrapped: FrozenSet[bytes] = frozenset()


# ---------------------------------------------------------------------------------------
# machine facts a rule may name in `when_env` ("!fact" negates). None: cannot tell.
# ---------------------------------------------------------------------------------------


def cudnn_copies(env: Environment) -> List[LibraryCopy]:
    return [c for c in env.libraries if c.library == "cudnn"]


FACTS: Dict[str, Any] = {
    "gpu": lambda e: (
        bool(e.gpus) if (e.gpus or e.driver is not None or e.runtime.accelerator) else None
    ),
    "cudnn-copies>1": lambda e: len(cudnn_copies(e)) > 1,
    "cudnn-copy-incomplete": lambda e: any(c.missing for c in cudnn_copies(e)),
    "cudnn-copy-mixed": lambda e: any(c.mixed for c in cudnn_copies(e)),
    "cudnn-on-ld-library-path": lambda e: any(
        c.directory in (e.env.get("LD_LIBRARY_PATH") or "").split(":") for c in cudnn_copies(e)
    ),
    "gpu-memory-nearly-full": lambda e: None,  # the Environment does not record memory in use
}

_RULE_KEYS = {
    "id",
    "title",
    "patterns",
    "decisive",
    "confidence",
    "requires",
    "excludes",
    "supports",
    "when_env",
    "versions",
    "library",
    "distinct_dirs",
    "severity",
    "fix",
    "sources",
    "cites",
    "templates",
    "check",
    "alternatives",
    "benign",
    "frameworks",
    "note",
    "compatible_is_benign",
    "loaded_form",
    "needs_evidence",
}
_EVIDENCE_KEYS = {"kind", "patterns", "cites", "note"}
_FAMILY_KEYS = {
    "name",
    "role",
    "stems",
    "names",
    "symbols",
    "missing",
    "mismatch",
    "damaged",
    "cites",
    "note",
    "nodes",
    "check",
}
_LOADER_KEYS = {"kind", "patterns", "templates", "cites", "note"}
_FALLBACK_KEYS = {
    "id",
    "family",
    "title",
    "patterns",
    "check",
    "fix",
    "basis",
    "examples",
    "excludes",
    "note",
}
#: the kinds of failure a [[fallback]]'s `family` may name (Family's fields)
FALLBACK_FAMILY_KINDS = ("missing", "mismatch")


def rules_files(extra_dirs: Sequence[str] = ()) -> List[Path]:
    """errors.toml in effect: the shipped one, replaced by one in a `--recipes DIR` (last wins)."""
    chosen: Optional[Path] = None
    shipped = recipes_dir() / RULES_FILE
    if shipped.is_file():
        chosen = shipped
    for d in extra_dirs:
        p = Path(d)
        if not p.is_dir():
            raise RecipeError(
                f"recipe directory {d!r} does not exist or is not a directory (--recipes)",
                path=str(d),
            )
        if (p / RULES_FILE).is_file():
            chosen = p / RULES_FILE
    return [chosen] if chosen else []


_CACHE: Dict[Tuple[Any, ...], Catalogue] = {}
_LOCK = threading.Lock()


def load_catalogue(extra_dirs: Sequence[str] = ()) -> Catalogue:
    """The checked catalogue (cached per file, mtime and size)."""
    files = rules_files(extra_dirs)
    key = tuple((str(f), os.stat(f).st_mtime_ns, os.stat(f).st_size) for f in files)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    if not files:
        raise RecipeError(
            f"no {RULES_FILE} found (the shipped catalogue is missing)", path=str(recipes_dir())
        )
    known = _facts_read(key)
    cat, derived = _parse(files[-1].read_text(encoding="utf-8"), str(files[-1]), known or {})
    if known is None:
        _facts_write(key, derived)
    with _LOCK:
        _CACHE[key] = cat
    return cat


#: Version of the facts cache's JSON (its "schema" key); a file of another version is ignored.
FACTS_SCHEMA = 1


def _facts_path(key: Tuple[Any, ...]) -> Path:
    """The facts cache of the catalogue files in `key` (path, mtime, size), as this module and
    scan.py derive them under this Python (its `re`: fixer.system.cachefile.digest)."""
    return cache_dir() / "catalogue" / f"{cachefile.digest(key, (__file__, scan.__file__))}.json"


def _facts_read(key: Tuple[Any, ...]) -> Optional[Dict[str, Facts]]:
    """What an earlier process derived from each pattern of these files (fixer.explainer.scan:
    width, anchors, literals, groups), after compiling every one of them: with it, loading
    parses no pattern and compiles each on first use (the catalogue's ~220 patterns are most of
    `explain`'s start-up). The file is read only when it is this user's own and private
    (fixer.system.cachefile) and only in the shape written; anything else means no cache."""
    data = cachefile.read_json(_facts_path(key))
    raw = (
        data.get("facts") if isinstance(data, dict) and data.get("schema") == FACTS_SCHEMA else None
    )
    if not isinstance(raw, dict):
        return None
    out: Dict[str, Facts] = {}
    for source, f in raw.items():
        if not (
            isinstance(f, list)
            and len(f) == 4
            and type(f[0]) is int
            and 0 <= f[0] <= MAX_WIDTH
            and all(isinstance(x, list) and all(isinstance(v, str) for v in x) for x in f[1:])
        ):
            return None
        out[source] = (f[0], tuple(f[1]), tuple(f[2]), tuple(f[3]))
    return out


def _facts_write(key: Tuple[Any, ...], facts: Dict[str, Facts]) -> None:
    payload = {"schema": FACTS_SCHEMA, "facts": facts}
    write_cache(_facts_path(key), json.dumps(payload, separators=(",", ":")).encode())


def load_rules(extra_dirs: Sequence[str] = ()) -> Tuple[Rule, ...]:
    """The [[rule]] tables of the catalogue in effect."""
    return load_catalogue(extra_dirs).rules


def parse_rules(text: str, path: str = RULES_FILE) -> Tuple[Rule, ...]:
    return parse_catalogue(text, path).rules


def parse_catalogue(text: str, path: str = RULES_FILE) -> Catalogue:
    """Parse and check one errors.toml text. The first problem raises RecipeError(path:line)."""
    return _parse(text, path, {})[0]


def _parse(text: str, path: str, known: Dict[str, Facts]) -> Tuple[Catalogue, Dict[str, Facts]]:
    """parse_catalogue, with the facts of the patterns already `known` (load_catalogue's cache);
    returns the catalogue and every pattern's facts."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        raise RecipeError(
            "TOML syntax error: " + re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)),
            path=path,
            line=int(m.group(1)) if m else None,
        )
    lines = _Lines(text)
    if doc.get("schema") != SCHEMA_VERSION or isinstance(doc.get("schema"), bool):
        raise RecipeError(
            f"expected `schema = {SCHEMA_VERSION}` at the top of the file, got {doc.get('schema')!r}",
            path=path,
            line=lines.top_key("schema") or 1,
        )
    tops = ["schema", "family", "loader", "rule", "evidence", "fallback"]
    for top in doc:
        if top not in tops:
            raise RecipeError(
                f"unknown table or key {top!r}{_did_you_mean(top, tops)}; "
                "an error catalogue holds `schema`, [[family]], [[loader]], [[rule]], [[evidence]] "
                "and [[fallback]] tables",
                path=path,
                line=lines.record(top, 0) or lines.top_key(top),
            )
    raw = doc.get("rule", [])
    if not isinstance(raw, list) or not raw:
        raise RecipeError("no [[rule]] tables", path=path, line=lines.top_key("rule") or 1)
    ctx = _Ctx(path, lines, known)
    families = tuple(_family(f, i, ctx) for i, f in enumerate(_list(doc, "family", ctx)))
    loaders = tuple(_loader(r, i, ctx) for i, r in enumerate(_list(doc, "loader", ctx)))
    rules = tuple(_rule(r, i, ctx) for i, r in enumerate(raw))
    evidence = tuple(_evidence(r, i, ctx) for i, r in enumerate(_list(doc, "evidence", ctx)))
    fallbacks = tuple(_fallback(r, i, ctx) for i, r in enumerate(_list(doc, "fallback", ctx)))
    wrapped = scan.wrapped_needles(
        [p for r in rules for p in r.patterns] + [p for lr in loaders for p in lr.patterns]
    )
    cat = Catalogue(
        families=families,
        loaders=loaders,
        rules=rules,
        path=path,
        evidence=evidence,
        wrapped=wrapped,
        fallbacks=fallbacks,
    )
    return cat, ctx.derived


class _Ctx:
    def __init__(self, path: str, lines: Any, known: Optional[Dict[str, Facts]] = None) -> None:
        self.path = path
        self.lines = lines
        self.known: Dict[str, Facts] = known or {}  # pattern source -> its facts, from the cache
        self.derived: Dict[str, Facts] = {}  # every pattern's facts, for the cache

    def bad(self, kind: str, i: int, msg: str, key: Optional[str] = None) -> RecipeError:
        line = self.lines.key(kind, i, key) if key else self.lines.record(kind, i)
        return RecipeError(
            f"[[{kind}]] {i + 1}: {msg}", path=self.path, line=line or self.lines.record(kind, i)
        )


def _list(doc: Dict[str, Any], kind: str, ctx: _Ctx) -> List[Any]:
    v = doc.get(kind, [])
    if not isinstance(v, list):
        raise RecipeError(
            f"{kind!r} must be [[{kind}]] tables", path=ctx.path, line=ctx.lines.top_key(kind)
        )
    return v


def _strs(
    r: Dict[str, Any], k: str, kind: str, i: int, ctx: _Ctx, allow_empty: bool = True
) -> Tuple[str, ...]:
    v = r.get(k, [])
    if isinstance(v, str):
        v = [v]
    if (
        not isinstance(v, list)
        or not all(isinstance(x, str) and x for x in v)
        or (not v and not allow_empty)
    ):
        raise ctx.bad(
            kind,
            i,
            f"{k!r} must be a {'non-empty ' if not allow_empty else ''}list of non-empty strings",
            k,
        )
    return tuple(v)


def _regexes(
    r: Dict[str, Any], k: str, kind: str, i: int, ctx: _Ctx, allow_empty: bool = True
) -> Tuple[Pattern, ...]:
    out = []
    for p in _strs(r, k, kind, i, ctx, allow_empty):
        try:
            pattern = Pattern(p, re.M, ctx.known.get(p))
            ctx.derived[p] = pattern.facts()
            out.append(pattern)
        except re.error as exc:
            raise ctx.bad(kind, i, f"{k!r}: bad regular expression {p!r}: {exc}", k)
        except UnboundedPattern as exc:
            raise ctx.bad(kind, i, f"{k!r}: pattern {p[:60]!r}: {exc}", k)
    return tuple(out)


def _keys(
    r: Any, allowed: Iterable[str], required: Iterable[str], kind: str, i: int, ctx: _Ctx
) -> None:
    if not isinstance(r, dict):
        raise ctx.bad(kind, i, "is not a table")
    allowed = set(allowed)
    for k in r:
        if k not in allowed:
            raise ctx.bad(kind, i, f"unknown key {k!r}{_did_you_mean(k, allowed)}", k)
    for k in required:
        if k not in r:
            raise ctx.bad(kind, i, f"missing key {k!r}")


def _cites(r: Dict[str, Any], kind: str, i: int, ctx: _Ctx) -> Tuple[str, ...]:
    """`cites`: non-empty, and each one names its file and line at a tag/commit, or its release."""
    out = _strs(r, "cites", kind, i, ctx, allow_empty=False)
    for c in out:
        if parse_cite(c) is None:
            raise ctx.bad(
                kind,
                i,
                f"cite {c[:60]!r} names no line and no release: write "
                "'owner/repo path:LINE@TAG (...)', 'pypi:NAME path:LINE@VERSION (...)' or "
                "'WHAT @release:RELEASE (...)'",
                "cites",
            )
    return out


def _finding_id(v: Any, k: str, kind: str, i: int, ctx: _Ctx) -> str:
    if v not in FINDING_IDS:
        raise ctx.bad(
            kind, i, f"{k} {v!r} is not a finding id{_did_you_mean(str(v), FINDING_IDS)}", k
        )
    return str(v)


def _templates(r: Dict[str, Any], kind: str, i: int, ctx: _Ctx) -> Tuple[str, ...]:
    out = _strs(r, "templates", kind, i, ctx)
    for t in out:
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(t) if f is not None]
        except ValueError as exc:
            raise ctx.bad(kind, i, f"template {t[:40]!r}...: {exc}", "templates")
        for f in fields:
            if f not in TEMPLATE_SLOTS:
                raise ctx.bad(
                    kind,
                    i,
                    f"template uses {{{f}}}, which is not a slot{_did_you_mean(f, TEMPLATE_SLOTS)}",
                    "templates",
                )
    return out


def _family(r: Any, i: int, ctx: _Ctx) -> Family:
    _keys(r, _FAMILY_KEYS, ("name", "role", "stems", "cites"), "family", i, ctx)
    if r["role"] not in ROLES:
        raise ctx.bad("family", i, f"role {r['role']!r} must be one of {', '.join(ROLES)}", "role")
    ids: Dict[str, Optional[str]] = {}
    for k in ("missing", "mismatch", "damaged"):
        ids[k] = _finding_id(r[k], k, "family", i, ctx) if k in r else None
    return Family(
        name=str(r["name"]),
        role=str(r["role"]),
        stems=_strs(r, "stems", "family", i, ctx, False),
        names=_strs(r, "names", "family", i, ctx),
        symbols=_regexes(r, "symbols", "family", i, ctx),
        missing=ids["missing"],
        mismatch=ids["mismatch"],
        damaged=ids["damaged"],
        cites=_cites(r, "family", i, ctx),
        nodes=_regexes(r, "nodes", "family", i, ctx),
        check=str(r.get("check", "")),
    )


def _loader(r: Any, i: int, ctx: _Ctx) -> LoaderRule:
    _keys(r, _LOADER_KEYS, ("kind", "patterns", "cites"), "loader", i, ctx)
    if r["kind"] not in LOADER_KINDS:
        raise ctx.bad(
            "loader", i, f"kind {r['kind']!r} must be one of {', '.join(LOADER_KINDS)}", "kind"
        )
    pats = _regexes(r, "patterns", "loader", i, ctx, False)
    for p in pats:
        if not ({"lib", "libs", "needer", "sym"} & set(p.groups)):
            raise ctx.bad(
                "loader",
                i,
                f"pattern {p.pattern[:40]!r} captures no library (group lib, libs or needer)",
                "patterns",
            )
    return LoaderRule(
        kind=str(r["kind"]),
        patterns=pats,
        templates=_templates(r, "loader", i, ctx),
        cites=_cites(r, "loader", i, ctx),
        where=f"{os.path.basename(ctx.path)}:{ctx.lines.record('loader', i) or '?'}",
    )


def _number(r: Dict[str, Any], key: str, kind: str, i: int, ctx: _Ctx) -> Optional[float]:
    v = r.get(key)
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1):
        raise ctx.bad(kind, i, f"{key!r} must be a number in (0, 1]", key)
    return None if v is None else float(v)


def _rule_flags(r: Dict[str, Any], kind: str, i: int, ctx: _Ctx) -> str:
    """Checks title, fix, the booleans and severity; returns the severity."""
    for k in ("title", "fix"):
        if not isinstance(r[k], str) or not r[k].strip():
            raise ctx.bad(kind, i, f"{k!r} must be a non-empty string", k)
    for k in ("decisive", "benign", "compatible_is_benign"):
        if k in r and not isinstance(r[k], bool):
            raise ctx.bad(kind, i, f"{k!r} must be true or false", k)
    if r.get("loaded_form", "") not in ("", "thousands"):
        raise ctx.bad(kind, i, "'loaded_form' must be \"thousands\" (or left out)", "loaded_form")
    severity = r.get("severity", "error")
    if severity not in ("error", "warning", "info"):
        raise ctx.bad(
            kind, i, f"'severity' {severity!r} must be error, warning or info", "severity"
        )
    fws = r.get("frameworks", 0)
    if isinstance(fws, bool) or not isinstance(fws, int) or fws < 0:
        raise ctx.bad(
            kind,
            i,
            "'frameworks' must be a whole number (how many GPU frameworks the text must name)",
            "frameworks",
        )
    if not isinstance(r.get("check", ""), str):
        raise ctx.bad(kind, i, "'check' must be a string", "check")
    return str(severity)


def _rule_context(r: Dict[str, Any], kind: str, i: int, ctx: _Ctx) -> Tuple[str, ...]:
    """sources (URLs) and when_env (known machine facts); returns when_env."""
    for s in _strs(r, "sources", kind, i, ctx):
        if not s.startswith(("https://", "http://")):
            raise ctx.bad(kind, i, f"source {s!r} is not a URL", "sources")
    when_env = _strs(r, "when_env", kind, i, ctx)
    for f in when_env:
        if f.lstrip("!") not in FACTS:
            raise ctx.bad(
                kind,
                i,
                f"unknown environment fact {f!r}{_did_you_mean(f.lstrip('!'), FACTS)}: known are "
                + ", ".join(sorted(FACTS)),
                "when_env",
            )
    return when_env


def _rule_groups(
    r: Dict[str, Any], groups: Set[str], kind: str, i: int, ctx: _Ctx
) -> Tuple[Optional[Tuple[str, str]], Optional[str], Optional[str]]:
    """versions, library and distinct_dirs: each names a group the patterns capture."""
    versions = None
    if "versions" in r:
        v = r["versions"]
        if (
            not isinstance(v, dict)
            or set(v) != {"loaded", "built"}
            or not all(isinstance(x, str) for x in v.values())
        ):
            raise ctx.bad(
                kind, i, "'versions' must be { loaded = GROUP, built = GROUP }", "versions"
            )
        for g in v.values():
            if g not in groups:
                raise ctx.bad(
                    kind, i, f"'versions' names group {g!r}, which no pattern captures", "versions"
                )
        versions = (v["loaded"], v["built"])
    named: Dict[str, Optional[str]] = {}
    for key in ("library", "distinct_dirs"):
        val = r.get(key)
        if val is not None and (not isinstance(val, str) or val not in groups):
            raise ctx.bad(
                kind, i, f"{key!r} must name a group the patterns capture, got {val!r}", key
            )
        named[key] = val
    known = groups | {"loaded", "built", "dirs"}
    for k in ("title", "fix"):
        for _, field, _, _ in string.Formatter().parse(r[k]):
            if field is not None and field not in known:
                raise ctx.bad(kind, i, f"{k!r} uses {{{field}}}, which no pattern captures", k)
    return versions, named["library"], named["distinct_dirs"]


def _alternatives(
    r: Dict[str, Any], base: float, kind: str, i: int, ctx: _Ctx
) -> Tuple[Alternative, ...]:
    raw_alts = r.get("alternatives", [])
    if not isinstance(raw_alts, list):
        raise ctx.bad(
            kind,
            i,
            "'alternatives' must be a list of { id, confidence, title, check }",
            "alternatives",
        )
    alts = []
    for a in raw_alts:
        if not isinstance(a, dict) or set(a) != {"id", "confidence", "title", "check"}:
            raise ctx.bad(
                kind, i, "each alternative must be { id, confidence, title, check }", "alternatives"
            )
        aid = _finding_id(a["id"], "alternatives", kind, i, ctx)
        c = a["confidence"]
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not 0 < c <= 1:
            raise ctx.bad(
                kind, i, "an alternative's confidence must be a number in (0, 1]", "alternatives"
            )
        if c > base:
            raise ctx.bad(
                kind,
                i,
                f"alternative {aid!r} ({c}) is more likely than the rule itself ({base}): "
                "swap them",
                "alternatives",
            )
        alts.append(
            Alternative(id=aid, confidence=float(c), title=str(a["title"]), check=str(a["check"]))
        )
    return tuple(alts)


def _rule(r: Any, i: int, ctx: _Ctx) -> Rule:
    kind = "rule"
    _keys(r, _RULE_KEYS, ("id", "title", "patterns", "fix", "cites"), kind, i, ctx)
    rid = _finding_id(r["id"], "id", kind, i, ctx)
    patterns = _regexes(r, "patterns", kind, i, ctx, allow_empty=False)
    groups = set().union(*(p.groups for p in patterns))
    severity = _rule_flags(r, kind, i, ctx)
    conf = _number(r, "confidence", kind, i, ctx)
    cites = _cites(r, kind, i, ctx)
    when_env = _rule_context(r, kind, i, ctx)
    versions, library, distinct = _rule_groups(r, groups, kind, i, ctx)
    base = conf if conf is not None else (BASE_DECISIVE if r.get("decisive") else BASE_PLAIN)
    return Rule(
        id=rid,
        title=r["title"],
        patterns=patterns,
        fix=r["fix"],
        cites=cites,
        sources=_strs(r, "sources", kind, i, ctx),
        templates=_templates(r, kind, i, ctx),
        decisive=bool(r.get("decisive", False)),
        confidence=conf,
        requires=_regexes(r, "requires", kind, i, ctx),
        excludes=_regexes(r, "excludes", kind, i, ctx),
        supports=_regexes(r, "supports", kind, i, ctx),
        when_env=when_env,
        versions=versions,
        library=library,
        distinct_dirs=distinct,
        severity=severity,
        benign=bool(r.get("benign", False)),
        compatible_is_benign=bool(r.get("compatible_is_benign", False)),
        loaded_form=str(r.get("loaded_form", "")),
        needs_evidence=_needs_evidence(r, kind, i, ctx),
        check=str(r.get("check", "")),
        alternatives=_alternatives(r, base, kind, i, ctx),
        frameworks=int(r.get("frameworks", 0)),
        where=f"{os.path.basename(ctx.path)}:{ctx.lines.record('rule', i) or '?'}",
    )


def _needs_evidence(r: Dict[str, Any], kind: str, i: int, ctx: _Ctx) -> str:
    v = r.get("needs_evidence", "")
    if v and v not in EVIDENCE_KINDS:
        raise ctx.bad(
            kind,
            i,
            f"'needs_evidence' must be one of {', '.join(EVIDENCE_KINDS)}",
            "needs_evidence",
        )
    return str(v)


def _evidence(r: Any, i: int, ctx: _Ctx) -> Evidence:
    _keys(r, _EVIDENCE_KEYS, ("kind", "patterns", "cites"), "evidence", i, ctx)
    if r["kind"] not in EVIDENCE_KINDS:
        raise ctx.bad(
            "evidence",
            i,
            f"kind {r['kind']!r} must be one of {', '.join(EVIDENCE_KINDS)}",
            "kind",
        )
    return Evidence(
        kind=str(r["kind"]),
        patterns=_regexes(r, "patterns", "evidence", i, ctx, False),
        cites=_cites(r, "evidence", i, ctx),
        where=f"{os.path.basename(ctx.path)}:{ctx.lines.record('evidence', i) or '?'}",
    )


def _fallback(r: Any, i: int, ctx: _Ctx) -> Fallback:
    kind = "fallback"
    _keys(
        r, _FALLBACK_KEYS, ("title", "patterns", "check", "fix", "basis", "examples"), kind, i, ctx
    )
    fid = _finding_id(r["id"], "id", kind, i, ctx) if "id" in r else ""
    family = str(r.get("family", ""))
    if bool(fid) == bool(family):
        raise ctx.bad(kind, i, "give either `id` (a finding id) or `family` (a kind of failure)")
    if family and family not in FALLBACK_FAMILY_KINDS:
        raise ctx.bad(
            kind,
            i,
            f"family {family!r} must be one of {', '.join(FALLBACK_FAMILY_KINDS)}",
            "family",
        )
    patterns = _regexes(r, "patterns", kind, i, ctx, allow_empty=False)
    if family and not all({"lib", "name"} & set(p.groups) for p in patterns):
        raise ctx.bad(
            kind, i, "with `family`, each pattern names a `lib` or a `name` group", "patterns"
        )
    for k in ("title", "check", "fix", "basis"):
        if not isinstance(r[k], str) or not r[k].strip():
            raise ctx.bad(kind, i, f"{k!r} must be a non-empty string", k)
    return Fallback(
        id=fid,
        title=r["title"],
        patterns=patterns,
        check=r["check"],
        fix=r["fix"],
        basis=r["basis"],
        examples=_strs(r, "examples", kind, i, ctx, allow_empty=False),
        family=family,
        where=f"{os.path.basename(ctx.path)}:{ctx.lines.record('fallback', i) or '?'}",
        excludes=_regexes(r, "excludes", kind, i, ctx),
    )
