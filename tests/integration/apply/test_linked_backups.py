"""Backups kept by link, through a real apply (fixer.applier.filetree, "Keeping bytes"): with
LINK_MIN lowered so that the stand-in cuDNN's libraries are linked, pip and uv replace them, the
stash keeps the old bytes, and rollback is exact and leaves the venv as it was (file by file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fixer.applier import apply_plan, filetree, rollback
from fixer.model import Plan
from tests.integration.apply.conftest import CUDNN_GOOD, options, pip_step, state, uv_step

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("how", ["pip", "uv"])
def test_linked_backups_survive_the_installer_and_roll_back_exactly(
    how, broken, index, sandbox, monkeypatch
):
    monkeypatch.setattr(filetree, "LINK_MIN", 4096)  # the stand-in libraries are ~15 kB
    before = state(broken, sandbox)
    make = pip_step if how == "pip" else uv_step
    plan = Plan(steps=(make(broken, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),), python=broken)
    result = apply_plan(plan, python=broken, options=options(sandbox))
    journal = Path(result.journal)
    manifest = json.loads((journal / "manifests" / "nvidia-cudnn-cu13.json").read_text())
    body = manifest.get("data", manifest)
    linked = [e for e in body["files"] if e.get("kept") in ("link", "reflink")]
    assert linked, "no file was kept by link"
    stash = filetree.stash_dir(journal / "backups" / "nvidia-cudnn-cu13.zip")
    for e in linked:  # the installer replaced the file; the stash still has the old bytes
        kept = stash / str(e["slot"])
        assert filetree.sha256_of(str(kept)) == e["sha256"]
        assert os.stat(kept).st_mode & 0o7777 == e["mode"]
    back = rollback(root=str(sandbox))
    assert back.status == "rolled-back" and back.exact, back.remaining
    assert state(broken, sandbox) == before
