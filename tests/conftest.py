"""Shared test settings.

- Tests marked `gpu` need an NVIDIA GPU and a working driver. They run only with
  `--run-gpu` (on the GPU machine); CI has no GPU, so there they are skipped with that reason.
- Recorded real outputs of a GPU machine live in tests/data/ (and ../shared/data when present).
"""
from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def pytest_configure(config: pytest.Config) -> None:
    # Caches the tool writes (parsed recipes, index metadata) go to a throw-away folder, never
    # to the real ~/.cache; child processes (CLI runs) inherit it.
    import os
    import tempfile

    if not os.environ.get("COLAB_CUDNN_FIX_TEST_CACHE"):
        os.environ["COLAB_CUDNN_FIX_TEST_CACHE"] = "1"
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="fixer-test-cache-")
    # The per-interpreter apply locks go to a throw-away folder too (fixer._paths.lock_dir).
    if not os.environ.get("COLAB_CUDNN_FIX_LOCK_DIR"):
        os.environ["COLAB_CUDNN_FIX_LOCK_DIR"] = tempfile.mkdtemp(prefix="fixer-test-locks-")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-gpu", action="store_true", default=False,
                     help="run tests that need an NVIDIA GPU (the GPU machine only)")


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if config.getoption("--run-gpu"):
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and driver; CI has none (run with --run-gpu on the GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def data_dir() -> Path:
    return DATA
