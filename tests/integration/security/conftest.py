"""The security suite reuses the apply suite's real world: a local index on 127.0.0.1, throw-away
venvs, real pip and uv, a --root sandbox (tests/integration/apply/conftest.py)."""

from tests.integration.apply.conftest import (  # noqa: F401 - pytest fixtures
    _base_venvs,
    bare_venv,
    broken,
    index,
    isolated_installers,
    sandbox,
    venv,
    wheelhouse,
)
