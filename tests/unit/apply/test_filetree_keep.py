"""filetree's backups kept by link or clone (fixer.applier.filetree, "Keeping bytes"): whatever an
installer does to the files the way pip and uv do it (unlink then create, rename away, chmod, add
`~` leftovers), restore puts every byte, mode and mtime back and check() finds nothing; a linked
file written in place (what no installer of ours does, and what a hard link cannot survive) is
found by the hash before use and never reported as restored. Pure file work in tmp_path."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Dict, List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.applier import filetree
from tests.helpers.examples import examples

MODES = (0o600, 0o644, 0o755, 0o700, 0o640)
#: (relative path, size, mode)
files_st = st.lists(
    st.tuples(
        st.sampled_from(["pkg/a.so", "pkg/b.so", "pkg/lib/c.so", "pkg/__init__.py", "pkg/d.txt"]),
        st.integers(0, 5000),
        st.sampled_from(MODES),
    ),
    min_size=1,
    max_size=5,
    unique_by=lambda t: t[0],
)
#: what the installer does to each file: "replace" (unlink + create), "rename" (pip's stash,
#: never moved back), "chmod", "keep"
actions_st = st.lists(
    st.sampled_from(["replace", "rename", "chmod", "keep"]), min_size=5, max_size=5
)


def _dist(root: Path, files: List[Tuple[str, int, int]]) -> Dict[str, object]:
    site = root / "site"
    di = site / "pkg-1.0.dist-info"
    di.mkdir(parents=True)
    rows = []
    for i, (rel, size, mode) in enumerate(files):
        p = site / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(bytes((i * 7 + k) % 251 for k in range(size)))
        os.chmod(p, mode)
        rows.append(f"{rel},,")
    (di / "RECORD").write_text("\n".join(rows + ["pkg-1.0.dist-info/RECORD,,"]) + "\n")
    return filetree.record(str(di), name="pkg", version="1.0", hashes=False)


def _install_over(manifest: Dict[str, object], actions: List[str]) -> None:
    """What pip/uv do to the old files: never a write into an existing inode."""
    for entry, action in zip(manifest["files"], actions):  # type: ignore[call-overload]
        p = entry["path"]
        if action == "replace":
            os.unlink(p)
            with open(p, "wb") as f:
                f.write(b"new version")
        elif action == "rename":
            os.rename(p, os.path.join(os.path.dirname(p), "~" + os.path.basename(p)))
        elif action == "chmod":
            os.chmod(p, 0o777)


@pytest.fixture(autouse=True)
def _small_links(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filetree, "LINK_MIN", 1000)  # the generated files straddle it


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=files_st, actions=actions_st, link=st.booleans())
def test_restore_after_any_installer_is_byte_identical(tmp_path_factory, files, actions, link):
    root = tmp_path_factory.mktemp("t")
    manifest = _dist(root, files)
    archive = root / "journal" / "backups" / "pkg.zip"
    archive.parent.mkdir(parents=True)
    with pytest.MonkeyPatch.context() as mp:
        if not link:  # the journal on another file system: every file copied into the zip

            def exdev(*a, **k):
                raise OSError(errno.EXDEV, "Invalid cross-device link")

            mp.setattr(filetree.os, "link", exdev)
        filetree.backup(manifest, archive)
    modes = {e["path"]: e["mode"] for e in manifest["files"]}
    big = [e for e in manifest["files"] if e["kind"] == "file" and e["size"] >= 1000]
    kept = {e.get("kept") for e in big}
    assert kept <= ({"link", "reflink"} if link else {"zip"})
    assert all(e.get("kept") == "zip" for e in manifest["files"] if e["size"] < 1000)
    for e in manifest["files"]:  # the stash keeps the file's mode (a 0600 file stays 0600)
        if e.get("kept") in ("link", "reflink"):
            kept_st = os.lstat(filetree.stash_dir(archive) / str(e["slot"]))
            assert stat.S_IMODE(kept_st.st_mode) == e["mode"]
    _install_over(manifest, actions)
    report = filetree.restore([(manifest, archive)])
    assert report.errors == [] and report.remaining == []
    assert filetree.check(manifest) == []
    assert {p: stat.S_IMODE(os.lstat(p).st_mode) for p in modes} == modes


@settings(max_examples=examples(30), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=files_st)
def test_a_linked_file_written_in_place_is_never_restored_as_exact(tmp_path_factory, files):
    root = tmp_path_factory.mktemp("t")
    manifest = _dist(root, files)
    archive = root / "journal" / "pkg.zip"
    archive.parent.mkdir()
    filetree.backup(manifest, archive)
    linked = [e for e in manifest["files"] if e.get("kept") == "link"]
    for e in linked:  # written in place: the stash's inode changes too
        with open(e["path"], "r+b") as f:
            f.write(b"X" * max(1, e["size"]))
    report = filetree.restore([(manifest, archive)])
    if linked:
        assert report.remaining, "a changed link must not pass the check"
        assert any("damaged" in line for line in report.errors)
    else:
        assert report.remaining == []


def test_a_stash_slot_from_the_journal_cannot_leave_the_stash(tmp_path):
    entry = {"kept": "link", "slot": "../../etc/passwd"}
    assert filetree._kept_path(entry, tmp_path / "x.zip") is None
    assert filetree._kept_path({"kept": "link", "slot": True}, tmp_path / "x.zip") is None
    assert filetree._kept_path({"kept": "link", "slot": 3}, tmp_path / "x.zip") == (
        tmp_path / "x.zip.links" / "3"
    )
