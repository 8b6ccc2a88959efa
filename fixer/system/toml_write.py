"""Writing TOML values (the stdlib reads TOML but cannot write it). Used by the lock file and
the recipe generator; only the value kinds they need."""

from __future__ import annotations

import json
from typing import Any


def quote(s: str) -> str:
    """A TOML basic string: a JSON string is one."""
    return json.dumps(s, ensure_ascii=False)


def value(v: Any) -> str:
    """bool, int, str, lists/tuples of them, and (inline) tables."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return quote(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{quote(k)} = {value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} to TOML")
