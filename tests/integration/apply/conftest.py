"""Fixtures for apply/rollback tests: a local index with stand-in wheels, throw-away venvs,
installers (pip, uv) isolated from this machine's pip/uv configuration, and a --root sandbox."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterator, Sequence

import pytest

from fixer.model import PipOptions, PlanOptions, Step
from tests.helpers.pyindex import (
    PackageIndex,
    cudnn_wheel,
    freeze_of,
    tensorflow_wheel,
    torch_wheel,
    tree_of,
)

TORCH = "2.11.0+cu130"
CUDNN_GOOD = "9.19.0.56"
CUDNN_OLD = "9.14.0.64"


@pytest.fixture(autouse=True)
def isolated_installers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip and uv see no configuration of this machine (its pip.conf adds indexes and
    find-links) and keep their caches inside the test."""
    for var in list(os.environ):
        if var.startswith(("PIP_", "UV_")):
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    monkeypatch.setenv("PIP_NO_INPUT", "1")
    monkeypatch.setenv("PIP_CACHE_DIR", str(tmp_path / "pip-cache"))
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv(
        "PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
    )


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    d = tmp_path_factory.mktemp("wheelhouse")
    return {
        "cudnn13-good": cudnn_wheel(d, CUDNN_GOOD, cuda_major=13),
        "cudnn13-old": cudnn_wheel(d, CUDNN_OLD, cuda_major=13),
        "cudnn12": cudnn_wheel(d, "9.10.2.21", cuda_major=12),
        "torch": torch_wheel(d, TORCH, requires=[f"nvidia-cudnn-cu13=={CUDNN_GOOD}"]),
        "torch-cu126": torch_wheel(
            d, "2.9.0+cu126", cuda="12.6", requires=["nvidia-cudnn-cu12==9.10.2.21"]
        ),
        "tensorflow": tensorflow_wheel(d, "2.20.0", requires=["nvidia-cudnn-cu12>=9.3.0.75,<10"]),
    }


@pytest.fixture
def index(tmp_path: Path, wheelhouse: Dict[str, Path]) -> Iterator[PackageIndex]:
    with PackageIndex(tmp_path / "index") as ix:
        ix.add(*wheelhouse.values())
        yield ix


def _make_venv(dest: Path, with_pip: bool) -> Path:
    args = [sys.executable, "-m", "venv", str(dest)]
    if not with_pip:
        args.insert(3, "--without-pip")
    subprocess.run(args, check=True, capture_output=True, timeout=300)
    return dest


@pytest.fixture(scope="session")
def _base_venvs(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Path]:
    d = tmp_path_factory.mktemp("base-venvs")
    return {"pip": _make_venv(d / "pip", True), "bare": _make_venv(d / "bare", False)}


def copy_venv(src: Path, dest: Path) -> str:
    shutil.copytree(src, dest, symlinks=True)
    return str(dest / "bin" / "python")


@pytest.fixture
def venv(sandbox: Path, _base_venvs: Dict[str, Path]) -> str:
    """A throw-away venv with pip (copied from a session base venv: fast), inside the --root
    sandbox: an apply under --root refuses an interpreter outside it."""
    return copy_venv(_base_venvs["pip"], sandbox / "venv")


@pytest.fixture
def bare_venv(sandbox: Path, _base_venvs: Dict[str, Path]) -> str:
    """A throw-away venv without pip (uv installs into it), inside the --root sandbox."""
    return copy_venv(_base_venvs["bare"], sandbox / "bare-venv")


def uv_install(python: str, index: PackageIndex, *reqs: str, no_deps: bool = True) -> None:
    args = [
        shutil.which("uv") or "uv",
        "pip",
        "install",
        "--python",
        python,
        "--index-url",
        index.url,
        *reqs,
    ]
    if no_deps:
        args.insert(5, "--no-deps")
    subprocess.run(args, check=True, capture_output=True, timeout=300)


@pytest.fixture
def broken(venv: str, index: PackageIndex) -> str:
    """torch 2.11 cu130 with nvidia-cudnn-cu13 9.14 instead of the 9.19 it pins: 'only cuDNN is wrong'."""
    uv_install(venv, index, f"torch=={TORCH}", f"nvidia-cudnn-cu13=={CUDNN_OLD}")
    return venv


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    return root


def pip_step(python: str, index: PackageIndex, *reqs: str, extra: Sequence[str] = ()) -> Step:
    """A pip step as make_plan writes one: its options as data (Step.pip), the argv spelling them."""
    return Step(
        kind="pip-install",
        summary=f"install {' '.join(reqs)}",
        argv=(python, "-m", "pip", "install", "--no-deps", "--index-url", index.url, *extra, *reqs),
        packages=tuple(reqs),
        pip=PipOptions(index_url=index.url, no_deps=True, reinstall="--force-reinstall" in extra),
    )


def uv_step(python: str, index: PackageIndex, *reqs: str) -> Step:
    """The same with uv (a plan of these records installer "uv")."""
    return Step(
        kind="pip-install",
        summary=f"uv install {' '.join(reqs)}",
        argv=(
            shutil.which("uv") or "uv",
            "pip",
            "install",
            "--python",
            python,
            "--no-deps",
            "--index-url",
            index.url,
            *reqs,
        ),
        packages=tuple(reqs),
        pip=PipOptions(index_url=index.url, no_deps=True),
    )


def state(python: str, root: Path) -> Dict[str, object]:
    """What 'the environment comes back exactly' compares: pip freeze --all and every file under --root
    (the journal/state directory excluded) plus the site-packages tree."""
    venv = Path(python).parent.parent
    inside = venv.relative_to(root).as_posix() + "/" if venv.is_relative_to(root) else None
    files = {
        k: v
        for k, v in tree_of(root).items()
        if not k.startswith("var/lib/colab-cudnn-fix") and not (inside and k.startswith(inside))
    }
    site = venv / "lib"
    tree = {
        k: v
        for k, v in tree_of(site).items()
        if "__pycache__" not in k
        and not k.endswith(
            ("/INSTALLER", "/RECORD", "/REQUESTED", "/direct_url.json", "/uv_cache.json")
        )
    }
    return {"freeze": freeze_of(python), "files": files, "site": tree}


def options(root: Path, **kw: object) -> PlanOptions:
    return PlanOptions(root=str(root), **kw)  # type: ignore[arg-type]
