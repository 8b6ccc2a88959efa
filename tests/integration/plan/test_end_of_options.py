"""The end-of-options marker (fixer.planner.installers.END_OF_OPTIONS) on the real installers:
after `--` each word is a name, never an option -- defence in depth behind the grammar checks.

- Invariant over generated names: every apt and conda argv carries the marker, and every name
  comes after it (nothing the caller passed lands among the options).
- apt-get (simulation only: `-s` changes nothing), apt-cache: the argv shape the tool builds parses,
  and an option-looking word after `--` is looked up as a package
  (apt-pkg/contrib/cmndline.cc, CommandLine::Parse).
- pip and uv (optparse, clap): every pip/uv argv carries it before its requirements and names,
  and an option-looking word after `--` is an invalid requirement, not an option. The apply
  suite's real pip and uv runs (tests/integration/apply) run these argv as built."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.planner import installers
from tests.helpers.examples import examples

pytestmark = pytest.mark.integration

APT_NAMES = st.from_regex(r"\A[a-z0-9][a-z0-9+.-]{1,30}\Z")
APT_VERSIONS = st.from_regex(r"\A[0-9][0-9.]{0,10}-[0-9]\+cuda1[0-9]\.[0-9]\Z")
HOSTILE = ["-oDPkg::Pre-Invoke::=touch /tmp/pwned", "--config-file=/tmp/x", "-c/tmp/x"]


def _after_marker(argv, names) -> bool:
    i = argv.index(installers.END_OF_OPTIONS)
    return sorted(argv[i + 1 :]) == sorted(names)


@settings(max_examples=examples(60))
@given(pkgs=st.dictionaries(APT_NAMES, APT_VERSIONS, min_size=1, max_size=4))
def test_every_apt_and_conda_name_comes_after_the_marker(pkgs):
    names = sorted(pkgs)
    assert _after_marker(installers.apt_install(pkgs), [f"{k}={pkgs[k]}" for k in names])
    assert _after_marker(installers.apt_hold(names), names)
    assert _after_marker(installers.apt_unhold(names), names)
    assert _after_marker(installers.apt_remove(names), names)
    assert _after_marker(installers.apt_policy(names[0]), names[:1])
    pip_names = [n for n in names if re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?", n)]
    for installer in ("pip", "uv"):
        if pip_names:
            reqs = [f"{n}==1.0" for n in pip_names]
            argv = installers.pip_install("/v/bin/python", reqs, installer=installer)
            assert _after_marker(argv, reqs)
            argv = installers.pip_uninstall("/v/bin/python", pip_names, installer=installer)
            assert _after_marker(argv, pip_names)
    # conda's own grammar (no "+" in a name): grammar.conda_spec refuses the others
    specs = [f"{n}=={v.split('-')[0]}" for n, v in pkgs.items() if re.fullmatch(r"[a-z0-9_.-]+", n)]
    if specs:
        assert _after_marker(installers.conda_install(specs, prefix="/usr/local"), specs)


def _env():
    return {**os.environ, "LC_ALL": "C", "LANG": "C"}


@pytest.mark.skipif(shutil.which("apt-get") is None, reason="no apt-get here")
def test_apt_get_reads_the_words_after_the_marker_as_packages():
    # the argv the tool builds, run as a simulation (-s: apt-get changes nothing)
    argv = installers.apt_install({"ccf-no-such-package": "1.0-1"})
    proc = subprocess.run(
        [argv[0], "-s", *argv[1:]], capture_output=True, text=True, timeout=120, env=_env()
    )
    assert "Unable to locate package ccf-no-such-package" in proc.stdout + proc.stderr
    assert "not understood" not in proc.stderr and "not known" not in proc.stderr
    for word in HOSTILE:  # after the marker an option-looking word is a package name
        proc = subprocess.run(
            ["apt-get", "-s", "install", installers.END_OF_OPTIONS, word],
            capture_output=True,
            text=True,
            timeout=120,
            env=_env(),
        )
        assert "Unable to locate package" in proc.stdout + proc.stderr, proc.stderr
        assert not os.path.exists("/tmp/pwned")


@pytest.mark.skipif(shutil.which("apt-cache") is None, reason="no apt-cache here")
def test_apt_cache_policy_argv_parses():
    proc = subprocess.run(
        list(installers.apt_policy("ccf-no-such-package")),
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )
    assert proc.returncode == 0 and "not understood" not in proc.stderr, proc.stderr


def test_pip_and_uv_read_the_words_after_the_marker_as_requirements(tmp_path):
    env = {**_env(), "PIP_CONFIG_FILE": os.devnull, "UV_NO_CONFIG": "1"}
    env["UV_CACHE_DIR"] = str(tmp_path / "uv-cache")
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index"]
    uv = shutil.which("uv") or str(os.path.join(os.path.dirname(sys.executable), "uv"))
    runs = [pip]
    if os.path.exists(uv):
        runs.append([uv, "pip", "install", "--python", sys.executable, "--dry-run", "--no-index"])
    for head in runs:
        proc = subprocess.run(
            [*head, installers.END_OF_OPTIONS, "-rsecret.txt"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
            cwd=tmp_path,
        )
        assert proc.returncode != 0
        out = proc.stdout + proc.stderr
        assert "-rsecret.txt" in out and "secret.txt" not in os.listdir(tmp_path)
        assert "No such file" not in out  # read as a requirement, not as -r FILE
