"""Environment builders: tiny recipes built in code, small hand-made Environments, and the
environment builder of scripts/make_environments.py (the fixtures `real_recipes` and `envmaker`
in tests/conftest.py hand out the real recipes and that script)."""

from __future__ import annotations

import importlib.util
import sys
from typing import Dict, Iterable, Optional, Sequence, Tuple

from fixer import model as m

from tests.helpers.paths import REPO

SP = "/venv/lib/python3.11/site-packages"
PIP_DIR = SP + "/nvidia/cudnn/lib"
APT_DIR = "/usr/lib/x86_64-linux-gnu"
FLOORS = (
    m.CudaDriverFloor("11", "450.80.02"),
    m.CudaDriverFloor("12", "525.60.13"),
    m.CudaDriverFloor("13", "580.65.06"),
)


def load_script(name: str):
    """A module of scripts/ (they are not a package)."""
    path = REPO / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_scripts_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def torch_build(
    version: str,
    variant: str,
    cuda: Optional[str],
    cudnn: Optional[str],
    pin: Optional[str] = None,
    ccs: Sequence[str] = ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
    ptx: Optional[str] = None,
    python: str = ">=3.9",
    pypi: bool = False,
    size: Optional[int] = None,
) -> m.Build:
    cu = f"cu{cuda.split('.')[0]}" if cuda else None
    return m.Build(
        "torch",
        version,
        variant,
        cuda,
        cudnn,
        python=python,
        compute_capabilities=tuple(ccs),
        ptx=ptx,
        index_url=None if pypi else f"https://download.pytorch.org/whl/{variant}",
        packages=(f"torch=={version}" if pypi else f"torch=={version}+{variant}",),
        requires=(f"nvidia-cudnn-{cu}=={pin}",) if pin and cu else (),
        companions=(f"torchvision==0.{int(version.split('.')[1]) + 15}.0",),
        size_bytes=size,
    )


def tf_build(version: str, cuda: str, cudnn: str, pin: Optional[str] = None) -> m.Build:
    return m.Build(
        "tensorflow",
        version,
        "and-cuda",
        cuda,
        cudnn,
        python=">=3.9",
        compute_capabilities=("6.0", "7.0", "7.5", "8.0", "9.0"),
        ptx="9.0",
        packages=(f"tensorflow[and-cuda]=={version}",),
        requires=(f"nvidia-cudnn-cu12=={pin}",) if pin else (),
    )


def cudnn(
    version: str,
    cuda_majors: Sequence[int],
    pip: Optional[Dict[str, str]] = None,
    apt: Optional[Dict[str, str]] = None,
    min_cc: Optional[str] = None,
) -> m.CudnnRelease:
    return m.CudnnRelease(
        version, tuple(cuda_majors), min_cc, None, dict(pip or {}), dict(apt or {})
    )


def small_recipes(
    builds: Iterable[m.Build] = (), releases: Iterable[m.CudnnRelease] = ()
) -> m.Recipes:
    return m.Recipes(builds=tuple(builds), cudnn=tuple(releases), driver_floors=FLOORS)


def make_env(
    *,
    gpu_cc: Optional[str] = "7.5",
    driver: Optional[str] = "550.54.15",
    python: str = "3.11.9",
    dists: Optional[Dict[str, str]] = None,
    frameworks: Sequence[m.FrameworkBuild] = (),
    libraries: Sequence[m.LibraryCopy] = (),
    loads: Sequence[m.LoadResolution] = (),
    runtime: m.Runtime = m.Runtime(kind="linux"),
    uv: Optional[str] = None,
    env: Optional[Dict[str, str]] = None,
    gpu_name: str = "Tesla T4",
) -> m.Environment:
    gpus = (m.Gpu(0, gpu_name, compute_capability=gpu_cc),) if gpu_cc else ()
    return m.Environment(
        gpus=gpus,
        driver=m.Driver(version=driver) if gpu_cc else m.Driver(),
        runtime=runtime,
        python=m.PythonEnv(
            "/venv/bin/python",
            python,
            prefix="/venv",
            is_venv=True,
            site_packages=(SP,),
            distributions=tuple(m.Distribution(k, v, SP) for k, v in (dists or {}).items()),
            uv=uv,
        ),
        frameworks=tuple(frameworks),
        libraries=tuple(libraries),
        loads=tuple(loads),
        env=dict(env or {}),
    )


def pip_copy(
    version: str, dist: str = "nvidia-cudnn-cu12", missing: Sequence[str] = ()
) -> m.LibraryCopy:
    major = int(version.split(".")[0])
    return m.LibraryCopy(
        "cudnn",
        major,
        ".".join(version.split(".")[:3]),
        PIP_DIR,
        "pip",
        m.Package(dist, version),
        "dist-info",
        missing=tuple(missing),
        cuda_major=int(dist.rsplit("cu", 1)[1]),
    )


def apt_copy(pkg: str, version: str) -> m.LibraryCopy:
    major = int(version.split(".")[0])
    return m.LibraryCopy(
        "cudnn",
        major,
        ".".join(version.split("-")[0].split(".")[:3]),
        APT_DIR,
        "apt",
        m.Package(pkg, version),
        "dpkg",
    )


def load(
    consumer: str,
    copy: Optional[m.LibraryCopy],
    major: int = 9,
    via: str = "DT_RPATH",
    search: Sequence[Tuple[str, str]] = (("DT_RPATH", PIP_DIR),),
) -> m.LoadResolution:
    """A load as detect records it: `search` is its search order, (via, directory) pairs."""
    soname = f"libcudnn.so.{major}"
    dirs = tuple(m.SearchDir(v, d) for v, d in search)  # type: ignore[arg-type]
    steps = tuple(f"{v} {d}" for v, d in search)
    if copy is None:
        return m.LoadResolution(consumer, "cudnn", soname, None, None, None, "", steps, search=dirs)
    return m.LoadResolution(
        consumer,
        "cudnn",
        soname,
        f"{copy.directory}/{soname}",
        copy.directory,
        copy.version,
        via,
        steps,
        search=dirs,
    )
