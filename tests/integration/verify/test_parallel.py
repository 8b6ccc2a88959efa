"""Checks side by side (fixer.verifier.checks.run_checks): with room on the GPU the children run
at the same time, and the results come back in the order asked, whatever order the children
finish in; without room (or free memory unknown) they run one after another; a framework named
twice is checked once. Stand-in children write when they start and end."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.verifier.checks import (
    GPU_NEED_MIB,
    GPU_RESERVE_MIB,
    concurrent_ok,
    parse_free_mib,
    run_checks,
)
from tests.helpers.examples import examples

PY = sys.executable

#: argv[1] is the framework; it sleeps longer the earlier it comes, so it finishes last
CHILD = """
fw = sys.argv[1]
log = sys.argv[2]
delay = {"torch": 1.2, "jax": 0.8, "cupy": 0.4, "tensorflow": 0.1}[fw]
with open(log, "a") as f:
    f.write(json.dumps({"fw": fw, "at": "start", "t": time.time()}) + "\\n")
emit("start", framework=fw, python=sys.executable, pid=os.getpid(), cuda_visible_devices=None)
emit("imported", framework=fw, version="1.0", seconds=0.1)
emit("device", name="stand-in", cc="9.0")
time.sleep(delay)
emit("case", case="small", dtype="float32", layout="NCHW", errors={}, max_error=0.0,
     tolerance=0.01, ok=True, first_ms=1.0, steady_ms=1.0)
with open(log, "a") as f:
    f.write(json.dumps({"fw": fw, "at": "end", "t": time.time()}) + "\\n")
emit("done", seconds=delay)
"""


def _spans(log: Path) -> dict:
    out: dict = {}
    for line in log.read_text().splitlines():
        rec = json.loads(line)
        out.setdefault(rec["fw"], {})[rec["at"]] = rec["t"]
    return out


def test_with_room_the_children_overlap_and_report_in_the_order_asked(stand_in, tmp_path):
    log = tmp_path / "log"
    names = ["torch", "jax", "cupy"]
    results = run_checks(
        PY, names, script=stand_in(CHILD), args=(str(log),), timeout=60, free_mib=80_000
    )
    assert [r.framework for r in results] == names
    assert all(r.status == "passed" for r in results), results
    spans = _spans(log)
    # every child started before the first one ended: they ran at the same time
    assert max(s["start"] for s in spans.values()) < min(s["end"] for s in spans.values())


def test_without_room_they_run_one_after_another(stand_in, tmp_path):
    log = tmp_path / "log"
    names = ["torch", "jax", "cupy"]
    for free in (None, 2000):
        log.write_text("")
        results = run_checks(
            PY, names, script=stand_in(CHILD), args=(str(log),), timeout=60, free_mib=free
        )
        assert [r.framework for r in results] == names
        spans = _spans(log)
        order = sorted(spans, key=lambda f: spans[f]["start"])
        assert order == names
        for a, b in zip(order, order[1:]):
            assert spans[a]["end"] <= spans[b]["start"]


def test_a_framework_named_twice_is_checked_once(stand_in, tmp_path):
    log = tmp_path / "log"
    results = run_checks(
        PY,
        ["jax", "torch", "jax"],
        script=stand_in(CHILD),
        args=(str(log),),
        timeout=60,
        free_mib=80_000,
    )
    assert [r.framework for r in results] == ["jax", "torch"]
    assert sum(1 for line in log.read_text().splitlines() if '"start"' in line) == 2


@settings(max_examples=examples(200))
@given(
    names=st.lists(st.sampled_from(sorted(GPU_NEED_MIB)), unique=True, max_size=5),
    free=st.one_of(st.none(), st.integers(0, 200_000)),
)
def test_side_by_side_only_when_the_free_memory_holds_every_need(names, free):
    ok = concurrent_ok(names, free)
    need = sum(GPU_NEED_MIB[n] for n in names) + GPU_RESERVE_MIB
    assert ok == (len(names) > 1 and free is not None and need <= free)


def test_free_memory_from_nvidia_smi_is_the_least_of_the_gpus():
    # the shape of `nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits`: one number
    # (MiB) per GPU, "[N/A]" where the driver cannot say
    assert parse_free_mib("81037\n80512\n") == 80512
    assert parse_free_mib("[N/A]\n") is None
    assert parse_free_mib("") is None
