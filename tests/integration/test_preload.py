"""fixer.planner.preload: the loader fix applied to a running process (the IPython startup file and
fixer.apply() in a live kernel call it). Real processes and stub libraries compiled by the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.planner.preload import dependency_order
from tests.helpers.examples import examples
from tests.helpers.stublibs import build_cudnn_copy


@settings(max_examples=examples(200), deadline=None)
@given(st.data())
def test_dependency_order_puts_every_library_after_its_needed_ones(data):
    # a random DAG over n libraries (edges only to lower indices, so no cycles), shuffled input order
    n = data.draw(st.integers(1, 9))
    needed = {
        f"lib{i}.so.1": [f"lib{j}.so.1" for j in range(i) if data.draw(st.booleans())]
        for i in range(n)
    }
    paths = data.draw(st.permutations([f"/d/{name}" for name in needed]))
    order = dependency_order(paths, lambda p: needed[os.path.basename(p)] + ["libc.so.6"])
    assert sorted(order) == sorted(paths)
    pos = {os.path.basename(p): i for i, p in enumerate(order)}
    for lib, deps in needed.items():
        assert all(pos[d] < pos[lib] for d in deps)


def _run(code: str, environ: dict) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"], **environ},
    ).stdout
    return json.loads(out.splitlines()[-1])


def test_a_live_process_gets_the_intended_copy_or_says_it_cannot(tmp_path):
    good = build_cudnn_copy(tmp_path / "pip" / "nvidia" / "cudnn" / "lib", "9.19.0")
    bad = build_cudnn_copy(tmp_path / "apt", "9.14.0")
    code = f"""
import ctypes, json
from fixer.planner.preload import fix_process
r = fix_process(cudnn=[{str(good / "libcudnn.so.9")!r}], drop=[{str(bad)!r}])
lib = ctypes.CDLL("libcudnn_ops.so.9")                 # by soname, as cuDNN loads its sub-libraries
lib.cudnnGetVersion.restype = ctypes.c_size_t
maps = sorted({{l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l}})
print(json.dumps({{"complete": r.complete, "conflicts": r.conflicts, "version": lib.cudnnGetVersion(),
                   "dirs": sorted({{m.rsplit("/", 1)[0] for m in maps}})}}))
"""
    # LD_LIBRARY_PATH puts the other copy first: fixed in the process itself
    res = _run(code, {"LD_LIBRARY_PATH": str(bad), "PYTHONPATH": os.getcwd()})
    assert res["complete"] and res["version"] == 91900 and res["dirs"] == [str(good)]
    # LD_PRELOAD mapped the other copy at start: it cannot be taken out, and fix_process says so
    res = _run(code, {"LD_PRELOAD": str(bad / "libcudnn_ops.so.9"), "PYTHONPATH": os.getcwd()})
    assert not res["complete"] and any(c[0].endswith("libcudnn_ops.so.9") for c in res["conflicts"])
