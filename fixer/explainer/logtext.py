"""Reading a log for explain: whole when small; head and tail when large (errors come last),
with a note saying how much of the middle was skipped."""

from __future__ import annotations

import os
from typing import BinaryIO, Optional, Tuple

#: Logs up to this size are read whole.
MAX_TEXT = 5_000_000
#: Of a larger log: this much of its start (the versions and loader lines printed at import) ...
HEAD = 1_000_000
#: ... and this much of its end (where the error is).
TAIL = 4_000_000


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def read_head_tail(fh: BinaryIO, size: Optional[int] = None) -> Tuple[str, Optional[str]]:
    """(text, note): the whole stream when it is at most MAX_TEXT bytes, else HEAD + TAIL bytes
    with a marker line between them and a note naming the bytes skipped. `size` is known for
    files (seekable); for a pipe the stream is read through, keeping a rolling tail."""
    if size is not None and size <= MAX_TEXT:
        return _decode(fh.read()), None
    if size is not None:
        head = fh.read(HEAD)
        fh.seek(max(HEAD, size - TAIL))
        tail = fh.read()
        skipped = size - len(head) - len(tail)
    else:
        head = fh.read(MAX_TEXT + 1)
        if len(head) <= MAX_TEXT:
            return _decode(head), None
        rest = head[HEAD:]
        head = head[:HEAD]
        total = len(head) + len(rest)
        while True:
            chunk = fh.read(1 << 20)
            if not chunk:
                break
            total += len(chunk)
            rest = (rest + chunk)[-TAIL:]
        tail = rest[-TAIL:]
        skipped = total - len(head) - len(tail)
    if skipped <= 0:
        return _decode(head + tail), None
    # cut at line boundaries so that no half line is matched
    head = head[: head.rfind(b"\n") + 1] or head
    nl = tail.find(b"\n")
    tail = tail[nl + 1 :] if 0 <= nl < len(tail) - 1 else tail
    note = (
        f"the log is {skipped + len(head) + len(tail):,} bytes: read its first {len(head):,} and last "
        f"{len(tail):,} bytes, skipped {skipped:,} bytes in the middle"
    )
    return _decode(head) + "\n[... colab-cudnn-fix: middle of the log skipped ...]\n" + _decode(
        tail
    ), note


def read_log_file(path: str) -> Tuple[str, Optional[str]]:
    with open(path, "rb") as fh:
        return read_head_tail(fh, os.fstat(fh.fileno()).st_size)
