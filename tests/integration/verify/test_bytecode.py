"""The check child's bytecode cache (fixer.verifier.checks.bytecode_env), with a real interpreter:
where the caller's environment sets PYTHONDONTWRITEBYTECODE, the child compiles a package once,
into this tool's private cache, never beside the package's sources; the next child reads it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from fixer.verifier.checks import child_env


def _package(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    pkg = site / "stubframework"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import core\n")
    (pkg / "core.py").write_text("VALUE = 42\n")
    return site


def _import(site: Path, environ: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "import stubframework, sys; print(sys.pycache_prefix)"],
        env=child_env({**environ, "PYTHONPATH": str(site)}),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _pycs(tree: Path) -> dict:
    return {p: p.stat().st_mtime_ns for p in tree.rglob("*.pyc")}


def test_bytecode_goes_to_the_private_cache_once_never_beside_the_sources(tmp_path, monkeypatch):
    site = _package(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))  # this tool's cache, not the child's
    environ = {
        "PATH": os.environ["PATH"],
        "PYTHONDONTWRITEBYTECODE": "1",
        "XDG_CACHE_HOME": str(cache),
    }
    first = _import(site, environ)
    assert first.returncode == 0, first.stderr
    prefix = cache / "colab-cudnn-fix" / "bytecode"
    assert first.stdout.strip() == str(prefix)
    written = _pycs(prefix)
    mine = {p.name.split(".")[0] for p in written if "stubframework" in p.parts}
    assert mine == {
        "__init__",
        "core",
    }  # (with a prefix, the stdlib's bytecode is cached there too)
    assert not _pycs(site), "no .pyc beside the user's sources"
    for d in (cache / "colab-cudnn-fix", prefix):
        st = d.lstat()
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
    second = _import(site, environ)
    assert second.returncode == 0, second.stderr
    assert _pycs(prefix) == written, "the second child reads the cache, it does not rewrite it"


def test_without_the_variable_or_with_a_users_prefix_nothing_changes(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    plain = child_env({"PATH": "/usr/bin"})
    assert "PYTHONPYCACHEPREFIX" not in plain and not cache.exists()
    own = child_env({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "/x"})
    assert own["PYTHONPYCACHEPREFIX"] == "/x" and own["PYTHONDONTWRITEBYTECODE"] == "1"


def test_a_cache_that_is_not_private_is_not_used(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    (cache / "colab-cudnn-fix").mkdir(parents=True)
    os.chmod(cache / "colab-cudnn-fix", 0o777)  # writable by others: a planted .pyc would run
    e = child_env({"PYTHONDONTWRITEBYTECODE": "1"})
    assert e["PYTHONDONTWRITEBYTECODE"] == "1" and "PYTHONPYCACHEPREFIX" not in e
    target = tmp_path / "elsewhere"
    target.mkdir()
    (cache / "colab-cudnn-fix").rmdir()
    (cache / "colab-cudnn-fix").symlink_to(target)
    e = child_env({"PYTHONDONTWRITEBYTECODE": "1"})
    assert "PYTHONPYCACHEPREFIX" not in e and not any(target.iterdir())


def test_warm_bytecode_compiles_the_frameworks_into_the_cache_beside_apply(tmp_path, monkeypatch):
    from fixer.verifier.checks import finish_warm, warm_bytecode

    site = tmp_path / "site"
    for name in ("numpy", "jax"):  # stand-ins under names warm_bytecode compiles
        (site / name / "sub").mkdir(parents=True)
        (site / name / "__init__.py").write_text("X = 1\n")
        (site / name / "sub" / "__init__.py").write_text("Y = 2\n")
    (site / "numpy" / "broken.py").write_text("def (:\n")  # a syntax error is skipped quietly
    (site / "numpy" / "tests").mkdir()  # a package's own test suite is not imported: skipped
    (site / "numpy" / "tests" / "test_core.py").write_text("Z = 3\n")
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    environ = {"PATH": os.environ["PATH"], "PYTHONPATH": str(site)}
    assert warm_bytecode(sys.executable, environ) is None  # bytecode on: nothing to warm
    environ["PYTHONDONTWRITEBYTECODE"] = "1"
    child = warm_bytecode(sys.executable, environ)
    assert child is not None
    finish_warm(child, grace=60)
    assert child.proc is not None and child.proc.returncode == 0
    prefix = cache / "colab-cudnn-fix" / "bytecode"
    compiled = {p.relative_to(prefix).parts[-3:] for p in _pycs(prefix)}
    assert {c[:-1] for c in compiled} >= {("site", "numpy"), ("numpy", "sub"), ("site", "jax")}
    assert not any("tests" in c for c in compiled)
    assert not _pycs(site)
    before = _pycs(prefix)
    again = _import_module(site, environ, "numpy.sub")
    assert again.returncode == 0, again.stderr
    assert {p: t for p, t in _pycs(prefix).items() if "numpy" in p.parts} == {
        p: t for p, t in before.items() if "numpy" in p.parts
    }, "a check child reads what the warm-up compiled"


def _import_module(site: Path, environ: dict, module: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        env=child_env({**environ, "PYTHONPATH": str(site)}),
        capture_output=True,
        text=True,
        timeout=60,
    )
