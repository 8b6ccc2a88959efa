"""Output that copy-pastes, over generated inputs: long paths (with spaces, as Colab's
"/content/drive/My Drive"), long commands, many rows, wide characters, at 60 and 100 columns
with stdout piped and COLUMNS set. Every table goes through render.print_table (one rule:
render.table_widths); these check that rule and the verify and fleet renderers built on it.

Invariants: nothing is cut ("…"), every word of every cell appears whole on one line, a cell
of a column that is never broken (paths, commands, node names) appears whole on one line, a
table never exceeds the width, and a table that does not fit becomes a list with every cell
on its own "header: value" line."""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any, Callable, List, Sequence
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.model import CheckResult, Finding
from tests.helpers.examples import examples
from tests.helpers.output import units_whole, whole_on_a_line, words_whole

WIDTHS = st.sampled_from([60, 100])
_CHARS = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyzABCDEFXYZ0123456789._-+=:@~") + ["é", "ü", "数", "λ"]
)
word = st.text(_CHARS, min_size=1, max_size=40)
prose = st.lists(word, min_size=1, max_size=12).map(" ".join)
segment = st.one_of(word, st.lists(word, min_size=2, max_size=3).map(" ".join))  # "My Drive"
path = st.lists(segment, min_size=1, max_size=10).map(lambda s: "/" + "/".join(s))
# a command in prose ends at its clause's end (render.prose: ". ", " and ", " then "), so its
# words never end a clause; paths in it have no space in their last component (render.prose)
cmd_word = word.filter(lambda w: not w.endswith(".") and w not in ("and", "then"))
cmd_path = st.tuples(st.lists(segment, max_size=6), cmd_word).map(
    lambda t: "/" + "/".join([*t[0], t[1]])
)
command = st.tuples(
    st.sampled_from(
        [
            "pip install",
            "apt-get install -y --allow-change-held-packages",
            "uv pip install --python /usr/bin/python3",
        ]
    ),
    st.lists(st.tuples(cmd_word, cmd_word).map("==".join), min_size=1, max_size=6),
    st.one_of(st.just(""), cmd_path.map(lambda p: "--find-links " + p)),
).map(lambda t: " ".join([t[0], *t[1], t[2]]).strip())


def render(width: int, draw: Callable[[], None]) -> str:
    """What `draw` prints through render.out() with stdout piped into a buffer and COLUMNS set."""
    buf = io.StringIO()
    with mock.patch.dict(os.environ, {"COLUMNS": str(width)}), contextlib.redirect_stdout(buf):
        draw()
    return buf.getvalue()


@st.composite
def tables(draw: Any) -> Any:
    n = draw(st.integers(1, 8))
    headers = draw(
        st.lists(
            st.one_of(word, st.tuples(word, word).map(" ".join)),
            min_size=n,
            max_size=n,
            unique=True,
        )
    )
    whole = [h for h in headers if draw(st.booleans())]
    cell = {
        h: st.one_of(path, command, word) if h in whole else st.one_of(prose, word, st.just(""))
        for h in headers
    }
    rows = draw(st.lists(st.tuples(*(cell[h] for h in headers)), max_size=30))
    return headers, rows, whole, draw(st.booleans())


@settings(max_examples=examples(100), deadline=None)
@given(table=tables(), width=WIDTHS)
def test_print_table_never_cuts_a_cell(table, width) -> None:
    from rich.cells import cell_len

    from fixer.render import out, print_table, table_widths

    headers, rows, whole, boxed = table
    text = render(width, lambda: print_table(out(), headers, rows, boxed=boxed, whole=whole))
    assert "…" not in text
    for r in rows:
        for h, c in zip(headers, r):
            assert words_whole(text, c), (h, c)
            if h in whole:
                assert whole_on_a_line(text, c), (h, c)
    if table_widths(headers, rows, width, boxed=boxed, whole=whole) is not None:
        assert all(cell_len(line) <= width for line in text.splitlines()), text
        for h in headers:
            assert words_whole(text, h), h
    else:
        lines = text.splitlines()
        for r in rows:
            assert (r[0].strip() or "-") in lines
            for h, c in zip(headers[1:], r[1:]):
                assert not c.strip() or f"  {h}: {c}" in lines, (h, c)


@st.composite
def check_results(draw: Any) -> List[CheckResult]:
    from fixer.children import verify as child

    out = []
    for fw in draw(
        st.lists(
            st.sampled_from(["torch", "jax", "tensorflow", "cupy"]),
            min_size=1,
            max_size=3,
            unique=True,
        )
    ):
        cases = tuple(
            {
                "case": draw(st.one_of(st.sampled_from([c[0] for c in child.CASES]), word)),
                "dtype": draw(st.sampled_from(sorted(child.TOLERANCE))),
                "layout": draw(st.sampled_from(["NCHW", "NHWC", "-"])),
                "max_error": draw(st.one_of(st.none(), st.floats(0, 10))),
                "tolerance": draw(st.sampled_from(sorted(child.TOLERANCE.values()))),
                "ok": draw(st.booleans()),
                "first_ms": draw(st.floats(0, 1e5).map(lambda v: round(v, 3))),
                "steady_ms": draw(st.floats(0, 1e3).map(lambda v: round(v, 3))),
            }
            for _ in range(draw(st.integers(0, 12)))
        )
        findings = tuple(
            Finding(
                id=draw(st.sampled_from(["cudnn-mixed", "cudnn-too-old", "cudnn-incomplete"])),
                severity="error",
                title=draw(prose),
                evidence=tuple(draw(st.lists(path, max_size=3))),
                fix=draw(command),
                frameworks=(fw,),
            )
            for _ in range(draw(st.integers(0, 2)))
        )
        out.append(
            CheckResult(
                framework=fw,
                status=draw(st.sampled_from(["passed", "failed", "crashed", "timeout"])),
                summary=draw(
                    st.one_of(
                        prose,
                        path.map(lambda p: f"the cuDNN copy {fw} loaded ({p}) lacks a library"),
                    )
                ),
                findings=findings,
                cudnn_loaded="9.19.0",
                cudnn_built="9.19.0",
                mapped=tuple(draw(st.lists(path, max_size=12))),
                cases=cases,
                first_seconds=1.7345,
                steady_seconds=0.000685,
                seconds=10.352,
                import_seconds=2.555,
                version=draw(word),
                device=draw(st.sampled_from(["NVIDIA H200", "Tesla T4", "NVIDIA A100-SXM4-40GB"])),
                compute_capability="9.0",
                errors=tuple(draw(st.lists(prose, max_size=2))),
                output=draw(st.one_of(st.just(""), st.lists(path, max_size=4).map("\n".join))),
            )
        )
    return out


@settings(max_examples=examples(40), deadline=None)
@given(results=check_results(), width=WIDTHS)
def test_verify_never_cuts_a_path_a_command_or_a_cell(
    results: Sequence[CheckResult], width: int
) -> None:
    from fixer.render.verify import case_rows, clip, render_verify

    text = render(width, lambda: render_verify(results))
    assert "…" not in text
    for r in results:
        assert units_whole(text, r.summary)
        for p in r.mapped:
            assert f"  mapped {p}" in text.splitlines()
        for f in r.findings:
            assert units_whole(text, f.fix)  # render.prose: a command is one unit to its clause end
            for e in f.evidence:
                assert units_whole(text, e)
        for e in r.errors:
            assert units_whole(text, clip(e))
        if r.status != "passed":
            for line in r.output.strip().splitlines():
                assert whole_on_a_line(text, line)
        for row in case_rows(r):
            for c in row:
                assert whole_on_a_line(text, getattr(c, "plain", c))


@st.composite
def fleets(draw: Any) -> Any:
    from fixer.cluster import NodeResult, summarize

    results = []
    for i in range(draw(st.integers(1, 25))):
        node = f"{draw(word)}-{i}"
        if draw(st.integers(0, 5)) == 0:
            results.append(NodeResult(node=node, error=draw(prose)))
            continue
        fws = draw(
            st.lists(st.sampled_from(["torch", "jax", "tensorflow"]), max_size=3, unique=True)
        )
        findings = [
            {
                "id": fid,
                "severity": "error",
                "title": draw(prose),
                "evidence": [],
                "fix": "",
                "frameworks": [],
                "confidence": 1.0,
            }
            for fid in draw(
                st.lists(
                    st.sampled_from(["cudnn-too-old", "cudnn-mixed", "driver-too-old"]),
                    max_size=2,
                    unique=True,
                )
            )
        ]
        doctor = {
            "schema": 1,
            "environment": {
                "gpus": [
                    {
                        "name": draw(st.sampled_from(["NVIDIA H200", "Tesla T4"])),
                        "compute_capability": "9.0",
                    }
                ],
                "driver": {"version": draw(st.sampled_from(["580.159.04", "535.104.05"]))},
                "frameworks": [
                    {"framework": f, "distribution": f, "version": draw(word)} for f in fws
                ],
                "loads": [
                    {
                        "consumer": f,
                        "library": "cudnn",
                        "version": "9.19.0",
                        "directory": draw(path),
                    }
                    for f in fws
                ],
            },
            "findings": findings,
            "healthy": not findings,
            "exit_code": 1 if findings else 0,
        }
        results.append(
            NodeResult(
                node=node, address=draw(st.one_of(st.just(""), st.just("10.0.12.7"))), doctor=doctor
            )
        )
    return summarize(results)


@settings(max_examples=examples(40), deadline=None)
@given(value=fleets(), width=WIDTHS)
def test_fleet_never_cuts_a_node_an_address_or_a_stack(value: Any, width: int) -> None:
    from fixer.render.fleet import render as render_fleet

    text = render(width, lambda: render_fleet(value, "table"))
    assert "…" not in text
    for n in value["nodes"]:
        for cell in (n["node"], n["address"] or "-", n["stack"]):
            assert whole_on_a_line(text, cell), cell
        assert words_whole(text, ", ".join(n["findings"]) or "healthy")
    for f in value["failed"]:
        assert whole_on_a_line(text, f["node"]) and words_whole(text, f["error"])
