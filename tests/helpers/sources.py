"""The checkout's Python sources, parsed once per test run: the static checks of tests/unit
(test_house, test_fsgate_only, test_one_home, recipes/test_cache, test_scripts_stand_alone) each
read every module of the tool, and parsing and walking them was a good part of the quick loop.
A tree is cached by (path, size, modification time), so an edited file is parsed again; the
trees are shared, and no test changes them."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Tuple


@functools.lru_cache(maxsize=None)
def _parsed(path: str, size: int, mtime_ns: int) -> ast.Module:
    return ast.parse(Path(path).read_text(encoding="utf-8"), filename=path)


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
