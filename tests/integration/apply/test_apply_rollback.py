"""apply_plan and rollback with real pip and uv into throw-away venvs, from an index on 127.0.0.1.

Each fault leaves the environment exactly as it was: `pip freeze --all`, the site-packages
tree and every file under the --root sandbox are compared before and after."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fixer.applier import apply_plan, rollback
from fixer.applier.envfix import env_fix_steps
from fixer.applier.journal import Journal
from fixer.errors import LockHeld, StepFailed, UsageError
from fixer.model import EnvFix, Plan, Step
from fixer.system.paths import state_dir

from tests.integration.apply.conftest import (
    CUDNN_GOOD,
    CUDNN_OLD,
    TORCH,
    options,
    pip_step,
    state,
    uv_install,
    uv_step,
)
from tests.helpers.paths import REPO

pytestmark = pytest.mark.integration

FIXES = (
    EnvFix(kind="ld-library-path-drop", value="/usr/lib/x86_64-linux-gnu"),
    EnvFix(kind="ipython-preload", value="/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib"),
)


def fix_plan(python, index, sandbox, *extra_steps):
    steps = (
        pip_step(python, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),
        *env_fix_steps(FIXES, home="/root", is_root=True),
        *extra_steps,
    )
    return Plan(steps=steps, python=python)


def versions(python):
    out = subprocess.run(
        [
            python,
            "-c",
            "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)


def test_apply_fixes_cudnn_and_rollback_restores(broken, index, sandbox):
    before = state(broken, sandbox)
    plan = fix_plan(broken, index, sandbox)
    seen = len(index.requests)
    result = apply_plan(plan, python=broken, options=options(sandbox))
    assert result.changed
    assert versions(broken)["nvidia-cudnn-cu13"] == CUDNN_GOOD
    assert [(c.name, c.before, c.after) for c in result.distributions] == [
        ("nvidia-cudnn-cu13", CUDNN_OLD, CUDNN_GOOD)
    ]
    env_file = sandbox / "etc/profile.d/colab-cudnn-fix.sh"
    startup = sandbox / "root/.ipython/profile_default/startup/00-colab-cudnn-fix.py"
    assert env_file.is_file() and startup.is_file()
    assert str(env_file) in result.files
    assert [p.name for p in (Path(result.journal) / "backups").iterdir()] == [
        "nvidia-cudnn-cu13.zip"
    ]
    assert "Successfully installed nvidia-cudnn-cu13-9.19.0.56" in Path(result.log).read_text()
    # only cuDNN was downloaded; torch was left alone
    assert [r for r in index.requests[seen:] if "torch" in r] == []

    back = rollback(root=str(sandbox))
    assert back.status == "rolled-back" and back.exact, back.remaining
    assert state(broken, sandbox) == before
    again = rollback(root=str(sandbox))
    assert again.status == "nothing-to-do"
    assert state(broken, sandbox) == before


def test_rollback_from_the_journal_backup_works_offline(broken, index, sandbox):
    before = state(broken, sandbox)
    apply_plan(fix_plan(broken, index, sandbox), python=broken, options=options(sandbox))
    index.fail_after(0)  # the index is gone: only the journal's backup can restore 9.14
    back = rollback(root=str(sandbox))
    assert back.exact, back.remaining
    assert back.commands == ()  # file by file from the backup: no installer, no network
    assert back.checked_files > 5 and back.restored
    assert state(broken, sandbox) == before


def test_uv_into_a_venv_without_pip(bare_venv, index, sandbox):
    uv_install(bare_venv, index, f"torch=={TORCH}", f"nvidia-cudnn-cu13=={CUDNN_OLD}")
    before = state(bare_venv, sandbox)
    plan = Plan(
        steps=(uv_step(bare_venv, index, f"nvidia-cudnn-cu13=={CUDNN_GOOD}"),),
        python=bare_venv,
        installer="uv",
    )
    apply_plan(plan, python=bare_venv, options=options(sandbox))
    assert versions(bare_venv)["nvidia-cudnn-cu13"] == CUDNN_GOOD
    back = rollback(root=str(sandbox))
    assert back.exact, back.remaining
    assert back.commands == ()  # restored file by file: no installer needed
    after = state(bare_venv, sandbox)
    assert set(after["site"].items()) ^ set(before["site"].items()) == set()
    assert after == before


def test_index_500_mid_way_rolls_back(broken, index, sandbox):
    before = state(broken, sandbox)
    plan = fix_plan(
        broken,
        index,
        sandbox,
        pip_step(broken, index, "tensorflow==2.20.0", extra=("--retries", "0")),
    )
    index.fail_files("tensorflow-2.20.0-py3-none-manylinux_2_17_x86_64.whl")
    with pytest.raises(StepFailed) as info:
        apply_plan(plan, python=broken, options=options(sandbox))
    assert info.value.rolled_back
    assert "rolled back" in info.value.message
    assert "500" in info.value.output
    assert state(broken, sandbox) == before
    assert Journal.last(state_dir(str(sandbox))).status == "rolled-back"


def test_truncated_wheel_rolls_back(broken, index, sandbox):
    before = state(broken, sandbox)
    index.truncate(f"nvidia_cudnn_cu13-{CUDNN_GOOD}-py3-none-manylinux_2_17_x86_64.whl")
    plan = fix_plan(broken, index, sandbox)
    plan = Plan(
        steps=tuple(reversed(plan.steps)), python=broken
    )  # files first, then the failing download
    with pytest.raises(StepFailed) as info:
        apply_plan(plan, python=broken, options=options(sandbox))
    assert info.value.rolled_back
    assert state(broken, sandbox) == before


def test_hash_mismatch_rolls_back(broken, index, sandbox):
    before = state(broken, sandbox)
    index.wrong_hash(f"nvidia_cudnn_cu13-{CUDNN_GOOD}-py3-none-manylinux_2_17_x86_64.whl")
    plan = Plan(steps=tuple(reversed(fix_plan(broken, index, sandbox).steps)), python=broken)
    with pytest.raises(StepFailed) as info:
        apply_plan(plan, python=broken, options=options(sandbox))
    assert "hash" in info.value.output.lower()
    assert state(broken, sandbox) == before


def test_post_check_catches_a_step_that_did_not_do_its_job(broken, index, sandbox):
    before = state(broken, sandbox)
    lying = Step(
        kind="pip-install",
        summary="claims to install 9.19",
        argv=(sys.executable, "-c", "pass"),
        packages=(f"nvidia-cudnn-cu13=={CUDNN_GOOD}",),
    )
    with pytest.raises(StepFailed, match="does not match the plan"):
        apply_plan(
            Plan(steps=(lying,)), python=broken, options=options(sandbox), verify=False
        )  # --no-verify keeps it
    assert state(broken, sandbox) == before


_CHILD = textwrap.dedent("""
    import sys
    from fixer.applier import apply_plan
    from fixer.model import Plan, PlanOptions, from_dict
    plan = from_dict(Plan, __import__("json").loads(open(sys.argv[1]).read()))
    try:
        apply_plan(plan, python=sys.argv[2], options=PlanOptions(root=sys.argv[3]))
    except Exception as exc:
        print("ERROR", type(exc).__name__, exc, flush=True)
        sys.exit(1)
    print("DONE", flush=True)
""")


def _spawn_apply(tmp_path, plan, python, sandbox, **kw):
    from fixer.model import to_dict

    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(to_dict(plan)))
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(plan_file), python, str(sandbox)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=str(REPO),
        **kw,
    )


def test_sigkill_between_steps_then_rollback(broken, index, sandbox, tmp_path):
    before = state(broken, sandbox)
    killer = Step(
        kind="pip-install",
        summary="the apply process dies here",
        argv=("sh", "-c", "kill -9 $PPID; sleep 5"),
        packages=(),
    )
    plan = fix_plan(broken, index, sandbox, killer)
    proc = _spawn_apply(tmp_path, plan, broken, sandbox)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL, out
    journal = Journal.last(state_dir(str(sandbox)))
    assert journal.status == "applying"
    assert [s["status"] for s in journal.data["steps"]] == ["done", "done", "done", "running"]
    assert versions(broken)["nvidia-cudnn-cu13"] == CUDNN_GOOD  # half applied
    # a new apply refuses to stack on top of the unfinished one (while the orphaned `sleep` still
    # holds the target lock it inherited, or after, from the journal)
    with pytest.raises((UsageError, LockHeld), match="did not finish|rollback"):
        apply_plan(fix_plan(broken, index, sandbox), python=broken, options=options(sandbox))
    back = rollback(root=str(sandbox))
    assert back.exact, back.remaining
    assert state(broken, sandbox) == before
    assert rollback(root=str(sandbox)).status == "nothing-to-do"


@pytest.mark.parametrize(
    "sig, said", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted (Ctrl-C)")]
)
def test_sigterm_and_ctrl_c_roll_back(broken, index, sandbox, tmp_path, sig, said):
    before = state(broken, sandbox)
    started = tmp_path / "slow-step-started"
    # the step itself says when it runs: the signal then lands while apply waits on it (a real
    # point; the journal's "running" is written before the step's process exists)
    slow = Step(
        kind="pip-install",
        summary="a slow step",
        argv=(
            sys.executable,
            "-c",
            f"import time; open({str(started)!r}, 'w').close(); time.sleep(30)",
        ),
    )
    proc = _spawn_apply(tmp_path, fix_plan(broken, index, sandbox, slow), broken, sandbox)
    deadline = time.time() + 120
    while not started.exists():
        assert time.time() < deadline and proc.poll() is None, proc.communicate()[0]
        time.sleep(0.02)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=120)
    assert f"StepFailed {said}" in out and "rolled back" in out, out
    assert state(broken, sandbox) == before


def test_second_concurrent_apply_is_refused(broken, index, sandbox, tmp_path):
    index.slow(0.5)
    proc = _spawn_apply(tmp_path, fix_plan(broken, index, sandbox), broken, sandbox)
    lock_file = state_dir(str(sandbox)) / "apply.lock"
    deadline = time.time() + 60
    while time.time() < deadline and not (lock_file.exists() and lock_file.read_text().strip()):
        time.sleep(0.05)
    with pytest.raises(LockHeld) as info:
        apply_plan(fix_plan(broken, index, sandbox), python=broken, options=options(sandbox))
    assert f"pid {proc.pid}" in info.value.message
    out, _ = proc.communicate(timeout=120)
    assert "DONE" in out, out


def test_same_plan_twice_changes_nothing_the_second_time(broken, index, sandbox):
    plan = fix_plan(broken, index, sandbox)
    apply_plan(plan, python=broken, options=options(sandbox))
    after_first = state(broken, sandbox)
    second = apply_plan(plan, python=broken, options=options(sandbox))
    assert second.distributions == ()
    assert state(broken, sandbox) == after_first
    assert apply_plan(Plan(steps=()), python=broken, options=options(sandbox)).changed is False


def _can_remount_read_only() -> bool:
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount --bind / /mnt 2>/dev/null || mount --bind /tmp /tmp"],
        capture_output=True,
    )
    return probe.returncode == 0


def test_read_only_target_rolls_back(broken, index, sandbox, tmp_path):
    """The target's site-packages cannot be written: pip fails, the env files already written
    are taken back, nothing changes."""
    before = state(broken, sandbox)
    plan = fix_plan(broken, index, sandbox)
    plan = Plan(
        steps=tuple(reversed(plan.steps)), python=broken
    )  # env files first, then the failing pip
    site = Path(broken).parent.parent / "lib"
    if os.geteuid() != 0:
        subprocess.run(["chmod", "-R", "a-w", str(site)], check=True)
        try:
            proc = _spawn_apply(tmp_path, plan, broken, sandbox)
            out, _ = proc.communicate(timeout=120)
        finally:
            subprocess.run(["chmod", "-R", "u+w", str(site)], check=True)
    else:
        # root writes through permissions: mount the venv read-only in a private mount namespace
        if not _can_remount_read_only():
            pytest.skip("running as root without CAP_SYS_ADMIN: cannot make the target read-only")
        from fixer.model import to_dict

        plan_file = tmp_path / "plan.json"
        plan_file.write_text(json.dumps(to_dict(plan)))
        script = (
            f'mount --bind "{site}" "{site}" && mount -o remount,bind,ro "{site}" && '
            f'exec "{sys.executable}" -c "$0" "{plan_file}" "{broken}" "{sandbox}"'
        )
        proc = subprocess.Popen(
            ["unshare", "-m", "sh", "-c", script, _CHILD],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=str(REPO),
        )
        out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, out
    assert "StepFailed" in out and "rolled back" in out, out
    assert (
        "Read-only file system" in Path(Journal.last(state_dir(str(sandbox))).log_path).read_text()
        or "ermission denied" in out
    )
    assert state(broken, sandbox) == before


def test_repaired_files_are_reported_when_the_version_stays_and_rollback_puts_the_damage_back(
    broken, index, sandbox
):
    """Issue 10: a reinstall of the same version repairs a truncated library; apply names the file,
    and rollback restores exactly the state before (the truncated file), byte for byte."""
    from fixer.applier import filetree

    site = next((Path(broken).parent.parent / "lib").glob("python3*/site-packages"))
    lib = site / "nvidia/cudnn/lib/libcudnn_ops.so.9"
    lib.write_bytes(lib.read_bytes()[:100])
    before = state(broken, sandbox)
    step = pip_step(broken, index, f"nvidia-cudnn-cu13=={CUDNN_OLD}", extra=("--force-reinstall",))
    result = apply_plan(Plan(steps=(step,), python=broken), python=broken, options=options(sandbox))
    assert result.distributions == ()  # the version did not change ...
    assert str(lib) in result.repaired  # ... but the file did
    assert lib.stat().st_size > 100
    back = rollback(root=str(sandbox))
    assert back.exact and str(lib) in back.restored, back.remaining
    assert lib.stat().st_size == 100 and state(broken, sandbox) == before
    manifest = next(
        iter(
            __import__("fixer.applier.journal", fromlist=["Journal"])
            .Journal.latest(state_dir(str(sandbox)))
            .manifests()
        )
    )
    assert filetree.check(manifest) == []


def test_installer_does_not_outlive_a_killed_apply(broken, index, sandbox, tmp_path):
    """The apply dies by SIGKILL while its installer runs: the kernel sends the installer SIGINT
    (PR_SET_PDEATHSIG), and rollback finds nothing left running."""
    from fixer.system.proc import alive

    child = Step(
        kind="pip-install",
        summary="an installer whose apply dies",
        argv=(
            sys.executable,
            "-c",
            "import os, time; time.sleep(0.5); os.kill(os.getppid(), 9); time.sleep(30)",
        ),
        packages=(),
    )
    proc = _spawn_apply(tmp_path, Plan(steps=(child,), python=broken), broken, sandbox)
    proc.communicate(timeout=120)
    assert proc.returncode == -signal.SIGKILL
    recorded = Journal.latest(state_dir(str(sandbox))).data["child"]
    assert recorded and recorded["pid"] > 0 and recorded["start"]
    deadline = time.time() + 10
    while alive(recorded["pid"], recorded["start"]) and time.time() < deadline:
        time.sleep(0.05)
    assert not alive(recorded["pid"], recorded["start"])
    back = rollback(root=str(sandbox))
    assert back.status == "rolled-back"


def test_rollback_stops_a_recorded_installer_first(tmp_path):
    """An installer left running (no parent-death signal: started by another tool) that ignores
    SIGINT and SIGTERM: rollback's stop escalates to SIGKILL and waits until it is gone."""
    from fixer.system.proc import alive, process_start_time, stop_recorded

    stubborn = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN);"
            " signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)",
        ],
        start_new_session=True,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert stubborn.stdout.readline().strip() == "ready"
    start = process_start_time(stubborn.pid)
    assert (
        stop_recorded(stubborn.pid, start, stubborn.pid, grace_int=0.3, grace_term=0.3) == "SIGKILL"
    )
    stubborn.wait(timeout=10)
    assert not alive(stubborn.pid, start)
    assert stop_recorded(stubborn.pid, start) == ""  # already gone: nothing sent
