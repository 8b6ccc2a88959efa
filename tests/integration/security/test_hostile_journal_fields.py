"""Hostile fields generated for every field of a real journal (issue 21, "hostile fields generated
for every input format"): a real apply's journal.json (a pip install of cuDNN into a venv, from an
index on 127.0.0.1, in a --root sandbox), and a real journal waiting for `apply --resume` (the
condacolab apply, stopped before its kernel restart). Each example changes ONE thing
(tests.helpers.hostile.mutations: a hostile value in any field or list item, that field or item
removed, an unknown key or list item added), re-checksums the journal as its writer could, and
runs `rollback` (with and without --force) or `apply --resume` through the real CLI.

Invariants, whatever the journal says:
- the answer is an exit code (0, 1 or 2) with at most one error line; never a traceback;
- nothing outside the sandbox changes (a victim tree beside it, whose paths the hostile values
  name, keeps every byte and mode);
- every command that runs is the tool's own: the target's pip (or uv) with the planner's
  options and index URLs that pass the planner's grammar, apt-get/apt-mark/apt-cache/dpkg-query
  with Debian names, ldconfig alone; none names a victim path or a hostile option word.

The commands are recorded at the edge (fixer.applier.runner.run_command, replaced by a recorder
that answers "failed": apt, the GPU and the network are the edge); the restore of files runs
for real. The sandbox is put back from a copy before each example."""

from __future__ import annotations

import copy
import hashlib
import os
import re
import shutil
from pathlib import Path
from typing import Any, Dict, List, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.applier import apply_plan, runner as runner_module, transaction
from fixer.applier.journal import Journal, write_checked
from fixer.cli import main
from fixer.system import grammar
from fixer.system.paths import state_dir
from tests.helpers.examples import examples
from tests.helpers.hostile import Recorder, OPTION_LIKE, mutations, values
from tests.integration.apply.conftest import CUDNN_GOOD, options, pip_step
from tests.helpers.stublibs import cc
from tests.integration.security.test_hostile_resume import _waiting
from tests.integration.security.test_rollback_boundary import cudnn_plan

pytestmark = pytest.mark.integration

PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+(=[0-9][A-Za-z0-9.+~:-]*)?$")
TOOLS = ("apt-get", "apt-mark", "apt-cache", "dpkg-query", "ldconfig")


def _tree(base: Path) -> Dict[str, str]:
    out = {}
    for dirpath, dirs, files in os.walk(base):
        for n in files + dirs:
            p = Path(dirpath) / n
            st_ = p.lstat()
            data = p.read_bytes() if p.is_file() and not p.is_symlink() else b""
            out[str(p)] = f"{hashlib.sha256(data).hexdigest()} {st_.st_mode:o}"
    return out


def _victim(base: Path) -> Path:
    victim = base / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "victim.txt").write_text("keep me\n")
    (victim / "sub" / "deep.txt").write_text("keep me too\n")
    os.chmod(victim / "victim.txt", 0o600)
    return victim


def _hostile(victim: Path, sandbox: Path) -> st.SearchStrategy[Any]:
    """values() plus what a journal's writer would aim at here: the victim's paths, `..` walks
    out of the sandbox and the journal directory, a python outside."""
    aimed = [
        str(victim / "victim.txt"),
        str(victim / "sub"),
        str(victim),
        str(sandbox / ".." / "victim" / "victim.txt"),
        "../../../victim/victim.txt",
        "files/../../../../victim/victim.txt",
        "/usr/bin/python3",
        str(victim / "python"),
    ]
    return st.one_of(values(), st.sampled_from(aimed))


class Setup(tuple):  # type: ignore[type-arg]
    """(sandbox, journal data, pristine copy, victim, python), with a short repr (Hypothesis
    prints the fixtures of a failing example)."""

    def __new__(cls, *items: Any) -> "Setup":
        return super().__new__(cls, items)

    def __repr__(self) -> str:
        return f"Setup(sandbox={self[0]})"


def _check_commands(commands: List[Sequence[str]], python: str, victim: Path) -> None:
    for argv in commands:
        words = [str(a) for a in argv]
        assert not any(str(victim) in w or "pwned" in w or "evil" in w for w in words), argv
        tool = os.path.basename(words[0])
        if words[0] == python or tool == "uv":
            _check_pip(words)
        elif tool in ("apt-get", "apt-mark", "apt-cache"):
            names = words[words.index("--") + 1 :] if "--" in words else []
            assert all(PACKAGE.match(w) for w in names), argv
            assert not any(w.startswith("-o") for w in words), argv
        elif tool == "ldconfig":
            assert words == ["ldconfig"], argv
        elif tool in ("conda", "mamba", "micromamba"):
            assert words[1:6] == ["install", "-y", "-c", "conda-forge", "--override-channels"]
        else:
            assert tool in TOOLS, argv


def _check_pip(words: List[str]) -> None:
    for i, w in enumerate(words[:-1]):
        if w in ("--index-url", "--extra-index-url"):
            grammar.index_url(words[i + 1])  # raises: an index the planner never takes
    if "--" in words:
        assert not any(w.startswith("-") for w in words[words.index("--") + 1 :]), words
    assert not any(w in OPTION_LIKE for w in words if w != "--"), words


def _outcome(argv: List[str], capsys: Any) -> None:
    code = main(argv)
    out = capsys.readouterr()
    assert code in (0, 1, 2), (code, out.err)
    assert "Traceback" not in out.err + out.out, out.err
    errors = [line for line in out.err.splitlines() if line.startswith("error")]
    assert len(errors) <= 1, out.err


@pytest.fixture
def applied(broken, index, sandbox, tmp_path):
    """A real apply's sandbox, its journal data, a pristine copy of the sandbox and a victim."""
    apply_plan(cudnn_plan(broken, index), python=broken, options=options(sandbox))
    journal = Journal.latest(state_dir(str(sandbox)))
    assert journal is not None and journal.status == "done"
    pristine = tmp_path / "pristine"
    shutil.copytree(sandbox, pristine, symlinks=True)
    return Setup(sandbox, copy.deepcopy(journal.data), pristine, _victim(tmp_path), broken)


#: What no journal names (no manifest of the apply records them): kept between examples, not
#: copied back (they are most of the venv's files; copying them made each example 2 s slower).
STATIC = ("pip", "setuptools", "_distutils_hack", "pkg_resources")


def _static(name: str) -> bool:
    return any(name == s or name.startswith(s + "-") for s in STATIC)


def _replace(src_dir: Path, dest_dir: Path, keep: Any) -> None:
    """Make dest_dir's entries src_dir's, but for those `keep` names (left as they are)."""
    for entry in os.listdir(dest_dir):
        if not keep(entry):
            p = dest_dir / entry
            shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
    for entry in os.listdir(src_dir):
        if not keep(entry):
            src = src_dir / entry
            if src.is_dir() and not src.is_symlink():
                shutil.copytree(src, dest_dir / entry, symlinks=True)
            else:
                shutil.copy2(src, dest_dir / entry, follow_symlinks=False)


def _reset(sandbox: Path, pristine: Path) -> None:
    """Put the sandbox back as the apply left it, but for the STATIC parts of site-packages."""
    for dirpath, dirs, _ in os.walk(pristine / "venv"):
        if os.path.basename(dirpath) == "site-packages":
            here = sandbox / os.path.relpath(dirpath, pristine)
            _replace(Path(dirpath), here, _static)
            dirs[:] = []
    _replace(pristine, sandbox, lambda name: name == "venv")


def _against_hostile(
    data: Any, setup: Any, command: List[str], monkeypatch: Any, capsys: Any
) -> Any:
    """One generated journal written into the sandbox and `command` run on it, every command the
    tool starts recorded and answered "failed" (nothing runs): the victim's tree is unchanged and
    only the tool's own commands were started. The Recorder, or None when the mutation left no
    journal object to write."""
    sandbox, good, _, victim, python = setup
    what, _, hostile = data.draw(mutations(good, _hostile(victim, sandbox)), label="journal")
    if not isinstance(hostile, dict):
        return None
    _write(sandbox, hostile)
    seen = _tree(victim)
    rec = Recorder()
    monkeypatch.setattr(transaction, "run_command", rec)
    monkeypatch.setattr(runner_module, "run_command", rec)
    _outcome(command, capsys)
    assert _tree(victim) == seen, what
    _check_commands(rec.commands, python, victim)
    return rec


#: Both generated tests: 100 hostile journals each (a real apply's or resume's sandbox per test).
GENERATED = settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _write(sandbox: Path, data: Dict[str, Any]) -> None:
    """journal.json as its writer could leave it: checksummed, fields as given (version too)."""
    (directory,) = Journal.all(state_dir(str(sandbox)))
    write_checked(directory / "journal.json", data)


@GENERATED
@given(data=st.data())
def test_rollback_of_a_hostile_journal_stays_inside_and_runs_only_the_tools_commands(
    data, applied, capsys, monkeypatch
):
    sandbox, _, pristine, _, _ = applied
    _reset(sandbox, pristine)
    force = data.draw(st.booleans(), label="force")
    command = ["rollback", "--root", str(sandbox), *(["--force"] if force else [])]
    _against_hostile(data, applied, command, monkeypatch, capsys)


@pytest.fixture
def waiting(tmp_path, monkeypatch):
    """A real journal waiting for `apply --resume` (condacolab's apply, stopped before the kernel
    restart) in its sandbox, a pristine copy of the sandbox and a victim."""
    sandbox, journal = _waiting(tmp_path, monkeypatch)
    pristine = tmp_path / "pristine"
    shutil.copytree(sandbox, pristine, symlinks=True)
    return Setup(sandbox, copy.deepcopy(journal.data), pristine, _victim(tmp_path), journal.python)


@pytest.mark.skipif(cc() is None, reason="no C compiler to build the stub cuDNN")
@GENERATED
@given(data=st.data())
def test_resume_of_a_hostile_journal_stays_inside_and_runs_only_the_planners_commands(
    data, waiting, capsys, monkeypatch
):
    sandbox, _, pristine, _, _ = waiting
    shutil.rmtree(sandbox)
    shutil.copytree(pristine, sandbox, symlinks=True)
    command = ["apply", "--resume", "--root", str(sandbox), "--no-verify"]
    rec = _against_hostile(data, waiting, command, monkeypatch, capsys)
    for argv in (
        rec.commands if rec else ()
    ):  # conda: only the sandbox's (condacolab's prefix under --root)
        if os.path.basename(argv[0]) in ("conda", "mamba", "micromamba"):
            assert str(argv[0]).startswith(str(sandbox) + "/"), argv


def test_the_generator_reaches_every_field_and_item_of_the_journal(applied):
    """The mutations walk every list item (not only the first) of a real journal."""
    from tests.helpers.hostile import EVERY_ITEM, field_paths

    _, good, _, _, _ = applied
    paths = field_paths(good, EVERY_ITEM)
    files = good.get("files") or []
    steps = good["steps"]
    assert all(("steps", i, "argv") in paths for i in range(len(steps)))
    assert all(("files", i, "path") in paths for i in range(len(files)))
    argv = steps[0]["argv"]
    assert ("steps", 0, "argv", len(argv) - 1) in paths


__all__ = ["CUDNN_GOOD", "pip_step"]
