"""Where things are, for tests in either tree: the checkout and the recorded test data."""

from __future__ import annotations

from pathlib import Path

#: The checkout (the folder holding pyproject.toml).
REPO = Path(__file__).resolve().parents[2]
#: Recorded real outputs (tests/data): GPU machine runs, fatbins.
DATA = REPO / "tests" / "data"
