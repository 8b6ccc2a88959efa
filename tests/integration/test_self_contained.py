"""The project stands alone: nothing in the package, its scripts, its CI or its tests names a path
beside the checkout. (The audit hook in tests/conftest.py catches what the tests actually read.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from tests.helpers.paths import REPO

#: A path that leaves the repo: "../shared", parent / "shared", parents[3] / "shared", /work/shared.
LEAVES = re.compile(r"""\.\./shared|/work/shared|parents?(\[\d+\])?\s*/\s*["']shared["']""")


def _tracked() -> list:
    out = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:  # an sdist: no git; walk the tree instead
        return [p for p in REPO.rglob("*") if p.is_file() and ".venv" not in p.parts]
    return [REPO / line for line in out.stdout.splitlines()]


def test_no_code_names_a_path_beside_the_checkout():
    offenders = []
    for path in _tracked():
        if path.suffix not in {".py", ".sh", ".toml", ".cfg", ".ini", ""} or not path.is_file():
            continue
        if path.name == Path(__file__).name:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if LEAVES.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_the_research_data_is_in_the_repo_with_its_sources():
    data = REPO / "data"
    for name in (
        "torch_builds.toml",
        "tensorflow_builds.toml",
        "jax_builds.toml",
        "nvidia.toml",
        "colab_images.csv",
    ):
        assert (data / name).is_file(), name
    for snap in (data / "colab_snapshots").iterdir():
        assert (snap / "SOURCE.txt").is_file(), snap
    assert "source" in (data / "README.md").read_text().lower()


def test_generated_files_are_current_from_the_repos_own_data():
    """recipes/*.toml and the bundled environments regenerate identically from data/ alone."""
    for script in ("import_shared_data.py", "make_environments.py"):
        out = subprocess.run(
            [sys.executable, str(REPO / "scripts" / script), "--check"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, script + ": " + out.stdout + out.stderr
