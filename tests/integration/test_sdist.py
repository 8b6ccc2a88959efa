"""The sdist is complete: built by the real build backend, unpacked into an empty folder with
nothing beside it, installed into a fresh venv, and its own smoke tests pass there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from tests.helpers.paths import REPO

ROOT = REPO
pytestmark = pytest.mark.integration


@pytest.mark.skipif(
    shutil.which("uv") is None and not (Path(sys.executable).parent / "uv").exists(),
    reason="needs uv (a test dependency)",
)
def test_sdist_builds_installs_and_passes_its_own_smoke_tests(tmp_path):
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    src = _build_and_unpack(uv, tmp_path)
    # the metadata links only to addresses pyproject declares (none while the project has no home)
    from tests.integration.test_metadata import declared

    pkg_info = (src / "PKG-INFO").read_text()
    urls = [
        line.split(", ", 1)[1] for line in pkg_info.splitlines() if line.startswith("Project-URL:")
    ]
    assert sorted(urls) == declared()
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    subprocess.run(
        [uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True, env=env, timeout=300
    )
    py = str(venv / "bin" / "python")
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", py, str(src), "pytest>=8.3", "hypothesis>=6.100"],
        check=True,
        env=env,
        timeout=600,
    )
    smoke = [py, "-m", "pytest", "-q", "-m", "smoke", "tests/unit/cli", "tests/integration/cli"]
    run = subprocess.run(
        [*smoke, "-p", "no:cacheprovider"],
        cwd=src,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    # the tests ran against the installed package, not against this checkout
    check = subprocess.run(
        [py, "-c", "import fixer, sys; print(fixer.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
    )
    assert str(venv) in check.stdout, check.stdout


def _build_and_unpack(uv: str, tmp_path: Path) -> Path:
    """The sdist built by the real backend, checked for its parts and unpacked: its folder."""
    dist = tmp_path / "dist"
    build = subprocess.run(
        [uv, "build", "--sdist", "-o", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if (
        build.returncode != 0
        and "hatchling" in build.stderr
        and ("resolve" in build.stderr or "connect" in build.stderr)
    ):
        pytest.skip(
            f"the build backend could not be fetched: {build.stderr.strip().splitlines()[-1]}"
        )
    assert build.returncode == 0, build.stderr
    (sdist,) = dist.glob("colab_cudnn_fix-*.tar.gz")
    with tarfile.open(sdist) as tf:
        names = tf.getnames()
        tf.extractall(tmp_path / "unpacked")
    for must in (
        "LICENSE",
        "CHANGELOG.md",
        "README.md",
        "pyproject.toml",
        "fixer/cli/options.py",
        "fixer/schemas",
        "recipes/torch.toml",
        "tests/unit/cli/test_options.py",
    ):
        assert any(n.split("/", 1)[-1].startswith(must) for n in names), must
    (src,) = (tmp_path / "unpacked").iterdir()
    return src
