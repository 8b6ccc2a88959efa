"""apply_plan and rollback: run a plan as a transaction that either completes or leaves no trace.

    prepare   lock; snapshot the target (every distribution + version + origin); repack the
              distributions the plan names into wheels; back up every file it will write; note
              apt versions. All of it in the journal, fsynced, before anything changes.
    apply     for each step: journal "running" (fsync), run it, journal "done".
    check     the installed versions and written files are what the plan asked for.
    on any failure, Ctrl-C or SIGTERM: restore the snapshot, then raise StepFailed(rolled_back=True).

`rollback()` runs the same restore from the newest journal, also after the apply process was
killed (SIGKILL) mid-way: the journal on disk is always complete up to the last step started.
"""
from __future__ import annotations

import hashlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from .. import installers
from .._paths import state_dir
from ..errors import FixerError, StepFailed, UsageError
from ..model import Plan, PlanOptions, Step
from . import envfix
from .filelock import ApplyLock
from .journal import Journal, atomic_write
from .reporter import Reporter, default_reporter
from .results import ApplyResult, DistChange, RollbackResult, StepOutcome
from .runner import CommandResult, Runner, run_command
from .snapshot import TargetSnapshot, read_target, snapshot_from_dict, snapshot_to_dict
from .sources import install_exact_argv, restore_tool, sources_of, uninstall_argv
from .wheelbuild import WheelBuildError, build_wheel_from_installed

#: Seconds a command of each kind may run (a torch download on a slow link takes long).
TIMEOUTS = {"pip-install": 3600.0, "pip-uninstall": 600.0, "apt-update": 600.0, "apt-install": 3600.0, "apt-hold": 120.0,
            "conda-install": 3600.0, "env-fix": 120.0}
RESTORE_TIMEOUT = 3600.0

_UNFINISHED = ("applying", "rolling-back", "rollback-incomplete")

#: What the user runs to go on after condacolab restarted the kernel (one place for the words).
RESUME_HINT = ("run `!colab-cudnn-fix apply --resume` (or `import fixer.apply.kernel as k; k.apply_here(resume=True)`) "
               "once the kernel is back")


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


def apply_plan(plan: Plan, *, python: str, options: PlanOptions, reporter: Optional[Reporter] = None,
               runner: Optional[Runner] = None, verify: bool = True) -> ApplyResult:
    """Carry out `plan` on the interpreter `python`. Returns what changed; raises StepFailed
    (rolled_back=True) after restoring the previous state when anything goes wrong, LockHeld
    when another apply runs, UsageError when the last apply was interrupted and not rolled back."""
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    started = time.monotonic()
    active = [s for s in plan.steps if s.kind not in ("verify",)]
    if plan.nothing_to_do:
        return ApplyResult(changed=False, notes=("nothing to do: the environment already matches the plan",),
                           restart_required=plan.restart_required)
    state = state_dir(options.root)
    lock = ApplyLock(state).acquire()
    journal: Optional[Journal] = None
    old_handlers: Dict[int, Any] = {}
    try:
        last = Journal.last(state)
        if last is not None and last.status in _UNFINISHED + ("awaiting-restart",):
            if last.status == "awaiting-restart":
                raise UsageError(f"the previous apply (journal {last.id}) waits for a kernel restart; nothing was "
                                 "changed now", hint=RESUME_HINT + ", or `colab-cudnn-fix rollback` to undo it")
            raise UsageError(
                f"the previous apply (journal {last.id}) did not finish (status {last.status}); "
                "nothing was changed now",
                hint="run `colab-cudnn-fix rollback` to restore the state before it, then apply again")
        journal = Journal.create(state, python=python, root=options.root)
        rep.phase(f"journal {journal.dir}")
        before = _prepare(journal, plan, python, options, rep, run)
        journal.set(status="applying")
        old_handlers = _catch_sigterm()
        return _finish(journal, active, 0, before, python, options, rep, run, verify, started,
                       plan.restart_required or any(s.kind == "restart" for s in plan.steps))
    except BaseException as exc:
        if journal is None or journal.status in ("prepared",):
            if journal is not None:
                journal.set(status="abandoned", error=_describe(exc))
            raise
        _restore_signals(old_handlers)
        old_handlers = {}
        reason = _describe(exc)
        rep.phase(f"rolling back: {reason}")
        journal.set(error=reason)
        shielded = _ignore_signals()
        try:
            result = _restore(journal, python, rep, run)
        finally:
            _restore_signals(shielded)
        argv = getattr(exc, "argv", ())
        output = getattr(exc, "output", "")
        if result.exact:
            message = f"{reason}; rolled back, the environment is as before"
        else:
            message = (f"{reason}; rollback was incomplete ({'; '.join(result.remaining)}); "
                       f"journal {journal.dir}")
        raise StepFailed(message, argv=argv, output=output, rolled_back=result.exact,
                         cause=exc if isinstance(exc, Exception) else None) from exc
    finally:
        _restore_signals(old_handlers)
        lock.release()


def _finish(journal: Journal, steps: Sequence[Step], start: int, before: TargetSnapshot, python: str,
            options: PlanOptions, rep: Reporter, run: Runner, verify: bool, started: float,
            restart_required: bool) -> ApplyResult:
    """Run steps[start:], check, journal "done" (or "awaiting-restart" at a step that needs a
    fresh kernel). Raises on failure; the caller rolls back."""
    try:
        outcomes = _run_steps(journal, steps, options, rep, run, start=start)
    except _Pause as pause:
        from ..model import to_dict

        journal.set(status="awaiting-restart", resume={
            "next": pause.index, "steps": [to_dict(s) for s in steps], "reason": pause.reason,
            "command": RESUME_HINT})
        return ApplyResult(changed=True, journal=str(journal.dir), log=str(journal.log_path),
                           files=tuple(f["path"] for f in journal.data["files"]),
                           notes=tuple(journal.data.get("notes", ())) + (pause.reason,),
                           seconds=time.monotonic() - started, awaiting_restart=True, resume=RESUME_HINT)
    if verify:
        rep.phase("checking the result")
        problems = _post_check(steps, python, options)
        if problems:
            raise StepFailed("the environment does not match the plan after applying it: " + "; ".join(problems),
                             rolled_back=True)
    after = read_target(python)
    journal.set(status="done", after=snapshot_to_dict(after))
    return ApplyResult(
        changed=True, steps=outcomes, distributions=_diff(before, after),
        files=tuple(f["path"] for f in journal.data["files"]),
        journal=str(journal.dir), log=str(journal.log_path),
        restart_required=restart_required, notes=tuple(journal.data.get("notes", ())),
        seconds=time.monotonic() - started,
    )


def resume_apply(*, root: Optional[str] = None, python: Optional[str] = None, reporter: Optional[Reporter] = None,
                 runner: Optional[Runner] = None, verify: bool = True) -> ApplyResult:
    """Go on with the apply that stopped for a kernel restart (journal status "awaiting-restart"):
    run its remaining steps as one transaction with the part already done; on any failure the
    whole apply is rolled back, as if it had never stopped."""
    from ..model import from_dict

    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    started = time.monotonic()
    state = state_dir(root)
    lock = ApplyLock(state).acquire()
    old_handlers: Dict[int, Any] = {}
    journal: Optional[Journal] = None
    try:
        journal = Journal.last(state)
        if journal is None or journal.status != "awaiting-restart":
            what = "no apply recorded" if journal is None else f"the last apply (journal {journal.id}) is {journal.status}"
            raise UsageError(f"--resume: nothing to resume: {what}", hint="run `colab-cudnn-fix apply`")
        info = journal.data["resume"]
        steps = [from_dict(Step, d, f"$.resume.steps[{i}]") for i, d in enumerate(info["steps"])]
        target = python or journal.data["python"]
        before = snapshot_from_dict(journal.data["before"])
        rep.phase(f"resuming journal {journal.dir} at step {info['next'] + 1}/{len(steps)}")
        journal.set(status="applying")
        old_handlers = _catch_sigterm()
        return _finish(journal, steps, int(info["next"]), before, target, PlanOptions(root=root),
                       rep, run, verify, started, any(s.kind == "restart" for s in steps))
    except BaseException as exc:
        if journal is None or journal.status != "applying":
            raise
        _restore_signals(old_handlers)
        old_handlers = {}
        reason = _describe(exc)
        rep.phase(f"rolling back: {reason}")
        journal.set(error=reason)
        shielded = _ignore_signals()
        try:
            result = _restore(journal, python or journal.data["python"], rep, run)
        finally:
            _restore_signals(shielded)
        tail = "rolled back, the environment is as before" if result.exact else \
            f"rollback was incomplete ({'; '.join(result.remaining)}); journal {journal.dir}"
        raise StepFailed(f"{reason}; {tail}", argv=getattr(exc, "argv", ()), output=getattr(exc, "output", ""),
                         rolled_back=result.exact, cause=exc if isinstance(exc, Exception) else None) from exc
    finally:
        _restore_signals(old_handlers)
        lock.release()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, KeyboardInterrupt):
        return "interrupted (Ctrl-C)"
    if isinstance(exc, _Terminated):
        return "terminated (SIGTERM)"
    if isinstance(exc, FixerError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


def _prepare(journal: Journal, plan: Plan, python: str, options: PlanOptions, rep: Reporter,
             run: Runner) -> TargetSnapshot:
    """Record everything the plan can touch. Nothing on the machine changes here."""
    before = read_target(python)
    notes: List[str] = []
    journal.set(
        before=snapshot_to_dict(before), sources=sources_of(plan.steps, options),
        steps=[{"kind": s.kind, "summary": s.summary, "argv": list(s.argv), "status": "pending"}
               for s in plan.steps if s.kind != "verify"],
    )
    # wheels of the distributions the plan names, so that rollback works offline
    wheels: Dict[str, str] = {}
    for name in _named_distributions(plan.steps):
        dist = before.get(name)
        if dist is None or dist.editable or not dist.dist_info.endswith(".dist-info"):
            continue
        rep.phase(f"backing up {dist.name} {dist.version} as a wheel")
        try:
            wheel = build_wheel_from_installed(dist.dist_info, journal.wheels_dir, prefix=before.prefix)
            wheels[dist.name] = wheel.name
        except (WheelBuildError, OSError) as exc:
            notes.append(f"no wheel backup of {dist.name}: {exc}; rollback reinstalls it from the plan's sources")
    # files the plan writes (and the loader cache an ldconfig step rewrites)
    files: List[Dict[str, Any]] = []
    for step in plan.steps:
        touched = list(step.files)
        if step.argv and os.path.basename(step.argv[0]) == "ldconfig":
            touched.append(_ldconfig_cache(step.argv, options.root))
        for path in touched:
            real = envfix.target_path(path, options.root)
            if any(f["path"] == str(real) for f in files):
                continue
            rec: Dict[str, Any] = {"path": str(real), "existed": False, "backup": None, "mode": None, "sha256": None}
            if real.is_file() or real.is_symlink():
                data = real.read_bytes()
                backup = journal.dir / "files" / str(len(files))
                atomic_write(backup, data)
                rec.update(existed=True, backup=str(backup.relative_to(journal.dir)),
                           mode=real.stat().st_mode & 0o7777, sha256=hashlib.sha256(data).hexdigest())
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
    from ..model import to_dict

    # the loader fixes, for a resume after a kernel restart (it fixes the new kernel with them)
    journal.set(wheels=wheels, files=files, apt_before=apt_before, apt_held=held, notes=notes,
                env_fixes=[to_dict(f) for f in plan.stack.env_fixes])
    return before


def _ldconfig_cache(argv: Sequence[str], root: Optional[str]) -> str:
    """The cache file `ldconfig [-r ROOT] [-C FILE]` writes."""
    argv = list(argv)
    cache = "/etc/ld.so.cache"
    if "-C" in argv and argv.index("-C") + 1 < len(argv):
        cache = argv[argv.index("-C") + 1]
    if "-r" in argv and argv.index("-r") + 1 < len(argv):
        return os.path.join(argv[argv.index("-r") + 1], cache.lstrip("/"))
    return cache if not root else str(envfix.target_path(cache, root))


def _named_distributions(steps: Sequence[Step]) -> List[str]:
    names: List[str] = []
    for step in steps:
        if step.kind not in ("pip-install", "pip-uninstall", "conda-install"):
            continue
        for spec in step.packages:
            name = _req_name(spec)
            if name and name not in names:
                names.append(name)
    return names


def _req_name(spec: str) -> Optional[str]:
    try:
        return canonicalize_name(Requirement(spec).name)
    except InvalidRequirement:
        head = spec.split("=")[0].split("<")[0].split(">")[0].split("[")[0].strip()
        return canonicalize_name(head) if head else None


def _dpkg_version(pkg: str, run: Runner) -> Optional[str]:
    res = run(["dpkg-query", "-W", "-f=${Status} ${Version}", pkg], timeout=60)
    if res.rc != 0:
        return None
    text = res.output.strip()
    if "installed" not in text.split(" ")[:3] or "not-installed" in text:
        return None
    return text.split()[-1]


def _run_steps(journal: Journal, steps: Sequence[Step], options: PlanOptions, rep: Reporter,
               run: Runner, start: int = 0) -> Tuple[StepOutcome, ...]:
    from ..conda import CONDACOLAB_PREFIX, installed_by_condacolab, is_condacolab_step

    outcomes: List[StepOutcome] = []
    total = len(steps)
    for i, step in enumerate(steps, 1):
        if i - 1 < start:
            continue
        rec = journal.data["steps"][i - 1]
        if is_condacolab_step(step):
            if not installed_by_condacolab(CONDACOLAB_PREFIX, options.root):
                raise _Pause(i - 1, f"condacolab must install conda inside the notebook kernel, which then restarts: "
                                    f"in a cell run `import condacolab; condacolab.install()`, then {RESUME_HINT}")
            rec.update(status="done", rc=0, seconds=0.0)
            journal.save()
            _note(journal, rep, f"conda is in {CONDACOLAB_PREFIX} already (condacolab ran): step {i} done")
            continue
        rec.update(status="running", started=time.time())
        journal.save()
        rep.step_started(i, total, step)
        journal.log(f"== step {i}/{total}: {step.summary}" + (f"\n$ {' '.join(step.argv)}" if step.argv else ""))
        result = _execute(journal, i, step, options, rep, run)
        rec.update(status="done" if result.rc == 0 else "failed", rc=result.rc, seconds=round(result.seconds, 3))
        journal.save()
        rep.step_finished(i, step, result)
        outcomes.append(StepOutcome(kind=step.kind, summary=step.summary, argv=tuple(step.argv), rc=result.rc,
                                    seconds=result.seconds))
        if result.rc != 0:
            what = "timed out" if result.timed_out else f"failed (exit {result.rc})"
            raise StepFailed(f"step {i}/{total} {what}: {step.summary}", argv=step.argv, output=result.output)
    return tuple(outcomes)


def _execute(journal: Journal, index: int, step: Step, options: PlanOptions, rep: Reporter,
             run: Runner) -> CommandResult:
    def on_output(line: str) -> None:
        journal.log(line)
        rep.step_output(index, line)

    if step.kind == "env-fix":
        start = time.monotonic()
        changed = []
        for path in step.files:
            real = envfix.target_path(path, options.root)
            if envfix.write_managed(real, step.content):
                changed.append(str(real))
        journal.log("wrote " + (", ".join(changed) if changed else "nothing (already in place)"))
        if step.argv:
            # the plan's own follow-up command (ldconfig, or `ldconfig -r ROOT` in a sandbox)
            if envfix.needs_ldconfig([_unrooted(p, options.root) for p in step.files]):
                journal.set(ldconfig=list(step.argv))
            return run(step.argv, timeout=TIMEOUTS["env-fix"], on_output=on_output)
        if envfix.needs_ldconfig([_unrooted(p, options.root) for p in step.files]):
            argv = envfix.ldconfig_argv(options.root)
            if argv is None:
                _note(journal, rep, "ldconfig not run (--root sandbox or not root): the ld.so.conf.d entry takes "
                                    "effect at the next ldconfig")
            else:
                journal.set(ldconfig=argv)
                return run(argv, timeout=TIMEOUTS["env-fix"], on_output=on_output)
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
            journal.log("apt-cache policy lists " + ", ".join(step.packages) + ": no apt-get update needed")
            return CommandResult(rc=0)
        journal.log("apt-cache policy does not list " + ", ".join(missing) + ": apt-get update")
    if not step.argv:
        return CommandResult(rc=0)
    return run(step.argv, timeout=TIMEOUTS.get(step.kind, 3600.0), on_output=on_output)


def _apt_knows(spec: str, run: Runner) -> bool:
    """`apt-cache policy PKG` lists VERSION (spec "PKG=VERSION") in its version table."""
    pkg, _, version = spec.partition("=")
    res = run(installers.apt_policy(pkg), timeout=60)
    if res.rc != 0:
        return False
    return any(line.split()[:1] == [version] or line.split()[1:2] == [version]
               for line in res.output.splitlines() if line.strip())


def _unrooted(path: str, root: Optional[str]) -> str:
    """The system path a (possibly sandboxed) file stands for: /etc/... for ROOT/etc/..."""
    if root:
        r = os.path.normpath(os.path.abspath(root))
        if path.startswith(r + os.sep):
            return path[len(r):]
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
    out = [DistChange(name=n, before=b.get(n), after=a.get(n)) for n in sorted(set(b) | set(a)) if b.get(n) != a.get(n)]
    return tuple(out)


# ---------------------------------------------------------------------------------------
# signals
# ---------------------------------------------------------------------------------------


def _on_sigterm(signum: int, frame: Any) -> None:
    raise _Terminated(signum)


def _catch_sigterm() -> Dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signal.SIGTERM: signal.signal(signal.SIGTERM, _on_sigterm)}


def _ignore_signals() -> Dict[int, Any]:
    """A rollback is not interrupted by a second Ctrl-C or SIGTERM (SIGKILL still works; the
    journal then lets `colab-cudnn-fix rollback` finish the job)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_signals(old: Dict[int, Any]) -> None:
    for sig, handler in old.items():
        signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


# ---------------------------------------------------------------------------------------
# rollback
# ---------------------------------------------------------------------------------------


def rollback(*, root: Optional[str] = None, python: Optional[str] = None, reporter: Optional[Reporter] = None,
             runner: Optional[Runner] = None) -> RollbackResult:
    """Undo the newest apply from its journal. Harmless to run twice (the second does nothing)."""
    rep = default_reporter(reporter)
    run: Runner = runner or run_command
    state = state_dir(root)
    with ApplyLock(state):
        journal = Journal.last(state)
        if journal is None:
            return RollbackResult(status="nothing-to-do", notes=(f"no apply recorded in {state}",))
        if journal.status == "rolled-back":
            return RollbackResult(journal=str(journal.dir), status="nothing-to-do",
                                  notes=(f"the last apply (journal {journal.id}) was already rolled back",))
        if journal.status in ("prepared", "abandoned"):
            journal.set(status="rolled-back")
            return RollbackResult(journal=str(journal.dir), status="nothing-to-do",
                                  notes=(f"the last apply (journal {journal.id}) changed nothing",))
        target = python or journal.data["python"]
        shielded = _ignore_signals()
        try:
            return _restore(journal, target, rep, run)
        finally:
            _restore_signals(shielded)


def _restore(journal: Journal, python: str, rep: Reporter, run: Runner) -> RollbackResult:
    journal.set(status="rolling-back")
    before = snapshot_from_dict(journal.data["before"])
    commands: List[Tuple[str, ...]] = []
    notes: List[str] = []
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
        except OSError as exc:
            failures.append(f"cannot restore {path}: {exc}")
    if journal.data.get("ldconfig") and restored_files:
        do(journal.data["ldconfig"], "ldconfig")

    # 2. distributions: remove what is new, put back what changed
    now = read_target(python)
    bv, nv = before.versions(), now.versions()
    editable = {d.name for d in before.dists if d.editable} | {d.name for d in now.dists if d.editable}
    new = sorted(n for n in nv if n not in bv and n not in editable)
    changed = sorted(n for n in bv if nv.get(n) != bv[n] and n not in editable)
    tool = restore_tool(now.has("pip"))
    if new:
        do(uninstall_argv(python, new, tool=tool, sources=journal.data.get("sources")), f"uninstall {', '.join(new)}")
    if changed:
        wheels = journal.data.get("wheels", {})
        sources = journal.data.get("sources", {})
        offline = [n for n in changed if n in wheels]
        online = [n for n in changed if n not in wheels]
        if offline:
            reqs = [f"{n}=={bv[n]}" for n in offline]
            do(install_exact_argv(python, reqs, tool=tool, sources=sources, wheels_dir=str(journal.wheels_dir),
                                  offline=True), f"reinstall {', '.join(reqs)} from the journal's wheels")
        if online:
            reqs = [_pinned(before, n) for n in online]
            do(install_exact_argv(python, reqs, tool=tool, sources=sources, wheels_dir=str(journal.wheels_dir)),
               f"reinstall {', '.join(reqs)}")

    # 3. apt
    apt_before: Dict[str, Optional[str]] = journal.data.get("apt_before", {})
    if apt_before:
        installs = {p: v for p, v in apt_before.items() if v and _dpkg_version(p, run) != v}
        removals = [p for p, v in apt_before.items() if v is None and _dpkg_version(p, run) is not None]
        if installs:
            do(installers.apt_install(installs), "apt reinstall " + ", ".join(f"{p}={v}" for p, v in installs.items()))
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

    # 4. check
    after = read_target(python)
    remaining = [f"{c.name}: {c.after or 'absent'} (was {c.before or 'absent'})"
                 for c in _diff(before, after) if c.name not in editable]
    for rec in journal.data.get("files", []):
        path = Path(rec["path"])
        if rec["existed"]:
            if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != rec["sha256"]:
                remaining.append(f"{path} differs from its backup")
        elif path.exists():
            remaining.append(f"{path} still exists")
    if remaining:
        remaining += failures   # the commands that did not work explain what is left
    exact = not remaining
    status = "rolled-back" if exact else "rollback-incomplete"
    result = RollbackResult(
        journal=str(journal.dir), status=status,
        distributions=_diff(now, before),
        files=tuple(restored_files), exact=exact, remaining=tuple(remaining),
        commands=tuple(commands), notes=tuple(notes + list(journal.data.get("notes", ()))),
    )
    journal.set(status=status, rollback={"exact": exact, "remaining": remaining,
                                         "commands": [list(c) for c in commands]})
    return result


def _pinned(before: TargetSnapshot, name: str) -> str:
    """`name==version`, or `name @ file://...` when it was installed from a local file that still exists."""
    dist = before.get(name)
    assert dist is not None
    url = (dist.direct_url or {}).get("url", "")
    if url.startswith("file://") and "archive_info" in (dist.direct_url or {}) and os.path.isfile(url[7:]):
        return f"{name} @ {url}"
    return f"{name}=={dist.version}"


__all__ = ["RESUME_HINT", "TIMEOUTS", "apply_plan", "resume_apply", "rollback"]
