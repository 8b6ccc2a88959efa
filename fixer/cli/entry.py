"""The console script. Imports the CLI inside the Ctrl-C guard, so an interrupt while the tool
starts (its imports take a few hundred ms) exits 130 with one line (one JSON object under
--json), never a traceback."""

from __future__ import annotations

import gc
import os
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Sequence


def command_of(argv: "Sequence[str]") -> str:
    """The command an argv names ('recipes show', 'doctor', or '' when none)."""
    words = [a for a in argv if not a.startswith("-")]
    if not words:
        return ""
    if words[0] in ("recipes", "fleet") and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0]


_REPORTED: "list[bool]" = []  # set once "interrupted" has been said (a second report would print it twice)


def interrupt_reported() -> bool:
    return bool(_REPORTED)


def report_interrupt(argv: "Sequence[str]") -> int:
    """Kill the children still running, say "interrupted" (JSON under --json); exit code 130."""
    _REPORTED.append(True)
    from fixer.system.proc import kill_live
    from fixer.errors import interrupted
    from fixer.render import error_payload

    kill_live()
    exc = interrupted()
    if "--json" in argv:
        import json

        sys.stdout.write(json.dumps(error_payload(exc, command_of(argv)), indent=2) + "\n")
        sys.stdout.flush()
    else:
        sys.stderr.write("error: interrupted\n")
    return exc.exit_code


def main() -> int:
    """The exit code of the command in sys.argv (for callers that go on running: tests, runpy)."""
    return _run()[0]


def console() -> None:
    """The console script (and `python -m fixer`): run the command, then exit.

    After the fast path (`doctor --json`, `plan --json`: the answer is printed, every child
    reaped, the recipes thread joined) nothing is left to do but free memory, so the
    interpreter's own finalization, 15-20 ms or about a tenth of `doctor --json`, is skipped
    with os._exit once stdout and stderr are flushed. Every other command exits normally.

    For the same reason the cyclic garbage collector stays off until the command is known not to
    be a fast one: the fast path lives for a fraction of a second and frees nothing it made
    (its collections cost about 5 % of `doctor --json`)."""
    gc.disable()
    code, fast = _run(gc_off=True)
    if fast:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            sys.exit(_reader_gone())
        os._exit(code)
    sys.exit(code)


def _reader_gone() -> int:
    """The exit code when whoever read our output went away (`... | head`): 1, without a
    traceback, as click answers it for the full CLI. What stdout still holds goes to /dev/null,
    so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (a test's capture): nothing to redirect
        pass
    return 1


def _run(gc_off: bool = False) -> "tuple[int, bool]":
    """(exit code, whether the fast path answered). `gc_off`: the garbage collector was turned
    off for the fast path; it is turned back on before the full CLI runs."""
    fast_code = None
    try:
        from fixer.cli.fast import detects_here, run as fast, warnings

        if detects_here(sys.argv[1:]):
            from fixer.detection.gpu_probe import start_early

            start_early()  # the GPU probe runs while the rest of the tool is imported
        fast_code = fast(sys.argv[1:])
        if fast_code is None:
            if gc_off:
                gc.enable()
            from fixer.cli import main as run

            code = run()
        else:
            code = fast_code
            problems = warnings()
            if problems:
                from fixer.render import warning

                for line in problems:
                    warning(line)
    except BrokenPipeError:
        fast_code = None
        code = _reader_gone()
    except KeyboardInterrupt:
        if gc_off:
            gc.enable()
        code = report_interrupt(sys.argv[1:])
    finally:
        if "fixer.system.proc" in sys.modules:
            from fixer.system.proc import drop_early

            drop_early()  # a probe started early that the command did not ask for
    # the answer is decided and printed: a Ctrl-C from here on ends the process by the signal,
    # without a traceback from the interpreter's shutdown
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return code, fast_code is not None
