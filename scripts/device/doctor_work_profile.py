#!/usr/bin/env python3
"""The work of one `doctor` after its imports, profiled in a fresh process on the GPU machine:
every module doctor needs is imported first, then `fixer.api.doctor()` runs once under cProfile.

    PYTHONPATH=$PWD python3 scripts/device/doctor_work_profile.py [--plan | --explain]

Prints the wall time of the call and the top functions by their own time and by cumulative time."""

import cProfile
import io
import pstats
import sys
import time

import fixer.api as api
import fixer.detection  # noqa: F401
import fixer.diagnosis.findings  # noqa: F401
import fixer.pipeline  # noqa: F401

if "--plan" in sys.argv:
    import fixer.planner.simulate  # noqa: F401
    import fixer.planner.steps  # noqa: F401
    import fixer.resolver  # noqa: F401
    import fixer.resolver.provider  # noqa: F401

TEXT = "Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.3.0."


def explain():
    return api.explain(TEXT, detect=False)


if "--explain" in sys.argv:
    import fixer.explainer  # noqa: F401
    import fixer.explainer.catalogue  # noqa: F401
    import fixer.explainer.engine  # noqa: F401

call = api.plan if "--plan" in sys.argv else explain if "--explain" in sys.argv else api.doctor
pr = cProfile.Profile()
t = time.perf_counter()
pr.enable()
call()
pr.disable()
print(f"{call.__name__}() after its imports: {time.perf_counter() - t:.3f} s (under cProfile)")
for key in ("tottime", "cumulative"):
    out = io.StringIO()
    pstats.Stats(pr, stream=out).sort_stats(key).print_stats(25)
    sys.stdout.write(out.getvalue().split("\n", 6)[-1])
