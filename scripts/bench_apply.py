#!/usr/bin/env python3
"""Where an apply's wall time goes: a cuDNN-only repair, end to end, split into backup, install,
the check after it and the rest, then its rollback, checked byte for byte. A benchmark to read,
not a timed test.

    python3 scripts/bench_apply.py              on the GPU machine (no internet): the pip cuDNN
                                                of the machine's python3 is damaged (one
                                                sub-library truncated to a third), then repaired
                                                by `apply` from a wheelhouse built from the
                                                installed wheel (tests/helpers/wheelbuild.py, run
                                                as a child), then rolled back
    python3 scripts/bench_apply.py --dry        anywhere (CPU, no GPU, no network): a throw-away
                                                venv with a stand-in torch pinning cuDNN 9.19 and a
                                                --mb MB stand-in nvidia-cudnn-cu13 9.14 (real
                                                shared objects compiled with `cc`); `apply`
                                                upgrades it from a local wheelhouse; the machine is
                                                named by detection overrides (an H200, driver 580)
    python3 scripts/bench_apply.py --dry --framework-change
                                                the same, for a framework change: stand-in torch
                                                2.10 (pinning cuDNN 9.14) becomes 2.11 (pinning
                                                9.19), its cuDNN with it (the GPU machine cannot
                                                change a framework for real: it is offline and
                                                holds one build of each)

On the GPU machine the repair works on the machine's own site-packages, not a venv copy: torch,
JAX and CuPy load cuDNN through their RPATH ($ORIGIN/../../nvidia/cudnn/lib), relative to where
they are installed, so a venv holding its own cuDNN beside the system's frameworks would repair
a copy no framework loads. The cuDNN directory and its dist-info are copied aside first and put
back at the end whatever happens (checked by sha256). A framework change cannot run there:
the machine is offline and holds one build of each framework, so there is nothing to change to;
--dry has no framework change either (its stand-in torch is one build).

Phases are taken from apply's progress hooks (fixer.model.Reporter) and from timing
fixer.api.check_after_apply and fixer.verifier.checks.verify in this process:
    backup    the first "backing up" phase to the first step (record, hash, link or zip)
    install   the installer steps (pip-install / pip-uninstall), as the journal timed them
    check     check_after_apply: fresh detect + diagnose, beside the GPU conv checks (verify)
    rest      everything else: the import of fixer, detection, planning, journal, locks, the
              post-step version check
Rollback: `rollback()`'s wall time, its own verdict (exact), and the sha256 of every file under
the cuDNN directory and its dist-info compared with before the apply (BYTE-IDENTICAL).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fixer.rules import expected_cudnn_sonames  # noqa: E402

TAG = "py3-none-manylinux_2_17_x86_64"
TORCH = "2.11.0+cu130"
PINNED = "9.19.0.56"
OLD = "9.14.0.64"
OLD_TORCH = "2.10.0+cu130"  # --framework-change: the torch the venv starts with


def _wheel(
    out: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    requires: Sequence[str] = (),
    padding: int = 0,
    padding_path: str = "",
) -> Path:
    """A wheel with `files`, its METADATA (Requires-Dist), WHEEL and RECORD; `padding` bytes of
    incompressible data at `padding_path`, stored, so the wheel really is that big."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    entries = dict(files)
    if padding:
        block = (
            random.Random(name).randbytes(4096)
            if hasattr(random.Random, "randbytes")
            else os.urandom(4096)
        )
        entries[padding_path] = block * (padding // 4096)
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"] + [
        f"Requires-Dist: {r}" for r in requires
    ]
    entries[f"{info}/METADATA"] = ("\n".join(meta) + "\n").encode()
    entries[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: bench_apply\nRoot-Is-Purelib: false\nTag: {TAG}\n".encode()
    )
    record = (
        "".join(
            f"{arc},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
            f"{len(data)}\n"
            for arc, data in entries.items()
        )
        + f"{info}/RECORD,,\n"
    )
    entries[f"{info}/RECORD"] = record.encode()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{dist}-{version}-{TAG}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for arc, data in entries.items():
            zi = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o100644 << 16
            zi.compress_type = zipfile.ZIP_STORED if len(data) > 1 << 20 else zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return path


def _cudnn_wheel(out: Path, version: str, padding: int) -> Path:
    """nvidia-cudnn-cu13 VERSION: every library of a complete cuDNN 9 copy (fixer.rules), each a
    shared object compiled here whose cudnnGetVersion answers VERSION."""
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    number = major * 10000 + minor * 100 + patch
    files: Dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "stub.c"
        src.write_text(
            f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {number}; }}\n"
            "size_t cudnnGetCudartVersion(void) { return 13000; }\n"
        )
        for soname in expected_cudnn_sonames(major):
            lib = Path(tmp) / soname
            subprocess.run(
                [
                    os.environ.get("CC", "cc"),
                    "-shared",
                    "-fPIC",
                    f"-Wl,-soname,{soname}",
                    "-o",
                    str(lib),
                    str(src),
                ],
                check=True,
            )
            files[f"nvidia/cudnn/lib/{soname}"] = lib.read_bytes()
    files["nvidia/cudnn/include/cudnn_version.h"] = (
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n"
        f"#define CUDNN_PATCHLEVEL {patch}\n"
    ).encode()
    return _wheel(
        out,
        "nvidia-cudnn-cu13",
        version,
        files,
        padding=padding,
        padding_path="nvidia/cudnn/lib/_padding.bin",
    )


def _torch_wheel(out: Path, version: str, cudnn_pin: str, padding: int) -> Path:
    """torch VERSION: torch/version.py as real wheels write it, pinning nvidia-cudnn-cu13."""
    version_py = f"__version__ = '{version}'\ndebug = False\ncuda = '13.0'\nhip = None\n"
    return _wheel(
        out,
        "torch",
        version,
        {
            "torch/__init__.py": b"from .version import __version__\n",
            "torch/version.py": version_py.encode(),
        },
        requires=[f"nvidia-cudnn-cu13=={cudnn_pin}"],
        padding=padding,
        padding_path="torch/lib/_padding.bin",
    )


# ---------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------


class Timeline:
    """Progress hooks that stamp the phases (fixer.model.Reporter's methods)."""

    def __init__(self) -> None:
        self.marks: List[Tuple[float, str]] = []
        self.steps: List[Tuple[str, float]] = []
        self._started: Dict[int, float] = {}

    def phase(self, text: str) -> None:
        self.marks.append((time.perf_counter(), text))

    def step_started(self, index: int, total: int, step: Any) -> None:
        self._started[index] = time.perf_counter()
        self.marks.append((self._started[index], f"step {index}: {step.kind}"))

    def step_output(self, index: int, line: str) -> None:
        pass

    def step_finished(self, index: int, step: Any, result: Any) -> None:
        self.steps.append((step.kind, time.perf_counter() - self._started.get(index, 0.0)))

    def note(self, text: str) -> None:
        pass

    def starting(self, plan: Any) -> None:
        pass

    def checking(self, frameworks: Any) -> None:
        pass

    def watching(self, index: int, watch: Any) -> None:
        pass

    def backup_seconds(self) -> float:
        start = next((t for t, text in self.marks if text.startswith("backing up")), None)
        end = next((t for t, text in self.marks if text.startswith("step ")), None)
        return (end - start) if start is not None and end is not None else 0.0


def _timed(module: Any, name: str, into: Dict[str, float]) -> None:
    """Wrap module.name so that its wall time adds up in into[name]."""
    real = getattr(module, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        t = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            into[name] = into.get(name, 0.0) + time.perf_counter() - t

    setattr(module, name, wrapper)


def tree_sums(roots: Sequence[Path]) -> Dict[str, str]:
    """sha256 (and mode) of every file, the target of every symlink, under `roots`."""
    out: Dict[str, str] = {}
    for root in roots:
        if not root.exists():
            continue
        for p in sorted([root, *root.rglob("*")]):
            if p.is_symlink():
                out[str(p)] = "-> " + os.readlink(p)
            elif p.is_file():
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
                out[str(p)] = f"{digest} {p.stat().st_mode & 0o7777:o}"
            elif p.is_dir():
                out[str(p)] = f"dir {p.stat().st_mode & 0o7777:o}"
    return out


def repair_plan(
    python: str, wheelhouse: Path, spec: str, reinstall: bool, deps: bool = False
) -> Any:
    """The plan make_plan writes for a cuDNN-only change: one installer step, offline from the
    wheelhouse, no dependencies (the form tests/integration/apply uses too); `deps`: with its
    dependencies (a framework change brings its cuDNN pin)."""
    from fixer.model import Plan, Step
    from fixer.planner import installers

    tool = "uv" if shutil.which("uv") else "pip"
    opts = installers.pip_options(
        find_links=[str(wheelhouse)], no_index=True, no_deps=not deps, force_reinstall=reinstall
    )
    argv = installers.pip_argv(python, [spec], opts, installer=tool, uv=shutil.which("uv") or "uv")
    step = Step(
        kind="pip-install", summary=f"install {spec}", argv=argv, packages=(spec,), pip=opts
    )
    return Plan(steps=(step,), python=python, installer=tool)


def _apply_pipeline(python: str, wheelhouse: Path, root: Path, timeline: Timeline) -> Any:
    """The whole `apply` (detect, plan, apply, check) as the CLI runs it."""
    import fixer

    return fixer.apply(
        python=python,
        find_links=[str(wheelhouse)],
        no_index=True,
        root=str(root),
        reporter=timeline,  # type: ignore[arg-type]
        this_process=False,
    )


def _apply_plan(python: str, plan: Any, root: Path, timeline: Timeline) -> Any:
    """detect (the part of planning that reads the machine), apply_plan, check_after_apply."""
    import fixer.api
    from fixer.applier import apply_plan
    from fixer.detection import detect
    from fixer.model import PlanOptions

    detect(python)
    applied = apply_plan(
        plan, python=python, options=PlanOptions(root=str(root)), reporter=timeline
    )  # type: ignore[arg-type]
    fixer.api.check_after_apply(python, ())
    return applied


def run_apply(
    python: str, wheelhouse: Path, root: Path, watched: Sequence[Path], plan: Any = None
) -> Dict[str, Any]:
    """apply (offline, from `wheelhouse`; the whole pipeline, or `plan` through apply_plan)
    then rollback, in this process; the numbers."""
    t0 = time.perf_counter()
    import fixer
    import fixer.api
    import fixer.verifier.checks

    imported = time.perf_counter() - t0
    spent: Dict[str, float] = {}
    _timed(fixer.api, "check_after_apply", spent)
    _timed(fixer.verifier.checks, "run_checks", spent)  # verify() runs it too
    import fixer.applier.transaction
    import fixer.detection

    _timed(fixer.detection, "detect", spent)
    _timed(fixer.applier.transaction, "read_target", spent)
    before = tree_sums(watched)
    timeline = Timeline()
    t = time.perf_counter()
    if plan is None:
        result = _apply_pipeline(python, wheelhouse, root, timeline)
        data = result.to_dict()
        numbers: Dict[str, Any] = {"exit_code": result.exit_code, "outcome": data.get("outcome")}
    else:
        _apply_plan(python, plan, root, timeline)
        data, numbers = {}, {"exit_code": 0, "outcome": "applied (apply_plan)"}
    total = time.perf_counter() - t + imported
    install = sum(s for kind, s in timeline.steps if kind.startswith("pip-"))
    backup = timeline.backup_seconds()
    check = spent.get("check_after_apply", 0.0)
    numbers.update(
        steps=[{"kind": k, "seconds": round(s, 3)} for k, s in timeline.steps],
        apply_total=total,
        backup=backup,
        install=install,
        check=check,
        verify=spent.get("run_checks", 0.0),
        rest=total - backup - install - check,
        checks=[
            {
                "framework": c.get("framework"),
                "status": c.get("status"),
                "seconds": c.get("seconds"),
            }
            for c in data.get("verify", []) or []  # ApplyResult.to_dict: "verify"
        ],
    )
    numbers["import"] = imported
    numbers["detect"] = spent.get("detect", 0.0)
    numbers["read_target"] = spent.get("read_target", 0.0)
    t = time.perf_counter()
    back = fixer.rollback(root=str(root))
    numbers["rollback"] = time.perf_counter() - t
    back = getattr(back, "result", back)  # fixer.rollback() wraps the RollbackResult
    numbers["rollback_status"] = getattr(back, "status", None)
    numbers["rollback_exact"] = getattr(back, "exact", None)
    after = tree_sums(watched)
    numbers["byte_identical"] = before == after
    numbers["differences"] = sorted(
        p for p in set(before) | set(after) if before.get(p) != after.get(p)
    )[:10]
    return numbers


# ---------------------------------------------------------------------------------------
# the two setups
# ---------------------------------------------------------------------------------------


def _installer(env_python: str) -> List[str]:
    uv = shutil.which("uv")
    if uv:
        return [uv, "pip", "install", "--python", env_python]
    return [env_python, "-m", "pip", "install", "--no-input"]


def dry_setup(tmp: Path, mb: int) -> Tuple[str, Path, List[Path]]:
    """A throw-away venv: stand-in torch (pins cuDNN PINNED) and stand-in cuDNN OLD (`mb` MB);
    a wheelhouse with cuDNN PINNED. Returns (python, wheelhouse, paths to compare)."""
    wheels = tmp / "wheelhouse"
    _torch_wheel(wheels, TORCH, PINNED, padding=1 << 20)
    old = _cudnn_wheel(tmp / "old", OLD, padding=mb << 20)
    _cudnn_wheel(wheels, PINNED, padding=mb << 20)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    argv = _installer(py) + ["--no-deps", "--no-index", "--find-links", str(wheels)]
    subprocess.run(argv + [f"torch=={TORCH}", str(old)], check=True, capture_output=True)
    site = Path(
        subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    os.environ.update(
        COLAB_CUDNN_FIX_DRIVER="580.159.04",
        COLAB_CUDNN_FIX_CUDA="13.0",
        COLAB_CUDNN_FIX_GPU="NVIDIA H200:9.0",
    )
    return py, wheels, [site / "nvidia", *sorted(site.glob("nvidia_cudnn_cu13-*.dist-info"))]


def dry_framework_setup(tmp: Path, mb: int) -> Tuple[str, Path, List[Path]]:
    """Like dry_setup, for a framework change: the venv holds stand-in torch OLD_TORCH (pinning
    cuDNN OLD, both `mb` MB), the wheelhouse torch TORCH (pinning PINNED) and cuDNN PINNED; the
    plan installs torch==TORCH with its dependencies, so both the framework and its cuDNN change."""
    wheels = tmp / "wheelhouse"
    _torch_wheel(wheels, TORCH, PINNED, padding=mb << 20)
    _cudnn_wheel(wheels, PINNED, padding=mb << 20)
    old_torch = _torch_wheel(tmp / "old", OLD_TORCH, OLD, padding=mb << 20)
    old_cudnn = _cudnn_wheel(tmp / "old", OLD, padding=mb << 20)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    argv = _installer(py) + ["--no-deps", "--no-index"]
    subprocess.run(argv + [str(old_torch), str(old_cudnn)], check=True, capture_output=True)
    site = _site_of(py)
    os.environ.update(
        COLAB_CUDNN_FIX_DRIVER="580.159.04",
        COLAB_CUDNN_FIX_CUDA="13.0",
        COLAB_CUDNN_FIX_GPU="NVIDIA H200:9.0",
    )
    return py, wheels, [site / "nvidia", site / "torch", *sorted(site.glob("*.dist-info"))]


def _site_of(python: str) -> Path:
    out = subprocess.run(
        [
            python,
            "-c",
            "import importlib.metadata as m; print(m.distribution('nvidia-cudnn-cu13')._path)",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return Path(out)


def gpu_setup(tmp: Path, python: str) -> Tuple[str, Path, List[Path], Path]:
    """The machine's pip cuDNN, copied aside, wheel built from it, then damaged. Returns
    (python, wheelhouse, paths to compare, the copy aside)."""
    dist_info = _site_of(python)
    site = dist_info.parent
    lib = site / "nvidia" / "cudnn" / "lib"
    if not lib.is_dir():
        raise SystemExit(f"no pip cuDNN at {lib}: run on the GPU machine, or use --dry")
    aside = tmp / "aside"
    aside.mkdir()
    shutil.copytree(site / "nvidia" / "cudnn", aside / "cudnn", symlinks=True)
    shutil.copytree(dist_info, aside / dist_info.name, symlinks=True)
    wheels = tmp / "wheelhouse"
    wheels.mkdir()
    # the repack lives with the tests (tests/helpers/wheelbuild.py); run it as a child, as the
    # device scripts do, so that this script imports nothing of the tests
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from tests.helpers.wheelbuild import build_wheel_from_installed as b; "
            "print(b(sys.argv[1], sys.argv[2]))",
            str(dist_info),
            str(wheels),
        ],
        check=True,
        cwd=str(REPO),
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    victim = lib / "libcudnn_cnn.so.9"
    data = victim.read_bytes()
    victim.unlink()  # a new file: the copy aside and any hard link keep the original bytes
    victim.write_bytes(data[: len(data) // 3])
    return python, wheels, [site / "nvidia" / "cudnn", dist_info], aside


def gpu_putback(python_site: Path, dist_info_name: str, aside: Path) -> bool:
    """Put the machine's cuDNN back from the copy aside; True when it is byte-identical again."""
    target = python_site / "nvidia" / "cudnn"
    shutil.rmtree(target, ignore_errors=True)
    for d in python_site.glob("nvidia_cudnn_cu13-*.dist-info"):
        shutil.rmtree(d, ignore_errors=True)
    shutil.copytree(aside / "cudnn", target, symlinks=True)
    shutil.copytree(aside / dist_info_name, python_site / dist_info_name, symlinks=True)
    return tree_sums([aside / "cudnn"]) == {
        k.replace(str(target), str(aside / "cudnn"), 1): v for k, v in tree_sums([target]).items()
    }


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------


def table(label: str, n: Mapping[str, Any]) -> str:
    rows = [
        ("apply, end to end", n["apply_total"]),
        ("  backup", n["backup"]),
        ("  install", n["install"]),
        ("  check (detect + diagnose + GPU checks)", n["check"]),
        ("    of which GPU checks (run_checks)", n["verify"]),
        ("  rest (import, detect, plan, journal)", n["rest"]),
        ("    of which import of fixer", n["import"]),
        ("    of which detect (all calls, the check's too)", n["detect"]),
        ("    of which reading the target's distributions", n["read_target"]),
        ("rollback", n["rollback"]),
    ]
    lines = [f"{label}: apply exit {n['exit_code']} ({n['outcome']})", f"{'':50} {'seconds':>8}"]
    lines += [f"{name:50} {value:8.2f}" for name, value in rows]
    lines.append(f"{'apply without the check':50} {n['apply_total'] - n['check']:8.2f}")
    for c in n["checks"]:
        lines.append(f"  check {c['framework']}: {c['status']} in {c['seconds']} s")
    verdict = "BYTE-IDENTICAL" if n["byte_identical"] else "DIFFERS " + ", ".join(n["differences"])
    lines.append(
        f"rollback: {n['rollback_status']}, exact={n['rollback_exact']}, files vs before: {verdict}"
    )
    return "\n".join(lines)


def _gpu_run(python: str, wheels: Path, root: Path, watched: Sequence[Path]) -> Dict[str, Any]:
    """The whole pipeline; when it plans no repair (or refuses), the plan it would write for a
    reinstall of the installed version, through apply_plan (said in the output)."""
    from fixer.errors import FixerError

    try:
        numbers = run_apply(python, wheels, root, watched)
        if numbers.get("outcome") == "applied":
            return numbers
        why = f"apply's outcome was {numbers.get('outcome')}"
    except FixerError as exc:
        why = f"apply refused: {exc.message}"
    print(f"{why[:300]}; timing the repair plan through apply_plan instead")
    version = watched[1].name[len("nvidia_cudnn_cu13-") : -len(".dist-info")]
    plan = repair_plan(python, wheels, f"nvidia-cudnn-cu13=={version}", reinstall=True)
    return run_apply(python, wheels, root, watched, plan)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dry", action="store_true", help="CPU machine: stand-in wheels in a venv")
    ap.add_argument("--mb", type=int, default=50, help="--dry: size of the stand-in cuDNN wheel")
    ap.add_argument(
        "--framework-change",
        action="store_true",
        help="--dry: a framework change (stand-in torch 2.10 -> 2.11 and its cuDNN pin) instead "
        "of a cuDNN-only change (the GPU machine is offline and holds one build of each framework)",
    )
    ap.add_argument("--python", default=shutil.which("python3") or sys.executable)
    ap.add_argument("--json", help="also write the numbers here")
    ap.add_argument(
        "--zip-backups",
        action="store_true",
        help="keep every backup in the compressed zip, as before issue 25 (the fallback for a "
        "journal on another file system): the baseline to compare with",
    )
    args = ap.parse_args()
    if args.zip_backups:
        import fixer.applier.filetree

        fixer.applier.filetree.LINK_MIN = 1 << 62
    tmp = Path(tempfile.mkdtemp(prefix="bench-apply-"))
    aside: Optional[Path] = None
    try:
        if args.dry and args.framework_change:
            python, wheels, watched = dry_framework_setup(tmp, args.mb)
            label = (
                f"framework change torch {OLD_TORCH} -> {TORCH} with its cuDNN {OLD} -> {PINNED},"
                f" stand-in {args.mb} MB wheels (--dry, no GPU)"
            )
        elif args.dry:
            python, wheels, watched = dry_setup(tmp, args.mb)
            label = f"cuDNN-only change, stand-in {args.mb} MB wheel (--dry, no GPU)"
        else:
            python, wheels, watched, aside = gpu_setup(tmp, args.python)
            label = "cuDNN-only repair (truncated libcudnn_cnn.so.9) from a local wheelhouse"
        label += ", backups zipped (--zip-backups)" if args.zip_backups else ""
        root = tmp / "root"
        root.mkdir()
        if args.dry and args.framework_change:
            plan = repair_plan(python, wheels, f"torch=={TORCH}", reinstall=False, deps=True)
            numbers = run_apply(python, wheels, root, watched, plan)
        elif args.dry:
            plan = repair_plan(python, wheels, f"nvidia-cudnn-cu13=={PINNED}", reinstall=False)
            numbers = run_apply(python, wheels, root, watched, plan)
        else:
            numbers = _gpu_run(python, wheels, root, watched)
        print(table(label, numbers))
        if args.json:
            Path(args.json).write_text(json.dumps(numbers, indent=1))
    finally:
        if aside is not None:
            site = watched[1].parent
            ok = gpu_putback(site, watched[1].name, aside)
            print(f"machine's cuDNN put back: {'identical' if ok else 'DIFFERS'}")
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
