"""Private state: the state directory, its locks, journal, log and backups are
this user's alone, checked on every use; nothing lives in a shared /tmp location; credentials in
URLs are masked in the journal and the log. And the gate itself: symlinks, `..` and paths
outside the allowed roots are refused (item 1)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.applier import rollback
from fixer.applier.filelock import ApplyLock, TargetLock
from fixer.applier.journal import Journal, mask_credentials
from fixer.errors import LockHeld
from fixer.system import fsgate
from fixer.system.paths import lock_dir, private_state_dir, state_dir
from tests.helpers.examples import examples

pytestmark = pytest.mark.integration


def test_state_dir_is_created_0700_and_its_files_0600(tmp_path):
    state = private_state_dir(str(tmp_path))
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    j = Journal.create(state, python=sys.executable, root=str(tmp_path))
    j.log("$ pip install --index-url https://alice:s3cret@mirror.example/simple x")
    j.set(sources={"index_urls": ["https://alice:s3cret@mirror.example/simple"]})
    for p in (j.dir / "journal.json", j.log_path):
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p
        assert b"s3cret" not in p.read_bytes() and b"alice" not in p.read_bytes()
    assert stat.S_IMODE(j.dir.stat().st_mode) == 0o700
    assert not any(
        str(p).startswith("/tmp/colab-cudnn-fix") for p in (state, lock_dir(str(tmp_path)))
    )
    assert lock_dir(str(tmp_path)).parent == state


@pytest.mark.parametrize("where", ["state", "locks"])
def test_a_planted_symlink_at_the_state_or_lock_dir_is_refused(tmp_path, where):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    state = state_dir(str(tmp_path / "root"))
    if where == "state":
        state.parent.mkdir(parents=True)
        state.symlink_to(elsewhere)
    else:
        private_state_dir(str(tmp_path / "root"))
        (state / "locks").symlink_to(elsewhere)
    with pytest.raises(fsgate.PathRefused, match="symlink") as info:
        rollback(root=str(tmp_path / "root"))
    assert info.value.exit_code == 2
    assert list(elsewhere.iterdir()) == [] and stat.S_IMODE(elsewhere.stat().st_mode) == 0o755


def test_a_state_dir_writable_by_others_is_refused(tmp_path):
    state = private_state_dir(str(tmp_path))
    os.chmod(state, 0o777)
    with pytest.raises(fsgate.PathRefused, match="writable by others"):
        rollback(root=str(tmp_path))


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root (CI runs as root)")
def test_a_state_dir_owned_by_another_user_is_refused(tmp_path):
    state = private_state_dir(str(tmp_path))
    os.chown(state, 12345, 12345)
    with pytest.raises(fsgate.PathRefused, match="belongs to uid 12345"):
        rollback(root=str(tmp_path))
    with pytest.raises(fsgate.PathRefused):
        Journal.create(state, python=sys.executable, root=None)


def test_lock_files_are_private_and_name_only_pid_and_command(tmp_path):
    base = lock_dir(str(tmp_path))
    lock = TargetLock(sys.executable, base, command="colab-cudnn-fix").acquire()
    try:
        held = json.loads(lock.path.read_text())
        assert held == {"pid": os.getpid(), "command": "colab-cudnn-fix"}
        assert stat.S_IMODE(lock.path.stat().st_mode) == 0o600
        with pytest.raises(LockHeld, match=f"pid {os.getpid()}"):
            TargetLock(sys.executable, base).acquire()
    finally:
        lock.release()


def test_two_rollbacks_racing_on_one_state_dir_take_turns(tmp_path):
    """Shared-state race: many threads take the state lock; never two at once."""
    state = private_state_dir(str(tmp_path))
    inside = []
    errors = []

    def worker() -> None:
        try:
            lock = ApplyLock(state).acquire(wait=30.0)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
            return
        try:
            inside.append(1)
            if len(inside) != 1:
                errors.append(AssertionError("two holders at once"))
            inside.pop()
        finally:
            lock.release()

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_the_gate_refuses_symlinks_dotdot_and_paths_outside(tmp_path):
    root = tmp_path / "env"
    (root / "pkg").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f").write_text("x")
    (root / "link").symlink_to(outside)
    with fsgate.allowed([root]):
        fsgate.write_bytes(root / "pkg" / "ok", b"ok")
        for bad in (root / "link" / "f", root / "link" / "new", outside / "f"):
            with pytest.raises(fsgate.PathRefused):
                fsgate.write_bytes(bad, b"evil")
            with pytest.raises(fsgate.PathRefused):
                fsgate.remove(bad)
        with pytest.raises(fsgate.PathRefused):
            fsgate.remove(str(root) + "/pkg/../../outside/f")
        assert fsgate.remove(root / "link")  # the link itself goes, never its target
    assert (outside / "f").read_text() == "x"
    with pytest.raises(fsgate.PathRefused):
        fsgate.write_bytes(root / "pkg" / "ok", b"after the block")


_segments = st.sampled_from(["a", "b", "..", ".", "", "link", "/", "~", "x" * 3])


@settings(max_examples=examples(300))
@given(rel=st.lists(_segments, min_size=1, max_size=6).map("/".join), absolute=st.booleans())
def test_record_rows_never_name_a_file_outside_the_environment(rel, absolute):
    """Whatever a RECORD row says, the path record_row gives is inside the prefixes, or refused."""
    site = "/env/lib/python3.11/site-packages"
    row = ("/" + rel) if absolute else rel
    try:
        full = fsgate.record_row(site, row, ["/env"])
    except fsgate.PathRefused:
        return
    assert full.startswith("/env/") and ".." not in full.split("/")


_secrets = st.text(
    alphabet=st.characters(blacklist_characters="/@ \t\n\r"), min_size=1, max_size=30
)


@settings(max_examples=examples(300))
@given(user=_secrets, password=_secrets, scheme=st.sampled_from(["https", "http", "git+https"]))
def test_credentials_in_urls_never_reach_the_journal(user, password, scheme):
    text = f"$ pip install --index-url {scheme}://{user}:{password}@host.example/simple pkg"
    masked = mask_credentials(text)
    assert f"{user}:{password}@" not in masked and "***@host.example" in masked


def test_a_symlinked_lock_file_is_refused(tmp_path):
    base = lock_dir(str(tmp_path))
    target = tmp_path / "target.txt"
    target.write_text("x")
    lock = TargetLock(sys.executable, base)
    lock.path.symlink_to(target)
    with pytest.raises(OSError):
        lock.acquire()
    assert target.read_text() == "x"


def test_cli_rollback_on_a_planted_state_symlink_exits_2_with_one_line(tmp_path):
    root = tmp_path / "root"
    state = state_dir(str(root))
    state.parent.mkdir(parents=True)
    state.symlink_to(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "fixer", "rollback", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "symlink" in proc.stderr
    assert Path(tmp_path).is_dir()
