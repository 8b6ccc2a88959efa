"""Hostile kernel specs (issue 21, "hostile fields generated for every input format"): the
kernel.json files the planner reads to find where a loader variable comes from, and that apply
rewrites without the entry a loader fix drops (fixer.planner.envsource, written by an env-fix
step through the gate; rollback restores it).

Generated: a hostile value in any field or list item of a good spec (argv items, env keys and
values with NUL, newline, `=`, huge, non-string, nested; display_name, metadata, unknown keys),
any field removed, raw bytes that are not UTF-8 or not JSON, nesting deeper than json parses,
and the spec's place itself: a spec folder that is a symlink, a kernel.json that is a symlink,
a FIFO or a directory.

Invariants of the planner's reading (no process; each case in a fresh --root sandbox):
- it ends, without an exception, within a second (a FIFO never blocks it);
- a source is found only at a regular kernel.json in a spec folder that is not a symlink, and
  its new content is JSON equal to the old spec but for the dropped entry (nothing else changes);
- whatever is found, the files apply would write pass the gate's check of the place the write
  lands (fixer.applier.prepare.confine), so nothing is written outside the planned file.
The real apply and rollback of a hostile spec: tests/integration/damage/test_loader_sources.py
runs them on a real venv for the good spec; `test_apply_and_rollback_of_hostile_specs` below for
generated ones."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, Dict, Optional

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fixer.applier import prepare
from fixer.errors import FixerError
from fixer.model import Step
from fixer.planner import envsource as es
from fixer.planner.steps import source_steps
from fixer.system.paths import private_state_dir
from tests.helpers.examples import examples
from tests.helpers.hostile import mutations, values
from tests.integration.damage.test_real import world  # noqa: F401 - the fixture

pytestmark = pytest.mark.integration

BAD = "/opt/other/nvidia/cudnn/lib/libcudnn_graph.so.9"
KERNELS = "/usr/local/share/jupyter/kernels"
GOOD: Dict[str, Any] = {
    "argv": ["/usr/bin/python3", "-m", "ipykernel_launcher", "-f", "{connection_file}"],
    "display_name": "Python 3 (ipykernel)",
    "language": "python",
    "env": {"LD_PRELOAD": f"{BAD}:/usr/lib/libkeep.so", "A": "1"},
    "metadata": {"debugger": True},
}

_ENV_VALUES = st.one_of(
    values(),
    st.sampled_from(
        [
            f"{BAD}\x00/tmp/evil.so",
            f"{BAD}\n/tmp/evil.so",
            f"A=B {BAD}",
            BAD + ":" + "x" * 100000,
            [BAD],
            {"LD_PRELOAD": BAD},
        ]
    ),
)

_RAW = st.sampled_from(
    [
        b"\xff\xfe" + json.dumps(GOOD).encode(),
        json.dumps(GOOD).encode().replace(b"ipykernel", b"ipy\xc3\x28kernel"),
        b'{"env": {"LD_PRELOAD": "'
        + BAD.encode()
        + b'"}, "x": '
        + b"[" * 200000
        + b"]" * 200000
        + b"}",
        b"",
        b"null",
        b"[1, 2]",
        b'{"env": {"LD_PRELOAD": "' + BAD.encode() + b'"}',
        b"1" * 5000,
    ]
)


def _specs() -> st.SearchStrategy[bytes]:
    hostile = st.one_of(mutations(GOOD, values()), mutations(GOOD, _ENV_VALUES))
    return st.one_of(hostile.map(lambda t: json.dumps(t.doc).encode()), _RAW)


def _plant(sandbox: Path, outside: Path, data: bytes, place: str) -> Path:
    """The spec at KERNELS/py/kernel.json under `sandbox`, as `place` says."""
    kernels = sandbox / KERNELS.lstrip("/")
    kernels.mkdir(parents=True)
    spec_dir = kernels / "py"
    outside.mkdir(parents=True, exist_ok=True)
    if place == "dir-link":
        (outside / "kernel.json").write_bytes(data)
        os.symlink(outside, spec_dir)
        return spec_dir / "kernel.json"
    spec_dir.mkdir()
    spec = spec_dir / "kernel.json"
    if place == "file-link":
        (outside / "kernel.json").write_bytes(data)
        os.symlink(outside / "kernel.json", spec)
    elif place == "fifo":
        os.mkfifo(spec)
    elif place == "dir":
        spec.mkdir()
    else:
        spec.write_bytes(data)
    return spec


def _entries(value: str) -> list:
    """LD_PRELOAD's entries: separated by colons or whitespace (ld.so(8))."""
    return [e for e in re.split(r"[:\s]+", value) if e]


def _holds(data: bytes) -> Optional[Dict[str, Any]]:
    """The spec when it is a JSON object whose env.LD_PRELOAD (a string) has BAD as an entry."""
    try:
        spec = json.loads(data.decode("utf-8", "replace"))
    except (ValueError, RecursionError):
        return None
    env = spec.get("env") if isinstance(spec, dict) else None
    value = env.get("LD_PRELOAD") if isinstance(env, dict) else None
    if not isinstance(value, str) or BAD not in _entries(value):
        return None
    return spec


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: a NaN the hostile spec holds (Python's json reads and writes it)
    equals itself here, which == on the parsed values never says."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _only_the_entry_went(old: Dict[str, Any], new: Dict[str, Any], bad: str = BAD) -> None:
    """`new` is `old` but for `bad` gone from env.LD_PRELOAD (the key, then env, dropped when
    empty); every other key, value and entry as it was, in order."""
    assert _same(
        {k: v for k, v in new.items() if k != "env"}, {k: v for k, v in old.items() if k != "env"}
    )
    old_env, new_env = old["env"], new.get("env", {})
    assert _same(
        {k: v for k, v in new_env.items() if k != "LD_PRELOAD"},
        {k: v for k, v in old_env.items() if k != "LD_PRELOAD"},
    )
    left = [e for e in _entries(old_env["LD_PRELOAD"]) if e != bad]
    assert _entries(new_env.get("LD_PRELOAD", "")) == left
    assert ("LD_PRELOAD" in new_env) == bool(left)


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    data=_specs(),
    place=st.sampled_from(["file", "file", "file", "dir-link", "file-link", "fifo", "dir"]),
)
def test_the_planner_reads_a_hostile_spec_only_where_it_is_and_changes_only_the_entry(
    data, place, tmp_path_factory
):
    base = tmp_path_factory.mktemp("spec")
    sandbox, outside = base / "root", base / "outside"
    spec = _plant(sandbox, outside, data, place)
    started = time.monotonic()
    found = es.find_sources([("LD_PRELOAD", BAD)], environ={}, root=str(sandbox))
    assert time.monotonic() - started < 5
    kernel = [s for s in found if s.kind == "kernel-spec"]
    if place != "file":
        assert kernel == [], (place, kernel)
        return
    old = _holds(data)
    if old is None:
        assert kernel == []
        return
    (source,) = kernel
    assert source.path == "/" + str(spec.relative_to(sandbox))
    _only_the_entry_went(old, json.loads(source.fixed or ""))
    # apply writes only there: the gate's check of the place the write lands passes
    steps = source_steps(found, str(sandbox))
    state = private_state_dir(str(sandbox))
    assert [f for f in prepare.plan_files(steps, str(sandbox))] == [str(spec)]
    assert prepare._resolved_ok(str(spec), str(sandbox), state)


@pytest.mark.parametrize("place", ["dir-link", "file-link"])
def test_a_linked_spec_planned_by_hand_is_never_written_through(tmp_path, place):
    """Defence in depth: a plan that names the linked spec anyway (a plan made before the link
    was planted). A linked spec folder is refused by confine (exit 2, one line): the gate would
    write where the link resolves. A kernel.json that is itself a link is replaced, never written
    through. Either way the file the link reaches keeps its bytes."""
    from fixer.applier import envfix

    sandbox, outside = tmp_path / "root", tmp_path / "outside"
    spec = _plant(sandbox, outside, json.dumps(GOOD).encode(), place)
    before = (outside / "kernel.json").read_bytes()
    step = Step(
        kind="env-fix",
        summary="write the spec",
        files=(KERNELS + "/py/kernel.json",),
        content="{}\n",
    )
    state = private_state_dir(str(sandbox))
    try:
        with prepare.confine([step], _snapshot(sandbox), str(sandbox), state):
            envfix.write_managed(spec, "{}\n")
    except FixerError as exc:
        assert place == "dir-link", exc.message
        assert exc.exit_code == 2 and "\n" not in exc.message
    else:
        assert place == "file-link"
        assert not spec.is_symlink() and spec.read_text() == "{}\n"
    assert (outside / "kernel.json").read_bytes() == before


def _snapshot(sandbox: Path) -> Any:
    from fixer.applier.snapshot import TargetSnapshot

    venv = sandbox / "venv"
    (venv / "bin").mkdir(parents=True)
    return TargetSnapshot(executable=str(venv / "bin" / "python"), version="3.11", prefix=str(venv))


def _hostile_with_entry(bad: str) -> st.SearchStrategy[Dict[str, Any]]:
    """A good spec setting LD_PRELOAD=`bad`, with one hostile change elsewhere (env.LD_PRELOAD
    itself is kept, so that the planner has something to fix)."""
    good = {**GOOD, "env": {"LD_PRELOAD": bad, "A": "1"}}
    return mutations(good, st.one_of(values(), _ENV_VALUES), keep=[("env", "LD_PRELOAD")]).map(
        lambda t: t.doc
    )


@settings(
    max_examples=examples(12),
    deadline=None,
    phases=[
        Phase.explicit,
        Phase.reuse,
        Phase.generate,
    ],  # each example is a real apply: no shrinking
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_apply_and_rollback_of_hostile_specs(data, world, monkeypatch, capsys):  # noqa: F811
    """A real apply --root of a machine whose kernel spec sets the other cuDNN's LD_PRELOAD, the
    spec hostile elsewhere: exit 0 with the spec rewritten without the entry only, or exit 2 with
    one line and nothing written; nothing outside the sandbox changes; rollback gives the spec
    back byte for byte."""
    import tempfile

    from fixer.cli import main
    from tests.integration.apply.conftest import copy_venv
    from tests.integration.damage.test_real import OVERRIDES

    bad = str(world["other"] / "libcudnn_graph.so.9")
    spec_data = data.draw(_hostile_with_entry(bad), label="spec")
    with tempfile.TemporaryDirectory(dir=str(world["tmp"])) as tmp:
        sandbox, outside = Path(tmp) / "root", Path(tmp) / "outside"
        python = copy_venv(world["healthy"], sandbox / "venv")
        spec = _plant(sandbox, outside, json.dumps(spec_data, indent=2).encode(), "file")
        (outside / "victim.txt").write_text("keep\n")
        before, victim = spec.read_bytes(), (outside / "victim.txt").read_bytes()
        monkeypatch.setenv("LD_PRELOAD", bad)
        for k, v in OVERRIDES.items():
            monkeypatch.setenv(k, v)
        capsys.readouterr()
        try:
            code = main(["apply", "--python", python, "--root", str(sandbox), "--no-verify"])
        finally:
            monkeypatch.delenv("LD_PRELOAD")
        out = capsys.readouterr()
        assert "Traceback" not in out.err + out.out, out.err
        assert (outside / "victim.txt").read_bytes() == victim
        if code == 2:
            assert len([x for x in out.err.splitlines() if x.startswith("error")]) == 1, out.err
            assert spec.read_bytes() == before
            return
        assert code == 0, out.err[-2000:]
        _only_the_entry_went(spec_data, json.loads(spec.read_text()), bad)
        assert main(["rollback", "--root", str(sandbox)]) == 0
        capsys.readouterr()
        assert spec.read_bytes() == before
        assert (outside / "victim.txt").read_bytes() == victim
