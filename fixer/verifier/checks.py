"""verify: prove, per framework, that the GPU stack really works, in a child process.

A conv that runs is not proof: on the GPU machine torch convolved on an older
apt cuDNN without any error, and a copy lacking libcudnn_engines_precompiled returned
silently wrong numbers for a small shape. So each framework gets a child process of the
target interpreter (fixer/children/verify.py, run by path) that convolves forward and
backward on the GPU against a CPU reference, and reports which cuDNN files it mapped,
their versions and the version the framework was built with. This module runs the
children (fixer.system.proc: a timeout, their own process group, killed with it) and turns what
came back (or the lack of it: a crash, a hang, garbage) into a CheckResult with findings.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from fixer.system import fsgate, proc as _proc
from fixer.system.paths import cache_dir
from fixer.system.versions import version_key
from fixer.errors import FixerError, UsageError
from fixer.model import VERIFIABLE, CheckResult, Environment, Finding
from fixer.rules import cudnn_relation
from fixer.system.paths import runnable_python
from fixer.children.childrules import cudnn_version_from_int
from fixer.explainer import explain

CHILD = Path(__file__).parent.parent / "children" / "verify.py"
MARK = "@@fixer-verify@@ "
OUTPUT_TAIL = 4000
#: A check that stops answering is killed with its process group, and read for 10 s more.
_STOP = _proc.Stop(((signal.SIGKILL, 10.0),))

_PROBE = (
    "import importlib.util as u, json\n"
    "print(json.dumps([n for n in %r if u.find_spec(n) is not None]))\n" % (VERIFIABLE,)
)


# ---------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------


def verify(
    python: Optional[str] = None,
    *,
    frameworks: Sequence[str] = (),
    timeout: float = 120.0,
    env: Optional[Environment] = None,
    environ: Optional[Mapping[str, str]] = None,
) -> Tuple[CheckResult, ...]:
    """One CheckResult per framework installed in the target interpreter (or per
    `frameworks`). Never raises for a broken stack: that is a failed result. Raises
    UsageError for bad arguments (unknown framework, missing interpreter). `environ`: the
    children's environment (default: this process's), e.g. the one a new shell gets after apply."""
    if timeout <= 0:
        raise UsageError(f"--timeout must be positive, got {timeout}")
    for f in frameworks:
        if f not in VERIFIABLE:
            raise UsageError(
                f"verify knows no framework {f!r}: choose from {', '.join(VERIFIABLE)}"
            )
    if python is None and env is not None and env.python is not None:
        python = env.python.executable
    explicit = python is not None
    python = python or sys.executable
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        raise UsageError(f"--python {python}: no such executable interpreter")
    wanted: Sequence[str] = frameworks
    if not wanted:
        if env is not None and env.frameworks:
            names = {b.framework for b in env.frameworks}
            wanted = [f for f in VERIFIABLE if f in names]
        else:
            wanted = installed_frameworks(python)
    elif explicit:
        installed_frameworks(python)  # an executable that is no Python interpreter is bad input
    return run_checks(
        python, wanted, timeout=timeout, environ=environ, gpus=env.gpus if env else ()
    )


def passed(results: Iterable[CheckResult]) -> bool:
    """True only when there was something to check and every check passed."""
    results = list(results)
    return bool(results) and all(r.status == "passed" for r in results)


def installed_frameworks(python: str, timeout: float = 30.0) -> Tuple[str, ...]:
    """Which of VERIFIABLE the target can import (importlib.util.find_spec: nothing is imported).
    UsageError when `python` is no Python interpreter (as detect says for --python)."""
    proc = _proc.run([runnable_python(python), "-I", "-c", _PROBE], timeout=timeout)
    try:
        if proc.error is not None or proc.timed_out:
            raise ValueError(proc.error or f"no answer within {timeout:g} s")
        names = json.loads(proc.text.strip().splitlines()[-1])
        if proc.returncode != 0 or not isinstance(names, list):
            raise ValueError(f"exit status {proc.returncode}")
    except (ValueError, IndexError) as exc:
        raise UsageError(
            f"--python {python}: could not inspect it ({type(exc).__name__}: {exc})",
            hint="it must be a Python 3 interpreter that runs on this machine",
        )
    return tuple(n for n in VERIFIABLE if n in names)


# ---------------------------------------------------------------------------------------
# running one child
# ---------------------------------------------------------------------------------------


def child_env(base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The child's environment: the caller's, plus settings that keep a check from taking
    the whole GPU (JAX preallocates 75% and TF all of it by default: a notebook kernel
    holding memory would make the check fail with out-of-memory), and the bytecode cache
    (bytecode_env) where the caller's environment turns bytecode off."""
    e = dict(os.environ if base is None else base)
    e.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    e.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    e.setdefault("PYTHONUNBUFFERED", "1")
    e.setdefault("PYTHONFAULTHANDLER", "1")
    return bytecode_env(e)


def bytecode_env(e: Dict[str, str]) -> Dict[str, str]:
    """With PYTHONDONTWRITEBYTECODE set (Docker images often set it, the GPU machine does) and
    no .pyc shipped, every check child compiles the framework's sources again: on the GPU machine
    3.3 s of torch's 5.5 s import (docs/measurements/runs-2026-11-27b/jax_torch_why.txt).
    The child then writes its bytecode into this tool's own private cache instead
    (PYTHONPYCACHEPREFIX, docs.python.org/3/using/cmdline.html#envvar-PYTHONPYCACHEPREFIX:
    bytecode goes to a mirror tree there, never beside the sources; the user's wish not to
    have .pyc files written into their environment holds). The cache is 0700 and this user's
    (fsgate.private_dir): a planted .pyc would run as this user. A prefix the user set is kept;
    a cache that cannot be made private means the child runs as before."""
    prefix = _bytecode_prefix(e)
    if prefix is None:
        return e
    out = {k: v for k, v in e.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(prefix)
    return out


def _bytecode_prefix(e: Mapping[str, str]) -> Optional[Path]:
    """The private bytecode cache the children of environment `e` use, or None (bytecode_env)."""
    if not e.get("PYTHONDONTWRITEBYTECODE") or e.get("PYTHONPYCACHEPREFIX"):
        return None
    try:
        fsgate.private_dir(cache_dir(), what="cache directory")
        return fsgate.private_dir(cache_dir() / "bytecode", what="bytecode cache")
    except (OSError, FixerError):
        return None


#: What warm_bytecode compiles: the frameworks verify runs and the big pure-Python packages they
#: import at once (the importable top-level names; a missing one is skipped).
WARM_PACKAGES = ("torch", "jax", "jaxlib", "cupy", "cupy_backends", "tensorflow", "keras", "numpy")

#: A package's own test suites (directories test/ and tests/) are never imported by its import:
#: warm_bytecode skips them.
_WARM = """
import compileall, importlib.util, re, sys
skip = re.compile(r"[/\\\\]tests?[/\\\\]")
for name in sys.argv[1:]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        continue
    for d in (spec.submodule_search_locations or []) if spec else []:
        compileall.compile_dir(d, quiet=2, workers=0, rx=skip)
"""

#: How long a check waits for an unfinished warm_bytecode before stopping it (what it has not
#: compiled yet, the check's children compile themselves, as without it).
WARM_GRACE_SECONDS = 2.0


def warm_bytecode(
    python: str, environ: Optional[Mapping[str, str]] = None
) -> Optional[_proc.Child]:
    """Where the checks would compile the frameworks' sources (bytecode_env: bytecode turned off,
    no .pyc shipped), compile them into the bytecode cache now, in one child of the target
    interpreter using every core (compileall, workers=0), while apply detects, backs up and
    installs. On a freshly started GPU machine the first post-apply check compiled torch's
    sources in its own child (3.3 s of its 5.5 s import). Returns the running child (stop it
    with finish_warm before the check), or None when the checks would not use the cache. It
    writes only into the private cache; py_compile writes each file atomically, and a .pyc is
    checked against its source's size and mtime when imported, so a file the installer replaces
    meanwhile is compiled again by the check, never used stale."""
    env = child_env(environ)
    if _bytecode_prefix({**(os.environ if environ is None else environ)}) is None:
        return None
    child = _proc.Child(
        [python, "-W", "ignore", "-c", _WARM, *WARM_PACKAGES], timeout=600.0, env=env, stop=_STOP
    )
    return None if child.error else child


def finish_warm(child: Optional[_proc.Child], grace: float = WARM_GRACE_SECONDS) -> None:
    """Let warm_bytecode's child finish for up to `grace` seconds, then stop it."""
    if child is None or child.proc is None:
        return
    try:
        child.proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    child.stop()


#: GPU memory (MiB) one framework's check may use at its peak, with room to spare: its CUDA
#: context and the libraries' kernels it loads, plus the check's small convs (a few MB of data).
#: JAX runs with XLA_PYTHON_CLIENT_PREALLOCATE=false and TensorFlow with allow_growth (child_env),
#: so neither takes a share of the whole GPU; without those JAX would take 75 % of it ("GPU
#: memory allocation", https://docs.jax.dev/en/latest/gpu_memory_allocation.html) and TF all of
#: it. scripts/device/verify_parallel.sh measures the real peaks on the GPU machine.
GPU_NEED_MIB = {"torch": 2048, "jax": 2048, "tensorflow": 3072, "cupy": 1024, "libs": 512}
#: Memory left to whatever else runs on the GPU (a notebook kernel) when checks run together.
GPU_RESERVE_MIB = 1024


def concurrent_ok(frameworks: Sequence[str], free_mib: Optional[int]) -> bool:
    """Whether the checks of `frameworks` may run at the same time: the GPU's free memory (MiB;
    None: unknown, so one at a time) holds all of their GPU_NEED_MIB plus GPU_RESERVE_MIB."""
    if len(frameworks) < 2 or free_mib is None:
        return False
    need = sum(GPU_NEED_MIB.get(f, max(GPU_NEED_MIB.values())) for f in frameworks)
    return need + GPU_RESERVE_MIB <= free_mib


def parse_free_mib(text: str) -> Optional[int]:
    """The least free memory (MiB) of the GPUs in `nvidia-smi --query-gpu=memory.free
    --format=csv,noheader,nounits` output ("81037" per line), or None when it says nothing usable."""
    values = []
    for line in text.splitlines():
        word = line.strip().split(" ")[0] if line.strip() else ""
        if word.isdigit():
            values.append(int(word))
    return min(values) if values else None


def free_gpu_mib(environ: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """Free memory of the GPU the checks run on (the least of the visible ones), from
    nvidia-smi; None when it cannot say (no driver, no GPU, a timeout)."""
    import shutil

    smi = shutil.which("nvidia-smi", path=(environ or os.environ).get("PATH"))
    if smi is None:
        return None
    argv = [smi, "--query-gpu=memory.free", "--format=csv,noheader,nounits"]
    cvd = (environ or os.environ).get("CUDA_VISIBLE_DEVICES")
    if cvd and all(p.strip().isdigit() for p in cvd.split(",")):
        argv.append("--id=" + cvd.replace(" ", ""))
    proc = _proc.run(argv, timeout=10.0)
    if proc.error is not None or proc.timed_out or proc.returncode != 0:
        return None
    return parse_free_mib(proc.text)


def run_checks(
    python: str,
    frameworks: Sequence[str],
    *,
    timeout: float = 120.0,
    environ: Optional[Mapping[str, str]] = None,
    gpus: Sequence[Any] = (),
    free_mib: Optional[int] = -1,
    script: Optional[str] = None,
    args: Sequence[str] = (),
) -> Tuple[CheckResult, ...]:
    """One CheckResult per framework, in the order given (each framework once, however often it
    is named). The children run at the same time when the GPU's free memory holds them all
    (concurrent_ok), else one after another. `free_mib` -1: ask nvidia-smi (when a real GPU was
    detected, or no detection was given) while the first child starts (it runs first either way,
    and a framework's import takes longer than the query, so the reading is taken before it
    touches the GPU, or lower: on the safe side). `script`/`args`: stand-in children (tests)."""
    names = list(dict.fromkeys(frameworks))
    if not names:
        return ()

    def start(framework: str) -> "_Started":
        return start_check(
            python, framework, timeout=timeout, script=script, args=args, environ=environ
        )

    # started here, in the calling thread (a Ctrl-C while one starts is held until it is known)
    first = start(names[0])
    if free_mib == -1:
        real = not gpus or any(getattr(g, "source", "") != "override" for g in gpus)
        free_mib = free_gpu_mib(environ) if len(names) > 1 and real else None
    if not concurrent_ok(names, free_mib):
        return (finish_check(first),) + tuple(finish_check(start(f)) for f in names[1:])
    from concurrent.futures import ThreadPoolExecutor

    # each is read on its own thread, so none waits on a full pipe while another runs
    started = [first] + [start(f) for f in names[1:]]
    with ThreadPoolExecutor(len(started)) as pool:
        return tuple(pool.map(finish_check, started))


class _Started:
    """A started check: its child, and what classifying its answer needs."""

    def __init__(self, python: str, framework: str, timeout: float, child: "_proc.Child") -> None:
        self.python, self.framework, self.timeout, self.child = python, framework, timeout, child


def start_check(
    python: str,
    framework: str,
    *,
    timeout: float = 120.0,
    script: Optional[str] = None,
    args: Sequence[str] = (),
    environ: Optional[Mapping[str, str]] = None,
) -> _Started:
    """Start the child for `framework` (see run_check)."""
    argv = [python, str(script or CHILD), framework, *args]
    child = _proc.Child(argv, timeout=timeout, env=child_env(environ), stop=_STOP)
    return _Started(python, framework, timeout, child)


def finish_check(started: _Started) -> CheckResult:
    """Wait for a started check and classify what it did. Once the "done" record is in and the
    child closed its pipes, it is tearing down its CUDA context (0.2 s on the GPU machine): that
    is not waited for (it exits with the code main() returned, 0). A child that stops answering
    is killed with its process group; a grandchild may hold the pipes, so its output is read for
    up to 10 s more."""
    framework = started.framework
    done = started.child.wait(
        done=lambda out: any(
            r["event"] == "done" for r in parse_records(out.decode("utf-8", "replace"))
        )
    )
    if done.error is not None:
        return CheckResult(
            framework=framework,
            status="failed",
            summary=f"could not start {started.python}: {done.error}",
            output=done.error,
        )
    records = parse_records(done.text)
    returncode = done.returncode
    if returncode is None and not done.timed_out and any(r["event"] == "done" for r in records):
        returncode = 0
    return classify(
        framework,
        records,
        stdout=done.text,
        stderr=done.errors,
        returncode=returncode,
        timed_out=done.timed_out,
        timeout=started.timeout,
        seconds=done.seconds,
        started_wall=done.started_wall,
    )


def run_check(
    python: str,
    framework: str,
    *,
    timeout: float = 120.0,
    script: Optional[str] = None,
    args: Sequence[str] = (),
    environ: Optional[Mapping[str, str]] = None,
) -> CheckResult:
    """Run the child for `framework` and classify what it did. `script` and `args` exist
    for tests (stand-in children) and for the libs mode of the real child."""
    return finish_check(
        start_check(python, framework, timeout=timeout, script=script, args=args, environ=environ)
    )


def parse_records(stdout: str) -> List[Dict[str, Any]]:
    """The child's protocol records; lines without the marker or with bad JSON are skipped."""
    records = []
    for line in stdout.splitlines():
        if not line.startswith(MARK):
            continue
        try:
            rec = json.loads(line[len(MARK) :])
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("event"), str):
            records.append(rec)
    return records


# ---------------------------------------------------------------------------------------
# classification
# ---------------------------------------------------------------------------------------


def check_loaded(framework: str, loaded: Mapping[str, Any], built: Optional[str]) -> List[Finding]:
    """Findings from the child's loaded-library record (mapped cuDNN files, their versions,
    what the copy lacks) compared with the version the framework was built with."""
    files = [f for f in loaded.get("files") or () if isinstance(f, dict)]
    if not files:
        return []
    fw = (framework,) if framework != "libs" else ()
    listing = tuple(f"{f['path']} ({f.get('version') or 'version unknown'})" for f in files)
    main = next((f for f in files if f.get("lib") == "libcudnn"), None)
    findings = _mixed(files, main, fw, listing)
    if main:
        findings += _version_findings(framework, main, built, fw, listing)
        missing = tuple(loaded.get("missing") or ())
        if missing:
            findings.append(_incomplete(framework, main, missing, fw, listing))
    return findings


def _mixed(
    files: Sequence[Mapping[str, Any]],
    main: Optional[Mapping[str, Any]],
    fw: Tuple[str, ...],
    listing: Tuple[str, ...],
) -> List[Finding]:
    """cudnn-mixed: the mapped cuDNN files come from several directories or versions."""
    dirs = sorted({f["dir"] for f in files})
    versions = sorted({f["version"] for f in files if f.get("version")}, key=version_key)
    if len(dirs) <= 1 and len(versions) <= 1:
        return []
    odd = [
        f
        for f in files
        if main
        and (
            f["dir"] != main["dir"]
            or (f.get("version") and f.get("version") != main.get("version"))
        )
    ]
    what = (
        ", ".join(
            f"{os.path.basename(f['path'])} {f.get('version') or '?'} from {f['dir']}" for f in odd
        )
        or "several copies"
    )
    return [
        Finding(
            id="cudnn-mixed",
            severity="error",
            frameworks=fw,
            title=f"cuDNN sub-libraries come from {max(len(dirs), len(versions))} copies: {what}"
            + (f", with libcudnn.so {main.get('version')} from {main['dir']}" if main else ""),
            evidence=listing,
            fix="Load every cuDNN library from one copy: remove the other copy's directory from LD_PRELOAD and "
            "LD_LIBRARY_PATH (or remove that copy), then restart the process. `colab-cudnn-fix apply` plans it.",
        )
    ]


def _version_findings(
    framework: str,
    main: Mapping[str, Any],
    built: Optional[str],
    fw: Tuple[str, ...],
    listing: Tuple[str, ...],
) -> List[Finding]:
    """cudnn-major-mismatch / cudnn-too-old: the loaded libcudnn against the build's version
    (rules.cudnn_relation)."""
    loaded_version = main.get("version")
    relation = cudnn_relation(loaded_version, built)
    if not (loaded_version and built) or relation in (None, "ok"):
        return []
    bv = version_key(built)
    if relation == "other-major":
        return [
            Finding(
                id="cudnn-major-mismatch",
                severity="error",
                frameworks=fw,
                title=f"{framework} was built with cuDNN {built} but loaded cuDNN {loaded_version} from {main['dir']}",
                evidence=listing,
                fix=f"Install cuDNN {bv[0]}.x (the nvidia-cudnn wheel {framework} requires) and make it the copy that loads.",
            )
        ]
    return [
        Finding(
            id="cudnn-too-old",
            severity="error",
            frameworks=fw,
            title=f"{framework} runs on cuDNN {loaded_version} from {main['dir']}, older than the {built} it was built with",
            evidence=listing + (f"built with cuDNN {built}",),
            fix=f"Make {framework} load a cuDNN >= {'.'.join(map(str, bv[:2]))} (its pip nvidia-cudnn wheel): drop "
            f"{main['dir']} from LD_LIBRARY_PATH/LD_PRELOAD or upgrade that copy. `colab-cudnn-fix apply` plans it.",
        )
    ]


def _incomplete(
    framework: str,
    main: Mapping[str, Any],
    missing: Tuple[str, ...],
    fw: Tuple[str, ...],
    listing: Tuple[str, ...],
) -> Finding:
    return Finding(
        id="cudnn-incomplete",
        severity="error",
        frameworks=fw,
        title=f"the cuDNN copy {framework} loaded ({main['dir']}) lacks {', '.join(missing)}",
        evidence=listing + tuple(f"missing: {main['dir']}/{m}" for m in missing),
        fix="Reinstall that copy whole (pip install --force-reinstall the nvidia-cudnn wheel, or reinstall the "
        "apt package): without its engine libraries convs fail or return wrong numbers.",
    )


def _signal_name(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


def classify(
    framework: str,
    records: Sequence[Mapping[str, Any]],
    *,
    stdout: str = "",
    stderr: str = "",
    returncode: Optional[int] = 0,
    timed_out: bool = False,
    timeout: float = 0.0,
    seconds: Optional[float] = None,
    started_wall: Optional[float] = None,
) -> CheckResult:
    """What a child's records, output and exit mean, as a CheckResult."""
    by: Dict[str, List[Mapping[str, Any]]] = {}
    for r in records:
        by.setdefault(str(r.get("event")), []).append(r)

    def last(event: str) -> Mapping[str, Any]:
        return (by.get(event) or [{}])[-1]

    imported = last("imported")
    cases = tuple({k: v for k, v in c.items() if k != "event"} for c in by.get("case", ()))
    errors = tuple(
        f"{e.get('stage')}: {e.get('type')}: {e.get('message')}" for e in by.get("error", ())
    )
    loaded = _merged_loaded(by.get("loaded", ()))
    built = last("built").get("cudnn_built")
    files = [f for f in loaded.get("files") or () if isinstance(f, dict)]
    main = next((f for f in files if f.get("lib") == "libcudnn"), None)
    tail = _tail(stderr, stdout)
    findings = _nogpu_findings(framework, last("nogpu"), last("start"), imported)
    findings.extend(check_loaded(framework, loaded, built))
    # Error texts (and the framework's own log lines on stderr) through the explain rules.
    text = "\n".join(errors + ((stderr[-20000:],) if stderr else ()))
    if text.strip():
        findings.extend(_explained(text, have={f.id for f in findings}, framework=framework))
    findings = _dedupe(findings)
    status, summary, sig = _verdict(
        framework, by, cases, errors, findings, main, returncode, timed_out, timeout, tail
    )
    first = last("first").get("ms")
    steady = cases[0].get("steady_ms") if cases else None
    device = last("device")
    return CheckResult(
        framework=framework,
        status=status,  # type: ignore[arg-type]
        summary=summary,
        findings=tuple(findings),
        cudnn_loaded=(main or {}).get("version")
        or _reported(last("runtime").get("cudnn_reported")),
        cudnn_built=built,
        mapped=tuple(f["path"] for f in files),
        cases=cases,
        first_seconds=round(first / 1000, 4) if isinstance(first, (int, float)) else None,
        steady_seconds=round(steady / 1000, 6) if isinstance(steady, (int, float)) else None,
        seconds=round(seconds, 3) if seconds is not None else None,
        output="" if status == "passed" else tail,
        version=imported.get("version"),
        device=device.get("name"),
        compute_capability=device.get("cc"),
        import_seconds=round(imported["seconds"], 3)
        if isinstance(imported.get("seconds"), (int, float))
        else None,
        signal=sig,
        errors=errors,
        phases=phases(by, seconds, started_wall),
    )


def _nogpu_findings(
    framework: str,
    nogpu: Mapping[str, Any],
    start: Mapping[str, Any],
    imported: Mapping[str, Any],
) -> List[Finding]:
    """What a "nogpu" record means: a build without CUDA, another cause the explain rules see
    in its message (a driver too old, a cuDNN JAX refuses), or no visible GPU."""
    if not nogpu:
        return []
    fw = (framework,) if framework != "libs" else ()
    if nogpu.get("reason") == "cpu-only-build":
        return [
            Finding(
                id="cpu-only-build",
                severity="error",
                frameworks=fw,
                title=f"{framework} {imported.get('version') or ''} is a build without CUDA".replace(
                    "  ", " "
                ),
                evidence=(str(nogpu.get("message")),),
                fix=f"Install a CUDA build of {framework}; `colab-cudnn-fix plan` names the one that fits the driver.",
            )
        ]
    cvd = start.get("cuda_visible_devices")
    message = str(nogpu.get("message"))
    hidden = cvd is not None and cvd.strip() in ("", "-1")
    other = (
        []
        if hidden
        else [f for f in _explained(message, set(), framework) if f.id != "gpu-missing"]
    )
    if other:
        return other[:1]
    evidence = [message]
    if hidden:
        evidence.append(f"CUDA_VISIBLE_DEVICES={cvd!r} hides every GPU")
    return [
        Finding(
            id="gpu-missing",
            severity="error",
            frameworks=fw,
            title=f"{framework} sees no GPU",
            evidence=tuple(evidence),
            fix="Unset CUDA_VISIBLE_DEVICES (or set it to a GPU index) and, on Colab, pick a GPU "
            "runtime (Runtime > Change runtime type).",
        )
    ]


def _verdict(
    framework: str,
    by: Mapping[str, Sequence[Mapping[str, Any]]],
    cases: Sequence[Mapping[str, Any]],
    errors: Sequence[str],
    findings: Sequence[Finding],
    main: Optional[Mapping[str, Any]],
    returncode: Optional[int],
    timed_out: bool,
    timeout: float,
    tail: str,
) -> Tuple[str, str, Optional[str]]:
    """(status, summary, signal name) of a check, from how the child ended and what it said."""
    sig = None
    if timed_out:
        status, summary = "timeout", f"no answer within {timeout:g} s: the child was killed"
    elif returncode is not None and returncode < 0:
        sig = _signal_name(-returncode)
        status = "crashed"
        summary = f"the child died of {sig}" + (f" after {len(cases)} case(s)" if cases else "")
    elif not any(by.values()):
        status = "failed"
        summary = f"no result from the child (exit {returncode}): " + (
            _last_line(tail) or "no output"
        )
    elif not by.get("done"):
        stalled = next((e for e in by.get("error", ()) if e.get("type") == "Stalled"), None)
        status = "failed"
        summary = (
            f"stalled in {stalled.get('stage')}: {stalled.get('message')}"
            if stalled
            else f"the child stopped early (exit {returncode})"
        )
    else:
        status, summary = _finished_verdict(framework, cases, errors, findings, main)
    if status != "passed" and findings and findings[0].title not in summary:
        summary = f"{summary}; {findings[0].id}: {findings[0].title}"
    return status, summary, sig


def _finished_verdict(
    framework: str,
    cases: Sequence[Mapping[str, Any]],
    errors: Sequence[str],
    findings: Sequence[Finding],
    main: Optional[Mapping[str, Any]],
) -> Tuple[str, str]:
    """(status, summary) of a child that ran to its end."""
    bad_cases = [c for c in cases if not c.get("ok")]
    if not (any(f.severity == "error" for f in findings) or errors or bad_cases or not cases):
        return "passed", (
            f"{len(cases)} {'GEMM' if framework == 'cupy' else 'conv'} check{'s' if len(cases) != 1 else ''} passed"
            + (f" on cuDNN {main.get('version')}" if main and main.get("version") else "")
        )
    if bad_cases:
        b = bad_cases[0]
        return "failed", (
            f"wrong numbers: {b.get('case')} {b.get('dtype')} max error {b.get('max_error')} "
            f"> tolerance {b.get('tolerance')}"
            + (f" (+{len(bad_cases) - 1} more)" if len(bad_cases) > 1 else "")
        )
    if errors:
        return "failed", errors[0][:300]
    if findings:
        return "failed", findings[0].title
    return "failed", "no convolution ran"


def phases(
    by: Mapping[str, Sequence[Mapping[str, Any]]],
    seconds: Optional[float],
    started_wall: Optional[float],
) -> Dict[str, float]:
    """Where the child's wall time went, from the "t" (seconds since the child script started)
    of its records: startup, import, gpu_init, first_conv, checks, exit. A phase whose end the
    child never reached (a crash, a missing GPU) is left out."""

    def t(event: str, which: int = -1) -> Optional[float]:
        recs = by.get(event) or ()
        v = recs[which].get("t") if recs else None
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    out: Dict[str, float] = {}
    start = (by.get("start") or [{}])[0]
    wall0 = start.get("wall")
    if isinstance(wall0, (int, float)) and started_wall is not None:
        out["startup"] = max(0.0, float(wall0) - started_wall)
    imported, device, first, done = t("imported"), t("device"), t("first", 0), t("done")
    imp = (by.get("imported") or [{}])[-1].get("seconds")
    if imported is not None and isinstance(imp, (int, float)):
        out["import"] = float(imp)
    marks = [("gpu_init", imported, device), ("first_conv", device, first), ("checks", first, done)]
    for name, a, b in marks:
        if a is not None and b is not None and b >= a:
            out[name] = b - a
    if done is not None and seconds is not None and "startup" in out:
        out["exit"] = max(0.0, seconds - out["startup"] - done)
    return {k: round(v, 3) for k, v in out.items()}


def _merged_loaded(records: Sequence[Mapping[str, Any]]) -> Dict[str, Any]:
    """Every cuDNN file any loaded-record saw (files are only ever added to a process, and a
    crash may cut the later records short); `missing` from the latest record."""
    files: List[Dict[str, Any]] = []
    seen = set()
    missing: Sequence[str] = ()
    for rec in records:
        for f in rec.get("files") or ():
            if isinstance(f, dict) and f.get("path") not in seen:
                seen.add(f.get("path"))
                files.append(dict(f))
        missing = rec.get("missing") or missing
    return {"files": files, "missing": list(missing)}


def _reported(v: Any) -> Optional[str]:
    if isinstance(v, int) and v > 0:
        return cudnn_version_from_int(v)
    return None


def _explained(text: str, have: Set[str], framework: str) -> List[Finding]:
    """Findings the explain rules draw from the child's error texts; only confident ones,
    never log noise, and only ids not already proven by the structural checks."""
    out = []
    for f in explain(text):
        if f.id == "log-noise" or f.id in have or f.confidence < 0.5:
            continue
        out.append(
            Finding(
                id=f.id,
                severity=f.severity,
                title=f.title,
                evidence=f.evidence,
                fix=f.fix,
                frameworks=(framework,),
                confidence=f.confidence,
            )
        )
    return out


def _dedupe(findings: Sequence[Finding]) -> List[Finding]:
    seen, out = set(), []
    for f in findings:
        if f.id not in seen:
            seen.add(f.id)
            out.append(f)
    return out


def _tail(stderr: str, stdout: str) -> str:
    text = stderr
    junk = "\n".join(l for l in stdout.splitlines() if not l.startswith(MARK))
    if junk.strip():
        text = (text + "\n[stdout]\n" + junk) if text else junk
    return text[-OUTPUT_TAIL:]


def _last_line(text: str) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""
