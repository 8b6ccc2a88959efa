"""What each installed framework was built against, read from its files (no import).

- torch: torch/version.py (__version__, cuda), the Requires-Dist pin of nvidia-cudnn-cuXX.
- tensorflow: tensorflow/python/platform/build_info.py, the and-cuda pin of nvidia-cudnn-cu12.
- jax: the jax-cudaNN-plugin distribution (its cuDNN lower bound), or an old jaxlib "+cuda12.cudnn89".
- cupy-cudaNNx, onnxruntime-gpu, ctranslate2, paddlepaddle-gpu: name, version files and the
  DT_NEEDED entries of their native library (libcudnn.so.9, libcudart.so.12 tell the majors).
"""

from __future__ import annotations

import ast
import dataclasses
import os
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from fixer.model import Distribution, FrameworkBuild, PythonEnv
from fixer.rules import cudnn_requirement
from fixer.detection.elf import read_elf


def _pyfile_assign(path: str, names: Sequence[str]) -> Dict[str, object]:
    """Literal assignments `name = ...` / `name: T = ...` at module level of a small .py file."""
    out: Dict[str, object] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return out
    for name in names:
        m = re.search(rf"^{re.escape(name)}\s*(?::[^=\n]*)?=\s*(.+)$", text, re.M)
        if not m:
            continue
        try:
            out[name] = ast.literal_eval(m.group(1).strip())
        except (ValueError, SyntaxError):
            pass
    return out


def _dict_assign(path: str, name: str) -> Optional[Dict[Any, Any]]:
    """The dict a module assigns to `name`, read without running it. TensorFlow writes its
    build_info.py as `build_info = collections.OrderedDict([('cuda_version', '12.2'), ...])`
    (gen_build_info.py); older releases as a dict literal; either may be followed by
    `build_info['key'] = value` lines."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return None
    out: Optional[Dict[Any, Any]] = None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            out = _literal_dict(node.value)
        elif (
            out is not None
            and isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and isinstance(node.targets[0].value, ast.Name)
            and node.targets[0].value.id == name
        ):
            try:
                key = ast.literal_eval(node.targets[0].slice)
                out[key] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError):
                continue
    return out


def _literal_dict(value: ast.expr) -> Optional[Dict[Any, Any]]:
    """A dict literal, or dict(...) / OrderedDict(...) of literal pairs or keywords."""
    try:
        if isinstance(value, ast.Call):
            func = value.func
            fname = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if fname not in ("OrderedDict", "dict"):
                return None
            out: Dict[Any, Any] = dict(ast.literal_eval(value.args[0])) if value.args else {}
            for kw in value.keywords:
                if kw.arg is not None:
                    out[kw.arg] = ast.literal_eval(kw.value)
            return out
        v = ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError):
        return None
    return v if isinstance(v, dict) else None


def _sm_list(items: Sequence[str]) -> Tuple[Tuple[str, ...], Optional[str]]:
    """["sm_60", "sm_90a", "compute_90"] -> (("6.0", "9.0"), "9.0")."""
    sass, ptx = [], None
    for it in items:
        m = re.match(r"^(sm|compute)_(\d+)(\d)[a-z]?$", str(it))
        if not m:
            continue
        cc = f"{m.group(2)}.{m.group(3)}"
        if m.group(1) == "sm":
            if cc not in sass:
                sass.append(cc)
        else:
            ptx = cc if ptx is None or float(cc) > float(ptx) else ptx
    return tuple(sass), ptx


def _needed_majors(lib: Optional[str], R: Callable[[str], str]) -> Dict[str, str]:
    """DT_NEEDED of a native library -> {"cudnn": "9", "cudart": "12"}."""
    out: Dict[str, str] = {}
    if not lib:
        return out
    info = read_elf(R(lib))
    for n in info.needed:
        m = re.match(r"^lib(cudnn|cudart|cublas)\.so\.(\d+)$", n)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _first_existing(R: Callable[[str], str], *paths: str) -> Optional[str]:
    for p in paths:
        if os.path.exists(R(p)):
            return p
    return None


def _glob_lib(R: Callable[[str], str], directory: str, pattern: str) -> Optional[str]:
    try:
        names = sorted(os.listdir(R(directory)))
    except OSError:
        return None
    for n in names:
        if re.match(pattern, n):
            return os.path.join(directory, n)
    return None


def torch_build(d: Distribution, R: Callable[[str], str]) -> FrameworkBuild:
    pkg = os.path.join(d.location, "torch")
    vals = _pyfile_assign(os.path.join(R(pkg), "version.py"), ("__version__", "cuda", "hip"))
    version = str(vals.get("__version__") or d.version)
    cuda_val = vals.get("cuda")
    cuda = cuda_val if isinstance(cuda_val, str) else None
    local = version.split("+", 1)[1] if "+" in version else None
    variant: Optional[str] = local or (
        ("cu" + str(cuda).replace(".", "")) if cuda else ("rocm" if vals.get("hip") else "cpu")
    )
    is_cuda: Optional[bool] = cuda is not None
    if "__version__" not in vals:  # version.py unreadable: don't call it a CPU build
        is_cuda = False if local == "cpu" else None
        variant = local
    req, cudnn = cudnn_requirement(d.requires)
    lib = _first_existing(R, os.path.join(pkg, "lib", "libtorch_cuda.so"))
    source = "torch/version.py" if vals else "dist-info"
    if req:
        source += ", Requires-Dist"
    return FrameworkBuild(
        framework="torch",
        distribution=d.name,
        version=version,
        location=d.location,
        variant=variant,
        cuda=cuda,
        cudnn=cudnn,
        cudnn_requirement=req,
        is_cuda_build=is_cuda,
        loads_by_path=True,
        library_file=lib,
        source=source,
    )


def tensorflow_build(d: Distribution, R: Callable[[str], str]) -> FrameworkBuild:
    pkg = os.path.join(d.location, "tensorflow")
    info = (
        _dict_assign(os.path.join(R(pkg), "python", "platform", "build_info.py"), "build_info")
        or {}
    )
    cuda = info.get("cuda_version") or None
    is_cuda = (
        bool(info.get("is_cuda_build"))
        if info
        else (None if d.name == "tensorflow" else d.name != "tensorflow-cpu")
    )
    if d.name == "tensorflow-cpu":
        is_cuda = False
    req, cudnn = cudnn_requirement(d.requires, allow_extras=True)
    if cudnn is None and info.get("cudnn_version"):
        cudnn = str(info["cudnn_version"])
    sass, ptx = _sm_list(info.get("cuda_compute_capabilities") or ())
    lib = _first_existing(
        R,
        os.path.join(pkg, "libtensorflow_cc.so.2"),
        os.path.join(pkg, "libtensorflow_framework.so.2"),
    )
    cuda_s = ".".join(str(cuda).split(".")[:2]) if cuda else None
    return FrameworkBuild(
        framework="tensorflow",
        distribution=d.name,
        version=d.version,
        location=d.location,
        variant=("cuda" + cuda_s.split(".")[0])
        if (cuda_s and is_cuda)
        else "cpu"
        if is_cuda is False
        else None,
        cuda=cuda_s if is_cuda else None,
        cudnn=cudnn if is_cuda is not False else None,
        cudnn_requirement=req,
        compute_capabilities=sass,
        ptx=ptx,
        is_cuda_build=is_cuda,
        library_file=lib,
        source="build_info.py" if info else "dist-info",
    )


def jax_builds(dists: Dict[str, Distribution], R: Callable[[str], str]) -> List[FrameworkBuild]:
    out: List[FrameworkBuild] = []
    plugins = sorted(n for n in dists if re.match(r"^jax-cuda\d+-plugin$", n))
    for name in plugins:
        d = dists[name]
        major = re.match(r"^jax-cuda(\d+)-plugin$", name).group(1)  # type: ignore[union-attr]
        req, cudnn = cudnn_requirement(d.requires, allow_extras=True)
        lib = _first_existing(
            R, os.path.join(d.location, "jax_plugins", f"xla_cuda{major}", "xla_cuda_plugin.so")
        )
        out.append(
            FrameworkBuild(
                framework="jax",
                distribution=name,
                version=d.version,
                location=d.location,
                variant=f"cuda{major}",
                cuda=major,
                cudnn=cudnn,
                cudnn_requirement=req,
                is_cuda_build=True,
                loads_by_path=True,
                library_file=lib,
                source="plugin Requires-Dist" if req else "dist-info",
            )
        )
    if out:
        return out
    jaxlib = dists.get("jaxlib")
    if jaxlib is not None:
        m = re.search(r"\+cuda(\d+)(?:\.cudnn(\d)(\d+))?", jaxlib.version)
        if m:
            cudnn = f"{m.group(2)}.{m.group(3)}.0" if m.group(2) else None
            return [
                FrameworkBuild(
                    framework="jax",
                    distribution="jaxlib",
                    version=jaxlib.version,
                    location=jaxlib.location,
                    variant=f"cuda{m.group(1)}",
                    cuda=m.group(1),
                    cudnn=cudnn,
                    is_cuda_build=True,
                    source="jaxlib local version",
                )
            ]
        return [
            FrameworkBuild(
                framework="jax",
                distribution="jaxlib",
                version=jaxlib.version,
                location=jaxlib.location,
                variant="cpu",
                is_cuda_build=False,
                source="no jax-cuda plugin installed",
            )
        ]
    return out


def cupy_build(d: Distribution, R: Callable[[str], str]) -> FrameworkBuild:
    m = re.match(r"^cupy-cuda(\d+)x?$", d.name)
    major = m.group(1) if m else None
    if major and len(major) == 3:  # cupy-cuda112 -> 11.2
        major = major[:2]
    return FrameworkBuild(
        framework="cupy",
        distribution=d.name,
        version=d.version,
        location=d.location,
        variant=d.name.replace("cupy-", "") if m else None,
        cuda=major,
        is_cuda_build=bool(m),
        source="distribution name",
    )


def onnxruntime_build(d: Distribution, R: Callable[[str], str]) -> FrameworkBuild:
    capi = os.path.join(d.location, "onnxruntime", "capi")
    vals = _pyfile_assign(
        os.path.join(R(capi), "build_and_package_info.py"), ("cuda_version", "cudnn_version")
    )
    lib = _first_existing(R, os.path.join(capi, "libonnxruntime_providers_cuda.so"))
    majors = _needed_majors(lib, R)
    cuda = str(vals.get("cuda_version") or majors.get("cudart") or "") or None
    cudnn = str(vals.get("cudnn_version") or majors.get("cudnn") or "") or None
    return FrameworkBuild(
        framework="onnxruntime",
        distribution=d.name,
        version=d.version,
        location=d.location,
        variant=f"cuda{cuda.split('.')[0]}" if cuda else None,
        cuda=cuda,
        cudnn=cudnn,
        is_cuda_build=True,
        library_file=lib,
        source="build_and_package_info.py" if vals else ("DT_NEEDED" if majors else "dist-info"),
    )


def ctranslate2_build(d: Distribution, R: Callable[[str], str]) -> FrameworkBuild:
    lib = None
    for sub in ("ctranslate2.libs", "ctranslate2"):
        lib = lib or _glob_lib(R, os.path.join(d.location, sub), r"^libctranslate2.*\.so")
    majors = _needed_majors(lib, R)
    return FrameworkBuild(
        framework="ctranslate2",
        distribution=d.name,
        version=d.version,
        location=d.location,
        variant=f"cuda{majors['cudart']}" if "cudart" in majors else None,
        cuda=majors.get("cudart"),
        cudnn=majors.get("cudnn"),
        is_cuda_build=True if majors else None,
        library_file=lib,
        source="DT_NEEDED" if majors else "dist-info",
    )


def paddle_build(d: Distribution, R: Callable[[str], str]) -> FrameworkBuild:
    vals = _pyfile_assign(
        os.path.join(R(d.location), "paddle", "version", "__init__.py"),
        ("cuda_version", "cudnn_version", "with_gpu"),
    )
    cuda = vals.get("cuda_version")
    cuda = str(cuda) if cuda and str(cuda) not in ("False", "OFF") else None
    cudnn = vals.get("cudnn_version")
    cudnn = str(cudnn) if cudnn and str(cudnn) not in ("False", "OFF") else None
    is_cuda = bool(cuda) or d.name == "paddlepaddle-gpu"
    return FrameworkBuild(
        framework="paddle",
        distribution=d.name,
        version=d.version,
        location=d.location,
        variant=f"cuda{cuda.split('.')[0]}" if cuda else ("cpu" if not is_cuda else None),
        cuda=cuda,
        cudnn=cudnn,
        is_cuda_build=is_cuda,
        source="paddle/version" if vals else "dist-info",
    )


def detect_frameworks(
    python: Optional[PythonEnv], R: Callable[[str], str]
) -> Tuple[FrameworkBuild, ...]:
    if python is None:
        return ()
    dists = {d.name: d for d in python.distributions}
    out: List[FrameworkBuild] = []
    if "torch" in dists:
        out.append(torch_build(dists["torch"], R))
    for name in ("tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tf-nightly"):
        if name in dists:
            out.append(tensorflow_build(dists[name], R))
            break
    if "jax" in dists or "jaxlib" in dists:
        out += jax_builds(dists, R)
    for name in sorted(dists):
        if re.match(r"^cupy-cuda\d+x?$", name):
            out.append(cupy_build(dists[name], R))
    if "onnxruntime-gpu" in dists:
        out.append(onnxruntime_build(dists["onnxruntime-gpu"], R))
    if "ctranslate2" in dists:
        out.append(ctranslate2_build(dists["ctranslate2"], R))
    for name in ("paddlepaddle-gpu", "paddlepaddle"):
        if name in dists:
            out.append(paddle_build(dists[name], R))
            break
    return tuple(with_targets(f, R) for f in out)


def with_targets(fw: FrameworkBuild, R: Callable[[str], str]) -> FrameworkBuild:
    """A CUDA build with the SASS/PTX targets read from its own libraries (fixer.detection.fatbin):
    they replace what build_info or the recipes say, which may be missing or stale."""
    if not fw.is_cuda_build:
        return fw
    # start-up: fixer.detection.fatbin 0.4% alone, all small ones +4% (doctor --json, importtime)
    from fixer.detection.fatbin import build_targets

    t = build_targets(fw.framework, fw.location, fw.library_file, R)
    if t is None:
        return fw
    return dataclasses.replace(
        fw,
        arch_list=t.arch_list(),
        arch_source=f"{t.file} ({t.source})",
        compute_capabilities=t.compute_capabilities(),
        ptx=t.highest_ptx(),
    )
