"""The checkout's Python sources, parsed once per test process: the static checks of tests/unit
(test_house, test_fsgate_only, test_one_home, test_scripts_stand_alone) each read every module of
the tool, and parsing and walking them was a good part of the quick loop.
A tree is cached by (path, size, modification time), so an edited file is parsed again; the
trees are shared, and no test changes them.

The trees of the whole tool are some 500,000 objects that live until the process ends, and
the cyclic garbage collector walks every object it tracks on each full collection: parsing them
triggered about ten full collections of a growing heap, and each later one walked them all again
(about 4 s of CPU of the quick loop, timed with gc.callbacks). So the collector is paused while a
file is parsed (a parse makes no garbage cycles), and the new tree goes with everything else
alive at that moment into the permanent generation (gc.freeze, which moves lists and costs
nothing: https://docs.python.org/3/library/gc.html#gc.freeze), where no later collection walks
it. The price: a garbage cycle that the calling test made and dropped before that moment is
never collected (it stays in memory until the process ends; unit tests make few)."""

from __future__ import annotations

import ast
import contextlib
import functools
import gc
from pathlib import Path
from typing import Iterator, Tuple


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@functools.lru_cache(maxsize=None)
def _parsed(path: str, size: int, mtime_ns: int) -> ast.Module:
    with _collector_paused():
        module = ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)
        gc.freeze()
    return module


@functools.lru_cache(maxsize=None)
def _walked(path: str, size: int, mtime_ns: int) -> Tuple[ast.AST, ...]:
    return tuple(ast.walk(_parsed(path, size, mtime_ns)))


def _key(path: Path) -> Tuple[str, int, int]:
    st = path.stat()
    return str(path), st.st_size, st.st_mtime_ns


def tree(path: Path) -> ast.Module:
    """The module at `path`, parsed (shared: do not change it)."""
    return _parsed(*_key(path))


def nodes(path: Path) -> Tuple[ast.AST, ...]:
    """Every node of the module at `path`, in ast.walk's order."""
    return _walked(*_key(path))
