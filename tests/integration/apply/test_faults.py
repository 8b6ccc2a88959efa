"""The fault suite: every fault at every exact point ends, after `colab-cudnn-fix rollback`, in a
byte-identical machine, or in a refusal that changed nothing. Never a traceback.

Cases: the tool's 8 journal writes (the 4 before any change with SIGKILL, SIGTERM and fsize; the
other 4 with all five faults), pip's 5 points and uv's 4 points, each with all five faults
(SIGKILL, SIGTERM, SIGINT, readonly, fsize): 32 + 25 + 20 = 77; and 3 where the SIGKILLed apply's pip
outlives it until the rollback stops it (SIGKILL-linger, at after-uninstall, mid-extract and
before-cleanup): 80. The cases are independent (each
has its own copy of the target venv, its own --root sandbox, journal, lock and caches); they run
a few at a time in a thread pool (`outcomes`), and each test item asserts its own case.

Target: a venv with a torch stand-in and nvidia-cudnn-cu13 9.14 (real compiled stub libraries plus
a 64 KiB file, so that a file-size limit bites), from a local index on 127.0.0.1. The plan writes
two loader-fix files into the --root sandbox, then upgrades cuDNN to 9.19 with real pip (or uv).
Fault points and actions: tests/helpers/faults.py.

Fingerprint (before the apply, after the rollback): `pip freeze --all` (pip's own freeze, run in
this process over the target's sys.path; checked once against a `pip freeze --all` subprocess of
the template), and every directory (mode), file (sha256, mode) and symlink (target) of the whole
venv and of the sandbox. The one exclusion is
the sandbox's var/ tree, where the journal itself lives (it has to outlast the apply to be a journal).
Regenerated .pyc files, empty directories and uv's files all count.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from fixer.applier.envfix import env_fix_steps
from fixer.model import EnvFix, Plan, to_dict
from tests.helpers.faults import (
    APPLY_DRIVER,
    JOURNAL_POINTS,
    SITECUSTOMIZE,
    UV_POINT_STATE,
    differences,
    fingerprint,
    build_uv_stop_shim,
    mount_namespace_argv,
    uv_fault,
    uv_stop_spec,
)
from tests.helpers.pyindex import PackageIndex, cudnn_wheel, freeze_of, torch_wheel

from tests.integration.apply.conftest import (
    CUDNN_GOOD,
    CUDNN_OLD,
    TORCH,
    _make_venv,
    pip_step,
    uv_step,
)
from tests.helpers.paths import REPO

pytestmark = pytest.mark.integration

ACTIONS = ("SIGKILL", "SIGTERM", "SIGINT", "readonly", "fsize")
PIP_POINTS = (
    "pip-start",
    "pip-after-uninstall",
    "pip-mid-extract",
    "pip-before-cleanup",
    "pip-exit",
)
UV_POINTS = tuple(UV_POINT_STATE)
FIXES = (
    EnvFix(kind="ld-library-path-drop", value="/usr/lib/x86_64-linux-gnu"),
    EnvFix(kind="ipython-preload", value="/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib"),
)

#: Journal writes before anything on the machine changes: a signal or a full disk there must end in a
#: refusal that changed nothing (read-only answers like a full disk there: one OSError from the write).
_EARLY = ("create", "before", "manifest", "applying")
CASES = (
    [
        ("journal", p, a)
        for p in JOURNAL_POINTS
        for a in (("SIGKILL", "SIGTERM", "fsize") if p in _EARLY else ACTIONS)
    ]
    + [("pip", p, a) for p in PIP_POINTS for a in ACTIONS]
    + [("uv", p, a) for p in UV_POINTS for a in ACTIONS]
    # the rollback meets the killed apply's pip still running, every time (see faults.py)
    + [
        ("pip", p, "SIGKILL-linger")
        for p in ("pip-after-uninstall", "pip-mid-extract", "pip-before-cleanup")
    ]
)
IDS = [f"{p}-{a}" for _, p, a in CASES]
#: CCF_FAULT_REPEAT=N runs every case N times in one session (ids "<case>~2" ...): to hunt a flake
#: with a -k selection, under the same parallelism as the suite, without rebuilding the template.
REPEAT = max(1, int(os.environ.get("CCF_FAULT_REPEAT") or 1))
CASES, IDS = CASES * REPEAT, IDS + [f"{i}~{r}" for r in range(2, REPEAT + 1) for i in IDS]
#: Cases running at once. They are independent; most of a case is waiting on its child processes,
#: so a few at a time fill the cores (CCF_FAULT_WORKERS overrides).
WORKERS = int(os.environ.get("CCF_FAULT_WORKERS") or max(2, min(6, (os.cpu_count() or 2) + 1)))
CASE_TIMEOUT = 600.0


@dataclasses.dataclass
class Template:
    venv: Path
    freeze: str
    fingerprint: Dict[str, str]
    sys_path: List[str]  # the interpreter's sys.path, with the venv's prefix as "{venv}"


@pytest.fixture(scope="module")
def fault_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PackageIndex]:
    d = tmp_path_factory.mktemp("fault-wheels")
    wheels = [
        cudnn_wheel(d, CUDNN_OLD, cuda_major=13, padding=64 << 10),
        cudnn_wheel(d, CUDNN_GOOD, cuda_major=13, padding=64 << 10),
        torch_wheel(d, TORCH, requires=[f"nvidia-cudnn-cu13=={CUDNN_GOOD}"]),
    ]
    with PackageIndex(tmp_path_factory.mktemp("fault-index")) as ix:
        ix.add(*wheels)
        yield ix


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, fault_index: PackageIndex) -> Template:
    """The broken venv, made once; each case copies it (cp -a keeps modes and mtimes, so .pyc stay valid)."""
    venv = _make_venv(tmp_path_factory.mktemp("fault-template") / "venv", True)
    python = str(venv / "bin" / "python")
    env = _installer_env(
        tmp_path_factory.mktemp("fault-cache"), dict(os.environ)
    )  # no case runs yet
    made = subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "--index-url",
            fault_index.url,
            f"torch=={TORCH}",
            f"nvidia-cudnn-cu13=={CUDNN_OLD}",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert made.returncode == 0, f"the template's pip install failed:\n{made.stdout}{made.stderr}"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    subprocess.run([python, "-c", "import sitecustomize"], check=True, env=env)  # its .pyc, once
    subprocess.run([python, "-m", "pip", "--version"], check=True, capture_output=True, env=env)
    sys_path = json.loads(
        subprocess.run(
            [python, "-c", "import json, sys; print(json.dumps(sys.path[1:]))"],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd="/",
        ).stdout
    )
    prefix = str(venv)
    t = Template(
        venv,
        freeze_of(python),
        {},
        [p.replace(prefix, "{venv}", 1) if p.startswith(prefix) else p for p in sys_path],
    )
    # pip's freeze in this process says exactly what the `pip freeze --all` subprocess says
    assert _freeze(t, venv) == t.freeze, (_freeze(t, venv), t.freeze)
    empty = tmp_path_factory.mktemp("empty-root")
    os.chmod(empty, 0o755)
    t.fingerprint = _fingerprint(venv, empty)
    return t  # every case starts from a byte-identical copy: its state is this one


def _installer_env(cache: Path, base: Dict[str, str]) -> Dict[str, str]:
    """The installers' environment, from `base`: a copy of os.environ taken in the main thread
    before any case started. Never os.environ itself in a case's thread: the main thread changes it
    at every test's setup and teardown (the autouse `isolated_installers` monkeypatch), and reading
    it meanwhile from another thread fails (os.environ.items() lists the keys, then looks each up:
    a key deleted in between raises KeyError) or forks a child while the C environ is rewritten."""
    env = {k: v for k, v in base.items() if not k.startswith(("PIP_", "UV_", "CCF_"))}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        PIP_CACHE_DIR=str(cache / "pip"),
        UV_NO_CONFIG="1",
        UV_CACHE_DIR=str(cache / "uv"),
        UV_LINK_MODE="copy",
        TMPDIR=str(cache),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


_FREEZE_LOCK = threading.Lock()


def _freeze(t: Template, venv: Path) -> str:
    """`pip freeze --all` of the venv: pip's own freeze (what the command runs, with --all's empty
    skip list beyond the stdlib names) over the target interpreter's sys.path."""
    from pip._internal.operations.freeze import freeze

    try:  # where pip >= 26 keeps it
        from pip._internal.metadata.base import stdlib_pkgs
    except ImportError:  # pip < 26
        from pip._internal.utils.compat import stdlib_pkgs

    paths = [p.replace("{venv}", str(venv), 1) for p in t.sys_path]
    with _FREEZE_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pip's own pkg_resources import
        return "".join(line + "\n" for line in freeze(paths=paths, skip=set(stdlib_pkgs)))


def _fingerprint(venv: Path, sandbox: Path) -> Dict[str, str]:
    return fingerprint(("venv", venv), ("root", sandbox), skip=("root/var", "root/venv"))


@pytest.fixture(scope="module")
def readonly_prefix() -> Tuple[Optional[Tuple[str, ...]], str]:
    return mount_namespace_argv()


@pytest.fixture(scope="module")
def uv_shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_uv_stop_shim(tmp_path_factory.mktemp("uv-stop-shim"))


@dataclasses.dataclass
class Outcome:
    out: str = ""  # what the apply printed
    marked: bool = False  # the point was reached: its hook (journal, pip, uv's shim) wrote the mark
    out_marks: str = ""  # what the hooks wrote into the mark
    fired: Optional[List[Dict[str, Any]]] = None  # what the uv watcher saw
    rb_rc: int = 0
    rb_out: str = ""
    rb_err: str = ""
    freeze: str = ""
    fingerprint: Optional[Dict[str, str]] = None
    skip: str = ""  # why the case cannot run on this machine
    tmp: str = ""  # the case's folder (kept by pytest's tmp_path_factory)
    live: List[str] = dataclasses.field(
        default_factory=list
    )  # processes still using the case, at the fingerprint
    later: Optional[Dict[str, str]] = (
        None  # a second fingerprint, 2 s later (taken only when the first differs)
    )

    def diagnostics(self, t: "Template") -> str:
        """Everything a failure needs to be explained without rerunning it: what the apply and the
        rollback said, the journal and its log, processes still alive at the fingerprint, and the
        differences (with a second fingerprint 2 s later: did something still change the target?)."""
        parts = [
            f"case folder: {self.tmp}",
            f"fault mark written: {self.marked} {self.out_marks!r}",
            f"uv watcher saw: {self.fired}",
            "apply said:\n" + self.out[-6000:],
            f"rollback exit {self.rb_rc}; stdout:\n{self.rb_out[-6000:]}\nstderr:\n{self.rb_err[-3000:]}",
            "processes using the case folder at the fingerprint: "
            + ("; ".join(self.live) or "none"),
        ]
        for journal in (
            sorted(Path(self.tmp, "root", "var").rglob("journal.json")) if self.tmp else []
        ):
            parts.append(f"{journal}:\n{journal.read_text(errors='replace')[-8000:]}")
            for log in sorted(journal.parent.glob("*.log")):
                parts.append(f"{log}:\n{log.read_text(errors='replace')[-8000:]}")
        if self.freeze != t.freeze:
            parts.append(f"freeze before:\n{t.freeze}freeze after:\n{self.freeze}")
        if self.fingerprint is not None:
            parts.append(
                "differences (before -> after rollback):\n"
                + "\n".join(differences(t.fingerprint, self.fingerprint)[:80])
            )
        if self.later is not None:
            parts.append(
                "differences 2 s later (after rollback -> later):\n"
                + ("\n".join(differences(self.fingerprint or {}, self.later)[:80]) or "none")
            )
        return "\n\n".join(parts)


def _run_case(
    kind: str,
    point: str,
    action: str,
    t: Template,
    index: PackageIndex,
    tmp: Path,
    readonly: Tuple[Optional[Tuple[str, ...]], str],
    shim: Path,
    base_env: Dict[str, str],
) -> Outcome:
    """One case: copy the template, apply with the fault, roll back; collect what to assert."""
    ro_prefix, ro_why = readonly
    if kind == "uv" and action == "readonly" and ro_prefix is None:
        return Outcome(skip=ro_why)
    sandbox = tmp / "root"
    sandbox.mkdir()
    os.chmod(sandbox, 0o755)
    venv = sandbox / "venv"  # inside the sandbox: --root refuses an interpreter outside it
    subprocess.run(["cp", "-a", str(t.venv), str(venv)], check=True, timeout=120, env=base_env)
    python = str(venv / "bin" / "python")
    env = _installer_env(tmp / "cache", base_env)
    env["PYTHONPATH"] = str(REPO)

    spec = f"nvidia-cudnn-cu13=={CUDNN_GOOD}"
    old, new = (
        f"nvidia_cudnn_cu13-{CUDNN_OLD}.dist-info",
        f"nvidia_cudnn_cu13-{CUDNN_GOOD}.dist-info",
    )
    site = next((venv / "lib").glob("python3*/site-packages"))
    if kind == "uv":
        env.update(LD_PRELOAD=str(shim), CCF_UV_STOP=uv_stop_spec(point, venv, site, old))
        step = uv_step(python, index, spec)
        if action == "readonly":
            step = dataclasses.replace(step, argv=(*(ro_prefix or ()), *step.argv))
    else:
        step = pip_step(python, index, spec)
    plan = Plan(
        steps=(*env_fix_steps(FIXES, home="/root", is_root=True), step),
        python=python,
        installer="uv" if kind == "uv" else "pip",
    )
    plan_file = tmp / "plan.json"
    plan_file.write_text(json.dumps(to_dict(plan)))
    mark = tmp / "fault.mark"
    env.update(CCF_FAULT=f"{point}:{action}", CCF_FAULT_MARK=str(mark))
    proc = subprocess.Popen(
        [sys.executable, "-c", APPLY_DRIVER, str(plan_file), python, str(sandbox)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=str(REPO),
    )
    outcome = Outcome(tmp=str(tmp))
    stop = threading.Event()
    watcher: Optional[threading.Thread] = None
    if kind == "uv":
        outcome.fired = []
        watcher = threading.Thread(
            target=uv_fault,
            daemon=True,
            args=(venv, site, point, action, proc.pid, old, new, outcome.fired, stop, base_env),
        )
        watcher.start()
    try:
        outcome.out, _ = proc.communicate(timeout=180)
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if watcher is not None:
            watcher.join(timeout=30)
    outcome.marked = mark.is_file()
    _roll_back_and_look(outcome, env, sandbox, mark, tmp, t, venv)
    return outcome


def _roll_back_and_look(
    outcome: "Outcome",
    env: Dict[str, str],
    sandbox: Path,
    mark: Path,
    tmp: Path,
    t: Template,
    venv: Path,
) -> None:
    """The rollback after the fault, and what the machine looks like after it."""
    env_rb = {k: v for k, v in env.items() if not k.startswith("CCF_") and k != "LD_PRELOAD"}
    rb = subprocess.run(
        [sys.executable, "-m", "fixer", "rollback", "--root", str(sandbox), "--json"],
        capture_output=True,
        text=True,
        env=env_rb,
        cwd=str(REPO),
        timeout=180,
    )
    outcome.rb_rc, outcome.rb_out, outcome.rb_err = rb.returncode, rb.stdout, rb.stderr
    outcome.out_marks = (
        mark.read_text() if mark.is_file() else ""
    )  # after the rollback: no hook runs any more
    outcome.live = _processes_under(tmp)
    outcome.freeze = _freeze(t, venv)
    outcome.fingerprint = _fingerprint(venv, sandbox)
    if outcome.freeze != t.freeze or outcome.fingerprint != t.fingerprint:
        time.sleep(2.0)
        outcome.later = _fingerprint(venv, sandbox)
        outcome.live += [f"2 s later: {p}" for p in _processes_under(tmp)]


def _processes_under(tmp: Path) -> List[str]:
    """Processes whose command line, working directory or open files name the case folder: none
    may be left once the rollback returned."""
    out = []
    base = str(tmp)
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat_ = f.read().decode("ascii", "replace")
            paths = [cmd]
            for name in ("cwd", "exe"):
                try:
                    paths.append(os.readlink(f"/proc/{entry}/{name}"))
                except OSError:
                    pass
            try:
                for fd in os.listdir(f"/proc/{entry}/fd"):
                    try:
                        paths.append(os.readlink(f"/proc/{entry}/fd/{fd}"))
                    except OSError:
                        pass
            except OSError:
                pass
        except OSError:
            continue
        if any(base in p for p in paths):
            out.append(
                f"pid {entry} state {stat_[stat_.rindex(')') + 2 :].split()[0]}: {cmd[:300]}"
            )
    return out


@pytest.fixture(scope="module")
def outcomes(
    request: pytest.FixtureRequest,
    template: Template,
    fault_index: PackageIndex,
    readonly_prefix: Tuple[Optional[Tuple[str, ...]], str],
    uv_shim: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Dict[str, "Future[Outcome]"]]:
    """Start every selected case (those pytest will run here), WORKERS at a time."""
    wanted = [
        item.callspec.id
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_fault_then_rollback_is_byte_identical"
        and Path(str(item.fspath)) == Path(__file__)
        and hasattr(item, "callspec")
    ]
    by_id = dict(zip(IDS, CASES))
    pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="fault-case")
    base_env = dict(
        os.environ
    )  # here, in the main thread, before any case starts (see _installer_env)
    futures = {
        cid: pool.submit(
            _run_case,
            *by_id[cid],
            template,
            fault_index,
            tmp_path_factory.mktemp(f"case-{cid}"),
            readonly_prefix,
            uv_shim,
            base_env,
        )
        for cid in wanted
        if cid in by_id
    }
    try:
        yield futures
    finally:
        for f in futures.values():
            f.cancel()
        pool.shutdown(wait=True)


@pytest.mark.parametrize("kind, point, action", CASES, ids=IDS)
def test_fault_then_rollback_is_byte_identical(
    kind: str,
    point: str,
    action: str,
    template: Template,
    outcomes: Dict[str, "Future[Outcome]"],
    request: pytest.FixtureRequest,
) -> None:
    o = outcomes[request.node.callspec.id].result(timeout=CASE_TIMEOUT)
    if o.skip:
        pytest.skip(o.skip)
    try:
        _check(kind, point, action, o, template)
    except AssertionError as exc:
        # the whole story of a failed case, in the report and in a file next to the case (a flake that
        # does not come back must still be explainable from what it left)
        diag = o.diagnostics(template)
        if o.tmp:
            Path(o.tmp, "DIAGNOSTICS.txt").write_text(diag)
        raise AssertionError(
            f"{exc}\n\n===== diagnostics ({o.tmp}/DIAGNOSTICS.txt) =====\n{diag}"
        ) from None


def _check(kind: str, point: str, action: str, o: Outcome, template: Template) -> None:
    out = o.out
    assert "Traceback" not in out and "TRACEBACK" not in out, "the apply printed a traceback"
    assert o.marked, f"the fault point {point} was never reached"
    if kind == "uv":
        assert o.fired, f"uv stopped at {point}, but the watcher never applied the fault"
        seen = o.fired[0]
        assert not seen["error"], f"the fault could not be applied at {point}: {seen['error']}"
        assert (seen["old"], seen["new"], seen["installer"], seen["files"]) == UV_POINT_STATE[
            point
        ], f"uv did not stop at {point}: {seen}"

    assert "Traceback" not in o.rb_out + o.rb_err, "the rollback printed a traceback"
    assert o.rb_rc == 0, f"the rollback exited {o.rb_rc}"
    report = json.loads(o.rb_out)["rollback"]
    assert report["status"] in ("rolled-back", "nothing-to-do"), (
        f"rollback status {report['status']}"
    )
    assert report["status"] == "nothing-to-do" or report["exact"], (
        "the rollback did not report exact"
    )
    assert not [p for p in o.live if not p.startswith("2 s later")], (
        "processes still ran at the fingerprint"
    )
    if action == "SIGKILL-linger":
        assert "lingering" in o.out_marks, (
            "pip did not outlive the apply: the window was not forced"
        )
        assert any("stopped the installer" in n for n in report.get("notes", ())), (
            "the rollback did not stop the installer the killed apply left running"
        )
    assert o.freeze == template.freeze, "pip freeze --all differs"
    assert o.fingerprint is not None
    assert differences(template.fingerprint, o.fingerprint) == [], "the fingerprint differs"
