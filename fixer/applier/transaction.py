"""apply_plan and rollback: run a plan as a transaction that either completes or leaves no trace.

    locks     the target interpreter's lock (keyed by its real path), then the state directory's.
    prepare   snapshot the target; record every file of the distributions the plan can touch
              (fixer.applier.filetree: path, sha256, mode, mtime, symlinks, directory listings) and
              back their bytes up compressed; back up every file it will write; note apt versions.
              All of it fsynced before anything changes. Free space is checked first; a journal
              that cannot be written stops the apply here, with nothing changed.
    apply     for each step: journal "running" (fsync), start the installer, journal its pid,
              run it, journal "done".
    check     the installed versions and written files are what the plan asked for (always, also
              with --no-verify, which skips only the GPU check).
    on any failure, Ctrl-C or SIGTERM: stop the installer (SIGINT first), restore file by file,
    check every recorded file's hash, then raise StepFailed(rolled_back=exact).

`rollback()` runs the same restore from the newest journal (found by scanning the journal
directory), also after the apply process was killed (SIGKILL) mid-way: it first stops and waits
for an installer the journal names, removes what the installer left (pip's `~` copies, half
extracted files), writes back every recorded file, then checks them. "exactly as before" is
what that check says, not what the versions say.
"""

from __future__ import annotations

import contextlib
import os
import dataclasses
import signal
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, NoReturn, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from fixer.applier import envfix, filetree, leftovers, prepare, progress, stepcheck, threeway, undo
from fixer.applier.filelock import ApplyLock, TargetLock
from fixer.applier.journal import UNFINISHED, WAITING, Journal
from fixer.applier.prepare import backup_set, ldconfig_of, req_name, unrooted
from fixer.applier.reporter import default_reporter
from fixer.applier.runner import Runner, run_command
from fixer.applier.snapshot import TargetSnapshot, read_target, snapshot_from_dict, snapshot_to_dict
from fixer.errors import FixerError, JournalWriteFailed, StepFailed, UsageError
from fixer.applier.results import ApplyResult, RollbackResult, StepOutcome
from fixer.model import (
    CommandResult,
    Plan,
    PlanOptions,
    Reporter,
    Step,
)
from fixer.planner import installers
from fixer.system import fsgate
from fixer.system.paths import lock_dir, private_state_dir
from fixer.system.proc import ignore_signals, process_start_time, restore_signals, stop_recorded
from fixer.model import to_dict
from fixer.planner.conda import CONDACOLAB_PREFIX, installed_by_condacolab, is_condacolab_step

#: Seconds a command of each kind may run (a torch download on a slow link takes long).
TIMEOUTS = {
    "pip-install": 3600.0,
    "pip-uninstall": 600.0,
    "apt-update": 600.0,
    "apt-install": 3600.0,
    "apt-hold": 120.0,
    "conda-install": 3600.0,
    "env-fix": 120.0,
}
RESTORE_TIMEOUT = undo.RESTORE_TIMEOUT
#: Journals whose backups are kept (the newest ones); older backups go after a successful apply.
KEEP_BACKUPS = 1

_UNFINISHED = UNFINISHED

#: What the user runs to go on after condacolab restarted the kernel (one place for the words).
RESUME_HINT = (
    "run `!colab-cudnn-fix apply --resume` (or `fixer.apply()` in a cell: in a kernel it picks the journal up) "
    "once the kernel is back"
)


class _Pause(Exception):
    """A step must run in a fresh notebook kernel (condacolab restarts it): stop here, journal
    where to go on, keep everything done so far."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


class _Terminated(BaseException):
    """SIGTERM arrived: unwind like KeyboardInterrupt, then roll back."""


# ---------------------------------------------------------------------------------------
# apply
# ---------------------------------------------------------------------------------------


def apply_plan(
    plan: Plan,
    *,
    python: str,
    options: PlanOptions,
    reporter: Optional[Reporter] = None,
    runner: Optional[Runner] = None,
    verify: bool = True,
) -> ApplyResult:
    """Carry out `plan` on the interpreter `python`. Returns what changed; raises StepFailed
    (rolled_back=True) after restoring the previous state when anything goes wrong, LockHeld
    when another apply runs on the same interpreter or state directory, UsageError when the last
    apply was interrupted and not rolled back, JournalDamaged when its journal cannot be read,
    JournalWriteFailed / NoSpace (nothing changed) when the journal or backups do not fit,
    PathRefused (exit 2, nothing changed) when the plan would write outside what it may touch
    or the state directory is not private.

    `verify` is kept for callers; the check after the steps always runs (the GPU check is the
    caller's, see fixer.cli.apply)."""
    del verify
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    started = time.monotonic()
    if plan.nothing_to_do:
        return ApplyResult(
            changed=False,
            notes=("nothing to do: the environment already matches the plan",),
            restart_required=plan.restart_required,
        )
    state = private_state_dir(options.root)
    # signal handlers first: no state is written before a SIGTERM can be turned into a rollback
    old_handlers = _catch_signals()
    journal: Optional[Journal] = None
    locks: List[ApplyLock] = []
    scope = contextlib.ExitStack()
    try:
        locks.append(TargetLock(python, lock_dir(options.root)).acquire())
        locks.append(ApplyLock(state).acquire())
        _refuse_unfinished(Journal.latest(state))
        _refuse_named(options.root, python)
        before = read_target(python)
        scope.enter_context(prepare.confine(plan.steps, before, options.root, state))
        journal = Journal.create(state, python=python, root=options.root)
        rep.phase(f"journal {journal.dir}")
        prepare.prepare(journal, plan, before, options, rep, run)
        journal.set(status="applying")
        restart = plan.restart_required or any(s.kind == "restart" for s in plan.steps)
        active = [s for s in plan.steps if s.kind not in ("verify",)]
        return _finish(
            journal, active, 0, before, python, options, rep, run, started, restart, locks
        )
    except BaseException as exc:
        if journal is None or journal.status in ("prepared",):
            _unchanged(exc, journal)
        assert journal is not None
        _roll_back_after(exc, journal, python, rep, run, options.root)
    finally:
        scope.close()
        for lock in reversed(locks):
            lock.release()
        restore_signals(old_handlers)


def _refuse_unfinished(last: Optional[Journal]) -> None:
    """UsageError when the newest journal's apply did not finish (nothing changed now)."""
    if last is None or last.status not in UNFINISHED + WAITING:
        return
    if last.status == "awaiting-restart":
        raise UsageError(
            f"the previous apply (journal {last.id}) waits for a kernel restart; nothing was "
            "changed now",
            hint=RESUME_HINT + ", or `colab-cudnn-fix rollback` to undo it",
        )
    raise UsageError(
        f"the previous apply (journal {last.id}) did not finish (status {last.status}); "
        "nothing was changed now",
        hint="run `colab-cudnn-fix rollback` to restore the state before it, then apply again",
    )


def _unchanged(exc: BaseException, journal: Optional[Journal]) -> NoReturn:
    """The apply stopped before changing anything: journal it abandoned, say so, re-raise."""
    if journal is not None:
        _try_set(journal, status="abandoned", error=_describe(exc))
    if isinstance(exc, JournalWriteFailed):
        raise JournalWriteFailed(
            f"{exc.message}; the apply stopped before changing anything",
            hint="free some disk space (or lift the file-size limit) and apply again",
        )
    if isinstance(exc, (KeyboardInterrupt, _Terminated)):
        raise StepFailed(
            f"{_describe(exc)} before any change; nothing was changed", rolled_back=True
        )
    raise exc


def _roll_back_after(
    exc: BaseException,
    journal: Journal,
    python: str,
    rep: Reporter,
    run: Runner,
    root: Optional[str] = None,
) -> NoReturn:
    """Restore the state before the apply (signals ignored meanwhile), then raise StepFailed
    saying what went wrong and whether the check after the restore found everything as before."""
    reason = _describe(exc)
    rep.phase(f"rolling back: {reason}")
    _try_set(journal, error=reason)
    shielded = ignore_signals()
    try:
        result = _restore(journal, python, rep, run, root=root)
    finally:
        restore_signals(shielded)
    if result.status == "rolled-back":
        tail = "rolled back, every recorded file is as before" + (
            ""
            if result.exact
            else f" (reinstalled by version only: {', '.join(result.unverified)})"
        )
    else:
        tail = (
            f"rollback was incomplete ({'; '.join(result.remaining[:10])}); journal {journal.dir}"
        )
    raise StepFailed(
        f"{reason}; {tail}",
        argv=getattr(exc, "argv", ()),
        output=getattr(exc, "output", ""),
        rolled_back=result.status == "rolled-back",
        cause=exc if isinstance(exc, Exception) else None,
    ) from exc


def _try_set(journal: Journal, **values: Any) -> bool:
    """Journal write that may fail (disk full, size limit) without hiding the first error."""
    try:
        journal.set(**values)
        return True
    except JournalWriteFailed:
        journal.data.update(values)
        return False


def _finish(
    journal: Journal,
    steps: Sequence[Step],
    start: int,
    before: TargetSnapshot,
    python: str,
    options: PlanOptions,
    rep: Reporter,
    run: Runner,
    started: float,
    restart_required: bool,
    locks: Sequence[ApplyLock] = (),
) -> ApplyResult:
    """Run steps[start:], check (always: --no-verify skips only the health checks), record what
    the apply left (threeway.capture) and journal "done" (or "awaiting-restart" at a step that
    needs a fresh kernel). Raises on failure; the caller rolls back."""
    try:
        outcomes = _run_steps(journal, steps, options, rep, run, start=start, locks=locks)
    except _Pause as pause:
        return _paused(journal, steps, pause, started)
    rep.phase("checking the result")
    problems = _post_check(steps, python, options)
    if problems:
        raise StepFailed(
            "the environment does not match the plan after applying it: " + "; ".join(problems),
            rolled_back=True,
        )
    after = read_target(python)
    repaired = _repaired(journal, before, after)
    _record_after(journal, before, after)
    journal.set(status="done", after=snapshot_to_dict(after))
    notes = journal.notes
    pruned = prune_backups(journal.dir.parent.parent, keep=KEEP_BACKUPS)
    if pruned:
        notes.append(
            f"removed the backups of {pruned} older apply(s) (kept the newest {KEEP_BACKUPS})"
        )
    return ApplyResult(
        changed=True,
        steps=outcomes,
        distributions=undo.diff(before, after),
        files=tuple(f.path for f in journal.files),
        repaired=tuple(repaired),
        journal=str(journal.dir),
        log=str(journal.log_path),
        restart_required=restart_required,
        notes=tuple(notes),
        seconds=time.monotonic() - started,
    )


def _paused(
    journal: Journal, steps: Sequence[Step], pause: "_Pause", started: float
) -> ApplyResult:
    journal.set(
        status="awaiting-restart",
        resume={
            "next": pause.index,
            "steps": [to_dict(s) for s in steps],
            "reason": pause.reason,
            "command": RESUME_HINT,
        },
    )
    return ApplyResult(
        changed=True,
        journal=str(journal.dir),
        log=str(journal.log_path),
        files=tuple(f.path for f in journal.files),
        notes=tuple(journal.notes) + (pause.reason,),
        seconds=time.monotonic() - started,
        awaiting_restart=True,
        resume=RESUME_HINT,
    )


def _record_after(journal: Journal, before: TargetSnapshot, after: TargetSnapshot) -> None:
    """after.json: what the apply left on every path it touched (rollback's three-way check),
    and each file record's state after."""
    before_data = journal.before() or {}
    bv = before.versions()
    changed = []
    for d in after.dists:
        if d.dist_info and (bv.get(d.name) != d.version) and not d.editable:
            try:
                changed += filetree.record_paths(d.dist_info, prepare.target_dirs(after))
            except fsgate.PathRefused:
                continue
            changed.append(d.dist_info)
    state = threeway.capture(list(journal.manifests()), before_data.get("site_dirs") or [], changed)
    rel = journal.write_part("after.json", state)
    files = [
        dataclasses.replace(r, after=threeway.state_of(r.path)).to_dict() for r in journal.files
    ]
    journal.set(after_state=rel, files=files)


def resume_apply(
    *,
    root: Optional[str] = None,
    python: Optional[str] = None,
    reporter: Optional[Reporter] = None,
    runner: Optional[Runner] = None,
    verify: bool = True,
) -> ApplyResult:
    """Go on with the apply that stopped for a kernel restart (journal status "awaiting-restart"):
    run its remaining steps as one transaction with the part already done; on any failure the
    whole apply is rolled back, as if it had never stopped. (`verify` is kept for callers; the
    check after the steps always runs.)"""
    del verify
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    started = time.monotonic()
    state = private_state_dir(root)
    old_handlers = _catch_signals()
    journal: Optional[Journal] = None
    locks: List[ApplyLock] = []
    scope = contextlib.ExitStack()
    target = python or ""
    try:
        locks.append(ApplyLock(state).acquire())
        journal, info, before = _resumable(Journal.latest(state))
        steps = stepcheck.resume_steps(info.steps, str(journal.dir))
        target = python or journal.python
        locks.insert(0, TargetLock(target, lock_dir(root)).acquire())
        _refuse_named(root, target)
        # the journal is input: its remaining steps run only as the planner writes them
        snapshot = read_target(target)
        refused = stepcheck.resume_refusal(
            steps,
            start=info.next,
            python=target,
            installer=journal.installer,
            prefix=snapshot.prefix,
            root=root,
            where=str(journal.dir),
        )
        if refused is not None:
            raise refused
        scope.enter_context(prepare.confine(steps, snapshot, root, state))
        rep.phase(f"resuming journal {journal.dir} at step {info.next + 1}/{len(steps)}")
        journal.set(status="applying")
        restart = any(s.kind == "restart" for s in steps)
        options = PlanOptions(root=root)
        return _finish(
            journal, steps, info.next, before, target, options, rep, run, started, restart, locks
        )
    except BaseException as exc:
        if journal is None or journal.status != "applying":
            raise
        _roll_back_after(exc, journal, target or journal.python, rep, run, root)
    finally:
        scope.close()
        for lock in reversed(locks):
            lock.release()
        restore_signals(old_handlers)


def _resumable(journal: Optional[Journal]) -> Tuple[Journal, Any, TargetSnapshot]:
    """The journal waiting for a restart, its resume record and its snapshot before; UsageError
    (nothing changed) when there is none."""
    if journal is None or journal.status != "awaiting-restart":
        what = (
            "no apply recorded"
            if journal is None
            else f"the last apply (journal {journal.id}) is {journal.status}"
        )
        raise UsageError(f"--resume: nothing to resume: {what}", hint="run `colab-cudnn-fix apply`")
    info = journal.resume
    before_data = journal.before()
    if info is None or before_data is None:
        raise UsageError(
            f"journal {journal.dir}: no resume record; nothing was changed now",
            hint="`colab-cudnn-fix rollback` undoes the part already done",
        )
    return journal, info, snapshot_from_dict(before_data)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(exc, _Terminated):
        return "terminated (SIGTERM)"
    if isinstance(exc, FixerError):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f": {exc.filename}" if exc.filename else "")
    return f"{type(exc).__name__}: {exc}"


def _repaired(journal: Journal, before: TargetSnapshot, after: TargetSnapshot) -> List[str]:
    """Files of recorded distributions that changed while their version did not (a reinstall
    that repaired a truncated or foreign library)."""
    out: List[str] = []
    for manifest in journal.manifests():
        name = manifest["name"]
        b, a = before.get(name), after.get(name)
        if b is None or a is None or a.version != b.version:
            continue
        for line in filetree.check(manifest):
            path, _, what = line.partition(": ")
            if "content differs" in what or what == "missing" or "symlink" in what:
                out.append(path)
    return out


def prune_backups(state: Path, keep: int = KEEP_BACKUPS) -> int:
    """Delete the backups (not the journals) of finished applies beyond the newest `keep`.
    Returns how many journals lost their backups. An unfinished journal is never touched."""
    dirs = Journal.all(state)
    pruned = 0
    for directory in dirs[:-keep] if keep > 0 else dirs:
        try:
            status = Journal.load(directory).status
        except FixerError:
            continue
        if status in _UNFINISHED + WAITING:
            continue
        gone = False
        for sub in ("backups", "wheels", "downloads"):
            if (directory / sub).is_dir() and any((directory / sub).iterdir()):
                try:
                    fsgate.remove(directory / sub)
                except OSError:
                    continue
                gone = True
        pruned += gone
    return pruned


#: kept for callers and tests that read them here
_ldconfig_of = ldconfig_of
_req_name = req_name
_unrooted = unrooted


def _run_steps(
    journal: Journal,
    steps: Sequence[Step],
    options: PlanOptions,
    rep: Reporter,
    run: Runner,
    start: int = 0,
    locks: Sequence[ApplyLock] = (),
) -> Tuple[StepOutcome, ...]:
    outcomes: List[StepOutcome] = []
    total = len(steps)
    for i, step in enumerate(steps, 1):
        if i - 1 < start:
            continue
        rec = journal.steps[i - 1]
        if is_condacolab_step(step):
            if not installed_by_condacolab(CONDACOLAB_PREFIX, options.root):
                raise _Pause(
                    i - 1,
                    f"condacolab must install conda inside the notebook kernel, which then restarts: "
                    f"in a cell run `import condacolab; condacolab.install()`, then {RESUME_HINT}",
                )
            rec.update(status="done", rc=0, seconds=0.0)
            journal.save()
            _note(
                journal,
                rep,
                f"conda is in {CONDACOLAB_PREFIX} already (condacolab ran): step {i} done",
            )
            continue
        rec.update(status="running", started=time.time())
        journal.save()
        rep.step_started(i, total, step)
        journal.log(
            f"== step {i}/{total}: {step.summary}"
            + (f"\n$ {' '.join(step.argv)}" if step.argv else "")
        )
        result = _execute(journal, i, step, options, rep, run, locks)
        rec.update(
            status="done" if result.rc == 0 else "failed",
            rc=result.rc,
            seconds=round(result.seconds, 3),
        )
        journal.set(child=None)
        rep.step_finished(i, step, result)
        outcomes.append(
            StepOutcome(
                kind=step.kind,
                summary=step.summary,
                argv=tuple(step.argv),
                rc=result.rc,
                seconds=result.seconds,
            )
        )
        if result.rc != 0:
            what = "timed out" if result.timed_out else f"failed (exit {result.rc})"
            raise StepFailed(
                f"step {i}/{total} {what}: {step.summary}", argv=step.argv, output=result.output
            )
    return tuple(outcomes)


def _execute(
    journal: Journal,
    index: int,
    step: Step,
    options: PlanOptions,
    rep: Reporter,
    run: Runner,
    locks: Sequence[ApplyLock] = (),
) -> CommandResult:
    # what the step's command says about its progress, read as it comes (the reporter draws it)
    watch = progress.InstallWatch(
        time.monotonic(),
        expected=step.download_bytes,
        unknown=step.download_unknown,
        packages=step.packages,
    )

    def on_output(line: str) -> None:
        journal.log(line)
        watch.line(line, time.monotonic())
        rep.step_output(index, line)

    def call(argv: Sequence[str], timeout: float) -> CommandResult:
        rep.watching(index, watch)
        return _run_tracked(journal, run, argv, timeout, on_output, locks)

    if step.kind == "cleanup":
        removed = leftovers.remove(journal.leftovers)
        journal.log("removed " + (", ".join(removed) if removed else "nothing (already gone)"))
        return CommandResult(rc=0)
    if step.kind == "env-fix":
        return _write_env_fix(journal, step, options, rep, call)
    if step.files and step.content is not None:
        # a file the command reads (apply --lock: the hashed requirements file); journaled like any other
        for path in step.files:
            envfix.write_managed(envfix.target_path(path, options.root), step.content)
    if step.kind == "restart":
        _note(journal, rep, step.summary)
        return CommandResult(rc=0)
    if step.kind == "apt-update" and not _apt_update_needed(journal, step, run):
        return CommandResult(rc=0)
    if not step.argv:
        return CommandResult(rc=0)
    return call(step.argv, TIMEOUTS.get(step.kind, 3600.0))


def _write_env_fix(
    journal: Journal, step: Step, options: PlanOptions, rep: Reporter, call: Any
) -> CommandResult:
    """Write an env-fix step's files (through the gate), then its ldconfig or follow-up command."""
    start = time.monotonic()
    changed = []
    for path in step.files:
        real = envfix.target_path(path, options.root)
        if envfix.write_managed(real, step.content):
            changed.append(str(real))
    journal.log("wrote " + (", ".join(changed) if changed else "nothing (already in place)"))
    ldconfig = ldconfig_of(step, options.root)
    if ldconfig is not None:
        journal.set(ldconfig=ldconfig)
        return call(ldconfig, TIMEOUTS["env-fix"])  # type: ignore[no-any-return]
    if step.argv:
        return call(step.argv, TIMEOUTS["env-fix"])  # type: ignore[no-any-return]
    if envfix.needs_ldconfig([unrooted(p, options.root) for p in step.files]):
        _note(
            journal,
            rep,
            "ldconfig not run (--root sandbox or not root): the ld.so.conf.d entry takes "
            "effect at the next ldconfig",
        )
    return CommandResult(rc=0, output="", seconds=time.monotonic() - start)


def _apt_update_needed(journal: Journal, step: Step, run: Runner) -> bool:
    missing = [spec for spec in step.packages if not _apt_knows(spec, run)]
    if not missing:
        journal.log(
            "apt-cache policy lists " + ", ".join(step.packages) + ": no apt-get update needed"
        )
        return False
    journal.log("apt-cache policy does not list " + ", ".join(missing) + ": apt-get update")
    return True


def _run_tracked(
    journal: Journal,
    run: Runner,
    argv: Sequence[str],
    timeout: float,
    on_output: Any,
    locks: Sequence[ApplyLock],
) -> CommandResult:
    """Run a step's command; with the default runner, its pid goes into the journal as soon as it
    exists (a later rollback stops it), and it inherits the target lock (held until it is gone)."""
    if run is not run_command:
        return run(argv, timeout=timeout, on_output=on_output)

    def on_start(pid: int) -> None:
        journal.set(
            child={"pid": pid, "pgid": pid, "start": process_start_time(pid), "argv": list(argv)}
        )

    keep = [lock.fileno() for lock in locks if isinstance(lock, TargetLock)]
    # a pip that can count its bytes for the progress display does (PIP_PROGRESS_BAR=raw)
    env = None
    if progress.is_pip_install(argv):
        env = progress.installer_env(argv, progress.pip_version_in(journal.before()))
    return run_command(
        argv, timeout=timeout, on_output=on_output, on_start=on_start, keep_fds=keep, env=env
    )


def _apt_knows(spec: str, run: Runner) -> bool:
    """`apt-cache policy PKG` lists VERSION (spec "PKG=VERSION") in its version table."""
    pkg, _, version = spec.partition("=")
    res = run(installers.apt_policy(pkg), timeout=60)
    if res.rc != 0:
        return False
    return any(
        line.split()[:1] == [version] or line.split()[1:2] == [version]
        for line in res.output.splitlines()
        if line.strip()
    )


def _note(journal: Journal, rep: Reporter, text: str) -> None:
    journal.add_note(text)
    rep.note(text)


def _post_check(steps: Sequence[Step], python: str, options: PlanOptions) -> List[str]:
    """What the plan promised and the machine does not show."""
    problems: List[str] = []
    snap = read_target(python)
    for step in steps:
        if step.kind == "pip-install":
            problems += _installed_as_asked(step, snap)
        elif step.kind == "pip-uninstall":
            for spec in step.packages:
                name = req_name(spec)
                if name and snap.get(name) is not None:
                    problems.append(f"{name} is still installed")
        elif step.kind == "env-fix":
            problems += _written_as_asked(step, options)
    return problems


def _installed_as_asked(step: Step, snap: TargetSnapshot) -> List[str]:
    out: List[str] = []
    for spec in step.packages:
        try:
            req = Requirement(spec)
        except InvalidRequirement:
            continue
        dist = snap.get(req.name)
        if dist is None:
            out.append(f"{req.name} is not installed")
        elif req.specifier and not _satisfies(dist.version, req):
            out.append(f"{req.name} is {dist.version}, not {req.specifier}")
    return out


def _written_as_asked(step: Step, options: PlanOptions) -> List[str]:
    out: List[str] = []
    for path in step.files:
        real = envfix.target_path(path, options.root)
        if step.content is None:
            if real.exists():
                out.append(f"{real} still exists")
        elif not real.is_file() or real.read_text(encoding="utf-8") != step.content:
            out.append(f"{real} does not hold the intended content")
    return out


def _satisfies(version: str, req: Requirement) -> bool:
    try:
        v = Version(version)
    except InvalidVersion:
        return False
    for spec in req.specifier:
        if spec.operator in ("==", "===") and "*" not in spec.version:
            try:
                if Version(spec.version) != v:
                    return False
            except InvalidVersion:
                return False
        elif not spec.contains(v, prereleases=True):
            return False
    return True


# ---------------------------------------------------------------------------------------
# signals
# ---------------------------------------------------------------------------------------


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated(signum)


def _catch_signals() -> Dict[int, Any]:
    """SIGTERM unwinds like Ctrl-C (then rolls back); SIGINT raises KeyboardInterrupt even where
    the caller had set it otherwise. Installed before the first state write."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {
        signal.SIGTERM: signal.signal(signal.SIGTERM, _on_sigterm),
        signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),
    }


# ---------------------------------------------------------------------------------------
# rollback
# ---------------------------------------------------------------------------------------


def rollback(
    *,
    root: Optional[str] = None,
    python: Optional[str] = None,
    reporter: Optional[Reporter] = None,
    runner: Optional[Runner] = None,
    force: bool = False,
) -> RollbackResult:
    """Undo the newest apply from its journal, three-way (fixer.applier.undo): a path is restored
    only while it still holds what the apply left; one changed since is listed and kept (unless
    `force`); what appeared after the apply is never removed. Harmless to run twice.

    JournalDamaged (exit 2) when the newest journal cannot be read; with `force`, restores from
    whatever it still holds (its manifests and backups, before.json). An installer the journal
    names that still runs is stopped (SIGINT, then harder) and waited for first."""
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    state = private_state_dir(root)
    locks = lock_dir(root)  # both checked on every use (private, not a symlink)
    shielded = ignore_signals()
    try:
        with ApplyLock(state):
            journal = Journal.latest(state, force=force)
            done = _nothing_to_undo(journal, state)
            if done is not None:
                return done
            assert journal is not None
            target = python or journal.python
            if not target:
                raise UsageError(
                    f"journal {journal.dir} does not say which interpreter it changed",
                    hint="pass --python PATH",
                )
            _refuse_outside(root, target)
            _stop_child(journal, rep)
            target_lock = TargetLock(target, locks).acquire(wait=60.0)
            try:
                return _restore(journal, target, rep, run, force=force, root=root)
            finally:
                target_lock.release()
    finally:
        restore_signals(shielded)


def _refuse_outside(root: Optional[str], target: str) -> None:
    """Under --root, the interpreter the rollback would run pip in (--python, or the one the
    journal names: untrusted) must be inside the sandbox (prepare.sandbox_refusal); PathRefused
    (exit 2) before anything changes."""
    if root is None:
        return
    _refuse_named(root, target)
    try:
        now = read_target(target)
    except UsageError:
        return  # no answer: the rollback records it and restores no distribution
    refusal = prepare.sandbox_refusal((), now, root)
    if refusal is not None:
        raise refusal


def _refuse_named(root: Optional[str], target: str) -> None:
    """The interpreter's own folder, as named, outside --root: refused before it is even run
    (the rest of prepare.sandbox_refusal needs its answer)."""
    named = fsgate.outside_root(
        root, [("the interpreter", os.path.dirname(os.path.abspath(target)))]
    )
    if named is not None:
        raise named


def _nothing_to_undo(journal: Optional[Journal], state: Path) -> Optional[RollbackResult]:
    if journal is None:
        return RollbackResult(status="nothing-to-do", notes=(f"no apply recorded in {state}",))
    if journal.status == "rolled-back" and not journal.forced:
        return RollbackResult(
            journal=str(journal.dir),
            status="nothing-to-do",
            notes=(f"the last apply (journal {journal.id}) was already rolled back",),
        )
    if journal.status in ("prepared", "abandoned") and not journal.forced:
        _try_set(journal, status="rolled-back")
        return RollbackResult(
            journal=str(journal.dir),
            status="nothing-to-do",
            notes=(f"the last apply (journal {journal.id}) changed nothing",),
        )
    return None


def _stop_child(journal: Journal, rep: Reporter) -> Optional[str]:
    """Stop (SIGINT, then harder) and wait for the installer the journal says is running."""
    child = journal.child
    if child is None:
        return None
    sig = stop_recorded(child.pid, child.start, child.pgid)
    note = None
    if sig:
        note = f"stopped the installer the apply had left running (pid {child.pid}, {sig}) before restoring"
        rep.phase(note)
        journal.data["notes"] = journal.notes + [note]  # saved with the next field (_try_set)
    _try_set(journal, child=None)
    return note


def _restore(
    journal: Journal,
    python: str,
    rep: Reporter,
    run: Runner,
    *,
    force: bool = False,
    root: Optional[str] = None,
) -> RollbackResult:
    """Journal "rolling-back", stop a recorded installer, undo (fixer.applier.undo), journal the
    outcome."""
    _try_set(journal, status="rolling-back")
    _stop_child(journal, rep)
    result = undo.restore(journal, python, rep, run, force=force, root=root)
    _try_set(journal)
    return result


__all__ = ["RESUME_HINT", "TIMEOUTS", "apply_plan", "backup_set", "resume_apply", "rollback"]
