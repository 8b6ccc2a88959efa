"""fixer.system.proc, the one child-process runner (detection's probes, verify's checks, apply's
installers), on real processes: the deadline stops the whole process group and reaps the child,
the stop escalates signal by signal, a Ctrl-C or a failing on_start stops the child before the
exception goes on, output is captured apart or merged and streamed line by line."""

from __future__ import annotations

import errno
import signal
import sys
import time

import pytest

from fixer.system import proc as _proc

PY = sys.executable


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if not _proc.alive(pid):
            return True
        time.sleep(0.02)
    return False


def test_output_exit_code_and_timing():
    done = _proc.run(
        [PY, "-c", "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)"],
        timeout=30,
    )
    assert (done.returncode, done.text, done.errors, done.timed_out) == (3, "out\n", "err\n", False)
    assert 0 < done.seconds < 30 and abs(done.started_wall - time.time()) < 60


def test_the_deadline_kills_the_whole_group_and_reaps(tmp_path):
    pids = tmp_path / "pids"
    code = (
        f"import os, subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{p.pid}}')\n"
        f"print('started', flush=True); time.sleep(60)\n"
    )
    t = time.monotonic()
    done = _proc.run([PY, "-c", code], timeout=1.5)
    assert done.timed_out and done.stopped_with == "SIGKILL" and done.returncode == -signal.SIGKILL
    assert done.text == "started\n" and time.monotonic() - t < 15
    leader, grandchild = map(int, pids.read_text().split())
    assert _gone(grandchild) and not _proc.alive(leader)


def test_a_gentle_stop_escalates_signal_by_signal():
    """Ignoring SIGINT earns SIGTERM; ignoring both earns SIGKILL; each after its grace period."""
    ignore = (
        "import signal, time\n"
        "for s in (%s): signal.signal(s, signal.SIG_IGN)\n"
        "print('ready', flush=True); time.sleep(60)\n"
    )
    stop = _proc.Stop(
        ((signal.SIGINT, 0.5), (signal.SIGTERM, 0.5), (signal.SIGKILL, 5.0)), reap=True
    )
    for ignored, last in (
        ("signal.SIGINT,", "SIGTERM"),
        ("signal.SIGINT, signal.SIGTERM", "SIGKILL"),
    ):
        done = _proc.run(
            [PY, "-c", ignore % ignored], timeout=1.0, stop=stop, group=_proc.Group.APPLY
        )
        assert done.timed_out and done.stopped_with == last and done.returncode is not None


def test_on_start_sees_the_pid_first_and_its_failure_stops_the_child():
    seen = []

    def on_start(pid: int) -> None:
        seen.append(pid)
        raise RuntimeError("journal full")

    with pytest.raises(RuntimeError, match="journal full"):
        _proc.run(
            [PY, "-c", "import time; time.sleep(60)"],
            timeout=60,
            on_start=on_start,
            stop=_proc.Stop(((signal.SIGINT, 5.0),), reap=True),
        )
    assert len(seen) == 1 and not _proc.alive(seen[0])


def test_ctrl_c_while_waiting_stops_the_child_then_propagates():
    seen = []

    def on_line(line: str) -> None:
        seen.append(line)
        raise KeyboardInterrupt

    child = _proc.Child(
        [PY, "-c", "import time; print('x', flush=True); time.sleep(60)"],
        timeout=60,
        merge_stderr=True,
        group=_proc.Group.APPLY,
        stop=_proc.GENTLE,
    )
    with pytest.raises(KeyboardInterrupt):
        child.wait(on_line=on_line)
    # its output is still read while it unwinds (its own KeyboardInterrupt), then it is reaped
    assert seen[0] == "x" and "KeyboardInterrupt" in seen[-1]
    assert child.proc is not None and child.proc.returncode is not None
    assert child not in _proc._LIVE


def test_merged_output_streams_line_by_line_and_keeps_a_tail():
    lines = []
    code = "import sys\nfor i in range(2000): print(i, file=sys.stderr if i % 2 else sys.stdout)\nsys.stdout.write('last')"
    done = _proc.run(
        [PY, "-u", "-c", code], timeout=30, merge_stderr=True, on_line=lines.append, keep=100
    )
    assert lines == [str(i) for i in range(2000)] + ["last"]
    assert done.text.endswith("1999\nlast") and len(done.stdout) <= 100 and done.stderr == b""


def test_a_program_that_cannot_start_is_an_error_not_an_exception(tmp_path):
    done = _proc.run([str(tmp_path / "nope")], timeout=5)
    assert done.errno == errno.ENOENT and done.error and done.returncode is None
    assert done.answer() == (None, done.error)


def test_a_complete_answer_does_not_wait_for_the_teardown():
    code = (
        "import os, sys, time\nprint('DONE', flush=True)\nos.close(1); os.close(2)\ntime.sleep(3)\n"
    )
    t = time.monotonic()
    done = _proc.Child([PY, "-c", code], timeout=30).wait(done=lambda out: b"DONE" in out)
    assert time.monotonic() - t < 2.5 and done.returncode is None and not done.timed_out


def test_json_answers_and_what_went_wrong():
    ok = _proc.run([PY, "-c", "print('noise'); print('{\"a\": 1}')"], timeout=30, label="probe")
    assert ok.answer() == ({"a": 1}, None)
    crashed = _proc.run([PY, "-c", "import os; os.abort()"], timeout=30, label="probe")
    assert crashed.answer() == (None, f"probe: killed by signal {signal.SIGABRT.value}")
    slow = _proc.run([PY, "-c", "import time; time.sleep(30)"], timeout=0.5, label="probe")
    assert slow.answer() == (None, "probe: no answer within 0.5 s (killed)")


def test_kill_live_stops_children_started_and_not_collected():
    child = _proc.Child([PY, "-c", "import time; time.sleep(60)"], timeout=60)
    assert child in _proc._LIVE and _proc.kill_live() >= 1
    assert child.proc is not None and child.proc.wait(timeout=10) == -signal.SIGKILL


def test_stop_recorded_stops_a_process_that_is_not_our_child():
    # a process in its own group, as an installer a killed apply left behind
    stubborn = _proc.Child(
        [
            PY,
            "-c",
            "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
            "print('ready', flush=True)\ntime.sleep(60)",
        ],
        timeout=60,
    )
    assert stubborn.proc is not None and stubborn.proc.stdout is not None
    stubborn.proc.stdout.readline()
    start = _proc.process_start_time(stubborn.proc.pid)
    assert _proc.stop_recorded(stubborn.proc.pid, start, grace_int=0.3, grace_term=2.0) in (
        "SIGTERM",
        "SIGKILL",
    )
    stubborn.wait()
    assert not _proc.alive(stubborn.proc.pid)
