"""Real shared libraries built with the C compiler, standing in for cuDNN / CUDA / framework libraries.

    build_stub(dir / "libcudnn.so.9", soname="libcudnn.so.9", exports={"cudnnGetVersion": 91900})

Each exported symbol is a C function taking no arguments and returning the given integer
(size_t), which is how cudnnGetVersion / cudnnGetCudartVersion behave. `needed` links the
stub against other stubs (DT_NEEDED by their soname); `rpath` / `runpath` set DT_RPATH or
DT_RUNPATH (use "$ORIGIN/..." literally). Compiled objects are cached per process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Dict, Iterable, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]

_CACHE = Path(tempfile.mkdtemp(prefix="stublibs-"))


def cc() -> Optional[str]:
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def build_stub(
    path: PathLike,
    soname: Optional[str] = None,
    exports: Optional[Dict[str, int]] = None,
    needed: Sequence[PathLike] = (),
    rpath: Optional[Sequence[str]] = None,
    runpath: Optional[Sequence[str]] = None,
    extra_source: str = "",
) -> Path:
    """Compile a shared library at `path` and return it."""
    path = Path(path)
    soname = soname or path.name
    exports = exports or {}
    src = (
        "#include <stddef.h>\n"
        + "".join(
            f"size_t {name}(void) {{ return (size_t){value}; }}\n"
            for name, value in sorted(exports.items())
        )
        + extra_source
    )
    if not exports and not extra_source:
        src += f"int {_ident(soname)}_stub_marker = 1;\n"
    flags = ["-shared", "-fPIC", "-O0", f"-Wl,-soname,{soname}"]
    if rpath:
        flags += ["-Wl,--disable-new-dtags", "-Wl,-rpath," + ":".join(rpath)]
    if runpath:
        flags += ["-Wl,--enable-new-dtags", "-Wl,-rpath," + ":".join(runpath)]
    libs = []
    for n in needed:
        n = Path(n)
        libs += ["-Wl,--no-as-needed", f"-L{n.parent}", f"-l:{n.name}"]
    key = hashlib.sha256(
        repr((src, flags, [str(Path(n).resolve()) for n in needed])).encode()
    ).hexdigest()[:20]
    cached = _CACHE / f"{key}.so"
    if not cached.exists():
        compiler = cc()
        if compiler is None:
            raise RuntimeError("no C compiler (cc/gcc) found to build stub libraries")
        c_file = _CACHE / f"{key}.c"
        c_file.write_text(src)
        tmp = _CACHE / f"{key}.tmp.so"
        subprocess.run(
            [compiler, *flags, "-o", str(tmp), str(c_file), *libs],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        )
        os.replace(tmp, cached)
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(cached, path)
    return path


def cudnn_version_number(version: str) -> int:
    """ "9.19.0" -> 91900 (cuDNN >= 9 encoding: major*10000 + minor*100 + patch); 8.x: major*1000+minor*100+patch."""
    major, minor, patch = (int(x) for x in (version.split(".") + ["0", "0"])[:3])
    return major * 10000 + minor * 100 + patch if major >= 9 else major * 1000 + minor * 100 + patch


CUDNN9_SUBLIBS = (
    "libcudnn_graph.so.9",
    "libcudnn_ops.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn_adv.so.9",
    "libcudnn_heuristic.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
)
CUDNN8_SUBLIBS = (
    "libcudnn_ops_infer.so.8",
    "libcudnn_ops_train.so.8",
    "libcudnn_cnn_infer.so.8",
    "libcudnn_cnn_train.so.8",
    "libcudnn_adv_infer.so.8",
    "libcudnn_adv_train.so.8",
)


def build_cudnn_copy(
    directory: PathLike,
    version: str,
    *,
    cudart: int = 13000,
    skip: Iterable[str] = (),
    versioned_files: bool = False,
    sub_versions: Optional[Dict[str, str]] = None,
) -> Path:
    """A cuDNN copy in `directory`: libcudnn.so.N plus its sub-libraries, each exporting
    cudnnGetVersion. `skip` leaves sub-libraries out (an incomplete copy); `sub_versions`
    gives some sub-libraries another version (a mixed copy); `versioned_files` lays them
    out the apt way (libcudnn.so.9.14.0 with a libcudnn.so.9 symlink)."""
    directory = Path(directory)
    major = int(version.split(".")[0])
    subs = CUDNN9_SUBLIBS if major >= 9 else CUDNN8_SUBLIBS
    skip = set(skip)
    sub_versions = sub_versions or {}
    for soname in (f"libcudnn.so.{major}", *subs):
        if soname in skip:
            continue
        v = sub_versions.get(soname, version)
        exports = {"cudnnGetVersion": cudnn_version_number(v), "cudnnGetCudartVersion": cudart}
        if versioned_files:
            real = directory / f"{soname}.{'.'.join(v.split('.')[1:3])}"  # libcudnn.so.9 + .14.0
            build_stub(real, soname=soname, exports=exports)
            link = directory / soname
            if link.exists() or link.is_symlink():
                link.unlink()
            link.symlink_to(real.name)
        else:
            build_stub(directory / soname, soname=soname, exports=exports)
    return directory


def _ident(s: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in s)
