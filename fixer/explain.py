"""explain: turn an error text that a user pastes into ranked causes (findings), with how sure.

The same message means different things in different contexts ("Failed to get convolution
algorithm" is a version mismatch when TensorFlow printed "Loaded runtime CuDNN library: X but
source was compiled with: Y" above it, and out of memory otherwise; "Unable to register cuDNN
factory" is harmless). So every rule of recipes/errors.toml gives a base confidence (decisive
lines name their cause by themselves), context raises or lowers it (`requires`, `excludes`,
`supports`, facts of the detected Environment), captured versions are compared (a "mismatch"
whose loaded version is newer is no mismatch), and the findings are ranked. A harmless line
never outranks a real cause.

With an Environment, the text is combined with the machine: the copy that matched the loaded
version and a copy that would satisfy the build are named by path (cudnn-shadowed when a good
copy exists but lost), and fixer.diagnose's findings (when that module is present) are merged.
"""
from __future__ import annotations

import dataclasses
import os
import re
import string
import threading
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from ._versions import version_key
from ._compat import tomllib
from ._paths import recipes_dir
from .errors import RecipeError, UsageError
from .model import FINDING_IDS, Environment, Finding, LibraryCopy, Recipes

RULES_FILE = "errors.toml"
SCHEMA_VERSION = 1
_BASE_DECISIVE = 0.9
_BASE_PLAIN = 0.5
_MAX = 0.99

try:  # the recipes loader's line finder and "did you mean" (same file:line error style)
    from .recipes import _did_you_mean, _Lines
except ImportError:  # pragma: no cover - recipes.py ships with the package
    import difflib

    def _did_you_mean(word: str, choices: Iterable[str]) -> str:
        close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
        return f" (did you mean {close[0]!r}?)" if close else ""

    class _Lines:  # type: ignore[no-redef]
        def __init__(self, text: str) -> None:
            self.text = text

        def record(self, kind: str, n: int) -> Optional[int]:
            offs = [m.start() for m in re.finditer(r"^[ \t]*\[\[[ \t]*" + re.escape(kind) + r"[ \t]*\]\]", self.text, re.M)]
            return self.text.count("\n", 0, offs[n]) + 1 if n < len(offs) else None

        def key(self, kind: str, n: int, key: str) -> Optional[int]:
            return self.record(kind, n)

        def top_key(self, key: str) -> Optional[int]:
            m = re.search(r"^[ \t]*" + re.escape(key) + r"[ \t]*=", self.text, re.M)
            return self.text.count("\n", 0, m.start()) + 1 if m else None


# ---------------------------------------------------------------------------------------
# the rules
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Rule:
    """One [[rule]] of errors.toml, checked and compiled."""

    id: str
    title: str
    patterns: Tuple["re.Pattern[str]", ...]
    fix: str
    sources: Tuple[str, ...]
    decisive: bool = False
    confidence: Optional[float] = None
    requires: Tuple["re.Pattern[str]", ...] = ()
    excludes: Tuple["re.Pattern[str]", ...] = ()
    supports: Tuple["re.Pattern[str]", ...] = ()
    when_env: Tuple[str, ...] = ()
    versions: Optional[Tuple[str, str]] = None     # (loaded group, built group)
    distinct_dirs: Optional[str] = None
    severity: str = "error"
    where: str = ""                                 # "errors.toml:123", for reports

    @property
    def base(self) -> float:
        if self.confidence is not None:
            return self.confidence
        return _BASE_DECISIVE if self.decisive else _BASE_PLAIN


def _fact_cudnn_copies(env: Environment) -> List[LibraryCopy]:
    return [c for c in env.libraries if c.library == "cudnn"]


#: Environment facts a rule may name in `when_env` ("!fact" negates). None: cannot tell.
FACTS: Dict[str, Callable[[Environment], Optional[bool]]] = {
    "gpu": lambda e: bool(e.gpus),
    "cudnn-copies>1": lambda e: len(_fact_cudnn_copies(e)) > 1,
    "cudnn-copy-incomplete": lambda e: any(c.missing for c in _fact_cudnn_copies(e)),
    "cudnn-copy-mixed": lambda e: any(c.mixed for c in _fact_cudnn_copies(e)),
    "cudnn-on-ld-library-path": lambda e: any(
        c.directory in (e.env.get("LD_LIBRARY_PATH") or "").split(":") for c in _fact_cudnn_copies(e)),
    "gpu-memory-nearly-full": lambda e: None,   # the Environment does not record memory in use
}

_KEYS = {"id", "title", "patterns", "decisive", "confidence", "requires", "excludes", "supports", "when_env",
         "versions", "distinct_dirs", "severity", "fix", "sources", "note"}


def rules_files(extra_dirs: Sequence[str] = ()) -> List[Path]:
    """errors.toml in effect: the shipped one, replaced by one in a `--recipes DIR` (last wins)."""
    chosen: Optional[Path] = None
    shipped = recipes_dir() / RULES_FILE
    if shipped.is_file():
        chosen = shipped
    for d in extra_dirs:
        p = Path(d)
        if not p.is_dir():
            raise RecipeError(f"recipe directory {d!r} does not exist or is not a directory (--recipes)", path=str(d))
        if (p / RULES_FILE).is_file():
            chosen = p / RULES_FILE
    return [chosen] if chosen else []


_CACHE: Dict[Tuple[Any, ...], Tuple[Rule, ...]] = {}
_LOCK = threading.Lock()


def load_rules(extra_dirs: Sequence[str] = ()) -> Tuple[Rule, ...]:
    """The checked rules (cached per file and mtime). Raises RecipeError naming file:line."""
    files = rules_files(extra_dirs)
    key = tuple((str(f), os.stat(f).st_mtime_ns, os.stat(f).st_size) for f in files)
    with _LOCK:
        if key in _CACHE:
            return _CACHE[key]
    rules: List[Rule] = []
    for f in files:
        rules.extend(parse_rules(f.read_text(encoding="utf-8"), str(f)))
    out = tuple(rules)
    with _LOCK:
        _CACHE[key] = out
    return out


def parse_rules(text: str, path: str = RULES_FILE) -> Tuple[Rule, ...]:
    """Parse and check one errors.toml text. The first problem raises RecipeError(path:line)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        raise RecipeError("TOML syntax error: " + re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)),
                          path=path, line=int(m.group(1)) if m else None)
    lines = _Lines(text)
    if doc.get("schema") != SCHEMA_VERSION or isinstance(doc.get("schema"), bool):
        raise RecipeError(f"expected `schema = {SCHEMA_VERSION}` at the top of the file, got {doc.get('schema')!r}",
                          path=path, line=lines.top_key("schema") or 1)
    for top in doc:
        if top not in ("schema", "rule"):
            raise RecipeError(f"unknown table or key {top!r}{_did_you_mean(top, ['rule', 'schema'])}; "
                              "an error-rules file holds `schema` and [[rule]] tables", path=path,
                              line=lines.record(top, 0) or lines.top_key(top))
    raw = doc.get("rule", [])
    if not isinstance(raw, list) or not raw:
        raise RecipeError("no [[rule]] tables", path=path, line=lines.top_key("rule") or 1)
    return tuple(_rule(r, i, path, lines) for i, r in enumerate(raw))


def _rule(r: Any, i: int, path: str, lines: Any) -> Rule:
    def bad(msg: str, key: Optional[str] = None) -> RecipeError:
        line = lines.key("rule", i, key) if key else lines.record("rule", i)
        return RecipeError(f"[[rule]] {i + 1}: {msg}", path=path, line=line or lines.record("rule", i))

    if not isinstance(r, dict):
        raise bad("is not a table")
    for k in r:
        if k not in _KEYS:
            raise bad(f"unknown key {k!r}{_did_you_mean(k, _KEYS)}", k)
    for k in ("id", "title", "patterns", "fix", "sources"):
        if k not in r:
            raise bad(f"missing key {k!r}")
    rid = r["id"]
    if rid not in FINDING_IDS:
        raise bad(f"id {rid!r} is not a finding id{_did_you_mean(str(rid), FINDING_IDS)}", "id")

    def strs(k: str, allow_empty: bool = True) -> Tuple[str, ...]:
        v = r.get(k, [])
        if isinstance(v, str):
            v = [v]
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v) or (not v and not allow_empty):
            raise bad(f"{k!r} must be a {'non-empty ' if not allow_empty else ''}list of non-empty strings", k)
        return tuple(v)

    def regexes(k: str, allow_empty: bool = True) -> Tuple["re.Pattern[str]", ...]:
        out = []
        for p in strs(k, allow_empty):
            try:
                out.append(re.compile(p, re.M))
            except re.error as exc:
                raise bad(f"{k!r}: bad regular expression {p!r}: {exc}", k)
        return tuple(out)

    patterns = regexes("patterns", allow_empty=False)
    groups = set().union(*(p.groupindex for p in patterns))
    for k in ("title", "fix"):
        if not isinstance(r[k], str) or not r[k].strip():
            raise bad(f"{k!r} must be a non-empty string", k)
    for k in ("decisive",):
        if k in r and not isinstance(r[k], bool):
            raise bad(f"{k!r} must be true or false", k)
    conf = r.get("confidence")
    if conf is not None and (isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 < conf <= 1):
        raise bad("'confidence' must be a number in (0, 1]", "confidence")
    severity = r.get("severity", "error")
    if severity not in ("error", "warning", "info"):
        raise bad(f"'severity' {severity!r} must be error, warning or info", "severity")
    sources = strs("sources", allow_empty=False)
    for s in sources:
        if not s.startswith(("https://", "http://")):
            raise bad(f"source {s!r} is not a URL", "sources")
    when_env = strs("when_env")
    for f in when_env:
        if f.lstrip("!") not in FACTS:
            raise bad(f"unknown environment fact {f!r}{_did_you_mean(f.lstrip('!'), FACTS)}: known are "
                      + ", ".join(sorted(FACTS)), "when_env")
    versions = None
    if "versions" in r:
        v = r["versions"]
        if not isinstance(v, dict) or set(v) != {"loaded", "built"} or not all(isinstance(x, str) for x in v.values()):
            raise bad("'versions' must be { loaded = GROUP, built = GROUP }", "versions")
        for g in v.values():
            if g not in groups:
                raise bad(f"'versions' names group {g!r}, which no pattern captures", "versions")
        versions = (v["loaded"], v["built"])
    distinct = r.get("distinct_dirs")
    if distinct is not None and (not isinstance(distinct, str) or distinct not in groups):
        raise bad(f"'distinct_dirs' must name a group the patterns capture, got {distinct!r}", "distinct_dirs")
    known = groups | {"loaded", "built"}
    for k in ("title", "fix"):
        for _, field, _, _ in string.Formatter().parse(r[k]):
            if field is not None and field not in known:
                raise bad(f"{k!r} uses {{{field}}}, which no pattern captures", k)
    return Rule(
        id=rid, title=r["title"], patterns=patterns, fix=r["fix"], sources=sources,
        decisive=bool(r.get("decisive", False)), confidence=float(conf) if conf is not None else None,
        requires=regexes("requires"), excludes=regexes("excludes"), supports=regexes("supports"),
        when_env=when_env, versions=versions, distinct_dirs=distinct, severity=severity,
        where=f"{os.path.basename(path)}:{lines.record('rule', i) or '?'}",
    )


# ---------------------------------------------------------------------------------------
# versions in the forms the frameworks print them
# ---------------------------------------------------------------------------------------


def normalize_version(text: str) -> Optional[str]:
    """"(9, 19, 0)" / "9.19.0" / "91900" / "7102" / "8906" -> "9.19.0" / ... / "7.1.2" / "8.9.6"."""
    t = text.strip().strip("()")
    if "," in t:
        parts = [p.strip() for p in t.split(",") if p.strip()]
        return ".".join(parts) if all(p.isdigit() for p in parts) else None
    if re.fullmatch(r"\d+(?:\.\d+)+", t):
        return t
    if t.isdigit() and int(t) >= 1000:
        from .rules import cudnn_version_from_int

        return cudnn_version_from_int(int(t))
    return None


# ---------------------------------------------------------------------------------------
# matching
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Hit:
    finding: Finding
    decisive: bool
    offset: int
    rule: Rule
    captures: Dict[str, str]


@dataclasses.dataclass(frozen=True)
class Explanation:
    """What explain found: ranked findings, whether the TEXT was recognised (machine-only
    findings do not count), and notes on what was combined."""

    findings: Tuple[Finding, ...]
    recognised: bool
    rules: Tuple[str, ...] = ()                 # where the rules that fired live, "errors.toml:42"
    notes: Tuple[str, ...] = ()


def _line_at(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line = text[start:end if end >= 0 else len(text)].strip()
    return line if len(line) <= 300 else line[:297] + "..."


def _match_rule(rule: Rule, text: str, env: Optional[Environment]) -> Optional[_Hit]:
    if any(p.search(text) for p in rule.excludes):
        return None
    if not all(p.search(text) for p in rule.requires):
        return None
    matches = [m for p in rule.patterns for m in p.finditer(text)]
    if not matches:
        return None
    matches.sort(key=lambda m: m.start())
    captures: Dict[str, str] = {}
    for m in matches:
        for k, v in m.groupdict().items():
            if v is not None and k not in captures:
                captures[k] = v
    rid = rule.id
    if rule.distinct_dirs:
        paths = []
        for m in matches:
            p = m.groupdict().get(rule.distinct_dirs)
            if p and p not in paths:
                paths.append(p)
        dirs = sorted({os.path.dirname(p) for p in paths})
        if len(dirs) < 2:
            return None
        captures["dirs"] = ", ".join(dirs)
    if rule.versions:
        lo = normalize_version(captures.get(rule.versions[0], ""))
        bu = normalize_version(captures.get(rule.versions[1], ""))
        if lo and bu:
            captures["loaded"], captures["built"] = lo, bu
            lt, bt = version_key(lo), version_key(bu)
            if lt[0] != bt[0]:
                rid = "cudnn-major-mismatch"
            elif lt[:2] >= bt[:2]:
                return None     # loaded is not older: whatever this is, it is not a too-old cuDNN
    conf = rule.base + 0.1 * sum(1 for p in rule.supports if p.search(text))
    if env is not None and rule.when_env:
        values = []
        for f in rule.when_env:
            v = FACTS[f.lstrip("!")](env)
            values.append(None if v is None else (not v if f.startswith("!") else v))
        if any(v is False for v in values):
            conf *= 0.5
        elif all(v is True for v in values):
            conf += 0.25
    fmt = _Format(captures)
    title = string.Formatter().vformat(rule.title, (), fmt)
    if rid == "cudnn-major-mismatch":
        title = f"The cuDNN that loaded ({captures.get('loaded')}) has another major version than the {captures.get('built')} the framework was built with"
    evidence = []
    for m in matches:
        line = _line_at(text, m.start())
        if line not in evidence:
            evidence.append(line)
        if len(evidence) >= 3:
            break
    finding = Finding(
        id=rid,  # type: ignore[arg-type]
        severity=rule.severity,  # type: ignore[arg-type]
        title=title,
        evidence=tuple(evidence) + tuple(f"source: {s}" for s in rule.sources[:1]),
        fix=string.Formatter().vformat(rule.fix, (), fmt),
        confidence=round(min(_MAX, conf), 3),
    )
    return _Hit(finding=finding, decisive=rule.decisive, offset=matches[0].start(), rule=rule, captures=captures)


class _Format(dict[str, str]):  # a PEP 585 base: same MRO as plain dict (3.9+)
    def __missing__(self, key: str) -> str:
        return "?"


def _rank(hits: List[_Hit]) -> List[_Hit]:
    """Best hit per finding id, then by confidence, decisiveness, position in the text.
    A harmless line never outranks a real cause."""
    best: Dict[str, _Hit] = {}
    for h in hits:
        cur = best.get(h.finding.id)
        if cur is None or (h.finding.confidence, h.decisive, -h.offset) > (cur.finding.confidence, cur.decisive, -cur.offset):
            best[h.finding.id] = h
    ranked = list(best.values())
    real = [h for h in ranked if h.finding.id != "log-noise"]
    if real:
        for h in ranked:
            if h.finding.id == "log-noise":
                h.finding = dataclasses.replace(h.finding, confidence=round(h.finding.confidence * 0.3, 3))
    ranked.sort(key=lambda h: (-h.finding.confidence, not h.decisive, h.offset))
    return ranked


# ---------------------------------------------------------------------------------------
# combining with the detected machine
# ---------------------------------------------------------------------------------------


def _describe(c: LibraryCopy) -> str:
    pkg = f", {c.package}" if c.package else ""
    return f"{c.origin} cuDNN {c.version or '?'} in {c.directory}{pkg}"


def _with_environment(hits: List[_Hit], env: Environment) -> List[Finding]:
    """Name the exact copies behind a version finding; add cudnn-shadowed when a copy that
    would satisfy the build exists on disk but lost to the older one."""
    extra: List[Finding] = []
    copies = _fact_cudnn_copies(env)
    for h in hits:
        f = h.finding
        if f.id not in ("cudnn-too-old", "cudnn-major-mismatch") or "loaded" not in h.captures:
            continue
        lo, bu = version_key(h.captures["loaded"]), version_key(h.captures["built"])
        loaded = [c for c in copies if c.version and version_key(c.version)[:2] == lo[:2]]
        good = [c for c in copies if c.version and version_key(c.version)[0] == bu[0] and version_key(c.version)[:2] >= bu[:2]]
        ev = tuple(f"loaded: {_describe(c)}" for c in loaded) + tuple(f"would satisfy the build: {_describe(c)}" for c in good)
        h.finding = dataclasses.replace(f, evidence=f.evidence + ev)
        if loaded and good:
            winner, want = loaded[0], good[0]
            extra.append(Finding(
                id="cudnn-shadowed", severity="error",
                title=f"cuDNN {winner.version} in {winner.directory} is loaded ahead of cuDNN {want.version} in {want.directory}",
                evidence=ev + f.evidence[:1],
                fix=f"Put {want.directory} first (or drop {winner.directory} from LD_LIBRARY_PATH / LD_PRELOAD / ld.so.conf), "
                    "or remove the older copy. `colab-cudnn-fix apply` plans it.",
                confidence=round(min(_MAX, f.confidence + 0.02), 3),
            ))
    return extra


def _diagnose(env: Environment, recipes: Optional[Recipes]) -> Tuple[List[Finding], Optional[str]]:
    try:
        from .diagnose import diagnose  # written by another area; optional here
    except ImportError:
        return [], None
    try:
        if recipes is None:
            from .recipes import load

            recipes = load()
        return list(diagnose(env, recipes)), None
    except Exception as exc:  # noqa: BLE001 - a failure there must not hide what the text says
        return [], f"diagnose failed: {type(exc).__name__}: {exc}"


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------


def analyze(
    text: str,
    env: Optional[Environment] = None,
    recipes: Optional[Recipes] = None,
    *,
    rules: Optional[Sequence[Rule]] = None,
    extra_dirs: Sequence[str] = (),
) -> Explanation:
    """explain(), with whether the text was recognised and notes (for the CLI)."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError("explain needs an error text: pass it as an argument, with --file FILE, or on stdin with -")
    rules = tuple(rules) if rules is not None else load_rules(extra_dirs)
    hits = [h for h in (_match_rule(r, text, env) for r in rules) if h is not None]
    ranked = _rank(hits)
    notes: List[str] = []
    extra: List[Finding] = []
    if env is not None:
        extra = _with_environment(ranked, env)
    findings = [h.finding for h in ranked]
    for e in extra:   # a shadowing finding goes right before the version finding it explains
        idx = next((i for i, f in enumerate(findings) if f.id in ("cudnn-too-old", "cudnn-major-mismatch")), len(findings))
        if all(f.id != e.id for f in findings):
            findings.insert(idx, e)
    recognised = bool(findings)
    if env is not None:
        machine, note = _diagnose(env, recipes)
        if note:
            notes.append(note)
        for m in machine:
            same = next((i for i, f in enumerate(findings) if f.id == m.id), None)
            if same is not None:
                f = findings[same]
                findings[same] = dataclasses.replace(
                    f, evidence=f.evidence + tuple(e for e in m.evidence if e not in f.evidence) + ("confirmed on this machine",),
                    confidence=round(min(_MAX, f.confidence + 0.1), 3), fix=f.fix or m.fix)
            else:
                findings.append(dataclasses.replace(m, confidence=round(min(m.confidence, 0.35), 3),
                                                    evidence=m.evidence + ("found on this machine (not named by the text)",)))
        findings.sort(key=lambda f: -f.confidence)
    return Explanation(findings=tuple(findings), recognised=recognised,
                       rules=tuple(h.rule.where for h in ranked), notes=tuple(notes))


def explain(text: str, env: Optional[Environment] = None, recipes: Optional[Recipes] = None) -> Tuple[Finding, ...]:
    """Ranked findings (most likely cause first, each with a confidence in 0..1) for an error
    text; with an Environment, combined with what is on the machine."""
    return analyze(text, env, recipes).findings
