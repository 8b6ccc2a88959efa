"""Every change the tool makes to the file system goes through fixer.system.fsgate.

The test walks the syntax tree of every module of the package and fails on any call of an
os/shutil/pathlib/tempfile mutator, or an open() for writing, outside the gate. Calls on the
gate itself (`fsgate.write_bytes`, `fsgate.chmod`) are its public functions, not pathlib's.

Exceptions, each justified:
- fixer/children/*: scripts run by path inside a foreign interpreter (stdlib only, no fixer
  import); none of them changes the file system (they load libraries and print JSON), which this
  test also checks, so the list of their exceptions is empty.
- os.devnull opened for writing: a sink for output, not a file of the machine.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterator, List, Tuple

import fixer

from tests.helpers import sources

PACKAGE = Path(fixer.__file__).resolve().parent
GATE = PACKAGE / "system" / "fsgate.py"

OS = {
    "remove", "unlink", "rename", "renames", "replace", "rmdir", "removedirs", "makedirs",
    "mkdir", "chmod", "lchmod", "fchmod", "chown", "lchown", "fchown", "symlink", "link",
    "utime", "truncate", "ftruncate", "mkfifo", "mknod",
}  # fmt: skip
SHUTIL = {
    "rmtree",
    "move",
    "copy",
    "copy2",
    "copyfile",
    "copytree",
    "copymode",
    "copystat",
    "chown",
}
TEMPFILE = {
    "mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryDirectory", "TemporaryFile",
    "SpooledTemporaryFile",
}  # fmt: skip
#: pathlib.Path's mutators (method names no str or dict method shares)
PATH_METHODS = {
    "write_text", "write_bytes", "unlink", "mkdir", "touch", "chmod", "lchmod",
    "symlink_to", "hardlink_to", "rmdir",
}  # fmt: skip
#: the gate module's own names: calls on it are the sanctioned way
GATE_NAMES = {"fsgate"}
#: lock files: the descriptor of a lock the gate opened (fsgate.open_lock) is truncated and
#: rewritten in place by the lock itself
ALLOWED = {("fixer/applier/filelock.py", "os.ftruncate")}

_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")


def _is_devnull(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "devnull"


def _mode_writes(node: ast.Call, position: int, unknown: bool = True) -> bool:
    """open()'s mode (argument `position` or mode=) writes; `unknown`: what a mode computed at
    run time counts as (open(): the worst; a method .open(x): x is a name, not a mode)."""
    mode = node.args[position] if len(node.args) > position else None
    for k in node.keywords:
        if k.arg == "mode":
            mode = k.value
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return unknown


def _name(node: ast.AST) -> str:
    return node.id if isinstance(node, ast.Name) else ""


def _attr_call(node: ast.Call, func: ast.Attribute) -> Iterator[str]:
    base = _name(func.value)
    if base in GATE_NAMES:
        return
    if base == "os" and func.attr in OS:
        yield f"os.{func.attr}"
    elif base == "os" and func.attr == "open" and len(node.args) > 1:
        if any(f in ast.unparse(node.args[1]) for f in _WRITE_FLAGS) and not (
            node.args and _is_devnull(node.args[0])
        ):
            yield "os.open for writing"
    elif base == "shutil" and func.attr in SHUTIL:
        yield f"shutil.{func.attr}"
    elif base == "tempfile" and func.attr in TEMPFILE:
        yield f"tempfile.{func.attr}"
    elif base not in ("os", "shutil") and func.attr in PATH_METHODS:
        yield f".{func.attr}()"
    elif func.attr in ("rename", "replace") and len(node.args) == 1 and not node.keywords:
        yield f".{func.attr}() (pathlib)"
    elif func.attr == "open" and base != "os" and _mode_writes(node, 0, unknown=False):
        yield "Path.open() for writing"


def mutators(path: Path) -> List[Tuple[int, str]]:
    out: List[Tuple[int, str]] = []
    for node in sources.nodes(path):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            out += [(node.lineno, w) for w in _attr_call(node, func)]
        elif isinstance(func, ast.Name) and func.id == "open" and _mode_writes(node, 1):
            if not (node.args and _is_devnull(node.args[0])):
                out.append((node.lineno, "open() for writing"))
        elif isinstance(func, ast.Name) and func.id in TEMPFILE | {"rmtree", "copyfile"}:
            out.append((node.lineno, func.id))
    return out


def test_no_module_but_the_gate_changes_the_file_system():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == GATE:
            continue
        rel = path.relative_to(PACKAGE.parent).as_posix()
        for line, what in mutators(path):
            if (rel, what) not in ALLOWED:
                found.append(f"{rel}:{line}: {what}")
    assert found == [], "file-system changes outside fixer/system/fsgate.py:\n" + "\n".join(found)


def test_the_scan_sees_each_kind_of_mutator(tmp_path):
    """The walker itself: each mutator form is found, the gate's calls and reads are not."""
    src = tmp_path / "m.py"
    src.write_text(
        "import os, shutil, tempfile\n"
        "from fixer.system import fsgate\n"
        "os.unlink(p)\nos.replace(a, b)\nos.chmod(p, 0)\nos.makedirs(p)\nos.symlink(a, b)\n"
        "shutil.rmtree(p)\nshutil.copy2(a, b)\ntempfile.mkstemp()\n"
        "p.write_text('x')\np.unlink()\np.mkdir()\np.rename(q)\np.touch()\n"
        "open(p, 'w')\nopen(p, mode='ab')\nopen(p, m)\nos.open(p, os.O_WRONLY | os.O_CREAT)\n"
        "fsgate.write_bytes(p, b'')\nfsgate.chmod(p, 0)\nopen(p)\nopen(p, 'rb')\n"
        "s.replace('a', 'b')\nopen(os.devnull, 'w')\nos.open(os.devnull, os.O_WRONLY)\n"
        "os.open(p, os.O_RDONLY)\np.open('w')\nzf.open(info, 'w')\n"
    )
    found = [w for _, w in mutators(src)]
    assert len(found) == 18, found
