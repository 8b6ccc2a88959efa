"""An LD_PRELOAD of another cuDNN's sub-library, set where users set it (a kernel spec's env,
/etc/environment, a script under /etc/profile.d), on a real venv (torch with the real
NEEDED/RPATH layout, its cuDNN and CUDA runtime wheels from an index on 127.0.0.1), in a --root
sandbox. Invariant, over generated cases: after `apply --root`, doctor agrees with apply's
verdict for every process kind the verdict names, run in the environment that kind gets from
the fixed files (a new kernel: the server's environment with the spec's env over it; a new
login session: /etc/environment; a new login shell: that, then every profile.d script run by a
real sh); the verdict never claims new processes (a plain child of the running shell keeps its
LD_PRELOAD); the source file is fixed there; rollback restores it byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Dict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.applier.kernel import claims_of
from fixer.cli import main
from fixer.planner import envsource as es
from tests.helpers.examples import examples
from tests.integration.apply.conftest import copy_venv
from tests.integration.damage.kinds import TARGETS
from tests.integration.damage.test_real import OVERRIDES, doctor
from tests.integration.damage.test_real import world  # noqa: F401 - the fixture

pytestmark = pytest.mark.integration

SPEC = "/usr/local/share/jupyter/kernels/py/kernel.json"
SOURCES = ("kernel-spec", "etc-environment", "profile-d")
FILES = {
    "kernel-spec": SPEC,
    "etc-environment": "/etc/environment",
    "profile-d": "/etc/profile.d/cuda.sh",
}


def _write_source(sandbox: Path, source: str, bad: str) -> Path:
    path = sandbox / FILES[source].lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    if source == "kernel-spec":
        spec = {
            "argv": ["python", "-m", "ipykernel_launcher"],
            "env": {"LD_PRELOAD": bad, "A": "1"},
        }
        path.write_text(json.dumps(spec, indent=2))
    elif source == "etc-environment":
        path.write_text(f'PATH="/usr/bin:/bin"\nLD_PRELOAD={bad}\n')
    else:
        path.write_text(f'# set by the image\nexport LD_PRELOAD="{bad}"\n')
    return path


def _pam(sandbox: Path, environ: Dict[str, str]) -> Dict[str, str]:
    """A new login session: pam_env's /etc/environment over `environ`, the environment the
    session starts from. That is never the running process's: login(1) and sshd(8) build a new
    environment for the session (sshd(8) "LOGIN PROCESS": it "sets up basic environment"), and
    pam_env(8) adds the KEY=VALUE lines of /etc/environment to it; a variable that only
    /etc/environment set is gone from a new session once the line is."""
    out = dict(environ)
    path = sandbox / "etc/environment"
    if path.is_file():
        for line in path.read_text().splitlines():
            key, sep, value = line.partition("=")
            if sep and key.strip() and not key.startswith("#"):
                out[key.replace("export ", "").strip()] = value.strip().strip("\"'")
    return out


def _login_shell(sandbox: Path, environ: Dict[str, str]) -> Dict[str, str]:
    """A new login shell: the session's environment, then every profile.d script (real sh)."""
    scripts = sorted((sandbox / "etc/profile.d").glob("*.sh"))
    code = "".join(f'. "{s}"\n' for s in scripts) + "env -0\n"
    out = subprocess.run(
        ["sh", "-c", code], env=_pam(sandbox, environ), capture_output=True, check=True
    ).stdout.decode()
    return dict(item.split("=", 1) for item in out.split("\0") if "=" in item)


def _new_kernel(sandbox: Path, server: Dict[str, str]) -> Dict[str, str]:
    spec = sandbox / SPEC.lstrip("/")
    env = json.loads(spec.read_text()).get("env", {}) if spec.is_file() else {}
    return {**server, **env}


@settings(
    max_examples=examples(6),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(source=st.sampled_from(SOURCES), target=st.sampled_from(TARGETS[1:]))
def test_doctor_agrees_with_the_verdict_for_the_kinds_it_names(
    world,  # noqa: F811
    source,
    target,
    monkeypatch,
    capsys,  # noqa: F811
):
    bad = str(world["other"] / target)
    with tempfile.TemporaryDirectory(dir=str(world["tmp"])) as tmp:
        sandbox = Path(tmp) / "root"
        # the venv lives inside the sandbox: --root refuses an interpreter outside it
        python = copy_venv(world["healthy"], sandbox / "venv")
        path = _write_source(sandbox, source, bad)
        before = path.read_bytes()
        base = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
        # the process that runs apply got the value from its source (a `!` cell of that kernel,
        # a terminal of that session)
        damaged = {**base, "LD_PRELOAD": bad}
        assert doctor(python, damaged), f"{source}: doctor found nothing wrong"
        monkeypatch.setenv("LD_PRELOAD", bad)
        for k, v in OVERRIDES.items():
            monkeypatch.setenv(k, v)
        capsys.readouterr()
        try:
            code = main(
                ["apply", "--python", python, "--root", str(sandbox), "--no-verify", "--json"]
            )
        finally:
            monkeypatch.delenv("LD_PRELOAD")
        out = capsys.readouterr()
        assert code == 0, f"{source}: apply exited {code}: {out.out[-2000:]} {out.err[-2000:]}"
        report = json.loads(out.out)
        message = report["restart"]["message"]
        claims = claims_of(message)
        assert es.NEW_PROCESSES not in claims, message
        assert bad not in path.read_text(), f"{source}: the source still sets it"
        server = base if source == "kernel-spec" else damaged
        environs = {
            es.NEW_KERNELS: _new_kernel(sandbox, server),
            es.LOGIN_SESSIONS: _pam(sandbox, base),
            es.LOGIN_SHELLS: _login_shell(sandbox, damaged if source == "kernel-spec" else base),
        }
        assert claims, message
        for kind in claims:
            found = doctor(python, environs[kind])
            assert found == [], (
                f"{source}: verdict {message!r}, but for {kind} "
                f"(LD_PRELOAD={environs[kind].get('LD_PRELOAD')!r}, "
                f"file now {path.read_text()!r}): {[f.title for f in found]}"
            )
        assert main(["rollback", "--root", str(sandbox), "--json"]) == 0
        capsys.readouterr()
        assert path.read_bytes() == before, f"{source}: rollback did not restore {path}"
