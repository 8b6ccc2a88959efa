"""Plugins through entry points, with real plugin distributions: wheels built here
(tests/helpers/pyindex.build_wheel), installed by real pip into a throw-away venv, and the real
CLI run by that venv's own interpreter (the tool's code and its dependencies come from this
checkout through PYTHONPATH, the plugins only from the venv's site-packages).

- A recipe plugin adds a torch build the shipped recipes do not know: `plan --torch 2.99.0`
  fails without it and installs torch==2.99.0 with it (the plugin's recipes change the plan).
- A check plugin's finding shows in the report, marked with the plugin that made it.
- Broken plugins (a malformed recipe file, a check that raises, a check that returns garbage,
  a recipe entry point that names an object) are named on stderr and skipped: the command works.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from typing import Dict

import pytest

from tests.helpers.paths import REPO
from tests.helpers.pyindex import build_wheel


TORCH_299 = """schema = 1

[[build]]
framework = "torch"
version = "2.99.0"
variant = "cu130"
cuda = "13.0"
cudnn = "9.19.0"
python = ">=3.10,<3.15"
compute_capabilities = ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]
ptx = "12.0"
packages = ["torch==2.99.0"]
requires = ["nvidia-cudnn-cu13==9.19.0.56"]
source = "ccf-torch-next-recipes (test plugin)"
"""

GOOD_CHECK = """
from fixer.model import Finding


def check(env, recipes):
    n = len(env.frameworks)
    return [Finding(id="log-noise", severity="info", title=f"hello from a plugin: {n} framework(s) seen")]
"""

BROKEN_CHECKS = """
def boom(env, recipes):
    raise RuntimeError("plugin bug")


def liar(env, recipes):
    return ["not a finding"]
"""


@pytest.fixture(scope="module")
def plugin_venv(tmp_path_factory) -> Dict[str, str]:
    root = tmp_path_factory.mktemp("plugins")
    wheels = root / "wheels"
    recipes = build_wheel(
        wheels,
        "ccf-torch-next-recipes",
        "1.0",
        {
            "ccf_torch_next/__init__.py": "",
            "ccf_torch_next/recipes/__init__.py": "",
            "ccf_torch_next/recipes/torch-next.toml": TORCH_299,
        },
        entry_points="[colab_cudnn_fix.recipes]\ntorch-next = ccf_torch_next.recipes\n",
    )
    good = build_wheel(
        wheels,
        "ccf-good-check",
        "1.0",
        {"ccf_good_check.py": GOOD_CHECK},
        entry_points="[colab_cudnn_fix.checks]\nhello = ccf_good_check:check\n",
    )
    broken = build_wheel(
        wheels,
        "ccf-broken",
        "1.0",
        {
            "ccf_broken/__init__.py": "",
            "ccf_broken/checks.py": BROKEN_CHECKS,
            "ccf_broken/recipes/bad.toml": 'schema = 1\n\n[[build]]\nframework = "torch"\nversoin = "2.98.0"\n',
        },
        entry_points="[colab_cudnn_fix.recipes]\nbad = ccf_broken.recipes\nobject = ccf_broken.checks:boom\n\n"
        "[colab_cudnn_fix.checks]\nboom = ccf_broken.checks:boom\nliar = ccf_broken.checks:liar\n",
    )
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            py,
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(recipes),
            str(good),
            str(broken),
        ],
        check=True,
    )
    return {"python": py, "venv": str(venv)}


def run(python: str, *args: str) -> subprocess.CompletedProcess:
    """The CLI under `python`; the tool and its dependencies from this checkout and this test run's
    site-packages (after the venv's own, where the plugins are)."""
    here = sysconfig.get_paths()["purelib"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), here]))
    return subprocess.run(
        [python, "-m", "fixer", *args], capture_output=True, text=True, env=env, timeout=180
    )


def test_a_recipe_plugin_changes_the_plan(plugin_venv) -> None:
    without = run(
        sys.executable, "plan", "--environment", "h200-healthy", "--torch", "2.99.0", "--json"
    )
    assert without.returncode == 2 and "no such PyTorch version" in without.stdout
    got = run(
        plugin_venv["python"],
        "plan",
        "--environment",
        "h200-healthy",
        "--torch",
        "2.99.0",
        "--json",
    )
    assert got.returncode == 0, got.stdout + got.stderr
    steps = json.loads(got.stdout)["plan"]["steps"]
    assert [s["packages"] for s in steps if s["kind"] == "pip-install"] == [["torch==2.99.0"]]
    # the broken plugins were reported and skipped, the good ones kept
    err = got.stderr
    assert "warning: recipe plugin 'bad' of ccf_broken 1.0:" in err and "skipped" in err
    assert (
        "warning: recipe plugin 'object' of ccf_broken 1.0: 'ccf_broken.checks:boom' must name a package"
        in err
    )
    assert "torch-next" not in err


def test_check_plugins_add_findings_and_broken_ones_are_skipped(plugin_venv) -> None:
    got = run(plugin_venv["python"], "report", "--environment", "h200-healthy", "--json")
    assert got.returncode == 0, got.stderr
    findings = json.loads(got.stdout)["findings"]
    hello = [f for f in findings if f["title"].startswith("hello from a plugin")]
    assert (
        len(hello) == 1
        and hello[0]["evidence"][-1] == "reported by check plugin 'hello' of ccf_good_check 1.0"
    )
    assert (
        "warning: check plugin 'boom' of ccf_broken 1.0 failed: RuntimeError: plugin bug; skipped"
        in got.stderr
    )
    assert "warning: check plugin 'liar' of ccf_broken 1.0 returned 'not a finding'" in got.stderr
    assert "Traceback" not in got.stderr


def test_no_plugin_no_cost_no_warning() -> None:
    """This test run's own environment has no plugin: nothing discovered, nothing printed."""
    from fixer.system import plugins

    plugins.clear()
    assert plugins.discover() == () and plugins.recipe_dirs() == () and plugins.problems() == ()
    got = run(sys.executable, "report", "--environment", "h200-healthy")
    assert got.returncode == 0 and "warning:" not in got.stderr
