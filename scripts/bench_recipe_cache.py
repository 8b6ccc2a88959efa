#!/usr/bin/env python3
"""Recipe loading: the JSON disk cache (read from our own private file, every record checked
again by the recipe checkers: fixer.recipebook._disk_cache_read) against the pickle it replaced
and against parsing the TOML. CPU time (time.process_time), min and median of N interleaved
rounds, so that a loaded machine's waiting does not count.

    python scripts/bench_recipe_cache.py [-n 7]
"""

from __future__ import annotations

import argparse
import pickle  # the replaced format, measured for comparison only
import statistics
import time
from typing import Callable, Dict, List


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=7)
    n = ap.parse_args().n
    from fixer import recipebook as rb

    files = rb.recipe_files(())
    key = rb._cache_key(files, ())
    base = rb._load_all(())[0]
    rb._disk_cache_write(key, base)
    blob = pickle.dumps(base, protocol=pickle.HIGHEST_PROTOCOL)

    def parse() -> None:
        rb.clear_cache()
        errs = rb._Collector()
        tables: Dict[str, List[object]] = {}
        for f in files:
            rb._parse_file(f, tables, errs)  # type: ignore[arg-type]
        rb._cross_check(tables, errs)  # type: ignore[arg-type]

    def json_cache() -> None:
        assert rb._disk_cache_read(key) == base

    runs: Dict[str, Callable[[], object]] = {
        "pickle.loads (before)": lambda: pickle.loads(blob),
        "JSON cache, re-checked (now)": json_cache,
        "parse TOML + checks (no cache)": parse,
    }
    times: Dict[str, List[float]] = {k: [] for k in runs}
    for _ in range(n):
        for k, fn in runs.items():
            t = time.process_time()
            fn()
            times[k].append(time.process_time() - t)
    for k, v in times.items():
        print(f"{k:32s} min {min(v) * 1000:6.1f} ms  median {statistics.median(v) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
