"""Timed guards of explain's linearity (the shape that makes it linear is checked in
tests/unit/explain/test_linear.py): each catalogue pattern on adversarial lines (1 MB without
newlines, long base64, and its own anchor repeated densely: a repeated prefix, where a
backtracking pattern would be quadratic), and the whole explain on a repeated library prefix and
on a 10 MB line. Each takes seconds and judges by the clock, so they run in the full suite (CI),
not in the quick loop (tests/unit)."""

from __future__ import annotations

import base64
import random
import time

import pytest

from fixer.explainer import analyze
from fixer.explainer.scan import Pattern
from tests.helpers.patterns import catalogue_patterns

MB = 1_000_000

PATTERNS = catalogue_patterns()


def _b64(n: int, seed: int = 0) -> str:
    rnd = random.Random(seed)
    return base64.b64encode(bytes(rnd.getrandbits(8) for _ in range(n * 3 // 4))).decode()[:n]


def _timed(p: Pattern, text: str) -> float:
    t = time.perf_counter()
    for _ in p.finditer(text):
        pass
    return time.perf_counter() - t


def _dense(anchor: str, n: int) -> str:
    """The anchor repeated (with a separator, and glued to base64: a repeated prefix)."""
    unit = anchor + " " + _b64(24, len(anchor)) + "/"
    return (unit * (n // len(unit) + 1))[:n]


GENERIC = {
    "base64": lambda: _b64(MB),
    "no newline": lambda: "a" * MB,
    "spaces": lambda: " " * MB,
    "repeated path prefix": lambda: ("/usr/lib/x86_64-linux-gnu/libcudnn.so.9: " * (MB // 41 + 1))[
        :MB
    ],
}  # made by the test that uses it: at import, the base64 megabyte cost each xdist worker 0.3 s


@pytest.mark.parametrize("name", sorted(GENERIC))
def test_each_pattern_takes_under_half_a_second_on_a_megabyte(name):
    text = GENERIC[name]()
    slow = [(round(t, 3), w, p.pattern[:60]) for w, p in PATTERNS if (t := _timed(p, text)) > 0.5]
    assert not slow, slow


def _growth(p: Pattern, anchor: str, reps: int) -> tuple:
    small, large = _dense(anchor, 100_000), _dense(anchor, 400_000)
    t1 = min(_timed(p, small) for _ in range(reps))
    t2 = min(_timed(p, large) for _ in range(reps))
    return t1, t2


#: Under this many seconds on the large input a pattern is judged linear whatever the small one
#: takes (both limits below need more): the small input is timed only above it.
JUDGED_ABOVE = 0.05


def _first_look(p: Pattern, anchor: str) -> tuple:
    """One run on the large input, and one on the small only where the large one is slow
    enough to be judged: the same verdicts as _growth(p, anchor, 1), with a fifth less timing
    for the patterns (nearly all) that are far from both limits."""
    t2 = _timed(p, _dense(anchor, 400_000))
    if t2 <= JUDGED_ABOVE:  # and so under the megabyte limit too
        return 0.0, t2
    return _timed(p, _dense(anchor, 100_000)), t2


def test_dense_anchors_grow_linearly():
    """Four times the input takes about four times the time (a quadratic pattern: 16x): the
    minimum of several runs, judged only above 50 ms and measured again before it counts, so
    that a busy machine does not decide; and the densest megabyte under two seconds. A first
    single run sorts out the patterns worth measuring again (a linear one is far from both
    limits)."""
    bad = []
    for where, p in PATTERNS:
        for a in p.anchors[:1]:
            t1, t2 = _first_look(p, a)
            for reps in (
                5,
                9,
                0,
            ):  # measured again before it counts: a busy machine does not decide
                if not ((t2 > JUDGED_ABOVE and t2 > 8 * t1) or t2 * 2.5 > 2.0):
                    break
                if not reps:
                    bad.append((where, a, round(t1, 4), round(t2, 4), "per MB", round(t2 * 2.5, 3)))
                    break
                t1, t2 = _growth(p, a, reps)
    assert not bad, bad


def test_an_80kb_log_with_one_base64_line_and_a_10mb_line_finish_quickly():
    log = (
        "Traceback (most recent call last):\n"
        "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
        + _b64(80_000)
        + "\n"
    )
    analyze(log)  # the catalogue is loaded and cached here
    t = time.perf_counter()
    found = analyze(log)
    assert time.perf_counter() - t < 2.0
    assert found.findings[0].id == "cudnn-missing"
    t = time.perf_counter()
    analyze("x" * 10 * MB)
    assert time.perf_counter() - t < 10.0


def _analyze_time(text: str) -> float:
    t = time.perf_counter()
    analyze(text)
    return time.perf_counter() - t


def test_the_whole_explain_is_linear_on_a_repeated_prefix():
    """Every stage (rules, loader wordings, evidence, the lines quoted) on one line that repeats a
    library prefix: four times the input, about four times the time (quadratic: 16x)."""
    unit = "libcudnn.so.8: "
    small, large = unit * (250_000 // len(unit)), unit * (1_000_000 // len(unit))
    analyze(unit)  # the catalogue is loaded here, not timed
    for _ in range(3):
        t1, t2 = min(_analyze_time(small) for _ in range(2)), _analyze_time(large)
        if t2 < 8 * t1 + 0.2:
            break
    assert t2 < 8 * t1 + 0.2, (t1, t2)
