"""Healthy fake machines (tests/helpers/fakemachine.py) and the damage of tests/integration/damage/kinds.py done
to them: the model layer of the generated-damage suite (real files, real detection, no pip)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

from fixer.detection import Overrides
from fixer.model import Environment
from tests.helpers.fakemachine import MULTIARCH, SITE, FakeMachine
from tests.helpers.stublibs import build_stub

from tests.integration.damage.kinds import (
    Base,
    Damage,
    FILE_KINDS,
    damage_file,
    ld_so_conf,
    old_copy,
    pip_leftovers,
    remove_dist,
    set_dist_version,
)

#: the older release a competing copy has: older than what each base's torch was built with
OLD_FOR = {13: "9.14.0", 12: "9.1.0"}

PIP_CUDNN = f"{SITE}/nvidia/cudnn/lib"
OLD_DIR = "/opt/cudnn-9.14/lib"
#: the driver each base cannot run (13: below the CUDA 13 floor 580; 12: below CUDA 12's 525.60.13)
OLD_DRIVER = {13: ("570.124.06", "12.8"), 12: ("470.256.02", "11.4")}


def healthy(root: Path, base: Base) -> FakeMachine:
    m = FakeMachine(root)
    m.nvidia_driver()
    if base.cuda >= 13:
        m.pip_cuda_libs(13)
        m.pip_cudnn("9.19.0.56", 13)
        m.torch(runpath=base.runpath)
        m.jax()
    else:
        m.pip_cuda_libs(12)
        m.pip_cudnn("9.10.2.21", 12, cudart=12000)
        m.torch("2.11.0+cu126", "12.6", "nvidia-cudnn-cu12==9.10.2.21", runpath=base.runpath)
    if base.apt:
        m.apt_cudnn()
    m.environ["LD_LIBRARY_PATH"] = "/usr/local/nvidia/lib64:/usr/local/nvidia/lib"
    return m


def tensorflow_cudnn8(m: FakeMachine, tmp: Path) -> None:
    """TensorFlow 2.15.1 as pip installs it without [and-cuda]: built with CUDA 12.2 and cuDNN 8,
    its libtensorflow_framework.so.2 NEEDs libcudnn.so.8 (which nothing here provides)."""
    pkg = m.p(SITE) / "tensorflow"
    (pkg / "python" / "platform").mkdir(parents=True, exist_ok=True)
    (pkg / "python" / "platform" / "build_info.py").write_text(
        # as gen_build_info.py writes it
        "import collections\n\nbuild_info = collections.OrderedDict([('cpu_compiler', '/usr/lib/llvm-17/bin/clang'), "
        "('cuda_compute_capabilities', ['sm_50', 'sm_60', 'sm_70', 'sm_80', 'compute_90']), ('cuda_version', '12.2'), "
        "('cudnn_version', '8'), ('is_cuda_build', True), ('is_rocm_build', False), ('is_tensorrt_build', True)])\n"
    )
    link = build_stub(tmp / "link" / "libcudnn.so.8")
    build_stub(
        pkg / "libtensorflow_framework.so.2",
        soname="libtensorflow_framework.so.2",
        needed=[link],
        runpath=[
            "$ORIGIN/../nvidia/cudnn/lib",
            "$ORIGIN/../nvidia/cuda_runtime/lib",
            "$ORIGIN/../nvidia/cublas/lib",
            "$ORIGIN",
        ],
    )  # as TF 2.14+ wheels link
    m.dist("tensorflow", "2.15.1")


def damaged(root: Path, base: Base, damages: Sequence[Damage]) -> Tuple[FakeMachine, Overrides]:
    """The healthy machine `base` under `root`, with `damages` done to it, and the overrides
    (driver, GPU) that stand for the hardware."""
    m = healthy(root / "machine", base)
    driver: Optional[Tuple[str, str]] = None
    gpus: Optional[str] = None
    pip_lib = m.p(PIP_CUDNN)
    other = m.p(MULTIARCH) if base.apt else old_copy(m.p(OLD_DIR), base.cuda, OLD_FOR[base.cuda])
    cache_first: List[str] = []
    for d in damages:
        if d.kind == "driver-too-old":
            driver = OLD_DRIVER[base.cuda]
        elif d.kind == "gpu-too-old":
            gpus = d.target
        elif d.kind in FILE_KINDS:
            damage_file(pip_lib, d, _rel(other, pip_lib))
        elif not _damage_dist(m, base, d, pip_lib):
            _damage_loader(m, base, d, pip_lib, other, cache_first)
    m.cache_dirs = cache_first + m.cache_dirs
    m.ld_cache()
    ov = Overrides(
        driver_version=driver[0] if driver else None,
        cuda_version=driver[1] if driver else "13.0",
        gpus=_gpu_override(gpus) if gpus else None,
    )
    return m, ov


def _damage_dist(m: FakeMachine, base: Base, d: Damage, pip_lib: Path) -> bool:
    """A damage to the installed distributions; False for a kind that is not one."""
    if d.kind == "dist-info-version":
        for di in m.p(SITE).glob(
            "nvidia_cudnn_cu*.dist-info"
        ):  # says an older release than its files
            set_dist_version(di, "9.14.0.64" if base.cuda >= 13 else "9.1.0.70")
    elif d.kind == "wheel-uninstalled":
        remove_dist(m.p(SITE), "nvidia_cudnn_cu*.dist-info", pip_lib.parent)
    elif d.kind == "pip-leftovers":
        pip_leftovers(m.p(SITE), "nvidia_cudnn_cu*.dist-info", pip_lib.parent)
    elif d.kind == "two-majors":
        tensorflow_cudnn8(m, m.root.parent)
    elif d.kind == "cpu-only":
        _cpu_torch(m)
    else:
        return False
    return True


def _damage_loader(
    m: FakeMachine, base: Base, d: Damage, pip_lib: Path, other: Path, cache_first: List[str]
) -> None:
    """A damage to what the loader finds first: LD_PRELOAD, LD_LIBRARY_PATH, ld.so.conf, a default
    directory, an older CUDA library."""
    if d.kind == "ld-preload":
        lib = other / d.target
        m.environ["LD_PRELOAD"] = "/" + str(lib.relative_to(m.root))
    elif d.kind == "ld-library-path":
        old_copy(m.p("/opt/cudnn-ldpath/lib"), base.cuda, OLD_FOR[base.cuda])
        m.environ["LD_LIBRARY_PATH"] = "/opt/cudnn-ldpath/lib:" + m.environ["LD_LIBRARY_PATH"]
    elif d.kind == "ld-so-conf":
        old_copy(m.p("/opt/cudnn-conf/lib"), base.cuda, OLD_FOR[base.cuda])
        ld_so_conf(m.root, "/opt/cudnn-conf/lib")
        cache_first.append("/opt/cudnn-conf/lib")
        _drop_main(pip_lib)
    elif d.kind == "default-dir":
        # a copy no package owns, in a default directory
        old_copy(m.p(MULTIARCH), base.cuda, OLD_FOR[base.cuda])
        _drop_main(pip_lib)
    elif d.kind == "older-cuda-lib":
        m.cuda_toolkit("12.1.105", "12.1.3.1")
        m.environ["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.1/lib64:" + m.environ["LD_LIBRARY_PATH"]


def detect(m: FakeMachine, ov: Overrides, hashes: bool = False) -> Environment:
    """doctor's detection; `hashes`: as --deep and apply's checks, each wheel file's sha256 too."""
    return m.detect(overrides=ov, hash_records=hashes)


def _drop_main(pip_lib: Path) -> None:
    f = pip_lib / "libcudnn.so.9"
    if f.exists() or f.is_symlink():
        f.unlink()


def _rel(target_dir: Path, from_dir: Path) -> Path:
    return Path(os.path.relpath(target_dir, from_dir))


def _cpu_torch(m: FakeMachine) -> None:
    pkg = m.p(SITE) / "torch"
    if pkg.exists():
        shutil.rmtree(pkg)
    for d in m.p(SITE).glob("torch-*.dist-info"):
        shutil.rmtree(d)
    m.torch("2.11.0+cpu", None, None)


def _gpu_override(spec: str) -> Tuple[object, ...]:
    from fixer.detection.overrides import parse_gpu_override

    return parse_gpu_override(spec)


__all__ = ["OLD_DRIVER", "PIP_CUDNN", "damaged", "detect", "healthy"]
_ = Dict
