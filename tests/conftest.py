"""Shared test settings.

- Tests marked `gpu` need an NVIDIA GPU and a working driver. They run only with
  `--run-gpu` (on the GPU machine); CI has no GPU, so there they are skipped with that reason.
- Recorded real outputs of a GPU machine live in tests/data/; the research data the recipes are
  generated from lives in data/ (with its sources).
- The project stands alone: an audit hook records every file or directory the test process opens
  or lists beside the checkout (under its parent folder, outside the repo and the temp folders), and
  the test during which that happened fails, naming the path.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, List, Tuple

import pytest

from tests.helpers import audit, examples, guard
from tests.helpers.paths import DATA, REPO

examples.register()  # the "quick" and "full" Hypothesis profiles (tests/helpers/examples.py)

#: Paths read beside the checkout since the last check: (event, path).
_OUTSIDE: List[Tuple[str, str]] = []
_AUDITED = {"open", "os.listdir", "os.scandir", "glob.glob", "os.walk"}


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _beside_the_repo(path: str) -> bool:
    """True for a path in the checkout's parent folder that is neither the repo nor a temp folder."""
    parent = str(REPO.parent)
    if not _inside(path, parent) or _inside(path, str(REPO)):
        return False
    return not _inside(path, os.path.realpath(tempfile.gettempdir()))


def _audit(event: str, args: Tuple[Any, ...]) -> None:
    if not args:
        return
    target = args[0]
    if isinstance(target, int) or target is None:
        return
    try:
        path = os.path.realpath(os.fsdecode(target))
    except (TypeError, ValueError):
        return
    if _beside_the_repo(path):
        _OUTSIDE.append((event, path))


if str(REPO.parent) != os.sep:  # a checkout at / has nothing beside it
    audit.watch(_AUDITED, _audit)


@pytest.fixture(autouse=True)
def _stands_alone():
    """Fail the test that read a path beside the checkout (a sibling folder): the repo must stand alone."""
    del _OUTSIDE[:]
    yield
    if _OUTSIDE:
        seen = sorted(set(_OUTSIDE))
        del _OUTSIDE[:]
        pytest.fail(
            "read outside the repository (the project must stand alone): "
            + ", ".join(f"{event} {path}" for event, path in seen[:5])
        )


def pytest_configure(config: pytest.Config) -> None:
    # FIXER_TEST_GUARD=record:FILE: the unit tests' guard watches every test and records what
    # it sees (which tests start processes or use the network: tests/helpers/guard.py)
    if guard.recording():
        guard.install()
        config.pluginmanager.register(guard.RecordEverywhere(), "fixer-guard-record")
    # Caches the tool writes (parsed recipes, index metadata) go to a throw-away folder, never
    # to the real ~/.cache; child processes (CLI runs) inherit it.
    if not os.environ.get("COLAB_CUDNN_FIX_TEST_CACHE"):
        os.environ["COLAB_CUDNN_FIX_TEST_CACHE"] = "1"
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="fixer-test-cache-")
        _MADE_CACHE.append(os.environ["XDG_CACHE_HOME"])
    # The per-interpreter apply locks live in the private state directory (fixer.system.paths.lock_dir),
    # which tests point into a sandbox (--root or XDG_STATE_HOME).


def pytest_unconfigure(config: pytest.Config) -> None:
    """The throw-away cache folder this process made (pytest_configure) goes with the run; xdist's
    workers inherit the controller's folder and make none, so only the controller removes it,
    after every worker has stopped."""
    for folder in _MADE_CACHE:
        shutil.rmtree(folder, ignore_errors=True)
    _MADE_CACHE.clear()


#: The cache folder pytest_configure made in this process (none where one was inherited).
_MADE_CACHE: List[str] = []

#: Whether the collector was on when collection began (pytest_sessionstart).
_GC_WAS_ON: List[bool] = []


def pytest_sessionstart(session: pytest.Session) -> None:
    """Collection imports the tool, the test modules and their data: objects that live until the
    run ends. The cyclic collector is paused meanwhile (each of its full collections would walk
    the growing heap again: about ten of them, 0.7 s of CPU per test process, timed with
    gc.callbacks) and resumed by pytest_collection_finish."""
    _GC_WAS_ON[:] = [gc.isenabled()]
    gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Collected: the modules, test items and their parameters now live until the run ends.
    Collect the garbage there is, then freeze what lives (gc.freeze), so that the collector's
    full collections during the run walk only what the tests make. Without it, each of the two
    dozen full collections of a quick loop walked the whole imported tool, pytest and
    Hypothesis again (timed with gc.callbacks; https://docs.python.org/3/library/gc.html#gc.freeze).
    Nothing escapes the collector: what is frozen was alive after a full collection."""
    if _GC_WAS_ON[:1] == [True]:
        gc.enable()
    gc.collect()
    gc.freeze()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-gpu",
        action="store_true",
        default=False,
        help="run tests that need an NVIDIA GPU (the GPU machine only)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    if config.getoption("--run-gpu"):
        return
    skip = pytest.mark.skip(
        reason="needs an NVIDIA GPU and driver; CI has none (run with --run-gpu on the GPU machine)"
    )
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture
def shared_data() -> Path:
    """The research data the recipes were generated from (the repo's data/, copied with its sources)."""
    return REPO / "data"


@pytest.fixture
def fresh_recipe_cache() -> Iterator[None]:
    """An empty recipe cache before and after the test."""
    from fixer import recipebook as recipes

    recipes.clear_cache()
    yield
    recipes.clear_cache()


@pytest.fixture(scope="session")
def real_recipes() -> Any:
    """The shipped recipes."""
    from fixer.recipebook import load

    return load()


@pytest.fixture(scope="session")
def envmaker() -> Any:
    """scripts/make_environments.py as a module (the bundled environments' builder)."""
    from tests.helpers.envs import load_script

    return load_script("make_environments")
