"""Catalogue patterns that run in time linear in their input.

Python's `re` backtracks: a pattern such as `[\\w/]*\\.so:` tried at every position of a long
line without newlines costs the square of the line's length (an 80 KB base64 line took 94 s).
Two rules make every catalogue pattern linear, and the loader refuses a pattern that breaks
the first:

1. bounded: every quantifier has an upper bound (`{0,300}`, never `*` or `+`), so a match is at
   most `width` characters long and each start position costs at most `width` steps;
2. anchored: a literal that every match must contain (derived from the parsed pattern: the
   longest run of literal characters, or one per branch of an alternation) is found first with
   `bytes.find`, and the regular expression runs only in the windows of `width` characters
   around its occurrences.

A variable-length name that comes BEFORE the literal (a library path before ": cannot open
shared object file") starts only at a token boundary (a lookbehind), so that overlapping starts
do not rescan the same run.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import re
import sys
from typing import (
    Any,
    Dict,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
)

_NEW = sys.version_info >= (3, 11)  # sre_parse / sre_constants became re._parser / re._constants
_sre: Any = importlib.import_module("re._parser" if _NEW else "sre_parse")
_MAXREPEAT = int(importlib.import_module("re._constants" if _NEW else "sre_constants").MAXREPEAT)

#: An anchor shorter than this is not worth a search of its own: the pattern scans the text.
MIN_ANCHOR = 3
#: The widest match a catalogue pattern may have (characters).
MAX_WIDTH = 4096
#: Windows are at least this wide: dense anchors cost one find per MIN_STEP characters.
MIN_STEP = 512


class UnboundedPattern(ValueError):
    """A pattern whose matches have no upper length (a `*` or `+`)."""


def _ascii_lower(s: str) -> bytes:
    """One byte per code point (non-ASCII -> '?'), ASCII letters lowered: positions stay the same."""
    return s.encode("ascii", "replace").lower()


@functools.lru_cache(maxsize=4)
def _lowered(text: str) -> bytes:
    return _ascii_lower(text)


def _op_name(op: Any) -> str:
    return str(op).upper()


def _required(items: Any) -> Optional[Tuple[str, ...]]:
    """A set of literals one of which every match of this parsed sequence contains, or None."""
    best: Optional[Tuple[str, ...]] = None
    run: List[str] = []

    def better(cand: Optional[Tuple[str, ...]]) -> None:
        nonlocal best
        if not cand:
            return
        if best is None or (min(map(len, cand)), -len(cand)) > (min(map(len, best)), -len(best)):
            best = cand

    def close_run() -> None:
        if run:
            better(("".join(run),))
            run.clear()

    for op, av in items:
        name = _op_name(op)
        if name == "LITERAL":
            run.append(chr(av))
            continue
        close_run()
        better(_required_of(name, av))
    close_run()
    return best


def _required_of(name: str, av: Any) -> Optional[Tuple[str, ...]]:
    if name == "SUBPATTERN":
        return _required(av[-1])
    if name == "ATOMIC_GROUP":
        return _required(av)
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return _required(av[2]) if av[0] >= 1 else None
    if name == "BRANCH":
        alts = [_required(a) for a in av[1]]
        if any(a is None for a in alts):
            return None
        return tuple(dict.fromkeys(s for a in alts for s in (a or ())))
    return None


def anchors_of(source: str, flags: int = 0) -> Tuple[str, ...]:
    """The literals (ASCII-lowered) one of which every match contains; () when none is long enough."""
    return _anchors(_sre.parse(source, flags))


def _anchors(parsed: Any) -> Tuple[str, ...]:
    found = _required(parsed)
    if not found or min(map(len, found)) < MIN_ANCHOR:
        return ()
    return tuple(dict.fromkeys(_ascii_lower(a).decode("ascii") for a in found))


def width_of(source: str, flags: int = 0) -> int:
    """The longest match possible; UnboundedPattern when a quantifier has no upper bound."""
    return _width(_sre.parse(source, flags))


def _width(parsed: Any) -> int:
    hi = int(parsed.getwidth()[1])
    if hi >= _MAXREPEAT or hi > MAX_WIDTH:
        raise UnboundedPattern(
            f"its matches can be {'unboundedly' if hi >= _MAXREPEAT else f'{hi} characters'} "
            f"long: bound every quantifier (write {{0,N}} / {{1,N}} instead of * / +; at most "
            f"{MAX_WIDTH} characters in all)"
        )
    return hi


def _runs(items: Any, out: List[str]) -> None:
    run: List[str] = []
    for op, av in items:
        name = _op_name(op)
        if name == "LITERAL":
            run.append(chr(av))
            continue
        if run:
            out.append("".join(run))
            run = []
        if name == "SUBPATTERN":
            _runs(av[-1], out)
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            _runs(av[2], out)
        elif name == "BRANCH":
            for alt in av[1]:
                _runs(alt, out)
    if run:
        out.append("".join(run))


#: A literal this long that a line break splits is a wrapped message, not two lines.
MIN_WRAPPED = 3


def _literals(parsed: Any) -> Tuple[str, ...]:
    """Every run of literal text in the pattern of at least MIN_WRAPPED characters (ASCII-lowered)."""
    out: List[str] = []
    _runs(parsed, out)
    keep = (_ascii_lower(r).decode("ascii") for r in out if len(r) >= MIN_WRAPPED and "\n" not in r)
    return tuple(dict.fromkeys(k for k in keep if "\n" not in k))


def wrapped_needles(patterns: Iterable["Pattern"]) -> FrozenSet[bytes]:
    """Every literal of the patterns, as join_wrapped looks for it (ASCII bytes, lowered)."""
    return frozenset(x.encode("ascii") for p in patterns for x in p.literals)


#: pytest's failure marker: the lines of the exception under a failed test each start with "E" and
#: the rest of the report's indentation (pytest-dev/pytest src/_pytest/_code/code.py @release:8.3.0,
#: FormattedExcinfo.get_exconly: fail_marker "E", failindent = fail_marker + indentstr[1:]).
_PYTEST_MARK = re.compile(r"^E( {3,})(?=\S)", re.M)


def unmarked(text: str) -> str:
    """The text without pytest's "E   " marker on the lines of a failed test's exception, when two
    or more lines carry it with the same indentation (a TensorFlow log line "E external/..." has
    one space): the message's own lines, so that one which spans several lines reads as it was
    raised."""
    marks = [m.group(1) for m in _PYTEST_MARK.finditer(text)]
    if len(marks) < 2:
        return text
    width = min(map(len, marks))
    return re.sub(r"^E {%d}" % width, "", text, flags=re.M)


#: Typographic quotes and the ASCII quote each stands for. An issue tracker, a forum or a word
#: processor ("smart quotes") turns the ASCII quotes of a pasted message into these (held-out set
#: 18's onnxruntime report shows ‘CUDAExecutionProvider’); every catalogue pattern spells the
#: emitter's ASCII quote. One character for one, so every offset into the text stays where it was.
_QUOTES = str.maketrans(
    {
        "\u2018": "'",  # LEFT SINGLE QUOTATION MARK
        "\u2019": "'",  # RIGHT SINGLE QUOTATION MARK
        "\u201a": "'",  # SINGLE LOW-9 QUOTATION MARK
        "\u201b": "'",  # SINGLE HIGH-REVERSED-9 QUOTATION MARK
        "\u2032": "'",  # PRIME
        "\u00b4": "'",  # ACUTE ACCENT, typed for an apostrophe
        "\u2039": "'",  # SINGLE LEFT-POINTING ANGLE QUOTATION MARK
        "\u203a": "'",  # SINGLE RIGHT-POINTING ANGLE QUOTATION MARK
        "\u201c": '"',  # LEFT DOUBLE QUOTATION MARK
        "\u201d": '"',  # RIGHT DOUBLE QUOTATION MARK
        "\u201e": '"',  # DOUBLE LOW-9 QUOTATION MARK
        "\u201f": '"',  # DOUBLE HIGH-REVERSED-9 QUOTATION MARK
        "\u2033": '"',  # DOUBLE PRIME
        "\u00ab": '"',  # LEFT-POINTING DOUBLE ANGLE QUOTATION MARK
        "\u00bb": '"',  # RIGHT-POINTING DOUBLE ANGLE QUOTATION MARK
    }
)
#: The typographic quotes that stand for each ASCII quote (tests draw from these).
TYPOGRAPHIC_QUOTES = {
    "'": tuple(chr(k) for k, v in sorted(_QUOTES.items()) if v == "'"),
    '"': tuple(chr(k) for k, v in sorted(_QUOTES.items()) if v == '"'),
}


def ascii_quotes(text: str) -> str:
    """The text with each typographic quote replaced by the ASCII quote it stands for (a paste
    from a page that "smartened" the message's quotes reads as the message was printed). The
    backtick stays: glibc's "version `GLIBC_2.29' not found" spells it itself. Same length, same
    offsets."""
    return text.translate(_QUOTES)


#: A line break and the next line's indentation: where a terminal, a log formatter or a Markdown
#: quote wrapped a line.
_BREAK = re.compile(rb"\n[ \t]*")


def join_wrapped(text: str, needles: Iterable[bytes]) -> str:
    """The text with the line breaks joined that fall inside a known message's literal text
    (`needles`: wrapped_needles of the catalogue's patterns). A terminal or a notebook that wraps
    a long line mid-word ("Loaded runtime CuDNN libr\nary: ...") splits a literal: that line
    break goes. One that wraps at a space and indents the rest ("cannot open\n    shared object
    file") puts a break and the indentation where the literal has one space: they become that
    space. Every other line stays as it was. Linear: one find per literal that holds one of the
    text's joins (_crossing) over each joined text."""
    if "\n" not in text:
        return text
    low = _lowered(text)
    if len(low) >= 1_000_000:
        return text
    breaks = [(m.start(), m.end()) for m in _BREAK.finditer(low)]
    # at a space: the break and the indentation stand for the literal's one space
    space = _crossed(low, breaks, b" ", needles)
    # mid-word: only the line break itself goes (a break both ways is read as a space: a
    # literal that runs on across the bare break would keep the indentation inside it)
    drop = _crossed(low, [(b, b + 1) for b, _ in breaks], b"", needles) - space
    if not drop and not space:
        return text
    out: List[str] = []
    prev = 0
    for i, (b, e) in enumerate(breaks):
        if i in space:
            out += [text[prev:b], " "]
            prev = e
        elif i in drop:
            out.append(text[prev:b])
            prev = b + 1
    out.append(text[prev:])
    return "".join(out)


def _crossed(
    low: bytes, spans: Sequence[Tuple[int, int]], joiner: bytes, needles: Iterable[bytes]
) -> Set[int]:
    """The indexes of the `spans` of `low` that a needle crosses once every span is replaced by
    `joiner`: with no joiner, a needle that runs on across the join; with a joiner, one that holds
    it (a space of the needle's own)."""
    parts: List[bytes] = []
    cut: List[int] = []  # each join's position in the joined text
    prev = shift = 0
    for b, e in spans:
        parts.append(low[prev:b])
        cut.append(b - shift)
        shift += (e - b) - len(joiner)
        prev = e
    parts.append(low[prev:])
    joined = joiner.join(parts)
    hit: Set[int] = set()
    for needle in _crossing(joined, cut, joiner, needles):
        pos = joined.find(needle)
        while pos >= 0:
            # no joiner: the join lies strictly inside the needle; a joiner: its character does,
            # between words of the needle on both sides ("cudnn " ending a line before
            # "nvidia-cudnn-cu12 ..." is no message split in two)
            lo = bisect.bisect_left(cut, pos) if joiner else bisect.bisect_right(cut, pos)
            hi = bisect.bisect_left(cut, pos + len(needle))
            for i in range(lo, hi):
                k = cut[i] - pos
                if not joiner or (needle[:k].strip() and needle[k + 1 :].strip()):
                    hit.add(i)
            pos = joined.find(needle, pos + 1)
    return hit


def _crossing(
    joined: bytes, cut: Sequence[int], joiner: bytes, needles: Iterable[bytes]
) -> Iterable[bytes]:
    """The needles that _crossed must look for: a needle can cross a join at `c` only if it holds
    the bytes around it, joined[c - 1 : c + len(joiner) + 1] (its last byte before the join,
    the joiner, its first byte after: _crossed counts a join strictly inside the needle, and
    with a joiner only one with a byte on each side). So only the needles that hold one of the
    text's joins are searched, not all of the catalogue's ~600 on every paste (two finds each)."""
    if not isinstance(needles, frozenset):
        return needles
    by_join = _needles_by_join(needles, joiner)
    out: Set[bytes] = set()
    around = len(joiner) + 1
    for c in cut:
        if c >= 1:
            out |= by_join.get(joined[c - 1 : c + around], _NONE)
    return out


_NONE: FrozenSet[bytes] = frozenset()


@functools.lru_cache(maxsize=8)
def _needles_by_join(needles: FrozenSet[bytes], joiner: bytes) -> Dict[bytes, FrozenSet[bytes]]:
    """For each run of bytes a join can have around it (_crossing), the needles that hold it
    there: a byte, the joiner, a byte, where `k` (the joiner's place in the needle) leaves a byte
    of the needle before it and one after it."""
    j = len(joiner)
    out: Dict[bytes, Set[bytes]] = {}
    for needle in needles:
        for k in range(1, len(needle) - j):
            if needle[k : k + j] == joiner:
                out.setdefault(needle[k - 1 : k + j + 1], set()).add(needle)
    return {key: frozenset(v) for key, v in out.items()}


#: What a pattern's source gives, kept between processes by the catalogue's facts cache
#: (fixer.explainer.catalogue): (width, anchors, literals, named groups).
Facts = Tuple[int, Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]


@functools.lru_cache(maxsize=1024)
def facts_of(source: str, flags: int) -> Facts:
    """A pattern's facts from one parse (a catalogue has ~220 patterns); UnboundedPattern as
    width_of. Kept per process: a catalogue parsed again (another file, `recipes validate`)
    derives nothing twice."""
    parsed = _sre.parse(source, flags)
    return (_width(parsed), _anchors(parsed), _literals(parsed), tuple(parsed.state.groupdict))


class Pattern:
    """A catalogue pattern: `re.Pattern`'s search / finditer / match, linear in the text."""

    __slots__ = ("_rx", "flags", "pattern", "anchors", "width", "groups", "literals", "needles")

    def __init__(self, source: str, flags: int = re.M, facts: Optional[Facts] = None) -> None:
        """Compiles `source` and derives its facts from one parse. Given `facts` (derived from
        the same source, and checked by compiling it, in an earlier process: the catalogue's
        cache), nothing is parsed here and the expression is compiled on first use: most
        patterns never see one of their anchors in a given text."""
        self.pattern = source
        self.flags = flags
        self._rx: Optional["re.Pattern[str]"] = None
        if facts is None:
            self._rx = re.compile(source, flags)
            facts = facts_of(source, flags)
        self.width, self.anchors, self.literals, self.groups = facts
        self.needles = tuple(a.encode("ascii") for a in self.anchors)

    @property
    def rx(self) -> "re.Pattern[str]":
        if self._rx is None:
            self._rx = re.compile(self.pattern, self.flags)
        return self._rx

    def facts(self) -> Facts:
        return (self.width, self.anchors, self.literals, self.groups)

    def __repr__(self) -> str:
        return f"Pattern({self.pattern!r})"

    def windows(self, text: str) -> List[Tuple[int, int]]:
        """Merged (start, end) spans of the text that can hold a match. A match holds an anchor
        occurrence at some p and lies within [p - width, p + len + width]; each span found is
        [p - width, p + len + 2 * width], so the occurrences in (p, p + width] need no span of
        their own and the search skips them (at most len(text) / width steps per anchor)."""
        if not self.needles:
            return [(0, len(text))]
        low = _lowered(text)
        w, n = max(self.width, MIN_STEP), len(text)
        spans: List[Tuple[int, int]] = []
        for needle in self.needles:
            pos = low.find(needle)
            while pos >= 0:
                spans.append((max(0, pos - w), min(n, pos + len(needle) + 2 * w + 1)))
                pos = low.find(needle, pos + w + 1)
        return _merge(spans)

    def absent_from(self, text: str) -> bool:
        """True when no match can exist: the pattern has anchors and none occurs in the text
        (a match holds one of them). One find per anchor, no window."""
        if not self.needles:
            return False
        low = _lowered(text)
        return not any(n in low for n in self.needles)

    def finditer(self, text: str) -> Iterator["re.Match[str]"]:
        for start, end in self.windows(text):
            yield from self.rx.finditer(text, start, end)

    def search(self, text: str) -> Optional["re.Match[str]"]:
        return next(self.finditer(text), None)

    def match(self, text: str) -> Optional["re.Match[str]"]:
        return self.rx.match(text)


class AnchorIndex:
    """Which groups of patterns (a catalogue's rules) a text can hold a match of: a group with a
    pattern that has no anchor, or one of whose anchors occurs in the text. The same answer as
    `not all(p.absent_from(text) for p in group)` for every group, from one find per distinct
    anchor of all the groups (a catalogue's 85 rules have 271 patterns and 268 anchors; most
    texts hold the anchors of two or three rules) instead of a call per pattern of each rule."""

    __slots__ = ("always", "by_anchor")

    def __init__(self, groups: Sequence[Sequence[Pattern]]) -> None:
        always: Set[int] = set()
        by_anchor: Dict[bytes, Set[int]] = {}
        for i, group in enumerate(groups):
            for p in group:
                if not p.needles:
                    always.add(i)
                for needle in p.needles:
                    by_anchor.setdefault(needle, set()).add(i)
        self.always = frozenset(always)
        self.by_anchor = tuple((n, frozenset(ix)) for n, ix in by_anchor.items())

    def possible(self, text: str) -> Set[int]:
        """The indexes of the groups whose patterns are not all absent from `text`."""
        low = _lowered(text)
        out = set(self.always)
        for needle, groups in self.by_anchor:
            if needle in low:
                out |= groups
        return out


def _merge(spans: Sequence[Tuple[int, int]]) -> List[Tuple[int, int]]:
    out: List[Tuple[int, int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out
