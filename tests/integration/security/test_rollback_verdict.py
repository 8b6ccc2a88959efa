"""Rollback says "exactly as before" only when it is (issue 21: it said so when a symlink came back
as a regular file, when the owner changed, with empty directories the apply created left
behind). Generated over the loader-fix file an apply writes (a real apply_plan of an env-fix step
in a --root sandbox, a real venv): what the path was before (absent with its folders absent,
a file of some mode, a symlink), and what happened to it after the apply (nothing, a chmod,
replaced by a symlink, a user's file in a folder the apply created, another owner).

Invariant, for `rollback` and then `rollback --force`: when the result is exact, the path is
what it was before in type, symlink target, mode, owner and bytes, and every folder the apply
created is gone; when it is not, the result lists what differs (never an empty `remaining`)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Optional, Tuple

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fixer.applier import apply_plan, rollback
from fixer.model import Plan, Step
from fixer.planner.envfix import ENV_FILE
from fixer.system.paths import state_dir
from tests.helpers.examples import examples
from tests.integration.apply.conftest import options

pytestmark = pytest.mark.integration

State = Tuple[str, Optional[str], Optional[int], Optional[int], Optional[str]]


def _state(path: Path) -> State:
    """(type, symlink target, mode, owner, sha256) of `path`, never following it."""
    try:
        st_ = path.lstat()
    except FileNotFoundError:
        return ("absent", None, None, None, None)
    if path.is_symlink():
        return ("symlink", os.readlink(path), None, st_.st_uid, None)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return ("file", None, st_.st_mode & 0o7777, st_.st_uid, digest)


def _before(sandbox: Path, kind: str) -> Path:
    target = sandbox / ENV_FILE.lstrip("/")
    if kind == "absent":
        return target
    target.parent.mkdir(parents=True)
    if kind == "symlink":
        (sandbox / "elsewhere.sh").write_text("# the user's\n")
        os.symlink("../../elsewhere.sh", target)
    else:
        target.write_text("# the image's own\n")
        os.chmod(target, 0o600 if kind == "file-0600" else 0o644)
    return target


def _later(path: Path, what: str) -> None:
    if what == "chmod" and path.is_file() and not path.is_symlink():
        os.chmod(path, 0o600)
    elif what == "symlink":
        path.unlink()
        os.symlink("/dev/null", path)
    elif what == "user-file":
        (path.parent / "users-own.sh").write_text("# mine\n")
    elif what == "owner" and os.geteuid() == 0:
        os.lchown(path, 4242, 4242)


@settings(
    max_examples=examples(40),
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # each example is a real apply
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    before=st.sampled_from(["absent", "file-0644", "file-0600", "symlink"]),
    later=st.sampled_from(["nothing", "chmod", "symlink", "user-file", "owner"]),
)
def test_exactly_as_before_only_when_every_journalled_path_is(
    venv, tmp_path_factory, before, later
):
    sandbox = Path(venv).parent.parent
    target = _before(sandbox, before)
    was = _state(target)
    created = [d for d in (target.parent, target.parent.parent) if not d.exists()]
    step = Step(
        kind="env-fix", summary="write the env file", files=(ENV_FILE,), content="export A=1\n"
    )
    apply_plan(Plan(steps=(step,), python=venv), python=venv, options=options(sandbox))
    _later(target, later)
    try:
        for force in (False, True):
            result = rollback(root=str(sandbox), force=force)
            if later == "nothing" and not force:  # an untouched apply is always undone
                assert result.exact, (before, result.remaining)
            if result.exact:
                assert _state(target) == was, (before, later, force, _state(target))
                assert not [d for d in created if d.exists()], (before, later, force)
            else:
                assert result.remaining, (before, later, force)
    finally:
        for p in (target, sandbox / "elsewhere.sh", target.parent / "users-own.sh"):
            if p.is_symlink() or p.exists():
                p.unlink()
        for d in (target.parent, target.parent.parent):
            if d.is_dir() and not any(d.iterdir()):
                d.rmdir()
        shutil.rmtree(state_dir(str(sandbox)), ignore_errors=True)  # the next example: fresh
