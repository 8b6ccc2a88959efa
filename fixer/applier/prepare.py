"""Before an apply changes anything: what it may touch (the gate's roots), and the journal's
record of everything it can change (fixer.applier.transaction calls `prepare`).

    confine     the roots the gate (fixer.system.fsgate) allows: the target's prefix and the site
                directories of its distributions, and exactly the loader-fix files of the plan,
                each of a kind and name the tool itself writes (`loader_file_ok`)
    prepare     snapshot the target; record every file of the distributions the plan can touch
                (fixer.applier.filetree) and back their bytes up; back up every file it will
                write (type, mode, owner, content or symlink target); note apt versions and holds.
                All of it fsynced before anything changes; free space is checked first.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from fixer.applier import envfix, filetree, indexcopy, leftovers, threeway
from fixer.applier.journal import FileRecord, Journal, atomic_write
from fixer.applier.runner import Runner
from fixer.applier.snapshot import TargetSnapshot, snapshot_to_dict
from fixer.applier.sources import sources_of
from fixer.errors import JournalWriteFailed, NoSpace
from fixer.model import Plan, PlanOptions, Reporter, Step
from fixer.planner.conda import is_condacolab_step
from fixer.planner.envfix import ENV_FILE, IPYTHON_STARTUP, LD_SO_CONF
from fixer.planner.envsource import ETC_ENVIRONMENT, PROFILE_D
from fixer.system import fsgate
from fixer.model import to_dict
from fixer.system.versions import requirement_name

#: Free space kept in reserve beyond what the backups and downloads need.
SPACE_MARGIN = 64 << 20

#: A site directory inside its installation scheme: `<base>/lib/python3.11/site-packages`,
#: `<base>/lib/python3/dist-packages` (Debian); scripts and data go under <base> (RECORD rows
#: `../../../bin/x`: pip/_internal/operations/install/wheel.py, _fs_to_record_path).
_SCHEME = re.compile(r"^(?P<base>.*)/lib(?:64)?/python[0-9.]*/(?:site|dist)-packages$")


# -- what the apply may touch ----------------------------------------------------------------


def target_dirs(snapshot: TargetSnapshot, root: Optional[str] = None) -> List[str]:
    """The target environment's directories: its prefix, and each site directory holding one of
    its distributions with the base of its scheme (where pip puts scripts and data); with
    `root`, only those inside that sandbox (a .pth or --system-site-packages can show the
    interpreter packages from outside it: the tool never writes there)."""
    dirs = _all_target_dirs(snapshot)
    return [d for d in dirs if fsgate.within(root, d)] if root is not None else dirs


def _all_target_dirs(snapshot: TargetSnapshot) -> List[str]:
    out: List[str] = [snapshot.prefix] if snapshot.prefix else []
    for d in snapshot.dists:
        if not d.dist_info:
            continue
        site = os.path.dirname(os.path.normpath(d.dist_info))
        m = _SCHEME.match(site)
        for p in (m.group("base") if m else "", site):
            if p and p != "/" and p not in out:
                out.append(p)
    return out


def loader_file_ok(path: str, root: Optional[str], state: Path) -> bool:
    """Whether `path` is a file the tool itself writes: its ld.so.conf.d entry, its profile.d
    script, an IPython startup file of ours, the loader cache ldconfig rewrites, the places a
    loader variable comes from that fixer.planner.envsource fixes (a kernel spec's kernel.json,
    /etc/environment, a profile.d script), or a file in its own state directory (the hashed
    requirements of `apply --lock`); under `--root` when given."""
    p = os.path.normpath(path)
    if p.startswith(str(state) + os.sep):
        return True
    sys_path = unrooted(p, root)
    if root and sys_path == p:
        return False  # outside the sandbox
    if ".." in sys_path.split("/") or not sys_path.startswith("/"):
        return False
    if sys_path in (LD_SO_CONF, ENV_FILE, envfix.LD_SO_CACHE, ETC_ENVIRONMENT):
        return True
    if os.path.dirname(sys_path) == PROFILE_D and sys_path.endswith(".sh"):
        return True  # a profile.d script that sets a variable a fix drops (planner.envsource)
    parts = sys_path.split("/")
    if parts[-1] == "kernel.json" and len(parts) >= 4 and parts[-3] == "kernels":
        return True  # a kernel spec's env (planner.envsource: jupyter_path("kernels"))
    startup = "*/" + IPYTHON_STARTUP.replace("~/", "").replace("profile_default", "profile_*")
    return fnmatch.fnmatchcase(sys_path, startup)


def _resolved_ok(path: str, root: Optional[str], state: Path) -> bool:
    """`loader_file_ok` of the place the gate writes `path` to: its directory resolved
    (fsgate allows an exact file at realpath(dirname)/basename), so a directory on the way that is
    a symlink (a kernel spec's folder linked to /etc) cannot carry the write somewhere else."""
    real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    real_root = os.path.realpath(root) if root else None
    return loader_file_ok(real, real_root, Path(os.path.realpath(state)))


def plan_files(steps: Sequence[Step], root: Optional[str]) -> List[str]:
    """Every file the steps write, and the loader cache an ldconfig step rewrites."""
    out: List[str] = []
    for step in steps:
        touched = list(step.files) if step.kind != "cleanup" else []  # those: _record_leftovers
        if ldconfig_of(step, root) is not None:
            touched.append(str(envfix.target_path(envfix.LD_SO_CACHE, root)))
        for path in touched:
            real = str(envfix.target_path(path, root))
            if real not in out:
                out.append(real)
    return out


def confine(
    steps: Sequence[Step], snapshot: TargetSnapshot, root: Optional[str], state: Path
) -> Any:
    """fsgate.allowed(...) for an apply of `steps` on the target `snapshot` shows; PathRefused
    (exit 2, nothing changed) for a file the tool would never write."""
    refusal = sandbox_refusal(steps, snapshot, root)
    if refusal is not None:
        raise refusal
    files = plan_files(steps, root)
    for f in files:
        if not (loader_file_ok(f, root, state) and _resolved_ok(f, root, state)):
            raise fsgate.PathRefused(
                f"{f}: not a file this tool writes (its loader fixes go to {LD_SO_CONF}, "
                f"{ENV_FILE} and IPython startup files{', under --root' if root else ''}); "
                "nothing was changed",
                path=f,
            )
    return fsgate.allowed(target_dirs(snapshot, root), files, why="apply")


# -- prepare ---------------------------------------------------------------------------------


def sandbox_refusal(
    steps: Sequence[Step], target: TargetSnapshot, root: Optional[str]
) -> Optional[fsgate.PathRefused]:
    """The one rule for the interpreter an apply or rollback runs installers in, under --root:
    its folder, its prefix, every interpreter a step's installer names and the site directory
    of every distribution the steps can change (`changed_dists`) lie inside the sandbox
    (fsgate.outside_root), else the refusal (exit 2, nothing changed). pip installs into the
    interpreter's prefix and uninstalls where the old copy is (pip/_internal/req/req_uninstall.py,
    UninstallPathSet.from_dist), so each of those must be inside. Asked by the dry run and apply
    alike (fixer.pipeline.apply_refusal, on the detected interpreter), again by `confine` on the
    interpreter's own answer, and by rollback."""
    if root is None:
        return None
    places: List[Tuple[str, str]] = [
        ("the interpreter", os.path.dirname(os.path.abspath(target.executable)))
    ]
    if target.prefix:
        places.append(("the interpreter's prefix", target.prefix))
    for step in steps:
        named = step_interpreter(step)
        if named:
            places.append((f"the interpreter of step {step.kind!r}", os.path.dirname(named)))
    for name in changed_dists(steps, target):
        dist = target.get(name)
        if dist is not None and dist.dist_info:
            places.append((f"{name}, installed in", dist.site_packages))
    return fsgate.outside_root(root, places)


def step_interpreter(step: Step) -> Optional[str]:
    """The interpreter an installer step's argv names: `PY -m pip ...`, `uv pip ... --python PY`."""
    argv = list(step.argv)
    if step.kind not in ("pip-install", "pip-uninstall") or not argv:
        return None
    if argv[1:3] == ["-m", "pip"]:
        return os.path.abspath(argv[0])
    for i, word in enumerate(argv[:-1]):
        if word in ("--python", "-p"):
            return os.path.abspath(argv[i + 1])
        if word.startswith("--python="):
            return os.path.abspath(word.split("=", 1)[1])
        if word == "--":
            break
    return None


def backup_set(plan: Plan, before: TargetSnapshot) -> List[str]:
    """The installed distributions the plan can change (`changed_dists`)."""
    return changed_dists(plan.steps, before)


def changed_dists(steps: Sequence[Step], before: TargetSnapshot) -> List[str]:
    """The installed distributions the steps can change: those they name, and, for an install
    that brings dependencies (no --no-deps), everything they require, transitively. The step
    that runs condacolab.install() names the condacolab distribution but changes none (it
    installs Miniforge into its prefix: fixer.planner.conda)."""
    names: List[str] = []
    for step in steps:
        if step.kind not in ("pip-install", "pip-uninstall", "conda-install"):
            continue
        if is_condacolab_step(step):
            continue
        named = [n for n in (req_name(spec) for spec in step.packages) if n]
        if step.kind == "pip-install" and not (step.pip and step.pip.no_deps):
            named = before.closure(named)
        for n in named:
            if n not in names and before.get(n) is not None:
                names.append(n)
    return names


def prepare(
    journal: Journal,
    plan: Plan,
    before: TargetSnapshot,
    options: PlanOptions,
    rep: Reporter,
    run: Runner,
) -> None:
    """Record everything the plan can touch. Nothing on the machine changes here."""
    _record_snapshot(journal, plan, before, options)
    manifests = _record_dists(plan, before)
    copies, local, vouched = _index_copies(journal, manifests, rep)
    _check_space(journal, plan, manifests, before, 0 if local else vouched)
    recorded, backups = _backup_dists(journal, manifests, copies, local, rep)
    notes: List[str] = []
    _record_leftovers(journal, plan, before, recorded, backups, notes)
    if any(s.kind == "conda-install" for s in plan.steps):
        notes.append("conda package changes outside site-packages are not rolled back")
    if copies and not local:
        notes.append(
            f"not kept locally (the index serves the same wheels; less than "
            f"{indexcopy.KEEP_LOCAL_FACTOR}x their size free): "
            f"{', '.join(c['filename'] for c in copies.values())}"
        )
    apt_before, held = _record_apt(plan.steps, run)
    journal.set(
        manifests=recorded,
        backups=backups,
        index_copies=copies,
        files=[r.to_dict() for r in _record_files(journal, plan.steps, options.root)],
        apt_before=apt_before,
        apt_held=held,
        notes=notes,
        env_fixes=[to_dict(f) for f in plan.stack.env_fixes],
    )


def _record_snapshot(
    journal: Journal, plan: Plan, before: TargetSnapshot, options: PlanOptions
) -> None:
    """before.json, and the listings of site-packages (and of a venv's own root, where uv keeps
    its .lock): what appears there during the apply and was not there before is the apply's.
    Under --root only those inside the sandbox (`target_dirs`): rollback never sweeps the others."""
    before_data = snapshot_to_dict(before)
    inside = set(target_dirs(before, options.root))
    sites = sorted(
        {
            d.site_packages
            for d in before.dists
            if d.dist_info.endswith(".dist-info") and d.site_packages in inside
        }
    )
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


def _record_dists(plan: Plan, before: TargetSnapshot) -> Dict[str, Dict[str, Any]]:
    """The manifest of every distribution the plan can change (not editable ones)."""
    prefixes = target_dirs(before)
    manifests: Dict[str, Dict[str, Any]] = {}
    for name in backup_set(plan, before):
        dist = before.get(name)
        if dist is None or dist.editable or not dist.dist_info.endswith(".dist-info"):
            continue
        manifests[name] = filetree.record(
            dist.dist_info, name=name, version=dist.version, hashes=False, prefixes=prefixes
        )
    return manifests


def _index_copies(
    journal: Journal, manifests: Dict[str, Dict[str, Any]], rep: Reporter
) -> Tuple[Dict[str, Dict[str, Any]], bool, int]:
    """The exact wheels the plan's index still serves (fixer.applier.indexcopy): their files
    need no local copy. Returns (copies, whether to keep them locally anyway, bytes vouched)."""
    sources = journal.sources
    urls = (
        []
        if sources.get("no_index")
        else list(sources.get("index_urls", [])) + list(sources.get("extra_index_urls", []))
    )
    copies: Dict[str, Dict[str, Any]] = {}
    vouched = 0
    for name, manifest in manifests.items():
        version = manifest["dist_version"]
        copy = indexcopy.find(manifest["dist_info"], name, version, urls) if urls else None
        if copy is not None:
            rep.phase(f"checking {name} {version} against {copy['filename']} on {copy['index']}")
            vouched += indexcopy.mark(manifest)
            copies[name] = copy
    local = indexcopy.keep_local(journal.dir, vouched) if vouched else True
    return copies, local, vouched


def _record_leftovers(
    journal: Journal,
    plan: Plan,
    before: TargetSnapshot,
    recorded: Dict[str, str],
    backups: Dict[str, str],
    notes: List[str],
) -> None:
    """pip's leftovers that a cleanup step removes (fixer.applier.leftovers): each checked,
    recorded and backed up like a distribution's files, so that rollback restores them."""
    wanted = [p for s in plan.steps if s.kind == "cleanup" for p in s.files]
    if not wanted:
        return
    gone, refused = leftovers.checked(wanted, {d.site_packages for d in before.dists})
    notes.extend(refused)
    for name, manifest in leftovers.manifests(gone).items():
        try:
            filetree.backup(manifest, journal.dir / "backups" / f"{name}.zip")
        except OSError as exc:
            raise JournalWriteFailed(
                f"cannot back up {manifest['dist_info']} into {journal.dir / 'backups'}: "
                f"{exc.strerror or exc}"
            )
        backups[name] = f"backups/{name}.zip"
        recorded[name] = journal.write_part(f"manifests/{name}.json", manifest)
    journal.set(leftovers=gone)


def _backup_dists(
    journal: Journal,
    manifests: Dict[str, Dict[str, Any]],
    copies: Dict[str, Dict[str, Any]],
    local: bool,
    rep: Reporter,
) -> Tuple[Dict[str, str], Dict[str, str]]:
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
    return recorded, backups


def _record_files(journal: Journal, steps: Sequence[Step], root: Optional[str]) -> List[FileRecord]:
    """Each file the plan writes: its state before (type, mode, owner, content or symlink
    target), a 0600 backup of its bytes, and the directories writing it will create."""
    out: List[FileRecord] = []
    for path in plan_files(steps, root):
        before = threeway.state_of(path)
        backup: Optional[str] = None
        if before.kind == "file":
            rel = f"files/{len(out)}"
            try:
                atomic_write(journal.dir / rel, fsgate.read_bytes(path), mode=0o600)
            except OSError as exc:
                raise JournalWriteFailed(
                    f"cannot back up {path} into {journal.dir / rel}: {exc.strerror or exc}"
                )
            backup = rel
        out.append(
            FileRecord(
                path=path, before=before, backup=backup, created_dirs=tuple(missing_parents(path))
            )
        )
    return out


def _record_apt(steps: Sequence[Step], run: Runner) -> Tuple[Dict[str, Optional[str]], List[str]]:
    """The versions of the apt packages the plan changes, and the packages held now."""
    apt_before: Dict[str, Optional[str]] = {}
    for step in steps:
        if step.kind in ("apt-install", "apt-hold"):
            for spec in step.packages:
                pkg = spec.split("=", 1)[0]
                if pkg not in apt_before:
                    apt_before[pkg] = dpkg_version(pkg, run)
    held: List[str] = []
    if any(s.kind in ("apt-install", "apt-hold") for s in steps):
        held = apt_holds(run) or []
    return apt_before, held


def apt_holds(run: Runner) -> Optional[List[str]]:
    """The packages `apt-mark showhold` lists; None when it fails."""
    res = run(["apt-mark", "showhold"], timeout=60)
    return res.output.split() if res.rc == 0 else None


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


def missing_parents(path: str) -> List[str]:
    """The directories above `path` that do not exist yet (deepest first): writing it creates them."""
    out: List[str] = []
    d = Path(path).parent
    while not d.exists() and d != d.parent:
        out.append(str(d))
        d = d.parent
    return out


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.0f} MB"


def ldconfig_of(step: Step, root: Optional[str]) -> Optional[List[str]]:
    """The ldconfig command that carrying out `step` runs, or None. Read from the step's kind and
    the files it writes, never from its argv's words: an env-fix step that writes an ld.so.conf file
    runs the plan's own follow-up command (Step.argv, from fixer.planner.envfix.env_fix_steps) or, when the
    plan carried none (made without root), envfix.ldconfig_argv (only as root, never in a --root sandbox)."""
    if step.kind != "env-fix" or not envfix.needs_ldconfig([unrooted(p, root) for p in step.files]):
        return None
    return list(step.argv) if step.argv else envfix.ldconfig_argv(root)


def req_name(spec: str) -> Optional[str]:
    return requirement_name(spec) or None


def dpkg_version(pkg: str, run: Runner) -> Optional[str]:
    res = run(["dpkg-query", "-W", "-f=${Status} ${Version}", pkg], timeout=60)
    if res.rc != 0:
        return None
    text = res.output.strip()
    if "installed" not in text.split(" ")[:3] or "not-installed" in text:
        return None
    return text.split()[-1]


def unrooted(path: str, root: Optional[str]) -> str:
    """The system path a (possibly sandboxed) file stands for: /etc/... for ROOT/etc/..."""
    if root:
        r = os.path.normpath(os.path.abspath(root))
        if path.startswith(r + os.sep):
            return path[len(r) :]
    return path
