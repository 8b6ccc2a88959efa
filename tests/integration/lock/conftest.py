"""Lock tests reuse the apply fixtures (local index, throw-away venvs, isolated pip/uv)."""

from tests.integration.apply.conftest import (  # noqa: F401
    _base_venvs,
    bare_venv,
    broken,
    index,
    isolated_installers,
    sandbox,
    venv,
    wheelhouse,
)
