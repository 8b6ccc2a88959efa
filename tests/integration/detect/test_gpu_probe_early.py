"""The GPU probe child started before the tool's imports (fixer.detection.gpu_probe.start_early) is the one
detection uses, never a second probe, and it changes nothing in what detection reports; one that
nobody asks for (another environment, another command) is stopped and reaped when the command ends.
Real children of the real `children/native.py` (this machine has no GPU: it answers with errors)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.detection import gpu_probe as _gpu_probe
from fixer.system import proc as _proc
from fixer.detection import detect, overrides_from_env
from fixer.errors import UsageError
from fixer.model import to_dict
from tests.helpers.examples import examples
from tests.helpers.paths import REPO

ENV = dict(os.environ, PYTHONPATH=str(REPO))


def _early() -> list:
    return list(_proc._EARLY.values())


def test_detect_takes_the_probe_started_early_and_reports_the_same() -> None:
    environ = dict(os.environ)
    plain = to_dict(detect(environ=environ))
    assert _gpu_probe.start_early(environ) is True
    (child,) = _early()
    early = to_dict(detect(environ=environ))
    assert not _early() and _proc.drop_early() == 0  # handed out to detect, not left over
    assert child.proc is not None and child.proc.poll() is not None
    assert early == plain


def test_an_early_probe_nobody_asks_for_is_stopped_and_reaped() -> None:
    assert _gpu_probe.start_early(dict(os.environ, SOME_OTHER_VARIABLE="1")) is True
    (child,) = _early()
    detect(environ=dict(os.environ))  # another environment: its own probe
    assert _early() == [child]
    assert _proc.drop_early() == 1 and not _early()
    assert (
        child.proc is not None and child.proc.returncode is not None
    )  # reaped: no zombie, no orphan
    assert child not in _proc._LIVE


OVERRIDE = st.one_of(st.none(), st.just(""), st.sampled_from(["580.65.06", "none"]))


@settings(max_examples=examples(12), deadline=None)
@given(gpu=OVERRIDE, driver=OVERRIDE)
def test_early_start_exactly_when_detection_runs_the_probe(gpu, driver) -> None:
    """start_early (raw variables, before any import) agrees with detect() (parsed overrides)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("COLAB_CUDNN_FIX_")}
    if gpu is not None:
        environ[_gpu_probe.ENV_GPU] = gpu
    if driver is not None:
        environ[_gpu_probe.ENV_DRIVER] = driver
    try:
        o = overrides_from_env(environ)
    except UsageError:  # the command stops before detection: an early probe is just stopped
        _gpu_probe.start_early(environ)
        _proc.drop_early()
        return
    started = _gpu_probe.start_early(environ)
    try:
        assert started == _gpu_probe.needed("/", o.gpus is not None, bool(o.driver_version))
        assert len(_early()) == int(started)
    finally:
        _proc.drop_early()


HOOK = """
import sys
import fixer.system.proc as P
started = []
real_child = P.Child
class Child(real_child):
    def __init__(self, argv, **kw):
        started.append(argv[-1])
        super().__init__(argv, **kw)
P.Child = Child
real_drop = P.drop_early
def drop_early():
    n = real_drop()
    sys.stderr.write(f"gpu probes started {started.count('gpu')}, unclaimed {n}\\n")
    return n
P.drop_early = drop_early
sys.argv = ["colab-cudnn-fix", *sys.argv[1:]]
from fixer.cli.entry import main
sys.exit(main())
"""


def test_the_console_entry_starts_one_probe_and_uses_it(tmp_path) -> None:
    script = tmp_path / "entry.py"
    script.write_text(HOOK)
    env = {k: v for k, v in ENV.items() if not k.startswith("COLAB_CUDNN_FIX_")}
    fast = subprocess.run(
        [sys.executable, str(script), "doctor", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert fast.returncode in (0, 1, 3) and "gpu probes started 1, unclaimed 0" in fast.stderr, (
        fast.stderr[-2000:]
    )
    assert json.loads(fast.stdout)["command"] == "doctor"
    other = subprocess.run(
        [sys.executable, str(script), "doctor", "--json", "--environment", "h200-healthy"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert other.returncode == 0 and "gpu probes started 0, unclaimed 0" in other.stderr, (
        other.stderr[-2000:]
    )
