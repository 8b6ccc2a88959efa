"""Undo an apply from its journal, three-way (fixer.applier.threeway), then check all of it.

scope       the gate's roots come from the live target interpreter (its prefix and site
            directories), never from the journal, plus the journal's loader-fix files that are
            of a kind the tool writes (fixer.applier.prepare.loader_file_ok)
files       the loader fixes, the loader cache, the requirements file: restored when they still
            hold what the apply left, else listed and kept (unless --force)
dists       what the apply added goes, what it replaced comes back file by file; whatever
            appeared after the apply (a package installed later, a file written into the venv)
            is never removed; a path changed since the apply is listed and kept (unless --force)
apt         versions and holds as before
check       every journalled path: type, mode, owner, content, symlink target; the versions;
            apt versions and holds; the directories the apply created. "exactly as before"
            (RollbackResult.exact) is what this check says.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from fixer.applier import filetree, indexcopy, threeway
from fixer.applier.journal import FileRecord, Journal, atomic_write
from fixer.applier.prepare import apt_holds, dpkg_version, loader_file_ok, target_dirs
from fixer.applier.runner import Runner
from fixer.applier.snapshot import TargetSnapshot, read_target, snapshot_from_dict
from fixer.applier.sources import install_exact_argv
from fixer.errors import FixerError, UsageError
from fixer.applier.results import DistChange, RollbackResult
from fixer.model import Reporter
from fixer.planner import installers
from fixer.system import fsgate
from fixer.system.paths import state_dir
from fixer.applier import envfix
from fixer.planner.envfix import ENV_FILE, IPYTHON_STARTUP, LD_SO_CONF, expand_home

RESTORE_TIMEOUT = 3600.0


class _Undo:
    """One rollback's state: the journal, what it ran, what failed, what it kept."""

    def __init__(self, journal: Journal, python: str, rep: Reporter, run: Runner, force: bool):
        self.journal, self.python, self.rep, self.run = journal, python, rep, run
        self.force = force or journal.forced
        self.commands: List[Tuple[str, ...]] = []
        self.failures: List[str] = []
        self.remaining: List[str] = []
        self.kept: List[str] = []
        self.restored_files: List[str] = []
        self.unverified: List[str] = []
        self.editable: Set[str] = set()
        #: the target as the final check read it after the rollback (what the rollback left)
        self.final: Optional[TargetSnapshot] = None

    def do(self, argv: Sequence[str], what: str) -> bool:
        self.commands.append(tuple(argv))
        self.journal.log(f"== rollback: {what}\n$ {' '.join(argv)}")
        self.rep.phase(f"rollback: {what}")
        res = self.run(argv, timeout=RESTORE_TIMEOUT, on_output=self.journal.log)
        if res.rc != 0:
            self.failures.append(f"{what} failed (exit {res.rc}): {res.output.strip()[-300:]}")
        return res.rc == 0


def scope(journal: Journal, now: Optional[TargetSnapshot], root: Optional[str]) -> Any:
    """The gate's roots for this rollback (see the module doc)."""
    state = state_dir(root)
    files: List[str] = []
    for r in journal.files:
        if loader_file_ok(r.path, root, state):
            files.append(r.path)  # and the directories writing it created (removed when empty)
            files += [d for d in r.created_dirs if r.path.startswith(d.rstrip("/") + "/")]
    return fsgate.allowed(target_dirs(now, root) if now is not None else [], files, why="rollback")


def restore(
    journal: Journal,
    python: str,
    rep: Reporter,
    run: Runner,
    *,
    force: bool = False,
    root: Optional[str] = None,
) -> RollbackResult:
    """Undo the apply the journal records (the caller holds the locks)."""
    try:
        now: Optional[TargetSnapshot] = read_target(python)
    except UsageError as exc:
        now = None
        journal.damaged.append(str(exc))
    with scope(journal, now, root):
        return _restore(journal, python, now, rep, run, force, root)


def _restore(
    journal: Journal,
    python: str,
    now: Optional[TargetSnapshot],
    rep: Reporter,
    run: Runner,
    force: bool,
    root: Optional[str],
) -> RollbackResult:
    u = _Undo(journal, python, rep, run, force)
    before_data = journal.before()
    before = snapshot_from_dict(before_data) if before_data else None
    after = journal.after_state()
    _undo_files(u, root)
    manifests = list(journal.manifests())
    decision, report = _undo_dists(u, before, before_data, now, after, manifests)
    _undo_apt(u)
    _final_check(u, before, manifests, decision, report)
    return _result(u, before, now, manifests, report)


# -- files outside distributions ------------------------------------------------------------


def _undo_files(u: _Undo, root: Optional[str]) -> None:
    state = state_dir(root)
    for rec in reversed(u.journal.files):
        if not loader_file_ok(rec.path, root, state):
            u.failures.append(f"{rec.path}: not a file this tool writes; left alone")
            continue
        try:
            _undo_file(u, rec)
        except OSError as exc:
            u.failures.append(f"cannot restore {rec.path}: {exc.strerror or exc}")
    ldconfig = u.journal.ldconfig
    if ldconfig and u.restored_files:
        u.do(ldconfig, "ldconfig")


def _undo_file(u: _Undo, rec: FileRecord) -> None:
    now = threeway.state_of(rec.path)
    if not now.differences(rec.before):
        _remove_created_dirs(rec)
        return
    if rec.after is not None and now.differences(rec.after) and not u.force:
        u.remaining.append(
            f"{rec.path}: changed since the apply ({'; '.join(now.differences(rec.after))}); "
            "left alone (`rollback --force` restores it)"
        )
        return
    _put_back(u, rec)
    u.restored_files.append(rec.path)
    _remove_created_dirs(rec)


def _put_back(u: _Undo, rec: FileRecord) -> None:
    """Write the file's state before: its bytes, or its symlink, mode and owner; or remove it."""
    b = rec.before
    if not b.exists:
        fsgate.remove(rec.path)
    elif b.kind == "symlink" and b.target is not None:
        fsgate.symlink(b.target, rec.path)
    elif b.kind == "file" and rec.backup:
        data = (u.journal.dir / rec.backup).read_bytes()
        atomic_write(Path(rec.path), data, mode=b.mode if b.mode is not None else 0o644)
    else:
        raise OSError(f"the journal keeps no copy of {rec.path} ({b.kind})")
    if b.exists and b.uid is not None and b.gid is not None:
        st = fsgate.lstat(rec.path)
        if st is not None and (st.st_uid, st.st_gid) != (b.uid, b.gid):
            fsgate.chown(rec.path, b.uid, b.gid)


def _remove_created_dirs(rec: FileRecord) -> None:
    for d in rec.created_dirs:  # deepest first; only when empty
        try:
            fsgate.remove_empty_dir(d)
        except OSError:
            pass


# -- distributions ----------------------------------------------------------------------------


def _undo_dists(
    u: _Undo,
    before: Optional[TargetSnapshot],
    before_data: Optional[Dict[str, Any]],
    now: Optional[TargetSnapshot],
    after: Optional[Dict[str, Any]],
    manifests: List[Dict[str, Any]],
) -> Tuple[threeway.Decision, filetree.RestoreReport]:
    """Remove what the apply added, reinstall by version what it changed unrecorded, write back
    the recorded distributions: each path only as the three-way decision allows."""
    recorded = {m["name"] for m in manifests}
    after_versions = _after_versions(u.journal)
    remove: List[str] = []
    if now is not None:
        bv = before.versions() if before else {}
        nv = now.versions()
        u.editable = ({d.name for d in before.dists if d.editable} if before else set()) | {
            d.name for d in now.dists if d.editable
        }
        remove = _added_paths(u, before, now, recorded, after_versions)
        _reinstall_changed(u, before, bv, nv, recorded, after_versions)
    items = _items(u.journal, manifests, before_data)
    candidates = _candidates(items, remove)
    before_paths = {e["path"]: e for m, _ in items for e in m["files"]}
    dirs = {d["path"]: d for m, _ in items for d in m["dirs"]}
    decision = threeway.decide(after, candidates, before_paths, u.force, dirs)
    u.kept.extend(decision.later)
    if not u.force:
        u.remaining += [
            f"{p}: changed since the apply; left alone (`rollback --force` restores it)"
            for p in decision.changed
        ]
    if items or remove:
        rep_n = sum(len(m["files"]) for m, _ in items)
        u.rep.phase(f"rollback: restoring {rep_n} recorded files")
    report = filetree.restore(
        items, remove=remove, wheel=_wheel_fetcher(u), protect=decision.protect
    )
    u.failures.extend(report.errors)
    return decision, report


def _after_versions(journal: Journal) -> Optional[Dict[str, str]]:
    """The versions the apply left (None when it did not finish)."""
    data = journal.after_snapshot
    if data is None:
        return None
    try:
        return snapshot_from_dict(data).versions()
    except (FixerError, KeyError, TypeError, ValueError, AttributeError):
        return None


def _added_paths(
    u: _Undo,
    before: Optional[TargetSnapshot],
    now: TargetSnapshot,
    recorded: Set[str],
    after_versions: Optional[Dict[str, str]],
) -> List[str]:
    """The files of the distributions the apply added or replaced (recorded ones), as installed
    now; a distribution that appeared (or changed version) after the apply is not the apply's."""
    bv = before.versions() if before else {}
    nv = now.versions()
    prefixes = target_dirs(now)
    out: List[str] = []
    added = [n for n in nv if before is not None and n not in bv and n not in u.editable]
    for n in sorted(added) + sorted(recorded):
        if after_versions is not None and after_versions.get(n) != nv.get(n):
            if n not in bv or nv.get(n) != bv.get(n):
                u.kept.append(f"{n} {nv.get(n)} (installed after the apply)")
            continue
        d = now.get(n)
        if d is not None and d.dist_info:
            try:
                out += filetree.record_paths(d.dist_info, prefixes) + [d.dist_info]
            except fsgate.PathRefused as exc:
                u.failures.append(exc.message)
    return out + list(now.leftovers)


def _reinstall_changed(
    u: _Undo,
    before: Optional[TargetSnapshot],
    bv: Dict[str, str],
    nv: Dict[str, str],
    recorded: Set[str],
    after_versions: Optional[Dict[str, str]],
) -> None:
    """Dependencies the apply changed without a record: reinstalled by version (not those
    changed again after the apply, unless --force)."""
    if before is None:
        return
    changed = sorted(
        n for n in bv if nv.get(n) != bv[n] and n not in u.editable and n not in recorded
    )
    if after_versions is not None and not u.force:
        later = [n for n in changed if after_versions.get(n) != nv.get(n)]
        u.remaining += [
            f"{n}: {nv.get(n) or 'absent'} (the apply left {after_versions.get(n) or 'none'}, "
            f"was {bv[n]}): changed since the apply; left alone (`rollback --force` restores it)"
            for n in later
        ]
        changed = [n for n in changed if n not in later]
    if not changed:
        return
    tool = installers.pip_tool(u.journal.installer)
    reqs = [_pinned(before, n) for n in changed]
    u.do(
        install_exact_argv(u.python, reqs, tool=tool, sources=u.journal.sources),
        f"reinstall {', '.join(reqs)}",
    )
    u.unverified = changed


def _items(
    journal: Journal, manifests: List[Dict[str, Any]], before_data: Optional[Dict[str, Any]]
) -> List[Tuple[Dict[str, Any], Optional[Any]]]:
    items: List[Tuple[Dict[str, Any], Optional[Any]]] = []
    backups = journal.backups
    for m in manifests:
        rel = backups.get(m["name"])
        items.append((m, journal.dir / rel if rel else None))
    if before_data and before_data.get("site_dirs"):
        items.append(({"name": "", "files": [], "dirs": before_data["site_dirs"]}, None))
    return items


def _candidates(items: List[Tuple[Dict[str, Any], Any]], remove: List[str]) -> List[str]:
    """Every path the restore would remove or write."""
    out = list(remove)
    for m, _ in items:
        out += [e["path"] for e in m["files"]]
        for d in m["dirs"]:
            try:
                out += [
                    os.path.join(d["path"], n)
                    for n in set(os.listdir(d["path"])) - set(d["entries"])
                ]
            except OSError:
                continue
    return out


def _wheel_fetcher(u: _Undo) -> Any:
    copies = u.journal.index_copies

    def wheel(manifest: Dict[str, Any]) -> Any:
        copy = copies.get(manifest["name"])
        if not copy:
            raise OSError(
                f"{manifest['name']}: its backup lacks files and no index copy is recorded"
            )
        u.rep.phase(f"rollback: fetching {copy['filename']} from {copy['url']}")
        try:
            return indexcopy.fetch(copy, u.journal.dir / "downloads")
        except FixerError as exc:
            raise OSError(
                f"cannot restore {manifest['name']} {manifest['dist_version']}: the journal keeps no "
                f"local copy of its files and {exc.message}; run rollback again when {copy['url']} "
                "answers"
            )

    return wheel


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


# -- apt --------------------------------------------------------------------------------------


def _undo_apt(u: _Undo) -> None:
    apt_before = u.journal.apt_before
    if not apt_before:
        return
    installs = {p: v for p, v in apt_before.items() if v and dpkg_version(p, u.run) != v}
    removals = [
        p for p, v in apt_before.items() if v is None and dpkg_version(p, u.run) is not None
    ]
    if installs:
        u.do(
            installers.apt_install(installs),
            "apt reinstall " + ", ".join(f"{p}={v}" for p, v in installs.items()),
        )
    if removals:
        u.do(installers.apt_remove(removals), f"apt remove {', '.join(removals)}")
    held_before = set(u.journal.apt_held)
    held_now = set(apt_holds(u.run) or ())
    unhold = sorted((held_now - held_before) & set(apt_before))
    rehold = sorted((held_before - held_now) & set(apt_before))
    if unhold:
        u.do(installers.apt_unhold(unhold), f"apt-mark unhold {', '.join(unhold)}")
    if rehold:
        u.do(installers.apt_hold(rehold), f"apt-mark hold {', '.join(rehold)}")


# -- the final check ---------------------------------------------------------------------------


def _final_check(
    u: _Undo,
    before: Optional[TargetSnapshot],
    manifests: List[Dict[str, Any]],
    decision: threeway.Decision,
    report: filetree.RestoreReport,
) -> None:
    """Every journalled path, version and apt state as before; what differs goes to remaining."""
    remaining = threeway.journalled_lines(report.remaining, decision)
    remaining += _check_versions(u, before)
    remaining += _check_files(u)
    remaining += _check_apt(u)
    if before is None:
        remaining.append(
            "the journal's record of the distributions before the apply is lost: versions not checked"
        )
    if u.journal.damaged:
        remaining += _unknown_loader_fixes(u)
    u.remaining += [r for r in remaining if r not in u.remaining]
    u.remaining += [
        f for f in u.failures if f not in u.remaining
    ]  # what failed is never "as before"


def _unknown_loader_fixes(u: _Undo) -> List[str]:
    """A damaged journal may have lost its file records: the tool's own loader-fix files found
    in place are listed (this apply may have written them), never claimed as restored."""
    root = u.journal.root
    known = {r.path for r in u.journal.files}
    out = ["the journal is damaged: what it lost cannot be undone or checked"]
    for path in (LD_SO_CONF, ENV_FILE, expand_home(IPYTHON_STARTUP)):
        real = envfix.target_path(path, root)
        if str(real) not in known and envfix.is_managed(real):
            out.append(
                f"{real}: a loader fix of this tool is still there (the journal lost "
                "whether this apply wrote it; remove it by hand if so)"
            )
    return out


def _check_versions(u: _Undo, before: Optional[TargetSnapshot]) -> List[str]:
    try:
        after = read_target(u.python)
    except UsageError as exc:
        return [str(exc)]
    u.final = after
    out: List[str] = []
    later = {k.split(" ", 1)[0] for k in u.kept}
    if before is not None:
        out += [
            f"{c.name}: {c.after or 'absent'} (was {c.before or 'absent'})"
            for c in diff(before, after)
            if c.name not in u.editable and c.name not in later
        ]
    had = set(before.leftovers) if before is not None else set()  # a cleanup step's, put back
    out += [
        f"{p}: leftover of an interrupted installer"
        for p in after.leftovers
        if p not in had and not any(p in r for r in out)
    ]
    return out


def _check_files(u: _Undo) -> List[str]:
    out: List[str] = []
    for rec in u.journal.files:
        try:
            now = threeway.state_of(rec.path)
        except OSError as exc:
            out.append(f"{rec.path}: cannot be checked ({exc})")
            continue
        out += [f"{rec.path}: {d}" for d in rec.before.differences(now)]
        for d in rec.created_dirs:
            if os.path.lexists(d):
                out.append(f"{d}/: a directory the apply created is still there")
    return out


def _check_apt(u: _Undo) -> List[str]:
    out: List[str] = []
    for pkg, version in u.journal.apt_before.items():
        now = dpkg_version(pkg, u.run)
        if now != version:
            out.append(f"apt {pkg}: {now or 'absent'} (was {version or 'absent'})")
    if u.journal.apt_before:
        held = apt_holds(u.run)
        if held is None:
            out.append("apt holds: `apt-mark showhold` failed, not checked")
        else:
            for pkg in sorted(set(u.journal.apt_before)):
                if (pkg in held) != (pkg in u.journal.apt_held):
                    was = "held" if pkg in u.journal.apt_held else "not held"
                    out.append(f"apt {pkg}: {'held' if pkg in held else 'not held'} (was {was})")
    return out


def _result(
    u: _Undo,
    before: Optional[TargetSnapshot],
    now: Optional[TargetSnapshot],
    manifests: List[Dict[str, Any]],
    report: filetree.RestoreReport,
) -> RollbackResult:
    status = "rollback-incomplete" if u.remaining else "rolled-back"
    exact = not u.remaining and not u.unverified and not u.journal.damaged
    notes = [f"journal damaged: {d}" for d in u.journal.damaged]
    notes += [f"kept (not the apply's: it appeared after it): {k}" for k in u.kept]
    result = RollbackResult(
        journal=str(u.journal.dir),
        status=status,
        # what the rollback changed, read back by the final check: a distribution it kept (one
        # that appeared after the apply) is not listed as removed
        distributions=diff(now, u.final) if (now is not None and u.final is not None) else (),
        files=tuple(u.restored_files),
        exact=exact,
        remaining=tuple(u.remaining),
        commands=tuple(u.commands),
        notes=tuple(notes + u.journal.notes),
        restored=tuple(report.restored),
        removed=tuple(report.removed),
        checked_files=sum(len(m["files"]) for m in manifests),
        unverified=tuple(u.unverified),
    )
    u.journal.data.update(
        status=status,
        rollback={
            "exact": exact,
            "remaining": list(u.remaining),
            "unverified": list(u.unverified),
            "kept": list(u.kept),
            "commands": [list(c) for c in u.commands],
        },
    )
    return result


def diff(before: TargetSnapshot, after: TargetSnapshot) -> Tuple[DistChange, ...]:
    b, a = before.versions(), after.versions()
    return tuple(
        DistChange(name=n, before=b.get(n), after=a.get(n))
        for n in sorted(set(b) | set(a))
        if b.get(n) != a.get(n)
    )
