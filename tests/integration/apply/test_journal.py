"""The journal survives damage: checksums, scanning instead of trusting LAST, clear errors (exit 2,
no traceback, also under --json), and `rollback --force` from what is left. Plus the per-target lock."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from fixer.system.paths import state_dir
from fixer.applier import apply_plan, rollback
from fixer.applier.filelock import ApplyLock, TargetLock, target_key
from fixer.applier.journal import Journal, decode_checked, encode_checked
from fixer.cli import main
from fixer.errors import JournalDamaged, LockHeld
from fixer.model import Plan

from tests.integration.apply.conftest import CUDNN_GOOD, options, pip_step, state

DAMAGES = {
    "truncated": lambda raw: raw[: len(raw) // 2],
    "empty": lambda raw: b"",
    "garbage": lambda raw: b"\x00\xff not json",
    "flipped": lambda raw: raw.replace(b'"applying"', b'"applyinG"'),
    "no-steps": lambda raw: encode_checked(
        {k: v for k, v in json.loads(raw).items() if k not in ("steps", "checksum")}
    ),
    "not-an-object": lambda raw: b"[1, 2]",
    "future-version": lambda raw: encode_checked({**json.loads(raw), "version": 99}),
}


def _journal(tmp_path: Path, status: str = "applying") -> Journal:
    j = Journal.create(tmp_path, python=sys.executable, root=None)
    j.set(status=status)
    return j


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_journal_is_a_clear_error(tmp_path, damage):
    j = _journal(tmp_path)
    path = j.dir / "journal.json"
    path.write_bytes(DAMAGES[damage](path.read_bytes()))
    with pytest.raises(JournalDamaged) as info:
        Journal.latest(tmp_path)
    assert str(path) in info.value.message and info.value.exit_code == 2
    salvaged = Journal.latest(tmp_path, force=True)  # --force reads what is left
    assert salvaged is not None and salvaged.forced and salvaged.id == j.id


def test_checksum_round_trip_and_mismatch():
    data = {"a": 1, "b": [1, 2], "c": "é"}
    assert decode_checked(encode_checked(data), "x") == data
    raw = encode_checked(data).replace(b'"a": 1', b'"a": 2')
    with pytest.raises(JournalDamaged, match="checksum mismatch"):
        decode_checked(raw, "x")


def test_garbage_last_does_not_hide_an_unfinished_journal(tmp_path):
    j = _journal(tmp_path)
    (tmp_path / "journal" / "LAST").write_bytes(b"../../etc\n")
    found = Journal.latest(tmp_path)
    assert found is not None and found.id == j.id and found.status == "applying"
    (tmp_path / "journal" / "LAST").unlink()
    assert Journal.latest(tmp_path).id == j.id
    # a journal directory that never got its journal.json changed nothing: skipped
    (tmp_path / "journal" / "99991231T000000-000000-1").mkdir()
    assert Journal.latest(tmp_path).id == j.id


@pytest.mark.parametrize("as_json", [False, True])
def test_rollback_cli_on_a_damaged_journal_exits_2_without_traceback(tmp_path, capsys, as_json):
    root = tmp_path / "root"
    root.mkdir()
    j = _journal(state_dir(str(root)))
    (j.dir / "journal.json").write_bytes(b'{"version": 2, "id": "x", "sta')
    rc = main(["rollback", "--root", str(root)] + (["--json"] if as_json else []))
    out = capsys.readouterr()
    assert rc == 2
    assert "Traceback" not in out.out + out.err
    if as_json:
        err = json.loads(out.out)["error"]
        assert (
            err["type"] == "JournalDamaged"
            and "journal.json" in err["message"]
            and err["exit_code"] == 2
        )
    else:
        assert "not readable JSON" in out.err and "--force" in out.err


def test_rollback_force_restores_from_backups_when_journal_json_is_gone(broken, index, sandbox):
    before = state(broken, sandbox)
    plan = Plan(steps=(pip_step(broken, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),), python=broken)
    result = apply_plan(plan, python=broken, options=options(sandbox))
    (Path(result.journal) / "journal.json").write_bytes(b"\0" * 100)
    with pytest.raises(JournalDamaged):
        rollback(root=str(sandbox))
    back = rollback(root=str(sandbox), python=broken, force=True)
    # the distributions come back byte for byte from the manifests and backups, but what
    # journal.json held (loader fixes written, apt changes) is lost: never "exactly as before"
    assert back.status == "rollback-incomplete" and not back.exact, back.remaining
    assert any("journal is damaged" in r for r in back.remaining)
    assert any("journal damaged" in n for n in back.notes)
    assert state(broken, sandbox) == before


# -- one lock per target -----------------------------------------------------------------------


def test_target_lock_is_per_environment_whatever_the_state_directory(tmp_path, venv):
    other = tmp_path / "other-venv"
    shutil.copytree(Path(venv).parent.parent, other, symlinks=True)
    link = tmp_path / "link-to-venv"
    link.symlink_to(Path(venv).parent.parent)
    assert target_key(venv) == target_key(str(link / "bin" / "python"))  # same env, another path
    assert target_key(venv) != target_key(str(other / "bin" / "python"))  # venvs share the binary
    base = tmp_path / "locks"
    first = TargetLock(venv, base=base).acquire()
    try:
        with pytest.raises(LockHeld, match=f"pid {os.getpid()}"):
            TargetLock(str(link / "bin" / "python"), base=base).acquire()
        TargetLock(str(other / "bin" / "python"), base=base).acquire().release()
        # two different --root state directories do not matter: the target lock is the same
        ApplyLock(tmp_path / "a").acquire().release()
    finally:
        first.release()
    # private: no other user can hold, replace or read the locks
    assert oct(os.stat(base).st_mode & 0o7777) == oct(0o700)
    assert all(oct(p.stat().st_mode & 0o7777) == oct(0o600) for p in base.iterdir())


def test_apply_on_a_locked_target_is_refused_before_any_journal(broken, index, sandbox, tmp_path):
    plan = Plan(steps=(pip_step(broken, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),), python=broken)
    from fixer.system.paths import lock_dir

    held = TargetLock(broken, lock_dir(str(sandbox))).acquire()
    try:
        with pytest.raises(LockHeld):
            apply_plan(plan, python=broken, options=options(sandbox))
    finally:
        held.release()
    assert not (state_dir(str(sandbox)) / "journal").exists()


def test_not_enough_disk_is_refused_before_any_change(broken, index, sandbox, monkeypatch):
    import shutil as _shutil

    from fixer.applier import prepare
    from fixer.errors import NoSpace

    before = state(broken, sandbox)
    real = _shutil.disk_usage
    monkeypatch.setattr(
        prepare.shutil, "disk_usage", lambda p: real(p)._replace(free=1 << 20)
    )  # 1 MiB free everywhere
    plan = Plan(steps=(pip_step(broken, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),), python=broken)
    with pytest.raises(NoSpace, match="nothing was changed"):
        apply_plan(plan, python=broken, options=options(sandbox))
    assert state(broken, sandbox) == before
    assert Journal.latest(state_dir(str(sandbox))).status == "abandoned"


def test_backups_of_the_previous_apply_go_after_the_next_success(broken, index, sandbox):
    plan = Plan(steps=(pip_step(broken, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),), python=broken)
    first = apply_plan(plan, python=broken, options=options(sandbox))
    assert any((Path(first.journal) / "backups").iterdir())
    again = Plan(
        steps=(
            pip_step(
                broken, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}", extra=("--force-reinstall",)
            ),
        ),
        python=broken,
    )
    second = apply_plan(again, python=broken, options=options(sandbox))
    assert not (Path(first.journal) / "backups").exists()  # pruned: only the newest is kept
    assert any((Path(second.journal) / "backups").iterdir())
    assert any("removed the backups" in n for n in second.notes)
