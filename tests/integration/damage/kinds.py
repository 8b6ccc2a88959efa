"""Kinds of damage done to a healthy machine, each alone or combined with another.

A damage is applied to a machine tree (tests/helpers/fakemachine.py: compiled stub libraries,
real dist-info, dpkg, ld.so.cache) or to a real venv's site-packages (the real-pip layer), and
may need something of the healthy machine it starts from (torch linked with DT_RUNPATH, so
that LD_LIBRARY_PATH can win; a CUDA 12 stack, so that an older CUDA 12 toolkit can win). The
driver and the GPU are the true edge: their damage is an override (COLAB_CUDNN_FIX_DRIVER /
_GPU), as on a real machine whose driver or GPU is what it is.

Kinds (the issue's list): a library file missing, truncated, not ELF or empty; a symlink into
another copy; a sub-library of another release; dist-info that disagrees with the files, or a
RECORD mismatch; the wheel uninstalled; a competing copy through LD_PRELOAD, LD_LIBRARY_PATH,
ld.so.conf.d and the cache, and the default directories; an older CUDA library winning; two
frameworks needing different cuDNN majors; a CPU-only build; the driver too old; the GPU too old.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from tests.helpers.stublibs import (
    CUDNN9_SUBLIBS,
    build_cudnn_copy,
    build_stub,
    cudnn_version_number,
)

#: the sub-libraries a file damage may hit (the main library too)
TARGETS = ("libcudnn.so.9",) + CUDNN9_SUBLIBS
OLD = "9.14.0"  # the other release: the apt copy of the GPU machine


@dataclasses.dataclass(frozen=True)
class Base:
    """The healthy machine a case starts from."""

    cuda: int = 13  # 13: torch 2.11+cu130 + JAX cuda13 (the GPU machine); 12: torch 2.11+cu126
    runpath: bool = False  # torch's libtorch_cuda.so links with DT_RUNPATH instead of DT_RPATH
    apt: bool = True  # the apt cuDNN 9.14 copy next to the pip one


@dataclasses.dataclass(frozen=True)
class Damage:
    kind: str
    target: str = "libcudnn_cnn.so.9"

    @property
    def label(self) -> str:
        return f"{self.kind}({self.target})" if self.kind in FILE_KINDS else self.kind


FILE_KINDS = (
    "file-missing",
    "file-truncated",
    "file-not-elf",
    "file-empty",
    "symlink-other-copy",
    "sublib-other-release",
    "record-mismatch",
    "replaced-file",  # a real file of another release under the same name (no symlink)
    "replaced-same-size",  # the same, of exactly the original size: only the sha256 tells
)
OTHER_KINDS = (
    "dist-info-version",
    "wheel-uninstalled",
    "ld-preload",
    "ld-library-path",
    "ld-so-conf",
    "default-dir",
    "older-cuda-lib",
    "two-majors",
    "cpu-only",
    "driver-too-old",
    "gpu-too-old",
    "pip-leftovers",  # what an interrupted pip upgrade leaves moved aside (~vidia_..., nvidia/~udnn)
)
KINDS = FILE_KINDS + OTHER_KINDS


def needs(damages: Sequence[Damage]) -> Dict[str, object]:
    """What the healthy base must be for these damages to bite."""
    out: Dict[str, object] = {}
    for d in damages:
        if d.kind in ("ld-library-path", "older-cuda-lib"):
            out["runpath"] = True
        if d.kind == "older-cuda-lib":
            out["cuda"] = 12
        if d.kind == "default-dir":
            out["apt"] = False
    return out


# -- pieces shared by both layers ------------------------------------------------------------


def other_release_stub(path: Path, soname: str, version: str = OLD) -> Path:
    """A cuDNN library of another release: answers cudnnGetVersion with `version`, and is of
    another size than the stub it replaces (as a file of another release is)."""
    return build_stub(
        path,
        soname=soname,
        exports={"cudnnGetVersion": cudnn_version_number(version), "cudnnGetCudartVersion": 13000},
        extra_source="static const char other_release_padding[4096] = {1};\n"
        "const char *other_release(void) { return other_release_padding; }\n",
    )


def old_copy(directory: Path, cuda: int = 13, version: str = OLD) -> Path:
    """A complete older cuDNN copy (9.14 unless told) in `directory`."""
    return build_cudnn_copy(directory, version, cudart=cuda * 1000)


def _unlink(f: Path) -> None:
    if f.exists() or f.is_symlink():
        f.unlink()


def _truncate(f: Path) -> None:
    if f.exists():
        data = f.read_bytes()
        f.unlink()
        f.write_bytes(data[: max(64, len(data) // 3)])


def _rewrite(f: Path, data: bytes) -> None:
    _unlink(f)
    f.write_bytes(data)


def _symlink_other(f: Path, d: "Damage", other_copy: Path) -> None:
    _unlink(f)
    f.symlink_to(other_copy / d.target)


def _replaced(lib: Path, f: Path, d: "Damage", other_copy: Path) -> None:
    src = other_copy if other_copy.is_absolute() else lib / other_copy  # relative: to `lib`
    replace_with_other_release(f, src / d.target, same_size=d.kind.endswith("size"))


def _other_release(f: Path, d: "Damage") -> None:
    # record-mismatch: the file is of another size than RECORD says (the RECORD is left as it
    # was), and of another release; sublib-other-release: the same file swapped in
    _unlink(f)
    other_release_stub(f, d.target)


def damage_file(lib: Path, d: Damage, other_copy: Path) -> None:
    """A file damage on the cuDNN copy in `lib` (nothing when another damage removed the copy)."""
    if not lib.is_dir():
        return
    f = lib / d.target
    kinds = {
        "file-missing": lambda: _unlink(f),
        "file-truncated": lambda: _truncate(f),
        "file-not-elf": lambda: _rewrite(f, b"this is not a shared library\n"),
        "file-empty": lambda: _rewrite(f, b""),
        "symlink-other-copy": lambda: _symlink_other(f, d, other_copy),
        "replaced-file": lambda: _replaced(lib, f, d, other_copy),
        "replaced-same-size": lambda: _replaced(lib, f, d, other_copy),
        "sublib-other-release": lambda: _other_release(f, d),
        "record-mismatch": lambda: _other_release(f, d),
    }
    if d.kind in kinds:
        kinds[d.kind]()


def replace_with_other_release(f: Path, other: Path, *, same_size: bool) -> None:
    """`f` becomes a copy of `other` (a file of another release: its cudnnGetVersion says so),
    of another size than `f` unless `same_size`.
    `same_size`: the copy is made exactly as long as the file it replaces (a smaller one padded
    with zero bytes after its last section, which the loader never reads; a longer one first
    rebuilt without the padding other_release_stub adds), so that only a hash tells them apart."""
    size = f.stat().st_size if f.exists() else 0
    data = other.resolve().read_bytes()
    if same_size and len(data) > size:
        tmp = f.parent / (f.name + ".other")
        build_stub(tmp, soname=f.name, exports={"cudnnGetVersion": cudnn_version_number(OLD)})
        data = tmp.read_bytes()
        tmp.unlink()
    if same_size:
        assert len(data) <= size, f"{other}: {len(data)} bytes, more than {f}'s {size}"
        data += b"\0" * (size - len(data))
    elif len(data) == size:  # another release's file is of another size (the stubs may not be)
        data += b"\0" * 4096
    if f.exists() or f.is_symlink():
        f.unlink()
    f.write_bytes(data)
    f.chmod(0o755)


def pip_leftovers(site: Path, dist_glob: str, folder: Path) -> List[Path]:
    """What pip leaves when an upgrade of the wheel is killed after it moved the old files aside
    and before it committed (pip's StashedUninstallPathSet with AdjacentTempDirectory names):
    `~` + the name's tail for the dist-info and for the package folder."""
    made = []
    for d in sorted(site.glob(dist_glob))[:1]:
        made.append(site / ("~" + d.name[1:]))
        shutil.copytree(d, made[-1], symlinks=True)
    if folder.is_dir():
        made.append(folder.parent / ("~" + folder.name[1:]))
        shutil.copytree(folder, made[-1], symlinks=True)
    return made


def set_dist_version(dist_info: Path, version: str) -> Path:
    """METADATA says another version than the files are (the directory keeps its name, as a
    hand-edited or half-upgraded install leaves it)."""
    meta = dist_info / "METADATA"
    meta.write_text(re.sub(r"(?m)^Version: .*$", f"Version: {version}", meta.read_text()))
    return dist_info


def remove_dist(site: Path, dist_glob: str, folder: Optional[Path]) -> None:
    for d in site.glob(dist_glob):
        shutil.rmtree(d)
    if folder is not None and folder.exists():
        shutil.rmtree(folder)


def ld_so_conf(root: Path, directory: str) -> Path:
    conf = root / "etc" / "ld.so.conf.d" / "50-cudnn-old.conf"
    conf.parent.mkdir(parents=True, exist_ok=True)
    conf.write_text(directory + "\n")
    return conf


def applies(kinds: Sequence[str]) -> Callable[[Damage], bool]:
    return lambda d: d.kind in kinds


__all__ = [
    "Base",
    "Damage",
    "FILE_KINDS",
    "KINDS",
    "OLD",
    "OTHER_KINDS",
    "TARGETS",
    "damage_file",
    "needs",
    "old_copy",
    "other_release_stub",
    "remove_dist",
    "set_dist_version",
    "pip_leftovers",
    "replace_with_other_release",
    "ld_so_conf",
    "applies",
]
_ = (os, List, Tuple)
