"""Load and check the recipes: recipes/*.toml -> model.Recipes.

Recipes are the only place versions live (docs/design.md). Each file starts with `schema = 1` and
holds arrays of tables, one per record kind:

    [[build]]         one installable framework build (model.Build)
    [[cudnn]]         one cuDNN release (model.CudnnRelease)
    [[driver_floor]]  lowest driver per CUDA family / toolkit (model.CudaDriverFloor)
    [[gpu]]           one GPU model (model.GpuModel)
    [[colab_image]]   one Colab GPU runtime image (model.ColabImage)
    [[download]]      bytes of one distribution==version wheel (model.DownloadSize)
    [[dependencies]]  what installing one pip/conda/apt package brings along (model.DependencySet)

Every record has a `source`; `note` says what was checked or inferred. A bad file is refused
with a RecipeError naming FILE:LINE: unknown keys (with a "did you mean"), wrong types, bad
version/specifier/requirement strings, duplicates, and contradictions between records (a build
whose CUDA has no driver floor, a cuDNN pin that disagrees with the build's cudnn, a build without
CUDA that requires nvidia libraries, ...). tomllib gives no line numbers for values, so the line
of the n-th `[[table]]` header (and of a key inside it) is found by scanning the text.

`load(extra_dirs)` adds the `--recipes DIR` directories: a file there with the same name replaces
the shipped one, other files are added. Results are cached per (directories, file mtimes/sizes).
`errors.toml` (the error-message catalogue of fixer.explainer) has its own schema and is skipped.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import threading
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Tuple

from fixer.system.paths import cache_dir, recipes_dir, write_cache
from fixer.system.versions import version_key
from fixer.errors import RecipeError
from fixer.rules import cudnn_compatible, requirement_name, split_requirement
from fixer.model import (
    FRAMEWORKS,
    Build,
    ColabImage,
    CudaDriverFloor,
    CudnnRelease,
    DependencySet,
    DownloadSize,
    GpuModel,
    Recipes,
)
from fixer import __version__
from fixer import model
from fixer.system import cachefile
from fixer.model import to_dict
from fixer.system import plugins
from fixer.errors import UsageError

SCHEMA_VERSION = 1
#: Files in a recipe directory that are not recipes (own loader, own schema).
NOT_RECIPES = frozenset({"errors.toml"})

__all__ = ["SCHEMA_VERSION", "load", "validate", "recipe_files", "clear_cache", "NOT_RECIPES"]


# ---------------------------------------------------------------------------------------
# value checkers: each takes the raw TOML value and returns the model value or raises _Bad
# ---------------------------------------------------------------------------------------


class _Bad(ValueError):
    pass


def _type_name(v: Any) -> str:
    return {
        bool: "boolean",
        int: "integer",
        float: "float",
        str: "string",
        list: "array",
        dict: "table",
    }.get(type(v), type(v).__name__)


def _want_str(v: Any, what: str) -> str:
    if not isinstance(v, str):
        raise _Bad(f"expected {what}, got {_type_name(v)} {v!r}")
    return v


@functools.lru_cache(maxsize=None)
def _rx(pattern: str) -> "re.Pattern[str]":
    """`pattern` compiled on first use, not at import: the recipes are parsed only when the disk
    cache misses, and `doctor` imports this module at every start."""
    return re.compile(pattern)


def _regex(pattern: str, what: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        s = _want_str(v, what)
        if not _rx(pattern).fullmatch(s):
            raise _Bad(f"{s!r} is not {what}")
        return s

    return check


_VERSION_RX = r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?"


def _version(v: Any) -> str:
    """A public PEP 440 version ("2.11.0", "2.15.0.post1"); no local label."""
    s = _want_str(v, 'a version string like "2.11.0"')
    if _rx(_VERSION_RX).fullmatch(s):
        return s
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(s)
    except InvalidVersion:
        raise _Bad(f"{s!r} is not a valid version")
    if parsed.local:
        raise _Bad(
            f"{s!r} has a local label (+{parsed.local}): give the public version and put the variant in `variant`"
        )
    return s


def _specifier(v: Any) -> str:
    s = _want_str(v, 'a version specifier like ">=3.10,<3.15"')
    if re.fullmatch(
        r"(\s*(>=|<=|==|!=|<|>|~=)\s*\d+(\.\d+)*(\.\*)?\s*)(,\s*(>=|<=|==|!=|<|>|~=)\s*\d+(\.\d+)*(\.\*)?\s*)*",
        s,
    ):
        return s
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(s)
    except InvalidSpecifier:
        raise _Bad(f"{s!r} is not a valid version specifier")
    return s


# name[extras] followed by comma-separated clauses: the form every recipe uses. Anything else
# goes through packaging's full PEP 508 parser (slower, but rare).
_VTOK = r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9]+(\.[A-Za-z0-9]+)*)?(\.\*)?"
_REQ_FAST = (
    r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._-]+(,[A-Za-z0-9._-]+)*\])?"
    r"(\s*(===|==|!=|<=|>=|~=|<|>)\s*"
    + _VTOK
    + r"(\s*,\s*(===|==|!=|<=|>=|~=|<|>)\s*"
    + _VTOK
    + r")*)?"
)


def _requirement(v: Any) -> str:
    s = _want_str(v, 'a requirement string like "nvidia-cudnn-cu12==9.3.0.75"')
    if _rx(_REQ_FAST).fullmatch(s):
        return s
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        Requirement(s)
    except InvalidRequirement as exc:
        raise _Bad(f"{s!r} is not a valid requirement ({str(exc).splitlines()[0]})")
    return s


def _requirement_or_template(v: Any) -> str:
    """A requirement, or "NAME=={version}" (the version of the package that brings it)."""
    s = _want_str(v, 'a requirement string like "libcudnn=={version}"')
    if s.endswith("=={version}") and _rx(_REQ_FAST).fullmatch(s[: -len("=={version}")]):
        return s
    return _requirement(s)


def _list_of(item: Callable[[Any], Any], what: str) -> Callable[[Any], Tuple[Any, ...]]:
    def check(v: Any) -> Tuple[Any, ...]:
        if not isinstance(v, list):
            raise _Bad(f"expected an array of {what}, got {_type_name(v)} {v!r}")
        out = []
        for i, x in enumerate(v):
            try:
                out.append(item(x))
            except _Bad as exc:
                raise _Bad(f"item {i + 1}: {exc}")
        if len(set(out)) != len(out):
            dup = next(x for x in out if out.count(x) > 1)
            raise _Bad(f"{dup!r} is listed twice")
        return tuple(out)

    return check


def _map_of(
    key: Callable[[Any], str], value: Callable[[Any], str], what: str
) -> Callable[[Any], Dict[str, str]]:
    def check(v: Any) -> Dict[str, str]:
        if not isinstance(v, dict):
            raise _Bad(f"expected a table of {what}, got {_type_name(v)} {v!r}")
        out: Dict[str, str] = {}
        for k, x in v.items():
            try:
                out[key(k)] = value(x)
            except _Bad as exc:
                raise _Bad(f"entry {k!r}: {exc}")
        return out

    return check


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Bad(f"expected an integer, got {_type_name(v)} {v!r}")
    if v < 0:
        raise _Bad(f"{v} is negative")
    return v


def _bool(v: Any) -> bool:
    if not isinstance(v, bool):
        raise _Bad(f"expected true or false, got {_type_name(v)} {v!r}")
    return v


def _manager(v: Any) -> str:
    s = _want_str(v, '"pip", "conda" or "apt"')
    if s not in ("pip", "conda", "apt"):
        raise _Bad(f"unknown package manager {s!r}; known: pip, conda, apt")
    return s


def _cuda_major(v: Any) -> int:
    n = _int(v)
    if not 7 <= n <= 99:
        raise _Bad(f"{n} is not a CUDA major version")
    return n


def _framework(v: Any) -> str:
    s = _want_str(v, "a framework name")
    if s not in FRAMEWORKS:
        raise _Bad(
            f"unknown framework {s!r}{_did_you_mean(s, FRAMEWORKS)}; known: {', '.join(FRAMEWORKS)}"
        )
    return s


_STR = lambda v: _want_str(v, "a string")  # noqa: E731
_NONEMPTY = _regex(r"\S(.*\S)?", "a non-empty string")
_CC = _regex(r"\d{1,2}\.\d", 'a compute capability like "7.5"')
_CUDA = _regex(r"\d{1,2}\.\d{1,2}", 'a CUDA version like "12.6"')
_CUDA_OR_MAJOR = _regex(r"\d{1,2}(\.\d{1,2})?", 'a CUDA version like "12.6" or a family like "12"')
_CUDNN = _regex(r"\d+\.\d+\.\d+", 'a cuDNN version major.minor.patch like "9.19.0"')
_DRIVER = _regex(r"\d{3,4}(\.\d{1,3}){1,2}", 'a driver version like "580.65.06"')
_URL = _regex(r"https?://[^\s]+", "an http(s) URL")
_VARIANT = _regex(r"[a-z0-9][a-z0-9._-]*", 'a variant name like "cu130" or "and-cuda"')
_PCI = _regex(r"0x[0-9a-f]{4}", 'a PCI device id like "0x1eb8" (lower case)')
_DATE = _regex(r"\d{4}-\d{2}-\d{2}", 'a date like "2026-08-19"')
_COMMIT = _regex(r"[0-9a-f]{7,40}", "a commit hash")
_PIP_CUDNN_DIST = _regex(r"nvidia-cudnn-cu\d+", 'a pip distribution like "nvidia-cudnn-cu12"')
_APT_CUDNN_PKG = _regex(
    r"libcudnn\d+(-dev|-headers)?(-cuda-\d+)?", 'an apt package like "libcudnn9-cuda-12"'
)
_APT_VERSION = _regex(
    r"\d+(\.\d+)+-\d+(\+cuda\d+\.\d+)?", 'an apt version like "9.8.0.87-1" or "8.9.7.29-1+cuda12.2"'
)


def _semi_list(item: Callable[[Any], Any], what: str) -> Callable[[Any], str]:
    def check(v: Any) -> str:
        s = _want_str(v, what)
        for part in s.split(";"):
            item(part.strip())
        return s

    return check


_APT_PIN = _regex(
    r"[a-z0-9][a-z0-9.+-]*=[0-9][A-Za-z0-9.+~:-]*", 'an apt pin like "libcudnn9-cuda-12=9.8.0.87-1"'
)


# ---------------------------------------------------------------------------------------
# table schemas
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Field:
    """How one key of a recipe table is checked, and whether it must be there."""

    check: Callable[[Any], Any]
    required: bool = False


_TABLES: Dict[str, Tuple[type, Dict[str, _Field]]] = {
    "build": (
        Build,
        {
            "framework": _Field(_framework, True),
            "version": _Field(_version, True),
            "variant": _Field(_VARIANT, True),
            "cuda": _Field(_CUDA),
            "cudnn": _Field(_CUDNN),
            "python": _Field(_specifier),
            "compute_capabilities": _Field(_list_of(_CC, "compute capabilities")),
            "ptx": _Field(_CC),
            "min_compute_capability": _Field(_CC),
            "index_url": _Field(_URL),
            "packages": _Field(_list_of(_requirement, "requirement strings"), True),
            "requires": _Field(_list_of(_requirement, "requirement strings")),
            "companions": _Field(_list_of(_requirement, "requirement strings")),
            "size_bytes": _Field(_int),
            "source": _Field(_NONEMPTY, True),
            "note": _Field(_STR),
        },
    ),
    "cudnn": (
        CudnnRelease,
        {
            "version": _Field(_CUDNN, True),
            "cuda_majors": _Field(_list_of(_cuda_major, "CUDA majors"), True),
            "min_compute_capability": _Field(_CC),
            "max_compute_capability": _Field(_CC),
            "pip": _Field(_map_of(_PIP_CUDNN_DIST, _version, "pip distribution = version")),
            "apt": _Field(_map_of(_APT_CUDNN_PKG, _APT_VERSION, "apt package = version")),
            "size_bytes": _Field(_int),
            "source": _Field(_NONEMPTY, True),
            "note": _Field(_STR),
        },
    ),
    "driver_floor": (
        CudaDriverFloor,
        {
            "cuda": _Field(_CUDA_OR_MAJOR, True),
            "min_driver": _Field(_DRIVER, True),
            "source": _Field(_NONEMPTY, True),
            "note": _Field(_STR),
        },
    ),
    "gpu": (
        GpuModel,
        {
            "name": _Field(_NONEMPTY, True),
            "compute_capability": _Field(_CC, True),
            "pci_device_ids": _Field(_list_of(_PCI, "PCI device ids")),
            "source": _Field(_NONEMPTY, True),
            "note": _Field(_STR),
        },
    ),
    "colab_image": (
        ColabImage,
        {
            "date": _Field(_DATE, True),
            "commit": _Field(_COMMIT, True),
            "release": _Field(_NONEMPTY),
            "python": _Field(_version),
            "torch": _Field(_NONEMPTY),
            "tensorflow": _Field(_NONEMPTY),
            "jax": _Field(_NONEMPTY),
            "pip_cudnn": _Field(_semi_list(_requirement, "requirement strings separated by ';'")),
            "apt_cudnn": _Field(_semi_list(_APT_PIN, "apt pins separated by ';'")),
            "cuda": _Field(_NONEMPTY),
            "source": _Field(_NONEMPTY, True),
            "note": _Field(_STR),
        },
    ),
    "download": (
        DownloadSize,
        {
            "distribution": _Field(_NONEMPTY, True),
            "version": _Field(_version, True),
            "bytes": _Field(_int, True),
            "file": _Field(_STR),
            "source": _Field(_NONEMPTY, True),
            "note": _Field(_STR),
        },
    ),
    "dependencies": (
        DependencySet,
        {
            "manager": _Field(_manager, True),
            "package": _Field(_requirement, True),
            "versions": _Field(_specifier, True),
            "brings": _Field(_list_of(_requirement_or_template, "requirement strings")),
            "others": _Field(_list_of(_requirement, "package names")),
            "complete": _Field(_bool),
            "source": _Field(_NONEMPTY, True),
            "note": _Field(_STR),
        },
    ),
}
#: Top-level keys a recipe file may have besides the tables.
_TOP_LEVEL = ("schema", "meta")


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# ---------------------------------------------------------------------------------------
# locating lines
# ---------------------------------------------------------------------------------------

_HEADER_RX = r"(?m)^[ \t]*\[\[[ \t]*([A-Za-z0-9_-]+)[ \t]*\]\]"
_ANY_HEADER_RX = r"(?m)^[ \t]*\["


class _Lines:
    """Line numbers in one recipe file: the n-th `[[kind]]` header and keys inside a record."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: Optional[List[int]] = None
        self._headers: Optional[Dict[str, List[int]]] = None
        self._any: Optional[List[int]] = None

    def _line_of(self, offset: int) -> int:
        import bisect

        if self._starts is None:
            self._starts = [0] + [m.end() for m in re.finditer(r"\n", self.text)]
        return bisect.bisect_right(self._starts, offset)

    def _index(self) -> None:
        self._headers = {}
        for m in _rx(_HEADER_RX).finditer(self.text):
            self._headers.setdefault(m.group(1), []).append(m.start())
        self._any = [m.start() for m in _rx(_ANY_HEADER_RX).finditer(self.text)]

    def record(self, kind: str, n: int) -> Optional[int]:
        """Line of the header of the n-th (0-based) `[[kind]]` record."""
        if self._headers is None:
            self._index()
        offs = self._headers.get(kind, [])  # type: ignore[union-attr]
        return self._line_of(offs[n]) if n < len(offs) else None

    def key(self, kind: str, n: int, key: str) -> Optional[int]:
        """Line of `key = ...` inside the n-th `[[kind]]` record (the header line if not found)."""
        if self._headers is None:
            self._index()
        offs = self._headers.get(kind, [])  # type: ignore[union-attr]
        if n >= len(offs):
            return None
        start = offs[n]
        end = next((o for o in self._any if o > start), len(self.text))  # type: ignore[union-attr]
        m = re.compile(r'^[ \t]*("?)' + re.escape(key) + r"\1[ \t]*=", re.M).search(
            self.text, start, end
        )
        return self._line_of(m.start() if m else start)

    def table(self, name: str) -> Optional[int]:
        """Line of a single `[name]` table header."""
        m = re.compile(r"^[ \t]*\[[ \t]*" + re.escape(name) + r"[ \t]*\]", re.M).search(self.text)
        return self._line_of(m.start()) if m else None

    def top_key(self, key: str) -> Optional[int]:
        if self._any is None:
            self._index()
        end = self._any[0] if self._any else len(self.text)
        m = re.compile(r'^[ \t]*("?)' + re.escape(key) + r"\1[ \t]*=", re.M).search(
            self.text, 0, end
        )
        return self._line_of(m.start()) if m else None


#: The line finder, for other TOML inputs checked the same way (fixer.lockfile.format).
TomlLines = _Lines


# ---------------------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class _Loc:
    """Where a recipe record is: its file and the line of its [[table]] header."""

    path: str
    line: Optional[int]
    lines: _Lines
    kind: str
    index: int

    def at(self, key: Optional[str] = None) -> Optional[int]:
        if key is None:
            return self.line
        return self.lines.key(self.kind, self.index, key) or self.line


class _Collector:
    def __init__(self) -> None:
        self.errors: List[RecipeError] = []

    def add(
        self, message: str, path: Optional[str], line: Optional[int], hint: Optional[str] = None
    ) -> None:
        err = RecipeError(message, path=path, line=line, hint=hint)
        err.raw_message = message  # type: ignore[attr-defined]  # without the FILE:LINE prefix
        self.errors.append(err)


def _tomls(p: Path) -> List[Path]:
    """The *.toml files of the recipe directory `p`, sorted. A directory that cannot be listed is
    a RecipeError: Path.glob swallows the PermissionError and yields nothing, so `recipes
    validate` said "ok" for a directory it never read."""
    try:
        names = sorted(e.name for e in os.scandir(p) if e.name.endswith(".toml"))
    except OSError as exc:
        raise RecipeError(
            f"recipe directory {str(p)!r} cannot be read: {exc.strerror or exc} (--recipes)",
            path=str(p),
        )
    return [p / n for n in names]


def recipe_files(extra_dirs: Sequence[str] = (), plugin_dirs: Sequence[str] = ()) -> List[Path]:
    """The recipe files in effect: the shipped ones, each replaced by a same-named file from the
    extra directories (later directories win), plus the extra directories' new files, plus every
    file of the recipe plugins' directories (added, never replacing one: fixer.system.plugins)."""
    chosen: Dict[str, Path] = {}
    for d in (str(recipes_dir()),) + tuple(str(x) for x in extra_dirs):
        p = Path(d)
        if not p.is_dir():
            if d == str(recipes_dir()):
                continue
            raise RecipeError(
                f"recipe directory {d!r} does not exist or is not a directory (--recipes)", path=d
            )
        for f in _tomls(p):
            if f.name not in NOT_RECIPES:
                chosen[f.name] = f
    return [chosen[k] for k in sorted(chosen)] + [
        f for d in plugin_dirs for f in sorted(Path(d).glob("*.toml"))
    ]


#: (path, text) -> the records of a file that parsed without a problem. The records are frozen
#: and a file's records depend on its path and text alone, so a load with another --recipes
#: directory next to the shipped files parses only the new files.
_PARSED: Dict[Tuple[str, str], Dict[str, List[Tuple[Any, _Loc]]]] = {}


def _parse_file(path: Path, out: Dict[str, List[Tuple[Any, _Loc]]], errs: _Collector) -> None:
    spath = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        errs.add(f"cannot read recipe file: {exc}", spath, None)
        return
    hit = _PARSED.get((spath, text))
    if hit is None:
        hit = {}
        before = len(errs.errors)
        _parse_text(spath, text, hit, errs)
        if (
            len(errs.errors) == before
        ):  # a file with problems is parsed again (its errors are new each time)
            with _LOCK:
                if len(_PARSED) > 64:
                    _PARSED.clear()
                _PARSED[(spath, text)] = hit
    for top, items in hit.items():
        out.setdefault(top, []).extend(items)


def _parse_text(
    spath: str, text: str, out: Dict[str, List[Tuple[Any, _Loc]]], errs: _Collector
) -> None:
    # start-up: fixer.system.compat +3% on doctor --json (python -X importtime)
    from fixer.system.compat import tomllib

    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = int(m.group(1)) if m else None
        errs.add(
            "TOML syntax error: "
            + re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
            + (f" (column {m.group(2)})" if m else ""),
            spath,
            line,
        )
        return
    lines = _Lines(text)
    schema = doc.get("schema")
    if schema is None:
        errs.add(f"missing `schema = {SCHEMA_VERSION}` at the top of the file", spath, 1)
        return
    if schema != SCHEMA_VERSION or isinstance(schema, bool):
        errs.add(
            f"unsupported schema {schema!r}: this version of colab-cudnn-fix reads schema {SCHEMA_VERSION}",
            spath,
            lines.top_key("schema"),
        )
        return
    for top, value in doc.items():
        if top in _TOP_LEVEL:
            continue
        if top not in _TABLES:
            line = lines.record(top, 0) or lines.table(top) or lines.top_key(top)
            errs.add(
                f"unknown table or key {top!r}{_did_you_mean(top, list(_TABLES) + list(_TOP_LEVEL))}; "
                f"a recipe file holds {', '.join('[[' + t + ']]' for t in _TABLES)}",
                spath,
                line,
            )
            continue
        if not isinstance(value, list):
            errs.add(
                f"{top!r} must be an array of tables, written [[{top}]]",
                spath,
                lines.top_key(top) or lines.table(top) or lines.record(top, 0),
            )
            continue
        cls, fields = _TABLES[top]
        for i, rec in enumerate(value):
            loc = _Loc(spath, lines.record(top, i), lines, top, i)
            if not isinstance(rec, dict):
                errs.add(f"[[{top}]] entry {i + 1} is not a table", spath, loc.line)
                continue
            obj = _build_record(top, cls, fields, rec, loc, errs)
            if obj is not None:
                out.setdefault(top, []).append((obj, loc))


def _build_record(
    kind: str,
    cls: type,
    fields: Dict[str, _Field],
    rec: Dict[str, Any],
    loc: _Loc,
    errs: _Collector,
) -> Any:
    ok = True
    kwargs: Dict[str, Any] = {}
    for key, value in rec.items():
        f = fields.get(key)
        if f is None:
            errs.add(
                f"[[{kind}]]: unknown key {key!r}{_did_you_mean(key, fields)}",
                loc.path,
                loc.at(key),
                hint=f"keys of [[{kind}]]: {', '.join(fields)}",
            )
            ok = False
            continue
        try:
            kwargs[key] = f.check(value)
        except _Bad as exc:
            errs.add(f"[[{kind}]] {key}: {exc}", loc.path, loc.at(key))
            ok = False
    for key, f in fields.items():
        if f.required and key not in rec:
            errs.add(f"[[{kind}]]: missing required key {key!r}", loc.path, loc.line)
            ok = False
    if not ok:
        return None
    if kind == "build":
        kwargs.setdefault("cuda", None)
        kwargs.setdefault("cudnn", None)
    return cls(**kwargs)


# ---------------------------------------------------------------------------------------
# cross-record checks
# ---------------------------------------------------------------------------------------


def _spec_part(req: str) -> str:
    return re.sub(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]*\])?\s*", "", req)


def _check_duplicates(
    items: List[Tuple[Any, _Loc]],
    key: Callable[[Any], Any],
    what: Callable[[Any], str],
    errs: _Collector,
) -> None:
    seen: Dict[Any, _Loc] = {}
    for obj, loc in items:
        k = key(obj)
        if k in seen:
            first = seen[k]
            errs.add(
                f"duplicate {what(obj)} (first defined at {first.path}:{first.line})",
                loc.path,
                loc.line,
            )
        else:
            seen[k] = loc


def _cross_check(tables: Dict[str, List[Tuple[Any, _Loc]]], errs: _Collector) -> None:
    """Contradictions between records: duplicates, PCI ids, each cuDNN release against itself,
    each build against the driver floors and cuDNN releases."""
    _cross_duplicates(tables, errs)
    _cross_pci(tables.get("gpu", []), errs)
    floor_by = {f.cuda: (f, loc) for f, loc in tables.get("driver_floor", [])}
    cudnns = tables.get("cudnn", [])
    rel_by = {c.version: (c, loc) for c, loc in cudnns}
    for c, loc in cudnns:
        _cross_cudnn(c, loc, errs)
        _cross_cudnn_apt(c, loc, errs)
    for b, loc in tables.get("build", []):
        _cross_build(b, loc, floor_by, rel_by, errs)


def _cross_duplicates(tables: Dict[str, List[Tuple[Any, _Loc]]], errs: _Collector) -> None:
    builds = tables.get("build", [])
    cudnns = tables.get("cudnn", [])
    floors = tables.get("driver_floor", [])
    gpus = tables.get("gpu", [])
    images = tables.get("colab_image", [])
    _check_duplicates(
        tables.get("download", []),
        lambda d: (d.distribution, d.version),
        lambda d: f"download size of {d.distribution}=={d.version}",
        errs,
    )

    _check_duplicates(
        builds,
        lambda b: (b.framework, b.version, b.variant),
        lambda b: f"build {b.framework} {b.version} variant {b.variant}",
        errs,
    )
    _check_duplicates(cudnns, lambda c: c.version, lambda c: f"cuDNN release {c.version}", errs)
    _check_duplicates(floors, lambda f: f.cuda, lambda f: f"driver floor for CUDA {f.cuda}", errs)
    _check_duplicates(gpus, lambda g: g.name.lower(), lambda g: f"GPU {g.name!r}", errs)
    _check_duplicates(
        images, lambda i: (i.date, i.commit), lambda i: f"Colab image {i.date} {i.commit}", errs
    )


def _cross_pci(gpus: List[Tuple[Any, _Loc]], errs: _Collector) -> None:
    pci_seen: Dict[str, Tuple[GpuModel, _Loc]] = {}
    for g, loc in gpus:
        for pid in g.pci_device_ids:
            if (
                pid in pci_seen
                and pci_seen[pid][0].name != g.name
                and pci_seen[pid][0].compute_capability != g.compute_capability
            ):
                other, oloc = pci_seen[pid]
                errs.add(
                    f"PCI device id {pid} of {g.name!r} (compute capability {g.compute_capability}) is already "
                    f"given to {other.name!r} (compute capability {other.compute_capability}, {oloc.path}:{oloc.line})",
                    loc.path,
                    loc.at("pci_device_ids"),
                )
            pci_seen.setdefault(pid, (g, loc))


def _cross_cudnn(c: CudnnRelease, loc: _Loc, errs: _Collector) -> None:
    if (
        c.min_compute_capability
        and c.max_compute_capability
        and version_key(c.min_compute_capability) > version_key(c.max_compute_capability)
    ):
        errs.add(
            f"cuDNN {c.version}: min_compute_capability {c.min_compute_capability} is above "
            f"max_compute_capability {c.max_compute_capability}",
            loc.path,
            loc.at("min_compute_capability"),
        )
    for dist, ver in c.pip.items():
        cu = int(dist.rsplit("cu", 1)[1])
        if ".".join(ver.split(".")[:3]) != c.version:
            errs.add(
                f"cuDNN {c.version}: pip {dist}=={ver} is another release",
                loc.path,
                loc.at("pip"),
            )
        if cu not in c.cuda_majors:
            errs.add(
                f"cuDNN {c.version}: pip {dist} is a CUDA {cu} build but cuda_majors is {list(c.cuda_majors)}",
                loc.path,
                loc.at("pip"),
            )


def _cross_cudnn_apt(c: CudnnRelease, loc: _Loc, errs: _Collector) -> None:
    major = c.version.split(".")[0]
    for pkg, ver in c.apt.items():
        if not ver.startswith(c.version + ".") and not ver.startswith(c.version + "-"):
            errs.add(
                f"cuDNN {c.version}: apt {pkg}={ver} is another release",
                loc.path,
                loc.at("apt"),
            )
        m = re.match(r"libcudnn(\d+)", pkg)
        if m and m.group(1) != major:
            errs.add(
                f"cuDNN {c.version}: apt package {pkg} is for cuDNN {m.group(1)}",
                loc.path,
                loc.at("apt"),
            )
        m = re.search(r"-cuda-(\d+)$", pkg) or re.search(r"\+cuda(\d+)\.", ver)
        if m and int(m.group(1)) not in c.cuda_majors:
            errs.add(
                f"cuDNN {c.version}: apt {pkg}={ver} is a CUDA {m.group(1)} build but cuda_majors is "
                f"{list(c.cuda_majors)}",
                loc.path,
                loc.at("apt"),
            )


_Rows = Dict[str, Tuple[Any, _Loc]]


def _cross_build(b: Build, loc: _Loc, floor_by: _Rows, rel_by: _Rows, errs: _Collector) -> None:
    name = f"{b.framework} {b.version} ({b.variant})"
    nvidia_reqs = [r for r in b.requires if requirement_name(r).startswith(("nvidia-", "cuda-"))]
    cudnn_reqs = [r for r in b.requires if requirement_name(r).startswith("nvidia-cudnn")]
    if b.cuda is None:
        _cross_cpu_build(b, name, nvidia_reqs, loc, errs)
        return
    major = b.cuda.split(".")[0]
    if major not in floor_by and b.cuda not in floor_by:
        errs.add(
            f"{name}: CUDA {b.cuda} has no [[driver_floor]] (neither family {major!r} nor toolkit {b.cuda!r})",
            loc.path,
            loc.at("cuda"),
            hint="add a [[driver_floor]] row with its source",
        )
    if (
        b.ptx
        and b.compute_capabilities
        and version_key(b.ptx) < max(version_key(c) for c in b.compute_capabilities)
    ):
        errs.add(
            f"{name}: ptx {b.ptx} is below its highest SASS target {b.compute_capabilities[-1]}",
            loc.path,
            loc.at("ptx"),
        )
    if b.cudnn is not None:
        rel = rel_by.get(b.cudnn)
        if rel is None:
            errs.add(
                f"{name}: cudnn {b.cudnn} has no [[cudnn]] release row",
                loc.path,
                loc.at("cudnn"),
                hint="add a [[cudnn]] row (version, cuda_majors, pip/apt versions, source)",
            )
        elif int(major) not in rel[0].cuda_majors:
            errs.add(
                f"{name}: cuDNN {b.cudnn} has no CUDA {major} build ([[cudnn]] at {rel[1].path}:{rel[1].line} "
                f"lists CUDA {list(rel[0].cuda_majors)})",
                loc.path,
                loc.at("cudnn"),
            )
    elif cudnn_reqs:
        errs.add(
            f"{name}: requires {cudnn_reqs[0]} but cudnn is not set", loc.path, loc.at("cudnn")
        )
    for req in cudnn_reqs:
        _cross_cudnn_requirement(b, name, req, rel_by, loc, errs)


def _cross_cpu_build(
    b: Build, name: str, nvidia_reqs: List[str], loc: _Loc, errs: _Collector
) -> None:
    if b.cudnn is not None:
        errs.add(
            f"{name}: cudnn {b.cudnn} is set but cuda is not (a build without CUDA uses no cuDNN)",
            loc.path,
            loc.at("cudnn"),
        )
    if nvidia_reqs:
        errs.add(
            f"{name}: has no cuda but requires NVIDIA libraries ({nvidia_reqs[0]})",
            loc.path,
            loc.at("requires"),
        )
    if b.compute_capabilities or b.ptx:
        errs.add(
            f"{name}: has no cuda but lists GPU kernels",
            loc.path,
            loc.at("compute_capabilities"),
        )


def _cross_cudnn_requirement(
    b: Build, name: str, req: str, rel_by: _Rows, loc: _Loc, errs: _Collector
) -> None:
    major = (b.cuda or "").split(".")[0]
    dist = requirement_name(req)
    req_cu = dist.rsplit("cu", 1)[1] if re.search(r"-cu\d+$", dist) else None
    if req_cu is not None and req_cu != major:
        errs.add(
            f"{name}: requires {dist} (a CUDA {req_cu} cuDNN) but the build is CUDA {b.cuda}",
            loc.path,
            loc.at("requires"),
        )
    if b.cudnn is None:
        return
    _cross_cudnn_pin(b, name, req, dist, rel_by, loc, errs)


def _cross_cudnn_pin(
    b: Build, name: str, req: str, dist: str, rel_by: _Rows, loc: _Loc, errs: _Collector
) -> None:
    if b.cudnn is None:
        return
    spec = _spec_part(req)
    eq = re.fullmatch(r"\s*===?\s*([\d.]+)\s*", spec)
    if eq:
        pinned = eq.group(1)
        if ".".join(pinned.split(".")[:3]) != b.cudnn:
            errs.add(
                f"{name}: requires {req} but cudnn says {b.cudnn}: the pin is what pip installs, "
                f'set cudnn = "{".".join(pinned.split(".")[:3])}"',
                loc.path,
                loc.at("cudnn"),
            )
        rel = rel_by.get(b.cudnn)
        if rel and dist in rel[0].pip and rel[0].pip[dist] != pinned:
            errs.add(
                f"{name}: requires {dist}=={pinned} but [[cudnn]] {b.cudnn} says {dist} is {rel[0].pip[dist]} "
                f"({rel[1].path}:{rel[1].line})",
                loc.path,
                loc.at("requires"),
            )
    else:
        lows = re.findall(r">=?\s*([\d.]+)", spec)
        for low in lows:
            if cudnn_compatible(low, b.cudnn) is False:
                errs.add(
                    f"{name}: requires {req}, which admits cuDNN {low}, below the cuDNN {b.cudnn} "
                    "it was built with (runtime needs the same major and an equal or newer minor)",
                    loc.path,
                    loc.at("requires"),
                )


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------

_CACHE: Dict[Tuple[Any, ...], Tuple[Recipes, Tuple[RecipeError, ...]]] = {}
_LOCK = threading.Lock()


def _cache_key(files: Sequence[Path], extra_dirs: Sequence[str]) -> Tuple[Any, ...]:
    stamp: List[Tuple[str, Optional[int], Optional[int]]] = []
    for f in files:
        try:
            st = os.stat(f)
            stamp.append((str(f), st.st_mtime_ns, st.st_size))
        except OSError:
            stamp.append((str(f), None, None))
    return (tuple(str(d) for d in extra_dirs), tuple(stamp))


#: Version of the disk cache's JSON (its "schema" key); a file of another version is ignored.
CACHE_SCHEMA = 1
#: Recipes attribute -> the record kind whose checkers re-validate it when read from the cache.
_CACHED_TABLES = (
    ("builds", "build"),
    ("cudnn", "cudnn"),
    ("driver_floors", "driver_floor"),
    ("gpus", "gpu"),
    ("colab_images", "colab_image"),
    ("downloads", "download"),
    ("dependencies", "dependencies"),
)


def _disk_cache_path(key: Tuple[Any, ...]) -> Path:
    return cache_dir() / "recipes" / f"{_disk_cache_digest(key)}.json"


def _disk_cache_digest(key: Tuple[Any, ...]) -> str:
    """This module and the model build the value (fixer.system.cachefile.digest)."""
    return cachefile.digest((key, __version__), (__file__, model.__file__))


def _disk_cache_read(key: Tuple[Any, ...]) -> Optional[Recipes]:
    """Parsed recipes from an earlier process, when every file is unchanged (the key holds each
    file's path, mtime and size). The cache is JSON, read only when it is our own file that
    nobody else can write (fixer.system.cachefile), and every record is checked again by the
    same checkers as its TOML. Any problem just means parsing again."""
    path = _disk_cache_path(key)
    data = cachefile.read_json(path)
    if (
        not isinstance(data, dict)
        or data.get("schema") != CACHE_SCHEMA
        or data.get("key") != _disk_cache_digest(key)
        or not isinstance(data.get("recipes"), dict)
    ):
        return None
    return _recipes_from_cache(data["recipes"], str(path))


def _recipes_from_cache(raw: Dict[str, Any], where: str) -> Optional[Recipes]:
    """The Recipes a cache file holds, each record checked by its table's checkers (the same as
    its TOML's); None at the first record that fails or is not of the cache's shape."""
    kw: Dict[str, Any] = {}
    seen: Dict[Tuple[int, Any], Any] = {}  # (checker, value) -> checked value: values repeat
    for attr, kind in _CACHED_TABLES:
        cls, fields = _TABLES[kind]
        records = raw.get(attr)
        if not isinstance(records, list):
            return None
        out = []
        for rec in records:
            obj = _cached_record(cls, fields, rec, seen)
            if obj is None:
                return None
            out.append(obj)
        kw[attr] = tuple(out)
    files = raw.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return Recipes(files=tuple(files), **kw)


@functools.lru_cache(maxsize=None)
def _required_of(cls: type) -> FrozenSet[str]:
    kind = next(k for k, (c, _) in _TABLES.items() if c is cls)
    return frozenset(k for k, f in _TABLES[kind][1].items() if f.required)


def _cached_record(
    cls: type, fields: Dict[str, _Field], rec: Any, seen: Dict[Tuple[int, Any], Any]
) -> Any:
    if not isinstance(rec, dict) or not set(rec) <= set(fields):
        return None
    kwargs: Dict[str, Any] = {}
    for key, value in rec.items():
        if value is None or value == "" or value == [] or value == {}:
            continue  # the field's default, as a TOML that leaves the key out
        f = fields[key]
        memo = (id(f.check), tuple(value) if isinstance(value, list) else value)
        try:
            hit = seen.get(memo, seen) if not isinstance(value, dict) else seen
        except TypeError:  # a list holding unhashable values
            hit = seen
        if hit is seen:
            try:
                hit = f.check(value)
            except _Bad:
                return None
            if not isinstance(value, dict):
                try:
                    seen[memo] = hit
                except TypeError:
                    pass
        kwargs[key] = hit
    if not _required_of(cls) <= kwargs.keys():
        return None
    if cls is Build:
        kwargs.setdefault("cuda", None)
        kwargs.setdefault("cudnn", None)
    try:
        return cls(**kwargs)
    except TypeError:
        return None


def _disk_cache_write(key: Tuple[Any, ...], recipes: Recipes) -> None:
    import json

    payload = {"schema": CACHE_SCHEMA, "key": _disk_cache_digest(key), "recipes": to_dict(recipes)}
    write_cache(_disk_cache_path(key), json.dumps(payload, separators=(",", ":")).encode())


def _load_all(
    extra_dirs: Sequence[str], plugin_dirs: Sequence[str] = ()
) -> Tuple[Recipes, Tuple[RecipeError, ...]]:
    files = recipe_files(extra_dirs, plugin_dirs)
    key = _cache_key(files, tuple(extra_dirs) + tuple(f"plugin:{d}" for d in plugin_dirs))
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    cached = _disk_cache_read(key) if None not in (s[1] for s in key[1]) else None
    if cached is not None:
        with _LOCK:
            _CACHE[key] = (cached, ())
        return cached, ()
    errs = _Collector()
    tables: Dict[str, List[Tuple[Any, _Loc]]] = {}
    for f in files:
        _parse_file(f, tables, errs)
    _cross_check(tables, errs)
    floors = sorted(
        (f for f, _ in tables.get("driver_floor", [])),
        key=lambda f: ("." in f.cuda, tuple(-x for x in version_key(f.cuda))),
    )
    downloads = tuple(d for d, _ in tables.get("download", []))
    sizes = {(d.distribution, d.version): d.bytes for d in downloads}
    recipes = Recipes(
        builds=tuple(_with_size(b, sizes) for b, _ in tables.get("build", [])),
        cudnn=tuple(
            sorted(
                (c for c, _ in tables.get("cudnn", [])),
                key=lambda c: version_key(c.version),
                reverse=True,
            )
        ),
        driver_floors=tuple(floors),
        gpus=tuple(g for g, _ in tables.get("gpu", [])),
        colab_images=tuple(
            sorted((i for i, _ in tables.get("colab_image", [])), key=lambda i: (i.date, i.commit))
        ),
        downloads=downloads,
        dependencies=tuple(d for d, _ in tables.get("dependencies", [])),
        files=tuple(str(f) for f in files),
    )
    result = (recipes, tuple(errs.errors))
    if not errs.errors:
        _disk_cache_write(key, recipes)
    with _LOCK:
        if len(_CACHE) > 16:
            _CACHE.clear()
        _CACHE[key] = result
    return result


def _with_size(build: Build, sizes: Dict[Tuple[str, str], int]) -> Build:
    """A build without its own size_bytes takes its main wheel's [[download]] size."""
    if build.size_bytes is not None or not build.packages:
        return build
    name, version = split_requirement(build.packages[0])
    if version is None:
        return build
    size = sizes.get((name, version))
    return dataclasses.replace(build, size_bytes=size) if size else build


def load(extra_dirs: Sequence[str] = ()) -> Recipes:
    """The recipes in effect (shipped + `--recipes` directories), checked. Raises the first
    RecipeError (exit 2) when any file is malformed or the records contradict each other;
    `validate()` lists them all. Cached per (directories, file stamps)."""
    recipes, errors = _load_all(tuple(extra_dirs))
    if errors:
        first = errors[0]
        if len(errors) > 1:
            more = f"{len(errors) - 1} more problem(s): run `colab-cudnn-fix recipes validate`"
            raise RecipeError(
                getattr(first, "raw_message", first.message),
                path=first.path,
                line=first.line,
                hint=(first.hint + "; " if first.hint else "") + more,
            )
        raise first
    return _with_plugins(recipes, tuple(extra_dirs))


def _with_plugins(recipes: Recipes, extra_dirs: Tuple[str, ...]) -> Recipes:
    """The recipes plus each recipe plugin's files (fixer.system.plugins), one plugin at a time: a plugin
    whose files are malformed or contradict the recipes already in effect is skipped and
    reported, never fatal."""
    accepted: Tuple[str, ...] = ()
    for plugin, directory in plugins.recipe_dirs():
        got, errors = _load_all(extra_dirs, accepted + (directory,))
        if errors:
            plugins.note_broken_recipes(plugin, errors[0].message)
            continue
        accepted += (directory,)
        recipes = got
    return recipes


def validate(extra_dirs: Sequence[str] = ()) -> List[RecipeError]:
    """Every problem in the recipes in effect, in file order; empty when they are sound."""
    try:
        _, errors = _load_all(tuple(extra_dirs))
    except RecipeError as exc:  # a missing --recipes directory
        return [exc]
    return list(errors)


def clear_cache() -> None:
    with _LOCK:
        _CACHE.clear()
        _PARSED.clear()


# ---------------------------------------------------------------------------------------
# selection (recipes show)
# ---------------------------------------------------------------------------------------

#: `recipes show` targets that are not frameworks -> the Recipes attribute they list.
OTHER_TABLES = {
    "cudnn": "cudnn",
    "drivers": "driver_floors",
    "gpus": "gpus",
    "colab": "colab_images",
}


def select(recipes: Recipes, what: str) -> Tuple[str, Tuple[Any, ...]]:
    """`FRAMEWORK`, `FRAMEWORK==VERSION` (a prefix selects a release line) or one of
    OTHER_TABLES -> (kind, records). Raises UsageError naming what exists."""
    what = what.strip()
    if what in OTHER_TABLES:
        return what, tuple(getattr(recipes, OTHER_TABLES[what]))
    name, _, version = what.partition("==")
    name = name.strip().lower()
    aliases = {
        "tf": "tensorflow",
        "pytorch": "torch",
        "onnxruntime-gpu": "onnxruntime",
        "paddlepaddle-gpu": "paddle",
        "cupy-cuda12x": "cupy",
    }
    name = aliases.get(name, name)
    if name not in FRAMEWORKS:
        choices = list(FRAMEWORKS) + list(OTHER_TABLES)
        raise UsageError(
            f"unknown framework or table {name!r}{_did_you_mean(name, choices)}; "
            f"choose from {', '.join(choices)}"
        )
    builds = recipes.builds_for(name)
    if not builds:
        raise UsageError(f"the recipes have no builds of {name}")
    if version:
        version = version.strip()
        chosen = recipes.builds_for(name, version)
        if not chosen:
            known = sorted({b.version for b in builds}, key=version_key)
            raise UsageError(
                f"no {name} {version} in the recipes{_did_you_mean(version, known)}; "
                f"known: {', '.join(known)}"
            )
        builds = chosen
    return "builds", builds
