"""detect(): read the machine's GPU stack into an Environment. Reads, never writes.

    env = detect()                                  # this interpreter, this machine
    env = detect("/opt/venv/bin/python")            # another interpreter's packages
    env = detect(root=tmp, environ={...}, overrides=Overrides(driver_version="550.54.15"))

No framework is imported on this path. Everything that can hang or crash (libnvidia-ml,
libcuda, loading cuDNN copies, the target interpreter) runs in child processes with a
timeout; the children start together so their start-up costs overlap.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from fixer.detection import gpu_probe as _gpu_probe
from fixer.system.proc import Child, child_env
from fixer.model import (
    Environment,
    FrameworkBuild,
    LibraryCopy,
    LoadResolution,
    ProbeNote,
    PythonEnv,
    RuntimeView,
)
from fixer.detection import gpu as _gpu
from fixer.detection import libraries as _libs
from fixer.detection.fs import MachineFS
from fixer.detection.frameworks import detect_frameworks
from fixer.detection.ldcache import LdCache, load_ld_cache
from fixer.detection.loader import Resolver
from fixer.detection.overrides import ENV_CUDA, ENV_DRIVER, ENV_GPU, Overrides, overrides_from_env
from fixer.detection.python_env import (
    InProcessProbe,
    check_interpreter,
    finish_probe,
    python_script,
    start_probe,
)
from fixer.detection.runtime import detect_runtime
from fixer import __version__

__all__ = ["detect", "Overrides", "overrides_from_env", "ENV_DRIVER", "ENV_CUDA", "ENV_GPU"]

ENV_KEYS = (
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_HOME",
    "CUDA_PATH",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "JAX_PLATFORMS",
    "PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK",
    "JAX_SKIP_CUDA_CONSTRAINTS_CHECK",
    "TF_CPP_MIN_LOG_LEVEL",
    "XLA_FLAGS",
    "NVIDIA_DRIVER_CAPABILITIES",
    "JPY_PARENT_PID",
)
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
BIG_THREE = ("torch", "tensorflow", "jax")


def _env_subset(environ: Mapping[str, str]) -> Dict[str, str]:
    out = {k: environ[k] for k in ENV_KEYS if k in environ}
    for k, v in environ.items():
        if k.startswith(("COLAB_", "KAGGLE_")) and not any(w in k.upper() for w in SECRET_WORDS):
            out[k] = v
    return dict(sorted(out.items()))


def _clean_env(environ: Mapping[str, str], drop_ld_path: bool) -> Dict[str, str]:
    env = child_env(environ)
    if drop_ld_path:
        env.pop("LD_LIBRARY_PATH", None)
    return env


def detect(
    python: Optional[str] = None,
    *,
    deep: bool = False,
    root: str = "/",
    environ: Optional[Mapping[str, str]] = None,
    overrides: Optional[Overrides] = None,
    timeout: float = _gpu_probe.TIMEOUT,
    hash_records: Optional[bool] = None,
) -> Environment:
    """The whole stack of the machine under `root` as seen by interpreter `python`.

    Each wheel-owned library file is compared with its RECORD row: by size always, and by sha256
    with `hash_records` (default: `deep`; apply's before and after checks pass True).

    Raises UsageError when `python` is given and is not a usable interpreter."""
    environ = dict(os.environ if environ is None else environ)
    overrides = overrides or Overrides()
    fs = MachineFS(root)
    notes: List[ProbeNote] = []
    explicit = python is not None
    target = check_interpreter(python) if python is not None else sys.executable

    # The default target is this very interpreter: probe it in-process (no second interpreter
    # start), unless the caller's environment would give a child another sys.path.
    same_process = not explicit and fs.root == "/" and _child_sees_my_sys_path(environ)
    probe = InProcessProbe(environ) if same_process else start_probe(target, environ, timeout)
    probe_native = _gpu_probe.needed(
        fs.root, overrides.gpus is not None, bool(overrides.driver_version)
    )
    native: Optional[Child] = None
    if probe_native:
        native = _gpu_probe.start(environ, timeout)
    cache, cache_note = load_ld_cache(fs.R("/etc/ld.so.cache"), allow_ldconfig=fs.root == "/")
    notes.append(ProbeNote("ld.so.cache", cache is not None, cache_note))

    pyenv, pnotes = finish_probe(probe, target, explicit, fs.unR)
    notes += pnotes
    frameworks = detect_frameworks(pyenv, fs.R)
    copies = _scan_copies(
        pyenv, frameworks, environ, fs, cache, notes, deep if hash_records is None else hash_records
    )

    cudnn_children = _start_cudnn_versions(copies, deep, fs, environ, timeout)

    gpus, driver, gnotes = _gpu.assemble(
        fs.root,
        environ,
        overrides,
        native.result() if native else (None, None),
        probe_native,
        timeout,
    )
    notes += gnotes
    _finish_cudnn_versions(cudnn_children, copies, fs, notes)
    libraries = tuple(_libs.freeze(c) for c in copies)
    loads = compute_loads(frameworks, libraries, pyenv, fs, environ, cache)
    runtime, rnotes = detect_runtime(fs, environ, bool(gpus))
    notes += rnotes
    views: Tuple[RuntimeView, ...] = ()
    if deep:
        views = deep_views(target, frameworks, environ, max(timeout, 120.0))

    return Environment(
        tool_version=__version__,
        gpus=gpus,
        driver=driver,
        runtime=runtime,
        python=pyenv,
        frameworks=frameworks,
        libraries=libraries,
        loads=loads,
        env=_env_subset(environ),
        runtime_views=views,
        probes=tuple(notes),
        pip_leftovers=_libs.pip_leftovers(pyenv, fs),
    )


def _scan_copies(
    pyenv: Optional[PythonEnv],
    frameworks: Sequence[FrameworkBuild],
    environ: Mapping[str, str],
    fs: MachineFS,
    cache: Any,
    notes: List[ProbeNote],
    hashes: bool,
) -> Any:
    """Every library copy on the machine (fixer.detection.libraries.scan), torch's bundled
    lib folder included."""
    fw_dirs = [
        (os.path.join(f.location, "torch", "lib"), "bundled")
        for f in frameworks
        if f.framework == "torch"
    ]
    copies, _owners = _libs.scan(
        pyenv, environ, fs, cache.directories() if cache else (), fw_dirs, notes, hashes=hashes
    )
    return copies


def _start_cudnn_versions(
    copies: Any, deep: bool, fs: MachineFS, environ: Mapping[str, str], timeout: float
) -> Dict[int, Child]:
    """cudnnGetVersion in a child, for each copy whose files do not say their version."""
    return {
        i: python_script(
            sys.executable,
            "native.py",
            ["cudnn", *[fs.R(p) for p in paths]],
            timeout=timeout,
            env=_clean_env(environ, drop_ld_path=True),
            label=f"cudnnGetVersion {copies[i].directory}",
        )
        for i, paths in _libs.unknown_cudnn_files(copies, deep).items()
    }


def _finish_cudnn_versions(
    children: Dict[int, Child], copies: Any, fs: MachineFS, notes: List[ProbeNote]
) -> None:
    for i, child in children.items():
        data, err = child.result()
        if data is None:
            notes.append(ProbeNote("cudnnGetVersion", False, err or "no answer"))
            continue
        _libs.apply_probe_versions(copies, i, data, fs, notes)


# ----------------------------------------------------------------------------- loads


def _first_pkg_dir(fs: MachineFS, pyenv: Optional[PythonEnv], *rel: str) -> Optional[str]:
    for sp in pyenv.site_packages if pyenv else ():
        d = os.path.join(sp, *rel)
        if fs.isdir(d):
            return d
    return None


#: The nvidia-* wheels and the libraries they ship, with the folder under site-packages/nvidia
#: that holds them: CUDA 12 wheels (nvidia-cuda-runtime-cu12, ...) one folder per component,
#: CUDA 13 wheels (nvidia-cuda-runtime, ...) all in nvidia/cu13/lib; cuDNN always nvidia/cudnn/lib.
WHEEL_LIBRARIES: Dict[str, Tuple[str, ...]] = {
    "nvidia-cudnn": ("cudnn",),
    "nvidia-cuda-runtime": ("cudart",),
    "nvidia-cublas": ("cublas", "cublasLt"),
    "nvidia-cuda-nvrtc": ("nvrtc",),
}
_WHEEL_FOLDERS = {
    "cudnn": "cudnn",
    "cudart": "cuda_runtime",
    "cublas": "cublas",
    "cublasLt": "cublas",
    "nvrtc": "cuda_nvrtc",
}


def wheel_lib_folders(library: str, cuda_major: Optional[int]) -> List[str]:
    """The folders under site-packages/nvidia where the wheels keep `library`, in search order."""
    folders = [_WHEEL_FOLDERS[library]] if library in _WHEEL_FOLDERS else []
    if cuda_major and library != "cudnn":
        folders.append(f"cu{cuda_major}")
    return folders


def _wheel_lib_paths(
    fs: MachineFS,
    pyenv: Optional[PythonEnv],
    library: str,
    soname: str,
    cuda_major: Optional[int],
    first_only: bool,
) -> List[str]:
    """Where the nvidia wheels keep `soname`: nvidia/<folder>/lib or (CUDA 13) nvidia/cuNN/lib."""
    folders = wheel_lib_folders(library, cuda_major)
    out: List[str] = []
    for folder in folders:
        if first_only:
            d = _first_pkg_dir(fs, pyenv, "nvidia", folder)
            if d:
                out.append(os.path.join(d, "lib", soname))
        else:
            for sp in pyenv.site_packages if pyenv else ():
                p = os.path.join(sp, "nvidia", folder, "lib", soname)
                if fs.exists(p):
                    out.append(p)
    return out


def _major(version: Optional[str]) -> Optional[int]:
    """ "12.5.1" -> 12; None or garbage -> None (never raises: detection must not crash)."""
    head = (version or "").split(".")[0]
    return int(head) if head.isdigit() else None


def _cudnn_major(fw: FrameworkBuild, fs: MachineFS) -> Optional[int]:
    if _major(fw.cudnn):
        return _major(fw.cudnn)
    if fw.library_file:
        for n in fs.elf(fw.library_file).needed:
            if n.startswith("libcudnn.so."):
                return _major(n.rsplit(".", 1)[1])
    return 9 if fw.framework in BIG_THREE else None


def compute_loads(
    frameworks: Sequence[FrameworkBuild],
    libraries: Sequence[LibraryCopy],
    pyenv: Optional[PythonEnv],
    fs: MachineFS,
    environ: Mapping[str, str],
    cache: Optional[LdCache],
) -> Tuple[LoadResolution, ...]:
    r = Resolver(fs, environ, cache, libraries)
    out: List[LoadResolution] = []
    for fw in frameworks:
        if not fw.is_cuda_build or fw.framework == "cupy":
            continue
        obj = fs.elf(fw.library_file) if fw.library_file else None
        cuda_major = _major(fw.cuda)
        wanted: List[Tuple[str, str]] = []
        major = _cudnn_major(fw, fs)
        if major:
            wanted.append(("cudnn", f"libcudnn.so.{major}"))
        needed = [
            n
            for n in (obj.needed if obj else ())
            if n.split(".so")[0] in ("libcudart", "libcublas", "libcublasLt")
        ]
        if not needed and cuda_major and fw.framework in BIG_THREE:
            needed = [
                f"libcudart.so.{cuda_major}",
                f"libcublas.so.{cuda_major}",
                f"libcublasLt.so.{cuda_major}",
            ]
        wanted += [(n.split(".so")[0][3:], n) for n in needed]

        torch_preloads = False
        if fw.framework == "torch" and fw.library_file:
            gd = os.path.join(os.path.dirname(fw.library_file), "libtorch_global_deps.so")
            gobj = fs.elf(gd) if fs.exists(gd) else None
            for n in gobj.needed if gobj else ():
                if n.startswith("libcudart.so"):
                    res = r.resolve("torch", "cudart", n, gobj)
                    torch_preloads = res.path is None or res.error is not None
        for library, soname in wanted:
            preload: List[str] = []
            if fw.framework == "jax":
                preload = _wheel_lib_paths(fs, pyenv, library, soname, cuda_major, first_only=True)
            elif torch_preloads:
                preload = _wheel_lib_paths(fs, pyenv, library, soname, cuda_major, first_only=False)
            out.append(r.resolve(fw.framework, library, soname, obj, preload))
    majors = sorted({c.major for c in libraries if c.library == "cudnn" and c.major and c.files})
    for m in majors:
        out.append(r.resolve("dlopen", "cudnn", f"libcudnn.so.{m}", None))
    return tuple(out)


# ----------------------------------------------------------------------------- deep


def deep_views(
    python: str, frameworks: Sequence[FrameworkBuild], environ: Mapping[str, str], timeout: float
) -> Tuple[RuntimeView, ...]:
    names = []
    for f in frameworks:
        if f.framework in ("torch", "jax", "tensorflow", "cupy") and f.framework not in names:
            names.append(f.framework)
    children = {
        n: python_script(
            python,
            "deep.py",
            [n],
            isolated=False,
            timeout=timeout,
            env=child_env(environ),
            label=f"import {n}",
        )
        for n in names
    }
    out = []
    for n, ch in children.items():
        data, err = ch.result()
        if data is None:
            out.append(RuntimeView(framework=n, imported=False, error=err))
            continue
        out.append(
            RuntimeView(
                framework=n,
                imported=bool(data.get("imported")),
                error=data.get("error"),
                version=data.get("version"),
                cuda_available=data.get("cuda_available"),
                cudnn_runtime=data.get("cudnn_runtime"),
                devices=tuple(data.get("devices") or ()),
                mapped=tuple(data.get("mapped") or ()),
                seconds=data.get("seconds"),
            )
        )
    return tuple(out)


def _child_sees_my_sys_path(environ: Mapping[str, str]) -> bool:
    """Would `sys.executable` started with `environ` get this process's sys.path? PYTHONPATH is
    read at start-up only, so an entry set since then (or a PYTHONHOME) means no."""
    if environ.get("PYTHONHOME") != os.environ.get("PYTHONHOME"):
        return False
    here = {os.path.abspath(p) for p in sys.path if p}
    return all(
        os.path.abspath(p) in here for p in environ.get("PYTHONPATH", "").split(os.pathsep) if p
    )
