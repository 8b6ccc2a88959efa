"""apt steps, holds and rollback against a REAL dpkg database in a sandbox: .deb files built by
dpkg-deb, installed with `dpkg --root/--admindir`. The commands apply journals and rollback runs
(apt-get install PKG=VER, apt-mark hold/unhold/showhold, dpkg-query -W, apt-get remove) are run
by real dpkg on that database: apt-get's own resolver needs a repository, so the runner hands
each package to dpkg directly from the sandbox's pool (the one thing apt-get adds here)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path
from typing import List, Sequence

import pytest

from fixer.applier import apply_plan, rollback
from fixer.applier.runner import run_command
from fixer.model import CommandResult
from fixer.errors import StepFailed
from fixer.model import Plan, PlanOptions, Stack, Step
from fixer.planner import installers
from tests.helpers.paths import sandbox_python

pytestmark = pytest.mark.skipif(
    shutil.which("dpkg") is None or shutil.which("dpkg-deb") is None,
    reason="dpkg / dpkg-deb not installed",
)
if hasattr(os, "geteuid") and os.geteuid() != 0:
    pytestmark = pytest.mark.skip(
        reason="dpkg --root needs root (CI and the dev machines run as root)"
    )

LIB = "usr/lib/x86_64-linux-gnu/libcudnn.so.8"


def build_deb(pool: Path, package: str, version: str) -> Path:
    src = pool / f"src-{package}-{version}"
    (src / "DEBIAN").mkdir(parents=True)
    lib = src / LIB
    lib.parent.mkdir(parents=True)
    lib.write_text(f"{package} {version}\n")
    (src / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: {version}\nArchitecture: all\nMaintainer: test <t@example.org>\n"
        f"Description: stand-in for NVIDIA's {package}\n"
    )
    deb = pool / f"{package}_{version}_all.deb"
    subprocess.run(
        ["dpkg-deb", "--build", "--root-owner-group", str(src), str(deb)],
        check=True,
        capture_output=True,
    )
    return deb


class SandboxDpkg:
    """Runs the apt/dpkg commands of a plan and of rollback with real dpkg on the sandbox database."""

    def __init__(self, root: Path, pool: Path) -> None:
        self.root, self.pool, self.admin = root, pool, root / "var/lib/dpkg"
        self.calls: List[Sequence[str]] = []
        self.indexed = False  # the package lists know the pool only after `apt-get update`

    def dpkg(self, *args: str, stdin: str = "") -> CommandResult:
        proc = subprocess.run(
            [
                "dpkg",
                f"--root={self.root}",
                f"--admindir={self.admin}",
                "--force-hold",
                "--force-downgrade",
                "--force-script-chrootless",
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
        )
        return CommandResult(rc=proc.returncode, output=proc.stdout + proc.stderr)

    def __call__(
        self, argv: Sequence[str], *, timeout: float, on_output=None, env=None
    ) -> CommandResult:
        self.calls.append(tuple(argv))
        argv = list(argv)
        # the words after the end-of-options marker are names, as apt's own parser reads them
        # (apt-pkg/contrib/cmndline.cc, CommandLine::Parse)
        names = argv[argv.index("--") + 1 :] if "--" in argv else argv[2:]
        if argv[0] == "dpkg-query":
            return run_command(
                ["dpkg-query", f"--admindir={self.admin}", *argv[1:]], timeout=timeout
            )
        if argv[:2] == ["apt-mark", "showhold"]:
            res = run_command(
                ["dpkg-query", f"--admindir={self.admin}", "-W", "-f=${Package} ${Status}\\n"],
                timeout=timeout,
            )
            held = [
                line.split()[0]
                for line in res.output.splitlines()
                if len(line.split()) > 1 and line.split()[1] == "hold"
            ]
            return CommandResult(rc=0, output="\n".join(held))
        if argv[0] == "apt-mark" and argv[1] in ("hold", "unhold"):
            want = "hold" if argv[1] == "hold" else "install"
            return self.dpkg("--set-selections", stdin="".join(f"{p} {want}\n" for p in names))
        if argv[:2] == ["apt-get", "update"]:
            self.indexed = True
            return CommandResult(rc=0)
        if argv[:2] == ["apt-cache", "policy"]:
            versions = (
                sorted(p.name.split("_")[1] for p in self.pool.glob(f"{names[0]}_*.deb"))
                if self.indexed
                else []
            )
            return CommandResult(
                rc=0,
                output=f"{names[0]}:\n  Version table:\n"
                + "".join(f"     {v} 500\n" for v in versions),
            )
        if argv[:2] == ["apt-get", "install"]:
            debs = [
                str(self.pool / f"{p.split('=')[0]}_{p.split('=')[1]}_all.deb")
                for p in names
                if "=" in p and not p.startswith("-")
            ]
            return self.dpkg("-i", *debs)
        if argv[:2] == ["apt-get", "remove"]:
            return self.dpkg("-r", *[p for p in names if not p.startswith("-")])
        return run_command(argv, timeout=timeout)


def _state(root: Path) -> tuple:
    status = (root / "var/lib/dpkg/status").read_text()
    lib = root / LIB
    return status, hashlib.sha256(lib.read_bytes()).hexdigest() if lib.exists() else None


@pytest.fixture
def sandbox(tmp_path):
    root, pool = tmp_path / "root", tmp_path / "pool"
    (root / "var/lib/dpkg/updates").mkdir(parents=True)
    (root / "var/lib/dpkg/info").mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text("")
    pool.mkdir()
    for v in ("8.9.6.50-1+cuda12.2", "8.9.7.29-1+cuda12.2"):
        build_deb(pool, "libcudnn8", v)
    run = SandboxDpkg(root, pool)
    assert run(installers.apt_install({"libcudnn8": "8.9.6.50-1+cuda12.2"}), timeout=60).rc == 0
    return root, run


def _apt_plan(extra: Sequence[Step] = ()) -> Plan:
    pkgs = {"libcudnn8": "8.9.7.29-1+cuda12.2"}
    steps = (
        Step(
            kind="apt-update",
            summary="apt-get update when needed",
            argv=installers.apt_update(),
            packages=("libcudnn8=8.9.7.29-1+cuda12.2",),
        ),
        Step(
            kind="apt-install",
            summary="install libcudnn8=8.9.7.29-1+cuda12.2",
            argv=installers.apt_install(pkgs),
            packages=("libcudnn8=8.9.7.29-1+cuda12.2",),
        ),
        Step(
            kind="apt-hold",
            summary="hold libcudnn8",
            argv=installers.apt_hold(["libcudnn8"]),
            packages=("libcudnn8",),
        ),
    ) + tuple(extra)
    return Plan(steps=steps, stack=Stack(apt=pkgs), python="python3")


def test_apt_upgrade_and_hold_then_rollback_restores_the_dpkg_database(sandbox, tmp_path):
    root, run = sandbox
    python = sandbox_python(root)
    before = _state(root)
    result = apply_plan(
        _apt_plan(),
        python=python,
        options=PlanOptions(root=str(root)),
        runner=run,
        verify=False,
    )
    assert result.changed
    status, lib = _state(root)
    assert "Version: 8.9.7.29-1+cuda12.2" in status and "Status: hold ok installed" in status
    assert (root / LIB).read_text() == "libcudnn8 8.9.7.29-1+cuda12.2\n"
    assert run.calls.index(("apt-get", "update")) < [c[:2] for c in run.calls].index(
        ("apt-get", "install"), 1
    )
    res = rollback(root=str(root), python=python, runner=run)
    assert res.status == "rolled-back"
    assert _state(root) == before  # same version, not held, the same library bytes


def test_a_failing_step_after_apt_rolls_back_version_and_hold(sandbox, tmp_path):
    root, run = sandbox
    python = sandbox_python(root)
    before = _state(root)
    boom = Step(kind="pip-install", summary="a step that fails", argv=("false",), packages=())
    with pytest.raises(StepFailed) as info:
        apply_plan(
            _apt_plan([boom]),
            python=python,
            options=PlanOptions(root=str(root)),
            runner=run,
            verify=False,
        )
    assert info.value.rolled_back
    assert _state(root) == before
    import json

    journal = json.loads(
        next((root / "var/lib/colab-cudnn-fix/journal").glob("*/journal.json")).read_text()
    )
    # what rollback restores from: the versions and the holds before the apply
    assert (
        journal["apt_before"] == {"libcudnn8": "8.9.6.50-1+cuda12.2"} and journal["apt_held"] == []
    )
    assert "hold ok installed" not in _state(root)[0]
