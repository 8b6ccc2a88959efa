"""The loader fix applied to a running Python process: one home for the IPython startup file
(every new kernel runs it) and for `fixer.apply()` called inside a live kernel.

A process's dynamic loader reads LD_LIBRARY_PATH and LD_PRELOAD once, at start: changing
os.environ later reaches child processes only. What does reach the process itself is loading
the intended libraries by absolute path with RTLD_GLOBAL before any framework asks for them:
a later dlopen("libcudnn.so.9") or a DT_NEEDED of that soname then finds the object already
loaded (glibc matches loaded objects by soname) and never searches. Each library's own
dependencies among the set are loaded before it (read from DT_NEEDED), or its DT_NEEDED would
be searched for through the old LD_LIBRARY_PATH.

This cannot help when the process already mapped another copy of the same soname (a framework
was imported, or LD_PRELOAD forced it in at start): `fix_process` reports that as a conflict
and the caller says "restart".
"""

from __future__ import annotations

import ctypes
import dataclasses
import glob
import os
import re
from typing import Callable, Dict, List, MutableMapping, Optional, Sequence, Tuple
from fixer.detection.elf import read_elf

_SO_N = re.compile(r"\.so\.\d+$")


@dataclasses.dataclass(frozen=True)
class ProcessFix:
    """What fix_process did to this process."""

    loaded: Tuple[str, ...] = ()  # loaded now, by absolute path
    already: Tuple[str, ...] = ()  # the same file was mapped before
    conflicts: Tuple[Tuple[str, str], ...] = ()  # (intended path, other copy already mapped)
    failed: Tuple[Tuple[str, str], ...] = ()  # (path, loader error)
    environ: Tuple[Tuple[str, Optional[str]], ...] = ()  # variables changed for child processes

    @property
    def complete(self) -> bool:
        """Every intended library is the one this process maps now."""
        return not self.conflicts and not self.failed


def rewrite_ld_library_path(
    value: Optional[str], drop: Sequence[str], prepend: Sequence[str]
) -> Optional[str]:
    """LD_LIBRARY_PATH without the `drop` entries (a trailing slash ignored) and with `prepend`
    first; None when nothing is left. The rule the env file's shell code also follows."""
    skip = {os.path.normpath(d) for d in drop} | {os.path.normpath(d) for d in prepend}
    keep = [d for d in (value or "").split(":") if d and os.path.normpath(d) not in skip]
    out = ":".join([os.path.normpath(d) for d in prepend] + keep)
    return out or None


def cudnn_family(main: str) -> List[str]:
    """The cuDNN files to preload for the intended libcudnn.so.N (or its directory): the main
    library and its sub-libraries of the same major in that directory."""
    m = re.search(r"/libcudnn\.so\.(\d+)$", main)
    directory = os.path.dirname(main) if m else main
    pattern = f"libcudnn*.so.{m.group(1)}" if m else "libcudnn*.so.*"
    return sorted(p for p in glob.glob(os.path.join(directory, pattern)) if _SO_N.search(p))


def dependency_order(paths: Sequence[str], needed_of: Callable[[str], Sequence[str]]) -> List[str]:
    """`paths` with each library after those of the set it names in DT_NEEDED (stable otherwise)."""
    by_name = {os.path.basename(p): p for p in paths}
    out: List[str] = []
    visiting: List[str] = []

    def visit(p: str) -> None:
        if p in out or p in visiting:
            return
        visiting.append(p)
        for dep in needed_of(p):
            if dep in by_name:
                visit(by_name[dep])
        visiting.remove(p)
        out.append(p)

    for p in paths:
        visit(p)
    return out


def _needed(path: str) -> Sequence[str]:
    return read_elf(path).needed


def _soname(path: str) -> str:
    return read_elf(path).soname or os.path.basename(path)


def mapped_files(maps: str = "/proc/self/maps") -> List[str]:
    out: List[str] = []
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    path = parts[5].strip()
                    if path not in out:
                        out.append(path)
    except OSError:
        pass
    return out


_SONAME_KEY = re.compile(r"^(lib[^/]*?)\.so\.(\d+)")


def soname_key(path: str) -> Optional[Tuple[str, str]]:
    """(name, major) of a shared library file: libcudnn_ops.so.9 and libcudnn_ops.so.9.14.0 are
    both ("libcudnn_ops", "9"), the soname the dynamic loader matches loaded objects by."""
    m = _SONAME_KEY.match(os.path.basename(path))
    return (m.group(1), m.group(2)) if m else None


def stray_copies(intended: Sequence[str], mapped: Sequence[str]) -> List[Tuple[str, str]]:
    """(intended file, mapped file) for every mapped file that carries an intended library's
    soname but is another file (another copy, or the old file an install deleted: maps show it
    with " (deleted)"). Such a process keeps using that copy whatever is loaded later."""
    want: Dict[Tuple[str, str], str] = {}
    for p in intended:
        key = soname_key(p)
        if key is not None:
            want.setdefault(key, p)
    out: List[Tuple[str, str]] = []
    for m in mapped:
        key = soname_key(m)
        if key in want and os.path.realpath(want[key]) != os.path.realpath(m):
            out.append((want[key], m))
    return out


def _fix_environ(
    env: MutableMapping[str, str],
    drop: Sequence[str],
    prepend: Sequence[str],
    preload_drop: Sequence[str],
) -> List[Tuple[str, Optional[str]]]:
    """LD_LIBRARY_PATH and LD_PRELOAD in `env` rewritten; the variables changed."""
    changed: List[Tuple[str, Optional[str]]] = []
    if drop or prepend:
        new = rewrite_ld_library_path(env.get("LD_LIBRARY_PATH"), drop, prepend)
        if new != env.get("LD_LIBRARY_PATH"):
            if new is None:
                env.pop("LD_LIBRARY_PATH", None)
            else:
                env["LD_LIBRARY_PATH"] = new
            changed.append(("LD_LIBRARY_PATH", new))
    if preload_drop:
        gone = {os.path.normpath(p) for p in preload_drop}
        entries = [p for p in re.split(r"[: ]+", env.get("LD_PRELOAD", "")) if p]
        keep = [p for p in entries if os.path.normpath(p) not in gone]
        if keep != entries:
            if keep:
                env["LD_PRELOAD"] = ":".join(keep)
            else:
                env.pop("LD_PRELOAD", None)
            changed.append(("LD_PRELOAD", env.get("LD_PRELOAD")))
    return changed


def fix_process(
    *,
    cudnn: Sequence[str] = (),
    files: Sequence[str] = (),
    drop: Sequence[str] = (),
    prepend: Sequence[str] = (),
    preload_drop: Sequence[str] = (),
    environ: Optional[MutableMapping[str, str]] = None,
    loader: Optional[Callable[[str], object]] = None,
) -> ProcessFix:
    """Apply the loader fix to this process: LD_LIBRARY_PATH / LD_PRELOAD in `environ`
    (default os.environ: what child processes and `!` cells inherit), then the CUDA library
    `files` and the cuDNN families of `cudnn` (intended libcudnn.so.N paths) loaded by absolute
    path, globally, dependencies first. Never raises for a library that cannot load."""
    env = os.environ if environ is None else environ
    changed = _fix_environ(env, drop, prepend, preload_drop)
    wanted: List[str] = [f for f in files if os.path.isfile(f)]
    for main in cudnn:
        wanted += [p for p in cudnn_family(main) if p not in wanted]
    order = dependency_order(wanted, _needed)
    mapped = mapped_files()
    mapped_real = {os.path.realpath(p) for p in mapped}
    wanted_sonames = {_soname(p) for p in order}
    by_soname: Dict[str, str] = {}
    for p in mapped:
        if os.path.basename(p).split(".so")[0] in {n.split(".so")[0] for n in wanted_sonames}:
            by_soname.setdefault(_soname(p), p)
    loaded: List[str] = []
    already: List[str] = []
    # LD_PRELOAD loaded these at process start: the environment change reaches children only
    conflicts: List[Tuple[str, str]] = [
        (p, "LD_PRELOAD at process start")
        for p in preload_drop
        if os.path.realpath(p) in mapped_real
    ]
    failed: List[Tuple[str, str]] = []
    load = loader or (lambda p: ctypes.CDLL(p, mode=ctypes.RTLD_GLOBAL))
    for path in order:
        if os.path.realpath(path) in mapped_real:
            already.append(path)
            continue
        other = by_soname.get(_soname(path))
        if other is not None and os.path.realpath(other) != os.path.realpath(path):
            conflicts.append((path, other))
            continue
        try:
            load(path)
            loaded.append(path)
        except OSError as exc:
            failed.append((path, str(exc)))
    return ProcessFix(
        loaded=tuple(loaded),
        already=tuple(already),
        conflicts=tuple(conflicts),
        failed=tuple(failed),
        environ=tuple(changed),
    )


__all__ = [
    "ProcessFix",
    "cudnn_family",
    "dependency_order",
    "fix_process",
    "mapped_files",
    "rewrite_ld_library_path",
    "soname_key",
    "stray_copies",
]
