"""A journal is untrusted input: whatever its fields say, rollback changes nothing
outside the target environment and the loader-fix files the tool writes, runs no command but
its own (apt-get/apt-mark with Debian package names, pip, `ldconfig`), and ends with a result
or a FixerError, never a traceback. Hostile values are generated for every field of
journal.json (Hypothesis); apt and the machine's package database are the edge: a recording
runner stands in for them."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Dict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.hostile import Recorder
from fixer.applier import rollback
from fixer.applier.journal import Journal
from fixer.errors import FixerError
from fixer.system.paths import private_state_dir
from tests.helpers.examples import examples

pytestmark = pytest.mark.integration

VICTIM_FILES = ("victim.txt", "sub/deep.txt")


def _victims(base: Path) -> Dict[str, str]:
    out = {}
    for dirpath, _, files in os.walk(base):
        for n in files:
            p = Path(dirpath) / n
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() + oct(p.stat().st_mode)
    return out


def _paths(victim: Path, root: Path) -> st.SearchStrategy[str]:
    """Paths a hostile journal could name: outside files, `..` walks, the tool's own loader-fix
    paths (inside the sandbox), junk."""
    return st.sampled_from(
        [
            str(victim / "victim.txt"),
            str(victim / "sub"),
            str(victim),
            str(root / "etc/profile.d/colab-cudnn-fix.sh"),
            str(root / "etc/profile.d/../../../victim/victim.txt"),
            str(root / "etc/ld.so.conf.d/00-colab-cudnn-fix.conf"),
            "/etc/passwd-not-really-" + hashlib.sha256(str(victim).encode()).hexdigest()[:8],
            "relative/path",
            "",
            "..",
        ]
    )


_junk = st.one_of(
    st.none(), st.integers(), st.text(max_size=20), st.lists(st.integers(), max_size=3)
)


def _states() -> st.SearchStrategy[Any]:
    return st.one_of(
        _junk,
        st.fixed_dictionaries(
            {
                "kind": st.sampled_from(["absent", "file", "symlink", "dir", "other", "bogus"]),
                "mode": st.one_of(st.none(), st.integers(0, 0o7777)),
                "uid": st.one_of(st.none(), st.integers(0, 70000)),
                "gid": st.one_of(st.none(), st.integers(0, 70000)),
                "sha256": st.one_of(st.none(), st.text(max_size=64)),
                "target": st.one_of(st.none(), st.sampled_from(["/etc", "../x", "t"])),
            }
        ),
    )


def _journals(victim: Path, root: Path) -> st.SearchStrategy[Dict[str, Any]]:
    record = st.fixed_dictionaries(
        {
            "path": _paths(victim, root),
            "before": _states(),
            "after": _states(),
            "backup": st.sampled_from(["files/0", "../../victim/victim.txt", "/etc/passwd", None]),
            "created_dirs": st.lists(_paths(victim, root), max_size=3),
        }
    )
    apt_name = st.sampled_from(
        ["libcudnn9-cuda-13", "-oDPkg::Pre-Invoke::=touch /tmp/x", "a b", "", "UPPER", "ok+pkg"]
    )
    apt_version = st.one_of(
        st.none(), st.sampled_from(["9.14.0.64-1", "--force-yes", "x y", "1:2.3"])
    )
    return st.fixed_dictionaries(
        {
            "status": st.sampled_from(["applying", "failed", "done", "rolling-back", "weird"]),
            "files": st.one_of(_junk, st.lists(st.one_of(record, _junk), max_size=4)),
            "apt_before": st.one_of(_junk, st.dictionaries(apt_name, apt_version, max_size=3)),
            "apt_held": st.one_of(_junk, st.lists(apt_name, max_size=3)),
            "ldconfig": st.one_of(
                _junk,
                st.sampled_from(
                    [["ldconfig"], ["rm", "-rf", str(victim)], ["ldconfig", "-C", "x"]]
                ),
            ),
            "manifests": st.one_of(
                _junk,
                st.dictionaries(
                    st.text(max_size=5),
                    st.sampled_from(["manifests/x.json", "../../victim/victim.txt", "/etc/passwd"]),
                    max_size=2,
                ),
            ),
            "backups": st.one_of(
                _junk, st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=2)
            ),
            "after_state": st.one_of(
                _junk, st.sampled_from(["after.json", "../../victim/victim.txt"])
            ),
            "sources": st.one_of(
                _junk,
                st.fixed_dictionaries({"index_urls": st.lists(st.text(max_size=10), max_size=2)}),
            ),
            "notes": st.one_of(_junk, st.lists(st.text(max_size=10), max_size=2)),
        }
    )


ALLOWED_COMMANDS = ("apt-get", "apt-mark", "dpkg-query", "ldconfig", "apt-cache")


@settings(
    max_examples=examples(200),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_hostile_journal_changes_nothing_outside_and_runs_nothing_foreign(
    data, tmp_path_factory, venv
):
    base = tmp_path_factory.mktemp("hostile")
    victim, root = base / "victim", base / "root"
    (victim / "sub").mkdir(parents=True)
    root.mkdir()
    for rel in VICTIM_FILES:
        (victim / rel).write_text(f"keep {rel}\n")
    seen = _victims(victim)
    state = private_state_dir(str(root))
    journal = Journal.create(state, python=venv, root=str(root))
    (journal.dir / "files" / "0").write_bytes(b"evil bytes\n")
    fields = data.draw(_journals(victim, root))
    journal.data.update(fields)
    journal.save()
    runner = Recorder()
    try:
        rollback(root=str(root), runner=runner, force=data.draw(st.booleans()))
    except FixerError:
        pass
    assert _victims(victim) == seen
    for argv in runner.commands:
        assert os.path.basename(argv[0]) in ALLOWED_COMMANDS or argv[0] == venv, argv
        if argv[0] in ("apt-get", "apt-mark"):
            # every word is the tool's own option or a Debian package name (=version)
            words = [a for a in argv[2:] if not a.startswith("--") and a != "-y"]
            assert all(PACKAGE.match(w) for w in words), argv
        if os.path.basename(argv[0]) == "ldconfig":
            assert argv == ["ldconfig"], argv


PACKAGE = re.compile(r"^[a-z0-9][a-z0-9+.-]+(=[0-9][A-Za-z0-9.+~:-]*)?$")
