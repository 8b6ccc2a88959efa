"""The Python probe started early (fixer._python_probe, by the console script) answers exactly as
the in-process probe detection would run, once, and only for the same environment."""
from __future__ import annotations

import os

from fixer import _python_probe
from fixer._proc import child_env
from fixer.detection.python_env import InProcessProbe


def _without_probe_errors(answer):
    data, err = answer
    assert err is None and data is not None
    return data


def test_the_early_answer_is_the_in_process_one_and_is_handed_out_once() -> None:
    env = child_env(os.environ)
    fresh = _without_probe_errors(InProcessProbe(os.environ).result())      # nothing started: probes itself
    _python_probe.start_early(env)
    assert _without_probe_errors(InProcessProbe(os.environ).result()) == fresh   # the early answer
    assert _python_probe.take(env) is None                                        # handed out once


def test_another_environment_does_not_take_it() -> None:
    env = child_env(os.environ)
    _python_probe.start_early(env)
    other = dict(env, PATH=env.get("PATH", "") + os.pathsep + "/nonexistent")
    assert _python_probe.take(other) is None
    assert _without_probe_errors(_python_probe.take(env)) == _without_probe_errors(_python_probe.collect(env))


def test_a_probe_that_raises_is_an_answer_with_its_error(monkeypatch) -> None:
    monkeypatch.setattr(_python_probe, "SCRIPT", "/nonexistent/_probe.py")
    data, err = _python_probe.collect({})
    assert data is None and err and "nonexistent" in err
