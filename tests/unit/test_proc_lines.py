"""fixer.system.proc.Lines cuts a child's output into lines exactly as a text-mode pipe would (line
breaks \\n, \\r\\n and \\r), however the output is cut into chunks on its way (property over
generated outputs and chunkings)."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from fixer.system.proc import Lines

pieces = st.lists(st.sampled_from(["a", "bc", "é", "\n", "\r", "\r\n", " ", "100%"]), max_size=40)


def _text_mode(data: bytes):
    """What reading `data` line by line in text mode (universal newlines) gives."""
    return [
        line.rstrip("\r\n")
        for line in io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=None)
    ]


@given(pieces, st.lists(st.integers(min_value=0, max_value=200), max_size=10))
def test_lines_are_those_of_a_text_mode_pipe_whatever_the_chunks(parts, cuts):
    data = "".join(parts).encode("utf-8")
    bounds = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    lines = Lines()
    got = []
    for a, b in zip(bounds, bounds[1:]):
        got += lines.feed(data[a:b])
    got += lines.end()
    assert got == _text_mode(data)
