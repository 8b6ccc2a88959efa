"""How many examples a property test generates: one home for the count.

A property test states the examples it runs in a full run, `@settings(max_examples=examples(300))`,
and the Hypothesis profile in effect scales that count (Hypothesis's own advice: a small profile for
the edit-test loop, a large one for CI; https://hypothesis.readthedocs.io/en/latest/settings.html):

- "full": every test at the count it states. CI and the README's test command load it
  (`python -m pytest --hypothesis-profile=full`).
- "quick", the default: QUICK_PERCENT of that count, never fewer than QUICK_FLOOR (a test that
  states fewer runs them all). `python -m pytest tests/unit`, the quick loop, runs it.

Both profiles keep what the current profile already sets (Hypothesis's own "ci" profile, loaded
when it sees a CI environment: derandomized, no database) and add deadline=None: these tests
time whole pipelines, whose first call warms caches.

A failure found in either profile is saved in the example database and replayed first on the
next run, whatever the profile. The count is read when a test module is imported, which pytest
does after `--hypothesis-profile` was loaded."""

from __future__ import annotations

import math
import os

from hypothesis import settings

#: Hypothesis's default max_examples: the unit the counts in the tests are written in.
FULL = 100
#: The quick profile's share of each test's count, in percent. 10 until 2026-11-28; halved with
#: the floor below when the quick loop had grown to 30 s on the 2-core machine: the two cut its CPU
#: by about a fifth (scripts/bench_unit_tests.py, docs/measurements/runs-2026-11-28/). Every test
#: still runs in the quick loop; CI runs each at its full count.
QUICK_PERCENT = 5
#: The fewest examples a quick run gives a test (when the test itself asks for more). Was 5.
QUICK_FLOOR = 3


def register() -> None:
    """Register "full" and "quick" on top of the current profile and load the one that
    HYPOTHESIS_PROFILE names (default "quick"). Called once, from tests/conftest.py; pytest's
    `--hypothesis-profile` loads another afterwards."""
    base = settings.default
    settings.register_profile("full", parent=base, max_examples=FULL, deadline=None)
    settings.register_profile(
        "quick", parent=base, max_examples=FULL * QUICK_PERCENT // 100, deadline=None
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))


def examples(full: int) -> int:
    """The examples a test that runs `full` of them in the full profile runs in the profile in effect."""
    scaled = math.ceil(full * settings.default.max_examples / FULL)
    return max(scaled, min(full, QUICK_FLOOR))
