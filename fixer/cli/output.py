"""When the output itself cannot be written: the reader of a pipe went away (EPIPE, `... | head`)
or the file system is full (ENOSPC, EDQUOT; `> /dev/full`). The command ends with one line on
stderr (when stderr can still be written) and exit code OUTPUT_FAILED, never a traceback.

The console script (fixer.cli.entry) writes through `GuardedStdout`, which turns a failed write
or flush of stdout into OutputFailed: so only stdout's own failures end this way, never a lock
file or a journal that could not be written (those stay the command's errors)."""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, TextIO

#: The exit code when stdout could not be written (the command's answer is lost).
OUTPUT_FAILED = 4


class OutputFailed(Exception):
    """stdout could not be written. Not an OSError on purpose: click answers an EPIPE OSError
    itself (exit 1, silently), and this must reach the console script."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(str(cause))
        self.cause = cause


class GuardedStdout:
    """sys.stdout, whose write and flush failures are OutputFailed; everything else is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as exc:
            raise OutputFailed(exc) from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def output_failed(exc: OutputFailed) -> int:
    """Say once on stderr that the output was lost; stdout goes to /dev/null so the interpreter's
    last flush does not fail again. Returns OUTPUT_FAILED."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ else 1)
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a file: nothing to redirect
        pass
    cause = exc.cause
    reason = (
        "the reader went away" if cause.errno == errno.EPIPE else (cause.strerror or str(cause))
    )
    try:
        sys.stderr.write(f"error: could not write the output: {reason}\n")
        sys.stderr.flush()
    except (OSError, ValueError):  # stderr is gone too: the exit code says it
        pass
    return OUTPUT_FAILED
