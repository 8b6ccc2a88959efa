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

import hashlib
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, NoReturn, Optional, Sequence, Set, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from fixer.planner import installers
from fixer.system.paths import state_dir
from fixer.system.proc import ignore_signals, process_start_time, restore_signals, stop_recorded
from fixer.errors import FixerError, JournalWriteFailed, NoSpace, StepFailed, UsageError
from fixer.model import Plan, PlanOptions, Step
from fixer.applier import envfix, filetree, indexcopy
from fixer.applier.filelock import ApplyLock, TargetLock
from fixer.applier.journal import UNFINISHED, WAITING, Journal, atomic_write
from fixer.applier.reporter import Reporter, default_reporter
from fixer.applier.results import ApplyResult, DistChange, RollbackResult, StepOutcome
from fixer.applier.runner import CommandResult, Runner, run_command
from fixer.applier.snapshot import TargetSnapshot, read_target, snapshot_from_dict, snapshot_to_dict
from fixer.applier.sources import install_exact_argv, sources_of

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
RESTORE_TIMEOUT = 3600.0
#: Journals whose backups are kept (the newest ones); older backups go after a successful apply.
KEEP_BACKUPS = 1
#: Free space kept in reserve beyond what the backups and downloads need.
SPACE_MARGIN = 64 << 20

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
    JournalWriteFailed / NoSpace (nothing changed) when the journal or backups do not fit.

    `verify` is kept for callers; the check after the steps always runs (the GPU check is the
    caller's, see fixer.cli.apply)."""
    del verify
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    started = time.monotonic()
    active = [s for s in plan.steps if s.kind not in ("verify",)]
    if plan.nothing_to_do:
        return ApplyResult(
            changed=False,
            notes=("nothing to do: the environment already matches the plan",),
            restart_required=plan.restart_required,
        )
    state = state_dir(options.root)
    # signal handlers first: no state is written before a SIGTERM can be turned into a rollback
    old_handlers = _catch_signals()
    journal: Optional[Journal] = None
    locks: List[ApplyLock] = []
    try:
        locks.append(TargetLock(python).acquire())
        locks.append(ApplyLock(state).acquire())
        last = Journal.latest(state)
        if last is not None and last.status in _UNFINISHED + WAITING:
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
        journal = Journal.create(state, python=python, root=options.root)
        rep.phase(f"journal {journal.dir}")
        before = _prepare(journal, plan, python, options, rep, run)
        journal.set(status="applying")
        return _finish(
            journal,
            active,
            0,
            before,
            python,
            options,
            rep,
            run,
            started,
            plan.restart_required or any(s.kind == "restart" for s in plan.steps),
            locks,
        )
    except BaseException as exc:
        if journal is None or journal.status in ("prepared",):
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
            raise
        _roll_back_after(exc, journal, python, rep, run)
    finally:
        for lock in reversed(locks):
            lock.release()
        restore_signals(old_handlers)


def _roll_back_after(
    exc: BaseException, journal: Journal, python: str, rep: Reporter, run: Runner
) -> NoReturn:
    """Restore the state before the apply (signals ignored meanwhile), then raise StepFailed
    saying what went wrong and whether the check after the restore found everything as before."""
    reason = _describe(exc)
    rep.phase(f"rolling back: {reason}")
    _try_set(journal, error=reason)
    shielded = ignore_signals()
    try:
        result = _restore(journal, python, rep, run)
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
    """Run steps[start:], check (always: --no-verify skips only the health checks), journal "done"
    (or "awaiting-restart" at a step that needs a fresh kernel). Raises on failure; the caller
    rolls back."""
    try:
        outcomes = _run_steps(journal, steps, options, rep, run, start=start, locks=locks)
    except _Pause as pause:
        from fixer.model import to_dict

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
            files=tuple(f["path"] for f in journal.data["files"]),
            notes=tuple(journal.data.get("notes", ())) + (pause.reason,),
            seconds=time.monotonic() - started,
            awaiting_restart=True,
            resume=RESUME_HINT,
        )
    rep.phase("checking the result")
    problems = _post_check(steps, python, options)
    if problems:
        raise StepFailed(
            "the environment does not match the plan after applying it: " + "; ".join(problems),
            rolled_back=True,
        )
    after = read_target(python)
    repaired = _repaired(journal, before, after)
    journal.set(status="done", after=snapshot_to_dict(after))
    notes = list(journal.data.get("notes", ()))
    pruned = prune_backups(journal.dir.parent.parent, keep=KEEP_BACKUPS)
    if pruned:
        notes.append(
            f"removed the backups of {pruned} older apply(s) (kept the newest {KEEP_BACKUPS})"
        )
    return ApplyResult(
        changed=True,
        steps=outcomes,
        distributions=_diff(before, after),
        files=tuple(f["path"] for f in journal.data["files"]),
        repaired=tuple(repaired),
        journal=str(journal.dir),
        log=str(journal.log_path),
        restart_required=restart_required,
        notes=tuple(notes),
        seconds=time.monotonic() - started,
    )


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
    from fixer.model import from_dict

    del verify
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    started = time.monotonic()
    state = state_dir(root)
    old_handlers = _catch_signals()
    journal: Optional[Journal] = None
    locks: List[ApplyLock] = []
    target = python or ""
    try:
        locks.append(ApplyLock(state).acquire())
        journal = Journal.latest(state)
        if journal is None or journal.status != "awaiting-restart":
            what = (
                "no apply recorded"
                if journal is None
                else f"the last apply (journal {journal.id}) is {journal.status}"
            )
            raise UsageError(
                f"--resume: nothing to resume: {what}", hint="run `colab-cudnn-fix apply`"
            )
        info = journal.data.get("resume")
        before_data = journal.before()
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("steps"), list)
            or before_data is None
        ):
            raise UsageError(
                f"journal {journal.dir}: no resume record; nothing was changed now",
                hint="`colab-cudnn-fix rollback` undoes the part already done",
            )
        steps = [from_dict(Step, d, f"$.resume.steps[{i}]") for i, d in enumerate(info["steps"])]
        target = python or journal.data["python"]
        locks.insert(0, TargetLock(target).acquire())
        before = snapshot_from_dict(before_data)
        rep.phase(f"resuming journal {journal.dir} at step {info['next'] + 1}/{len(steps)}")
        journal.set(status="applying")
        return _finish(
            journal,
            steps,
            int(info["next"]),
            before,
            target,
            PlanOptions(root=root),
            rep,
            run,
            started,
            any(s.kind == "restart" for s in steps),
            locks,
        )
    except BaseException as exc:
        if journal is None or journal.status != "applying":
            raise
        _roll_back_after(exc, journal, target or journal.data["python"], rep, run)
    finally:
        for lock in reversed(locks):
            lock.release()
        restore_signals(old_handlers)


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


def backup_set(plan: Plan, before: TargetSnapshot) -> List[str]:
    """The installed distributions the plan can change: those its steps name, and, for an install
    that brings dependencies (no --no-deps), everything they require, transitively."""
    names: List[str] = []
    for step in plan.steps:
        if step.kind not in ("pip-install", "pip-uninstall", "conda-install"):
            continue
        named = [n for n in (_req_name(spec) for spec in step.packages) if n]
        if step.kind == "pip-install" and not (step.pip and step.pip.no_deps):
            named = before.closure(named)
        for n in named:
            if n not in names and before.get(n) is not None:
                names.append(n)
    return names


def _prepare(
    journal: Journal, plan: Plan, python: str, options: PlanOptions, rep: Reporter, run: Runner
) -> TargetSnapshot:
    """Record everything the plan can touch. Nothing on the machine changes here."""
    before = read_target(python)
    notes: List[str] = []
    before_data = snapshot_to_dict(before)
    # the listings of site-packages (and of a venv's own root, where uv keeps its .lock): whatever
    # appears there during the apply and was not there before is the apply's, and rollback removes it
    sites = sorted({d.site_packages for d in before.dists if d.dist_info.endswith(".dist-info")})
    if before.prefix and os.path.isfile(os.path.join(before.prefix, "pyvenv.cfg")):
        sites.append(before.prefix)
    before_data["site_dirs"] = [filetree.dir_entry(s) for s in sites if os.path.isdir(s)]
    journal.write_part("before.json", before_data)
    journal.set(
        installer=plan.installer,
        sources=sources_of(plan.steps, options),
        steps=[
            {"kind": s.kind, "summary": s.summary, "argv": list(s.argv), "status": "pending"}
            for s in plan.steps
            if s.kind != "verify"
        ],
    )
    # every file of the distributions the plan can change, recorded and backed up
    names = [
        n
        for n in backup_set(plan, before)
        if not (
            before.get(n) is None
            or before.get(n).editable  # type: ignore[union-attr]
            or not before.get(n).dist_info.endswith(".dist-info")  # type: ignore[union-attr]
        )
    ]
    manifests: Dict[str, Dict[str, Any]] = {}
    for name in names:
        dist = before.get(name)
        assert dist is not None
        manifests[name] = filetree.record(
            dist.dist_info, name=name, version=dist.version, hashes=False
        )
    # the exact wheels the plan's index still serves (fixer.applier.indexcopy): their files need no local copy
    sources = journal.data.get("sources", {})
    urls = (
        []
        if sources.get("no_index")
        else list(sources.get("index_urls", [])) + list(sources.get("extra_index_urls", []))
    )
    copies: Dict[str, Dict[str, Any]] = {}
    vouched: Dict[str, int] = {}
    for name, manifest in manifests.items():
        copy = (
            indexcopy.find(manifest["dist_info"], name, manifest["dist_version"], urls)
            if urls
            else None
        )
        if copy is not None:
            rep.phase(
                f"checking {name} {manifest['dist_version']} against {copy['filename']} on {copy['index']}"
            )
            vouched[name] = indexcopy.mark(manifest)
            copies[name] = copy
    local = indexcopy.keep_local(journal.dir, sum(vouched.values())) if vouched else True
    _check_space(journal, plan, manifests, before, 0 if local else sum(vouched.values()))
    recorded: Dict[str, str] = {}
    backups: Dict[str, str] = {}
    for name, manifest in manifests.items():
        rep.phase(f"backing up {name} {manifest['dist_version']} ({len(manifest['files'])} files)")
        try:
            filetree.backup(manifest, journal.dir / "backups" / f"{name}.zip", skip_wheel=not local)
        except OSError as exc:
            raise JournalWriteFailed(
                f"cannot back up {name} into {journal.dir / 'backups'}: {exc.strerror or exc}"
            )
        backups[name] = f"backups/{name}.zip"
        if name in copies:
            copies[name]["local"] = local
        recorded[name] = journal.write_part(f"manifests/{name}.json", manifest)
    # files the plan writes (and the loader cache an ldconfig step rewrites)
    files: List[Dict[str, Any]] = []
    for step in plan.steps:
        touched = list(step.files)
        if _ldconfig_of(step, options.root) is not None:
            touched.append(str(envfix.target_path(envfix.LD_SO_CACHE, options.root)))
        for path in touched:
            real = envfix.target_path(path, options.root)
            if any(f["path"] == str(real) for f in files):
                continue
            rec: Dict[str, Any] = {
                "path": str(real),
                "existed": False,
                "backup": None,
                "mode": None,
                "sha256": None,
                "created_dirs": _missing_parents(real),
            }
            if real.is_file() or real.is_symlink():
                data = real.read_bytes()
                backup = journal.dir / "files" / str(len(files))
                try:
                    atomic_write(backup, data)
                except OSError as exc:
                    raise JournalWriteFailed(
                        f"cannot back up {real} into {backup}: {exc.strerror or exc}"
                    )
                rec.update(
                    existed=True,
                    backup=str(backup.relative_to(journal.dir)),
                    mode=real.stat().st_mode & 0o7777,
                    sha256=hashlib.sha256(data).hexdigest(),
                )
            files.append(rec)
    # apt package versions the plan changes
    apt_before: Dict[str, Optional[str]] = {}
    for step in plan.steps:
        if step.kind in ("apt-install", "apt-hold"):
            for spec in step.packages:
                pkg = spec.split("=", 1)[0]
                if pkg not in apt_before:
                    apt_before[pkg] = _dpkg_version(pkg, run)
    held: List[str] = []
    if any(s.kind in ("apt-install", "apt-hold") for s in plan.steps):
        res = run(["apt-mark", "showhold"], timeout=60)
        held = res.output.split() if res.rc == 0 else []
    if any(s.kind == "conda-install" for s in plan.steps):
        notes.append("conda package changes outside site-packages are not rolled back")
    from fixer.model import to_dict

    # the loader fixes, for a resume after a kernel restart (it fixes the new kernel with them)
    if copies and not local:
        notes.append(
            f"not kept locally (the index serves the same wheels; less than {indexcopy.KEEP_LOCAL_FACTOR}x "
            f"their size free): {', '.join(c['filename'] for c in copies.values())}"
        )
    journal.set(
        manifests=recorded,
        backups=backups,
        index_copies=copies,
        files=files,
        apt_before=apt_before,
        apt_held=held,
        notes=notes,
        env_fixes=[to_dict(f) for f in plan.stack.env_fixes],
    )
    return before


def _check_space(
    journal: Journal,
    plan: Plan,
    manifests: Dict[str, Dict[str, Any]],
    before: TargetSnapshot,
    from_index: int = 0,
) -> None:
    """NoSpace unless the journal's disk holds the backups (at most their uncompressed size, less
    `from_index` bytes the index keeps for us) and the target's disk holds the downloads twice
    (the download, then the unpacked files)."""
    backup_bytes = sum(
        e.get("size", 0) for m in manifests.values() for e in m["files"] if e["kind"] == "file"
    )
    backup_bytes = max(0, backup_bytes - from_index)
    download = sum(
        s.download_bytes or 0
        for s in plan.steps
        if s.kind in ("pip-install", "conda-install", "apt-install")
    )
    target = before.dists[0].site_packages if before.dists else (before.prefix or "/")
    demands: Dict[int, Tuple[str, int]] = {}
    for path, amount in ((str(journal.dir), backup_bytes), (target, 2 * download)):
        try:
            dev = os.stat(path).st_dev
        except OSError:
            continue
        where, total = demands.get(dev, (path, SPACE_MARGIN))
        demands[dev] = (where, total + amount)
    for where, amount in demands.values():
        free = shutil.disk_usage(where).free
        if amount > free:
            raise NoSpace(
                f"not enough free disk for this apply on the filesystem of {where}: it needs about "
                f"{_mb(amount)} (backups of the distributions it changes {_mb(backup_bytes)}, downloads "
                f"{_mb(download)} twice, {_mb(SPACE_MARGIN)} reserve) and {_mb(free)} is free; "
                "nothing was changed",
                hint="free some disk space (Colab: delete files under /content or /root/.cache/pip)",
            )


def _missing_parents(path: Path) -> List[str]:
    """The directories above `path` that do not exist yet (deepest first): writing it creates them."""
    out: List[str] = []
    d = path.parent
    while not d.exists() and d != d.parent:
        out.append(str(d))
        d = d.parent
    return out


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.0f} MB"


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
                shutil.rmtree(directory / sub, ignore_errors=True)
                gone = True
        pruned += gone
    return pruned


def _ldconfig_of(step: Step, root: Optional[str]) -> Optional[List[str]]:
    """The ldconfig command that carrying out `step` runs, or None. Read from the step's kind and
    the files it writes, never from its argv's words: an env-fix step that writes an ld.so.conf file
    runs the plan's own follow-up command (Step.argv, from fixer.planner.envfix.env_fix_steps) or, when the
    plan carried none (made without root), envfix.ldconfig_argv (only as root, never in a --root sandbox)."""
    if step.kind != "env-fix" or not envfix.needs_ldconfig(
        [_unrooted(p, root) for p in step.files]
    ):
        return None
    return list(step.argv) if step.argv else envfix.ldconfig_argv(root)


def _req_name(spec: str) -> Optional[str]:
    from fixer.rules import requirement_name

    return requirement_name(spec) or None


def _dpkg_version(pkg: str, run: Runner) -> Optional[str]:
    res = run(["dpkg-query", "-W", "-f=${Status} ${Version}", pkg], timeout=60)
    if res.rc != 0:
        return None
    text = res.output.strip()
    if "installed" not in text.split(" ")[:3] or "not-installed" in text:
        return None
    return text.split()[-1]


def _run_steps(
    journal: Journal,
    steps: Sequence[Step],
    options: PlanOptions,
    rep: Reporter,
    run: Runner,
    start: int = 0,
    locks: Sequence[ApplyLock] = (),
) -> Tuple[StepOutcome, ...]:
    from fixer.planner.conda import CONDACOLAB_PREFIX, installed_by_condacolab, is_condacolab_step

    outcomes: List[StepOutcome] = []
    total = len(steps)
    for i, step in enumerate(steps, 1):
        if i - 1 < start:
            continue
        rec = journal.data["steps"][i - 1]
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
    def on_output(line: str) -> None:
        journal.log(line)
        rep.step_output(index, line)

    def call(argv: Sequence[str], timeout: float) -> CommandResult:
        return _run_tracked(journal, run, argv, timeout, on_output, locks)

    if step.kind == "env-fix":
        start = time.monotonic()
        changed = []
        for path in step.files:
            real = envfix.target_path(path, options.root)
            if envfix.write_managed(real, step.content):
                changed.append(str(real))
        journal.log("wrote " + (", ".join(changed) if changed else "nothing (already in place)"))
        ldconfig = _ldconfig_of(step, options.root)
        if ldconfig is not None:
            journal.set(ldconfig=ldconfig)
            return call(ldconfig, TIMEOUTS["env-fix"])
        if step.argv:
            return call(step.argv, TIMEOUTS["env-fix"])
        if envfix.needs_ldconfig([_unrooted(p, options.root) for p in step.files]):
            _note(
                journal,
                rep,
                "ldconfig not run (--root sandbox or not root): the ld.so.conf.d entry takes "
                "effect at the next ldconfig",
            )
        return CommandResult(rc=0, output="", seconds=time.monotonic() - start)
    if step.files and step.content is not None:
        # a file the command reads (apply --lock: the hashed requirements file); journaled like any other
        for path in step.files:
            envfix.write_managed(envfix.target_path(path, options.root), step.content)
    if step.kind == "restart":
        _note(journal, rep, step.summary)
        return CommandResult(rc=0)
    if step.kind == "apt-update":
        missing = [spec for spec in step.packages if not _apt_knows(spec, run)]
        if not missing:
            journal.log(
                "apt-cache policy lists " + ", ".join(step.packages) + ": no apt-get update needed"
            )
            return CommandResult(rc=0)
        journal.log("apt-cache policy does not list " + ", ".join(missing) + ": apt-get update")
    if not step.argv:
        return CommandResult(rc=0)
    return call(step.argv, TIMEOUTS.get(step.kind, 3600.0))


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
    return run_command(argv, timeout=timeout, on_output=on_output, on_start=on_start, keep_fds=keep)


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


def _unrooted(path: str, root: Optional[str]) -> str:
    """The system path a (possibly sandboxed) file stands for: /etc/... for ROOT/etc/..."""
    if root:
        r = os.path.normpath(os.path.abspath(root))
        if path.startswith(r + os.sep):
            return path[len(r) :]
    return path


def _note(journal: Journal, rep: Reporter, text: str) -> None:
    journal.data.setdefault("notes", []).append(text)
    journal.save()
    rep.note(text)


def _post_check(steps: Sequence[Step], python: str, options: PlanOptions) -> List[str]:
    """What the plan promised and the machine does not show."""
    problems: List[str] = []
    snap = read_target(python)
    for step in steps:
        if step.kind == "pip-install":
            for spec in step.packages:
                try:
                    req = Requirement(spec)
                except InvalidRequirement:
                    continue
                dist = snap.get(req.name)
                if dist is None:
                    problems.append(f"{req.name} is not installed")
                    continue
                if req.specifier and not _satisfies(dist.version, req):
                    problems.append(f"{req.name} is {dist.version}, not {req.specifier}")
        elif step.kind == "pip-uninstall":
            for spec in step.packages:
                name = _req_name(spec)
                if name and snap.get(name) is not None:
                    problems.append(f"{name} is still installed")
        elif step.kind == "env-fix":
            for path in step.files:
                real = envfix.target_path(path, options.root)
                if step.content is None:
                    if real.exists():
                        problems.append(f"{real} still exists")
                elif not real.is_file() or real.read_text(encoding="utf-8") != step.content:
                    problems.append(f"{real} does not hold the intended content")
    return problems


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


def _diff(before: TargetSnapshot, after: TargetSnapshot) -> Tuple[DistChange, ...]:
    b, a = before.versions(), after.versions()
    out = [
        DistChange(name=n, before=b.get(n), after=a.get(n))
        for n in sorted(set(b) | set(a))
        if b.get(n) != a.get(n)
    ]
    return tuple(out)


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
    """Undo the newest apply from its journal. Harmless to run twice (the second does nothing).

    JournalDamaged (exit 2) when the newest journal cannot be read; with `force`, restores from
    whatever it still holds (its manifests and backups, before.json). An installer the journal
    names that still runs is stopped (SIGINT, then harder) and waited for first."""
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    state = state_dir(root)
    shielded = ignore_signals()
    try:
        with ApplyLock(state):
            journal = Journal.latest(state, force=force)
            if journal is None:
                return RollbackResult(
                    status="nothing-to-do", notes=(f"no apply recorded in {state}",)
                )
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
            target = python or journal.data.get("python") or ""
            if not target:
                raise UsageError(
                    f"journal {journal.dir} does not say which interpreter it changed",
                    hint="pass --python PATH",
                )
            _stop_child(journal, rep)
            target_lock = TargetLock(target).acquire(wait=60.0)
            try:
                return _restore(journal, target, rep, run)
            finally:
                target_lock.release()
    finally:
        restore_signals(shielded)


def _stop_child(journal: Journal, rep: Reporter) -> Optional[str]:
    """Stop (SIGINT, then harder) and wait for the installer the journal says is running."""
    child = journal.data.get("child")
    if not isinstance(child, dict) or not isinstance(child.get("pid"), int):
        return None
    pid = child["pid"]
    sig = stop_recorded(pid, child.get("start"), child.get("pgid"))
    note = None
    if sig:
        note = (
            f"stopped the installer the apply had left running (pid {pid}, {sig}) before restoring"
        )
        rep.phase(note)
        journal.data.setdefault("notes", []).append(note)
    _try_set(journal, child=None)
    return note


def _restore(journal: Journal, python: str, rep: Reporter, run: Runner) -> RollbackResult:
    _try_set(journal, status="rolling-back")
    _stop_child(journal, rep)
    before_data = journal.before()
    before = snapshot_from_dict(before_data) if before_data else None
    commands: List[Tuple[str, ...]] = []
    notes: List[str] = list(
        journal.damaged and [f"journal damaged: {d}" for d in journal.damaged] or []
    )
    failures: List[str] = []

    def do(argv: Sequence[str], what: str) -> None:
        commands.append(tuple(argv))
        journal.log(f"== rollback: {what}\n$ {' '.join(argv)}")
        rep.phase(f"rollback: {what}")
        res = run(argv, timeout=RESTORE_TIMEOUT, on_output=journal.log)
        if res.rc != 0:
            failures.append(f"{what} failed (exit {res.rc}): {res.output.strip()[-300:]}")

    # 1. files first: they need no network and nothing else depends on them
    restored_files: List[str] = []
    for rec in reversed(journal.data.get("files", [])):
        path = Path(rec["path"])
        try:
            if rec["existed"]:
                data = (journal.dir / rec["backup"]).read_bytes()
                if not path.is_file() or path.read_bytes() != data:
                    atomic_write(path, data, mode=rec.get("mode"))
                    restored_files.append(str(path))
            elif path.exists() or path.is_symlink():
                path.unlink()
                restored_files.append(str(path))
            for d in rec.get("created_dirs", ()):  # directories the apply created for it, if empty
                if os.path.isdir(d) and not os.listdir(d):
                    os.rmdir(d)
        except OSError as exc:
            failures.append(f"cannot restore {path}: {exc}")
    if journal.data.get("ldconfig") and restored_files:
        do(journal.data["ldconfig"], "ldconfig")

    # 2. distributions: what the apply added goes; dependencies it changed without a record are
    #    reinstalled by version (before the file-level restore sweeps the directories)
    manifests = list(journal.manifests())
    recorded = {m["name"] for m in manifests}
    try:
        now: Optional[TargetSnapshot] = read_target(python)
    except UsageError as exc:
        now = None
        failures.append(str(exc))
    remove: List[str] = []
    unverified: List[str] = []
    editable: Set[str] = set()
    if now is not None:
        bv = before.versions() if before else {}
        nv = now.versions()
        editable = ({d.name for d in before.dists if d.editable} if before else set()) | {
            d.name for d in now.dists if d.editable
        }
        added = [n for n in nv if before is not None and n not in bv and n not in editable]
        for n in sorted(added) + sorted(recorded):
            d = now.get(n)
            if d is not None and d.dist_info:
                remove += filetree.record_paths(d.dist_info) + [d.dist_info]
        remove += list(now.leftovers)
        changed = sorted(
            n for n in bv if nv.get(n) != bv[n] and n not in editable and n not in recorded
        )
        if changed and before is not None:
            tool = installers.pip_tool(
                journal.data.get("installer") or "pip"
            )  # the plan's (Plan.installer)
            wheels = journal.data.get("wheels", {})  # journals of version 1
            sources = journal.data.get("sources", {})
            offline = [n for n in changed if n in wheels]
            online = [n for n in changed if n not in wheels]
            if offline:
                reqs = [f"{n}=={bv[n]}" for n in offline]
                do(
                    install_exact_argv(
                        python,
                        reqs,
                        tool=tool,
                        sources=sources,
                        wheels_dir=str(journal.wheels_dir),
                        offline=True,
                    ),
                    f"reinstall {', '.join(reqs)} from the journal's wheels",
                )
            if online:
                reqs = [_pinned(before, n) for n in online]
                do(
                    install_exact_argv(python, reqs, tool=tool, sources=sources),
                    f"reinstall {', '.join(reqs)}",
                )
            unverified = changed

    # 3. recorded distributions, file by file
    items: List[Tuple[Dict[str, Any], Optional[Path]]] = []
    backups = journal.data.get("backups", {})
    for m in manifests:
        rel = backups.get(m["name"])
        items.append((m, journal.dir / rel if rel else None))
    if before_data and before_data.get("site_dirs"):
        items.append(({"name": "", "files": [], "dirs": before_data["site_dirs"]}, None))
    if items or remove:
        rep.phase(f"rollback: restoring {sum(len(m['files']) for m, _ in items)} recorded files")
    copies = journal.data.get("index_copies", {})

    def wheel(manifest: Dict[str, Any]) -> Path:
        copy = copies.get(manifest["name"])
        if not copy:
            raise OSError(
                f"{manifest['name']}: its backup lacks files and no index copy is recorded"
            )
        rep.phase(f"rollback: fetching {copy['filename']} from {copy['url']}")
        try:
            return indexcopy.fetch(copy, journal.dir / "downloads")
        except FixerError as exc:
            raise OSError(
                f"cannot restore {manifest['name']} {manifest['dist_version']}: the journal keeps no local "
                f"copy of its files and {exc.message}; run rollback again when {copy['url']} answers"
            )

    report = filetree.restore(items, remove=remove, wheel=wheel)
    failures.extend(report.errors)

    # 4. apt
    apt_before: Dict[str, Optional[str]] = journal.data.get("apt_before", {})
    if apt_before:
        installs = {p: v for p, v in apt_before.items() if v and _dpkg_version(p, run) != v}
        removals = [
            p for p, v in apt_before.items() if v is None and _dpkg_version(p, run) is not None
        ]
        if installs:
            do(
                installers.apt_install(installs),
                "apt reinstall " + ", ".join(f"{p}={v}" for p, v in installs.items()),
            )
        if removals:
            do(installers.apt_remove(removals), f"apt remove {', '.join(removals)}")
        held_before = set(journal.data.get("apt_held", []))
        res = run(["apt-mark", "showhold"], timeout=60)
        held_now = set(res.output.split()) if res.rc == 0 else set()
        unhold = sorted((held_now - held_before) & set(apt_before))
        rehold = sorted((held_before - held_now) & set(apt_before))
        if unhold:
            do(installers.apt_unhold(unhold), f"apt-mark unhold {', '.join(unhold)}")
        if rehold:
            do(installers.apt_hold(rehold), f"apt-mark hold {', '.join(rehold)}")

    # 5. check: versions, every recorded file's hash, no installer leftovers, the other files
    remaining: List[str] = list(report.remaining)
    try:
        after: Optional[TargetSnapshot] = read_target(python)
    except UsageError as exc:
        after = None
        remaining.append(str(exc))
    if after is not None:
        if before is not None:
            remaining += [
                f"{c.name}: {c.after or 'absent'} (was {c.before or 'absent'})"
                for c in _diff(before, after)
                if c.name not in editable
            ]
        remaining += [
            f"{p}: leftover of an interrupted installer"
            for p in after.leftovers
            if not any(p in r for r in remaining)
        ]
    for rec in journal.data.get("files", []):
        path = Path(rec["path"])
        if rec["existed"]:
            if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != rec["sha256"]:
                remaining.append(f"{path} differs from its backup")
        elif path.exists():
            remaining.append(f"{path} still exists")
        for d in rec.get("created_dirs", ()):
            if os.path.isdir(d) and not os.listdir(d):
                remaining.append(f"{d}/: empty directory the apply created")
    if before is None:
        remaining.append(
            "the journal's record of the distributions before the apply is lost: versions not checked"
        )
    if remaining:
        remaining += [
            f for f in failures if f not in remaining
        ]  # what did not work explains what is left
    checked = sum(len(m["files"]) for m in manifests)
    status = "rollback-incomplete" if remaining else "rolled-back"
    exact = not remaining and not unverified
    result = RollbackResult(
        journal=str(journal.dir),
        status=status,
        distributions=_diff(now, before) if (now is not None and before is not None) else (),
        files=tuple(restored_files),
        exact=exact,
        remaining=tuple(remaining),
        commands=tuple(commands),
        notes=tuple(notes + list(journal.data.get("notes", ()))),
        restored=tuple(report.restored),
        removed=tuple(report.removed),
        checked_files=checked,
        unverified=tuple(unverified),
    )
    _try_set(
        journal,
        status=status,
        rollback={
            "exact": exact,
            "remaining": remaining,
            "unverified": unverified,
            "commands": [list(c) for c in commands],
        },
    )
    return result


def _pinned(before: TargetSnapshot, name: str) -> str:
    """`name==version`, or `name @ file://...` when it was installed from a local file that still exists."""
    dist = before.get(name)
    assert dist is not None
    url = (dist.direct_url or {}).get("url", "")
    if (
        url.startswith("file://")
        and "archive_info" in (dist.direct_url or {})
        and os.path.isfile(url[7:])
    ):
        return f"{name} @ {url}"
    return f"{name}=={dist.version}"


__all__ = ["RESUME_HINT", "TIMEOUTS", "apply_plan", "resume_apply", "rollback"]
