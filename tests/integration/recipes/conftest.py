"""The recipes' integration tests (a local index, the refresh script) start with an empty recipe cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fresh_cache(fresh_recipe_cache: None) -> None:
    """Each recipes test starts and ends with an empty recipe cache."""
