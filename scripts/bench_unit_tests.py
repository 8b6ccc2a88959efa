#!/usr/bin/env python3
"""How long `pytest tests/unit` takes.

    python scripts/bench_unit_tests.py                 # one run of this checkout
    python scripts/bench_unit_tests.py -n 3 --json
    python scripts/bench_unit_tests.py --against ../other-checkout   # A/B, runs side by side
    python scripts/bench_unit_tests.py --workers auto  # the suite on every core (pytest-xdist)

Runs `python -m pytest -q -p no:randomly tests/unit` in a child process (this interpreter) and
prints its CPU time (user + sys, from the child's rusage), its wall time, the load average before
and after, the host's speed just before it (`reference_ms`: a fixed single-threaded workload, in
milliseconds) and pytest's summary line. On a shared machine the wall time follows the load; the CPU
time much less so, which is why both are printed. With --against the other checkout's suite runs
at the same time as this one's, so both see the same load (compare their CPU times).

It also says whether Python may write bytecode caches (PYTHONDONTWRITEBYTECODE): without them,
every run compiles each imported module and pytest rewrites the asserts of every test module
again (about 5 s of CPU of this suite on the 2-core CI machine); with them, only the first run
does. --collect times `pytest --collect-only` alone too: imports and rewriting, no test run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Dict, List, Optional, Sequence, Tuple, Union

REPO = Path(__file__).resolve().parent.parent
COMMAND = ["-m", "pytest", "-q", "-p", "no:randomly", "tests/unit"]
COLLECT = ["-m", "pytest", "-q", "-p", "no:randomly", "--collect-only", "tests/unit"]


def _start(
    repo: Path, command: Sequence[str] = COMMAND
) -> "Tuple[subprocess.Popen[bytes], IO[bytes]]":
    """The suite of `repo`, its output going to a temporary file: a pipe read only after wait4
    would block a child whose output outgrows the pipe's buffer (a run with many failures)."""
    out = tempfile.TemporaryFile()
    return subprocess.Popen(
        [sys.executable, *command], cwd=str(repo), stdout=out, stderr=subprocess.STDOUT
    ), out


def _wait(proc: "subprocess.Popen[bytes]", output: IO[bytes]) -> Dict[str, Union[float, str]]:
    """Wait for `proc`; its CPU time from wait4's rusage (the child's own, not its siblings')."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    output.seek(0)
    out = output.read().decode(errors="replace")
    output.close()
    lines = [ln for ln in out.splitlines() if ln.strip()]
    return {
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "user_s": round(usage.ru_utime, 2),
        "sys_s": round(usage.ru_stime, 2),
        "rc": float(proc.returncode),
        "summary": lines[-1] if lines else "",
    }


def reference_ms(rounds: int = 3) -> float:
    """The host's speed just now: the median milliseconds of a fixed single-threaded workload
    (20,000 small records through json and a sort), in this process. The same tree's suite
    took 44 s and 66 s of CPU on this shared machine on the same day: a slower host shows
    here as well, so two readings of the suite compare only beside their reference times."""
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        data = [{"k": str(i), "v": [i, i * 2.5, "x" * (i % 7)]} for i in range(20_000)]
        sorted(json.loads(json.dumps(data)), key=lambda d: d["k"])
        times.append(time.perf_counter() - t)
    return round(statistics.median(times) * 1000, 1)


def run(repos: List[Path], command: Sequence[str] = COMMAND) -> List[Dict[str, Union[float, str]]]:
    reference = reference_ms()
    load_before = os.getloadavg()[0]
    t0 = time.monotonic()
    procs = [_start(r, command) for r in repos]
    results = []
    for repo, (proc, output) in zip(repos, procs):
        r = _wait(proc, output)
        r["wall_s"] = round(time.monotonic() - t0, 2)
        r["repo"] = str(repo)
        r["load_before"] = round(load_before, 2)
        r["load_after"] = round(os.getloadavg()[0], 2)
        r["reference_ms"] = reference
        r["what"] = "collect only" if "--collect-only" in command else "suite"
        r["bytecode_caches"] = "off" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "on"
        results.append(r)
    return results


def _summary(runs: Sequence[Dict[str, Union[float, str]]]) -> List[str]:
    """Per checkout and kind of run, with more than one run: the median, the lowest and the
    highest wall and CPU time (on a shared machine one run says little: the host's load moves
    both by a fifth between consecutive runs of the same tree)."""
    groups: Dict[Tuple[str, str], List[Dict[str, Union[float, str]]]] = {}
    for r in runs:
        groups.setdefault((str(r["repo"]), str(r["what"])), []).append(r)
    out = []
    for (repo, what), rs in groups.items():
        if len(rs) < 2:
            continue
        wall = sorted(float(r["wall_s"]) for r in rs)
        cpu = sorted(float(r["cpu_s"]) for r in rs)
        ref = sorted(float(r["reference_ms"]) for r in rs)
        out.append(
            f"{repo} ({what}), {len(rs)} runs: wall median {statistics.median(wall):.2f} s "
            f"({wall[0]:.2f}-{wall[-1]:.2f}), cpu median {statistics.median(cpu):.2f} s "
            f"({cpu[0]:.2f}-{cpu[-1]:.2f}), reference median {statistics.median(ref):.1f} ms "
            f"({ref[0]:.1f}-{ref[-1]:.1f})"
        )
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1, help="runs (default 1)")
    ap.add_argument(
        "--against", help="another checkout to run side by side (A/B under the same load)"
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--collect", action="store_true", help="also time --collect-only alone")
    ap.add_argument(
        "--workers",
        default="",
        help="pytest-xdist workers (`-n WORKERS`, e.g. auto: one per core) for the timed run",
    )
    args = ap.parse_args(argv)
    repos = [REPO] + ([Path(args.against).resolve()] if args.against else [])
    command = COMMAND[:-1] + (["-n", args.workers] if args.workers else []) + COMMAND[-1:]
    runs = [r for _ in range(args.n) for r in run(repos, command)]
    if args.collect:
        runs += run(repos, COLLECT)
    if args.json:
        print(json.dumps(runs, indent=2))
    else:
        print("command: " + " ".join(["python", *command]))
        for r in runs:
            print(
                f"{r['repo']} ({r['what']}, bytecode caches {r['bytecode_caches']}): cpu {r['cpu_s']} s (user {r['user_s']} + sys {r['sys_s']}), wall {r['wall_s']} s, "
                f"load {r['load_before']} -> {r['load_after']}, reference {r['reference_ms']} ms: "
                f"{r['summary']}"
            )
        for line in _summary(runs):
            print(line)
    return 0 if all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
