"""Backups the index vouches for (fixer.applier.indexcopy): real uv/pip into throw-away venvs from an
index on 127.0.0.1. With less than KEEP_LOCAL_FACTOR x the vouched bytes free, the journal keeps
{url, sha256} instead of the files, and rollback downloads the wheel, byte for byte; with the index
down it says it cannot reach it (names the URL, exit 1) and a later rollback finishes the job."""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from fixer.applier import apply_plan, filetree, indexcopy, rollback
from fixer.api import rollback as api_rollback
from tests.helpers.examples import examples

from tests.integration.apply.conftest import CUDNN_OLD, options, state
from tests.integration.apply.test_apply_rollback import fix_plan

pytestmark = pytest.mark.integration


def strict(python: str) -> dict:
    """sha256 and mode of every file of the distribution the apply changes (RECORD, INSTALLER, .pyc too)."""
    site = Path(python).parent.parent / "lib"
    out = {}
    for p in sorted(site.rglob("*")):
        rel = str(p.relative_to(site))
        if "nvidia" in rel and p.is_file():
            out[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mode)
    return out


def _apply_relying_on_the_index(broken, index, sandbox, monkeypatch):
    monkeypatch.setattr(
        indexcopy, "KEEP_LOCAL_FACTOR", 1 << 60
    )  # "the disk is small": no local copy
    result = apply_plan(fix_plan(broken, index, sandbox), python=broken, options=options(sandbox))
    data = json.loads((Path(result.journal) / "journal.json").read_text())
    body = data.get("data", data)
    copy = body["index_copies"]["nvidia-cudnn-cu13"]
    assert copy["local"] is False and copy["filename"].startswith(f"nvidia_cudnn_cu13-{CUDNN_OLD}-")
    assert copy["sha256"] == index.sha256(copy["filename"])
    with zipfile.ZipFile(Path(result.journal) / "backups" / "nvidia-cudnn-cu13.zip") as zf:
        kept = zf.namelist()
    assert not any(n.endswith(".so.9") for n in kept), (
        kept
    )  # the libraries are the index's to give back
    assert any(n.endswith("/INSTALLER") for n in kept)  # what the installer wrote stays local
    return result, copy


def test_rollback_fetches_the_exact_wheel_back_from_the_index(broken, index, sandbox, monkeypatch):
    before, exact = state(broken, sandbox), strict(broken)
    _, copy = _apply_relying_on_the_index(broken, index, sandbox, monkeypatch)
    seen = len(index.requests)
    back = rollback(root=str(sandbox))
    assert back.status == "rolled-back" and back.exact, back.remaining
    assert any(copy["filename"] in r for r in index.requests[seen:])
    assert state(broken, sandbox) == before and strict(broken) == exact


def test_index_down_at_rollback_says_so_then_a_later_rollback_finishes(
    broken, index, sandbox, monkeypatch
):
    before, exact = state(broken, sandbox), strict(broken)
    _, copy = _apply_relying_on_the_index(broken, index, sandbox, monkeypatch)
    index.fail_after(0)
    down = api_rollback(root=str(sandbox))
    assert down.exit_code == 1 and down.result.status == "rollback-incomplete"
    said = "\n".join(down.result.remaining)
    assert f"cannot reach {copy['url']}" in said and "run rollback again" in said, said
    index.fail_after(None)
    back = rollback(root=str(sandbox))
    assert back.status == "rolled-back" and back.exact, back.remaining
    assert state(broken, sandbox) == before and strict(broken) == exact


def test_with_room_on_disk_the_local_copy_is_kept_too(broken, index, sandbox):
    result = apply_plan(fix_plan(broken, index, sandbox), python=broken, options=options(sandbox))
    data = json.loads((Path(result.journal) / "journal.json").read_text())
    assert data.get("data", data)["index_copies"]["nvidia-cudnn-cu13"]["local"] is True
    with zipfile.ZipFile(Path(result.journal) / "backups" / "nvidia-cudnn-cu13.zip") as zf:
        assert any(n.endswith(".so.9") for n in zf.namelist())


def test_not_vouched_without_the_same_metadata(broken, index, tmp_path):
    """A METADATA that differs from the index's (another build of the same version) is not vouched."""
    site = next((Path(broken).parent.parent / "lib").glob("python*/site-packages"))
    di = next(site.glob(f"nvidia_cudnn_cu13-{CUDNN_OLD}.dist-info"))
    assert indexcopy.find(str(di), "nvidia-cudnn-cu13", CUDNN_OLD, [index.url]) is not None
    assert (
        indexcopy.find(str(di), "nvidia-cudnn-cu13", CUDNN_OLD, ["http://127.0.0.1:9/simple"])
        is None
    )
    (di / "METADATA").write_text((di / "METADATA").read_text() + "\n")
    assert indexcopy.find(str(di), "nvidia-cudnn-cu13", CUDNN_OLD, [index.url]) is None


@settings(max_examples=examples(15), deadline=None, suppress_health_check=list(HealthCheck))
@given(
    damage=st.lists(
        st.tuples(st.integers(0, 10_000), st.binary(min_size=1, max_size=8)), max_size=4
    )
)
def test_only_files_that_match_their_record_are_left_to_the_index(broken, damage):
    """Invariant over generated damage: a file is left to the index exactly when its bytes today
    have the sha256 its RECORD gives, it lies under site-packages and the installer did not write it."""
    site = next((Path(broken).parent.parent / "lib").glob("python*/site-packages"))
    di = next(site.glob("nvidia_cudnn_cu13-*.dist-info"))
    files = [
        p for p in filetree.record_paths(str(di)) if os.path.isfile(p) and not p.startswith(str(di))
    ]
    saved = {p: Path(p).read_bytes() for p in files}
    try:
        for i, junk in damage:
            p = files[i % len(files)]
            with open(p, "ab") as f:
                f.write(junk)
        manifest = filetree.record(str(di), hashes=False)
        indexcopy.mark(manifest)
        rows = {}
        for line in (di / "RECORD").read_text().splitlines():
            parts = line.rsplit(",", 2)
            rows[os.path.normpath(os.path.join(site, parts[0]))] = parts[1]
        for e in manifest["files"]:
            if e["kind"] != "file":
                continue
            b64 = rows.get(e["path"], "")
            import base64

            expected = (
                b64.startswith("sha256=")
                and base64.urlsafe_b64encode(bytes.fromhex(filetree.sha256_of(e["path"])))
                .rstrip(b"=")
                .decode()
                == b64[7:]
                and os.path.basename(e["path"])
                not in ("INSTALLER", "REQUESTED", "RECORD", "direct_url.json")
            )
            assert bool(e.get("wheel_path")) == expected, e["path"]
    finally:
        for p, b in saved.items():
            Path(p).write_bytes(b)
