"""A complete lock: on a machine with torch + JAX + the CUDA runtime wheels,
the lock names the dependency closure of every framework, with extras and plugins, each pinned
and hashed, and `doctor --lock` (check_drift) reports drift in any of them.

Real pieces: stub wheels with the real Requires-Dist shapes (torch -> cuda-toolkit[cudart] under
a platform marker; jax[cuda13] -> jaxlib and jax-cuda13-plugin[with-cuda]; the plugin -> its
pjrt and, under `with-cuda`, the nvidia-* runtime wheels), served from a local index on
127.0.0.1, installed by real uv into a throw-away venv, read back by real detection."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fixer import lockfile as locking
from fixer.detection import detect
from fixer.lockfile.closure import PYPI
from fixer.model import (
    Build,
    Choice,
    Distribution,
    Driver,
    FrameworkBuild,
    Gpu,
    Pin,
    PlanOptions,
    Stack,
)
from tests.helpers.pyindex import build_wheel, cuda_runtime_wheel, cudnn_wheel, torch_wheel
from tests.integration.apply.conftest import uv_install

pytestmark = pytest.mark.integration

JAX = "0.6.2"
TOOLKIT = "13.0.2"
CUDART = "13.0.96"
CUDNN = "9.19.0.56"
LINUX = 'platform_system == "Linux"'

#: every distribution the machine has: the lock must name each one, none more
EXPECTED = {
    "torch": "2.11.0+cu130",
    "cuda-toolkit": TOOLKIT,
    "nvidia-cuda-runtime": CUDART,
    "nvidia-cudnn-cu13": CUDNN,
    "jax": JAX,
    "jaxlib": JAX,
    "jax-cuda13-plugin": JAX,
    "jax-cuda13-pjrt": JAX,
    "ml-dtypes": "0.5.1",
}


def _wheels(d: Path) -> list:
    return [
        torch_wheel(
            d,
            "2.11.0+cu130",
            requires=[
                f"nvidia-cudnn-cu13=={CUDNN}; {LINUX}",
                f"cuda-toolkit[cudart]=={TOOLKIT}; {LINUX}",
                'opt-einsum>=3.3; extra == "opt-einsum"',  # an extra nobody asked: not installed
            ],
        ),
        build_wheel(
            d,
            "cuda-toolkit",
            TOOLKIT,
            {"cuda_toolkit/__init__.py": ""},
            requires=[
                f'nvidia-cuda-runtime=={CUDART}; extra == "cudart"',
                'nvidia-cublas==13.0.0.19; extra == "cublas"',  # not asked, not installed
            ],
        ),
        cuda_runtime_wheel(d, CUDART, cuda_major=13),
        cudnn_wheel(d, CUDNN, cuda_major=13),
        build_wheel(
            d,
            "jax",
            JAX,
            {"jax/__init__.py": ""},
            requires=[
                f"jaxlib<={JAX},>={JAX}",
                "ml_dtypes>=0.5.0",
                f'jax-cuda13-plugin[with-cuda]<={JAX},>={JAX}; extra == "cuda13"',
                f'jaxlib=={JAX}; extra == "cuda13"',
            ],
        ),
        build_wheel(d, "jaxlib", JAX, {"jaxlib/__init__.py": ""}, requires=["ml_dtypes>=0.5.0"]),
        build_wheel(d, "ml_dtypes", "0.5.1", {"ml_dtypes/__init__.py": ""}),
        build_wheel(
            d,
            "jax-cuda13-plugin",
            JAX,
            {"jax_cuda13_plugin/__init__.py": ""},
            requires=[
                f"jax-cuda13-pjrt=={JAX}",
                'nvidia-cuda-runtime>=13.0; extra == "with-cuda"',
                'nvidia-cudnn-cu13<10.0,>=9.8; extra == "with-cuda"',
            ],
        ),
        build_wheel(d, "jax-cuda13-pjrt", JAX, {"jax_plugins/xla_cuda13/__init__.py": ""}),
    ]


@pytest.fixture
def machine(venv, index, tmp_path):
    index.add(*_wheels(tmp_path / "wheels"))
    uv_install(venv, index, "torch==2.11.0+cu130", f"jax[cuda13]=={JAX}", no_deps=False)
    env = detect(venv)
    build_t = Build("torch", "2.11.0", "cu130", "13.0", "9.19.0", packages=("torch==2.11.0+cu130",))
    build_j = Build("jax", JAX, "cuda13", "13.0", "9.8.0", packages=(f"jax[cuda13]=={JAX}",))
    env = dataclasses.replace(
        env,
        gpus=(Gpu(index=0, name="NVIDIA H200", compute_capability="9.0"),),
        driver=Driver(version="580.159.04", cuda_version="13.0"),
        frameworks=(
            FrameworkBuild("torch", "torch", "2.11.0+cu130", variant="cu130", cuda="13.0"),
            FrameworkBuild("jax", "jax-cuda13-plugin", JAX, variant="cuda13", cuda="13"),
        ),
    )
    # the stack resolve gives a machine whose frameworks it keeps: each as installed
    stack = Stack(
        choices=(Choice("torch", build_t, "keep"), Choice("jax", build_j, "keep")),
        pins=(
            Pin("torch", "2.11.0+cu130", installed="2.11.0+cu130"),
            Pin("jax-cuda13-plugin", JAX, installed=JAX),
        ),
    )
    return env, stack


def test_the_lock_names_every_framework_its_extras_and_plugins(machine, index, tmp_path):
    env, stack = machine
    have = {d.name: d.version for d in env.python.distributions}
    assert {k: have.get(k) for k in EXPECTED} == EXPECTED  # uv installed the whole closure
    # the machine's indexes (PyPI, the PyTorch index) mirrored by the local one, as
    # `lock --index-mirror FROM=TO` does
    mirrors = ((PYPI, index.url), ("https://download.pytorch.org/whl/cu130", index.url))
    lock = locking.make_lock(env, stack, options=PlanOptions(index_mirrors=mirrors))
    locked = {p.name: p.version for p in lock.packages}
    assert locked == EXPECTED
    assert all(p.hashes and all(h.startswith("sha256:") for h in p.hashes) for p in lock.packages)

    path = tmp_path / "stack.lock.toml"
    locking.write_lock(lock, str(path))
    assert locking.check_drift(str(path), env) == ()
    for name in EXPECTED:
        others = tuple(d for d in env.python.distributions if d.name != name)
        changed = others + (Distribution(name=name, version="0.0.1"),)
        for dists, says in ((changed, f"{name} is 0.0.1"), (others, f"{name} ")):
            drifted = dataclasses.replace(
                env, python=dataclasses.replace(env.python, distributions=dists)
            )
            titles = [f.title for f in locking.check_drift(str(path), drifted)]
            assert any(says in t for t in titles), (name, titles)
