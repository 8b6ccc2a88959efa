"""Rollback undoes only what apply did, and nothing the tool does reaches past its boundary
(issue 21, items 1, 2 and 5). Real pip into throw-away venvs from an index on 127.0.0.1.

- later changes: a package pip-installed after the apply and files written into the venv stay;
  an applied file edited since the apply is listed and kept until `--force`;
- a package directory replaced by a symlink: rollback never writes or deletes through it;
- RECORD rows outside the environment (absolute, `..`): the apply refuses before changing anything.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Dict

import pytest

from fixer.applier import apply_plan, rollback
from fixer.applier.journal import Journal
from fixer.errors import StepFailed
from fixer.model import Plan
from fixer.system.fsgate import PathRefused
from fixer.system.paths import state_dir
from tests.helpers.pyindex import PackageIndex, build_wheel
from tests.integration.apply.conftest import CUDNN_GOOD, options, pip_step, state

pytestmark = pytest.mark.integration


def site_of(python: str) -> Path:
    out = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(out.stdout.strip())


def hashes(directory: Path) -> Dict[str, str]:
    """Every file under `directory` (not following symlinks): sha256 and mode."""
    out: Dict[str, str] = {}
    for dirpath, _, files in os.walk(directory):
        for name in files:
            p = Path(dirpath) / name
            if p.is_symlink():
                out[str(p.relative_to(directory))] = "-> " + os.readlink(p)
                continue
            data = p.read_bytes()
            out[str(p.relative_to(directory))] = (
                f"{hashlib.sha256(data).hexdigest()} {p.stat().st_mode & 0o7777:o}"
            )
    return out


def cudnn_plan(python: str, index: PackageIndex) -> Plan:
    return Plan(steps=(pip_step(python, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),), python=python)


def test_later_package_and_files_survive_rollback_and_cudnn_comes_back(
    broken, index, sandbox, tmp_path
):
    site = site_of(broken)
    cudnn_before = hashes(site / "nvidia" / "cudnn")
    freeze_before = state(broken, sandbox)["freeze"]
    apply_plan(cudnn_plan(broken, index), python=broken, options=options(sandbox))
    # after the apply, the user installs another package and writes files into the venv
    later = build_wheel(
        tmp_path / "later", "later-pkg", "1.0", {"later_pkg/__init__.py": "X = 1\n"}
    )
    index.add(later)
    subprocess.run(
        [broken, "-m", "pip", "install", "--no-deps", "--index-url", index.url, "later-pkg==1.0"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    venv_root = Path(broken).parent.parent
    (venv_root / "notes.txt").write_text("mine\n")
    (site / "user_module.py").write_text("Y = 2\n")
    (site / "nvidia" / "cudnn" / "my-notes.txt").write_text("mine too\n")

    back = rollback(root=str(sandbox))

    assert hashes(site / "nvidia" / "cudnn") == {
        **cudnn_before,
        "my-notes.txt": hashes(site / "nvidia" / "cudnn")["my-notes.txt"],
    }
    assert (venv_root / "notes.txt").read_text() == "mine\n"
    assert (site / "user_module.py").read_text() == "Y = 2\n"
    assert (site / "nvidia" / "cudnn" / "my-notes.txt").read_text() == "mine too\n"
    freeze = subprocess.run(
        [broken, "-m", "pip", "freeze", "--all"], capture_output=True, text=True, check=True
    ).stdout
    assert "later-pkg==1.0" in freeze
    assert sorted(freeze.replace("later-pkg==1.0\n", "").split()) == sorted(freeze_before.split())
    assert back.status == "rolled-back" and back.exact, back.remaining
    assert any("later_pkg" in n or "later-pkg" in n for n in back.notes), back.notes
    # what rollback says it changed is what it changed: the later package is not "removed"
    assert all(c.name != "later-pkg" for c in back.distributions), back.distributions


def test_an_applied_file_edited_since_is_kept_until_force(broken, index, sandbox):
    before = state(broken, sandbox)
    apply_plan(cudnn_plan(broken, index), python=broken, options=options(sandbox))
    lib = next((site_of(broken) / "nvidia" / "cudnn" / "lib").glob("libcudnn.so*"))
    edited = lib.read_bytes() + b"user patch"
    lib.write_bytes(edited)

    back = rollback(root=str(sandbox))
    assert back.status == "rollback-incomplete" and not back.exact
    assert any(str(lib) in r for r in back.remaining), back.remaining
    assert lib.read_bytes() == edited  # left alone

    forced = rollback(root=str(sandbox), force=True)
    assert forced.status == "rolled-back" and forced.exact, forced.remaining
    assert state(broken, sandbox) == before


def test_a_package_directory_replaced_by_a_symlink_is_never_followed(
    broken, index, sandbox, tmp_path
):
    apply_plan(cudnn_plan(broken, index), python=broken, options=options(sandbox))
    cudnn = site_of(broken) / "nvidia" / "cudnn"
    victim = tmp_path / "victim"
    os.rename(cudnn, victim)  # the new version's files, now outside the environment
    (victim / "precious.txt").write_text("do not touch\n")
    cudnn.symlink_to(victim)
    seen = hashes(victim)

    back = rollback(root=str(sandbox))

    assert hashes(victim) == seen  # nothing deleted or written through the link
    # the link is a change since the apply: listed and left alone
    assert back.status == "rollback-incomplete" and not back.exact
    assert cudnn.is_symlink()
    assert any(str(cudnn) in r and "changed since the apply" in r for r in back.remaining)
    # --force puts the real directory back (the link itself goes, never its target)
    forced = rollback(root=str(sandbox), force=True)
    assert hashes(victim) == seen and not cudnn.is_symlink() and cudnn.is_dir()
    # the new version's files behind the link were never removed through it: named, not hidden
    assert forced.status == "rolled-back" or any("symlink" in r for r in forced.remaining)


@pytest.mark.parametrize("row", ["absolute", "dotdot"])
def test_record_rows_outside_the_environment_stop_the_apply_before_any_change(
    broken, index, sandbox, tmp_path, row
):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    dist_info = next(site_of(broken).glob("nvidia_cudnn_cu13-*.dist-info"))
    rel = (
        str(victim)
        if row == "absolute"
        else os.path.relpath(victim, dist_info.parent).replace(os.sep, "/")
    )
    with open(dist_info / "RECORD", "a") as f:
        f.write(f"{rel},,\n")
    before = state(broken, sandbox)

    with pytest.raises(PathRefused) as info:
        apply_plan(cudnn_plan(broken, index), python=broken, options=options(sandbox))

    assert info.value.exit_code == 2 and "RECORD row" in info.value.message
    assert victim.read_text() == "keep me\n"
    assert state(broken, sandbox) == before
    assert Journal.latest(state_dir(str(sandbox))).status == "abandoned"


def test_rollback_never_removes_a_record_row_outside_the_environment(
    broken, index, sandbox, tmp_path
):
    """A RECORD of the version the apply installed, changed afterwards to name a file outside:
    rollback refuses that row and leaves the file."""
    apply_plan(cudnn_plan(broken, index), python=broken, options=options(sandbox))
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    dist_info = next(site_of(broken).glob("nvidia_cudnn_cu13-*.dist-info"))
    with open(dist_info / "RECORD", "a") as f:
        f.write(f"{victim},,\n")
    try:
        back = rollback(root=str(sandbox), force=True)
    except StepFailed:  # pragma: no cover - the rollback reports, never raises, for one path
        raise
    assert victim.read_text() == "keep me\n"
    assert any("RECORD row" in r for r in back.remaining), back.remaining
