"""The console script `colab-cudnn-fix` (and `python -m fixer`): run the command, exit with its code.

The CLI is imported inside the Ctrl-C guard, so an interrupt while the tool starts exits 130 with
one line (one JSON object under --json), never a traceback. Output that cannot be written (a
closed pipe, a full disk) ends with one line on stderr and exit 4 (fixer.cli.output)."""

from __future__ import annotations

import signal
import sys

from fixer.cli.output import GuardedStdout, OutputFailed, output_failed


def main() -> int:
    """The exit code of the command in sys.argv."""
    argv = sys.argv[1:]
    sys.stdout = GuardedStdout(sys.stdout)
    try:
        try:
            # guard: the CLI (typer, the api) is imported inside the Ctrl-C guard, see above
            from fixer.cli.commands import main as run

            code = run(argv)
        except KeyboardInterrupt:
            # guard: only an interrupted start loads the interrupt report
            from fixer.cli.interrupt import report_interrupt

            code = report_interrupt(argv)
        sys.stdout.flush()
    except OutputFailed as exc:
        code = output_failed(exc)
    # the answer is decided and printed: a Ctrl-C from here on ends the process by the signal,
    # without a traceback from the interpreter's shutdown
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    return code


def console() -> None:
    sys.exit(main())
