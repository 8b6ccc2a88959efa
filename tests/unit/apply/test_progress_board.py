"""The CLI reporter's live line (fixer.render.apply.ConsoleReporter on a ConsoleBoard) in a
terminal and in a log, driven by generated installer transcripts and event orders:

- whatever order steps, lines, phases and checks come in, a terminal's cursor is shown again at
  the end (rich Live hides it while the line is live): a step that never finished (Ctrl-C, a
  kill) ends its line at the next phase ("rolling back ...");
- a log (no terminal) gets plain lines only: no carriage return, no escape sequence.
"""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.applier.progress import InstallWatch
from fixer.applier.runner import CommandResult
from fixer.model import Step
from fixer.render import new_console
from fixer.render.apply import ConsoleReporter
from tests.helpers.examples import examples

HIDE, SHOW = "\x1b[?25l", "\x1b[?25h"

STEP = Step(
    kind="pip-install",
    summary="install nvidia-cudnn-cu13==9.19.0.56",
    argv=("/p/python", "-m", "pip", "install", "nvidia-cudnn-cu13==9.19.0.56"),
    packages=("nvidia-cudnn-cu13==9.19.0.56",),
    download_bytes=500_000_000,
)
LINES = [
    "Collecting nvidia-cudnn-cu13==9.19.0.56",
    "Downloading nvidia_cudnn_cu13-9.19.0.56-py3-none-manylinux_2_27_x86_64.whl (500.0 MB)",
    "Progress 0 of 500000000",
    "Progress 250000000 of 500000000",
    "Progress 500000000 of 500000000",
    "Installing collected packages: nvidia-cudnn-cu13",
    "Successfully installed nvidia-cudnn-cu13-9.19.0.56",
]

events = st.lists(
    st.one_of(
        st.just(("start",)),
        st.tuples(st.just("line"), st.sampled_from(LINES)),
        st.just(("finish",)),
        st.tuples(st.just("phase"), st.sampled_from(["rolling back: interrupted", "checking"])),
        st.tuples(st.just("checking"), st.sampled_from([("torch", "jax"), ()])),
        st.tuples(st.just("note"), st.just("a note")),
    ),
    max_size=12,
)


def _drive(reporter: ConsoleReporter, script) -> None:
    watch = InstallWatch(0.0)
    for event in script:
        if event[0] == "start":
            reporter.step_started(1, 1, STEP)
            watch = InstallWatch(0.0, expected=STEP.download_bytes, packages=STEP.packages)
            reporter.watching(1, watch)  # as apply hands it over (fixer.applier.transaction)
        elif event[0] == "line":
            watch.line(event[1], 0.1)
            reporter.step_output(1, event[1])
        elif event[0] == "finish":
            reporter.step_finished(1, STEP, CommandResult(rc=0, seconds=1.0))
        elif event[0] == "phase":
            reporter.phase(event[1])
        elif event[0] == "checking":
            reporter.checking(event[1])
        else:
            reporter.note(event[1])
    reporter.phase("done")  # apply always ends with a phase (checking the result, rolling back)


@given(events)
@settings(max_examples=examples(100))
def test_a_terminal_gets_its_cursor_back_whatever_happened(script):
    buf = io.StringIO()
    console = new_console(file=buf, force_terminal=True, width=100, soft_wrap=True)
    reporter = ConsoleReporter(console)
    _drive(reporter, script)
    text = buf.getvalue()
    assert text.count(HIDE) == text.count(SHOW)
    if HIDE in text:
        assert text.rindex(SHOW) > text.rindex(HIDE)


@given(events)
@settings(max_examples=examples(100))
def test_a_log_gets_plain_lines(script):
    buf = io.StringIO()
    reporter = ConsoleReporter(new_console(file=buf, width=100, soft_wrap=True))
    _drive(reporter, script)
    text = buf.getvalue()
    assert "\r" not in text and "\x1b" not in text
