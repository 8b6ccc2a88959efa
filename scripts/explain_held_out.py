#!/usr/bin/env python3
"""explain on a held-out set of public reports, measured without reading it.

    python scripts/explain_held_out.py tests/unit/explain/held_out_8.toml [more files]
    PYTHONPATH=../other-tree python scripts/explain_held_out.py FILE    # another tree's explain

For each file: how often the thread's cause is ranked first (top-1), first or second (top-2),
how many reports hold a message explain knows (recognised) and how many more it ranks from the
words alone (guessed: recipes/errors.toml's [[fallback]]); then each miss only as the pair (the cause,
what ranked first), counted, never its text: a set measured this way stays unseen. `--texts`
prints the missed reports too, which makes the set read (say so where it is guarded:
tests/unit/explain/test_cases.py).

`--labels FILE` (one file per set, in order) reads a second labeller's causes for the same URLs
([[case]] url, cause; written without seeing the first): how often the two agree, explain's top-1
on the reports they agree on, and the disagreements as counted (first, second) pairs. Where two
careful labellers disagree, no reading can be right for both: the agreement bounds what the
top-1 measures."""

from __future__ import annotations

import argparse
import collections
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
# This checkout's fixer, ahead of an installed (or another checkout's editable) one; a PYTHONPATH
# still picks another tree first: its entries stay ahead of this one.
sys.path.insert(
    1 + len([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]), str(REPO)
)

from fixer.explainer import analyze  # noqa: E402
from fixer.system.compat import tomllib  # noqa: E402


def _case_tables(path: Path, keys: Tuple[str, str]) -> List[Dict[str, Any]]:
    """The [[case]] tables of a file, each with the `keys` as strings; ValueError naming what is
    wrong otherwise (OSError, TOMLDecodeError when it cannot be read as TOML)."""
    cases = tomllib.loads(path.read_text(encoding="utf-8")).get("case")
    if not isinstance(cases, list) or not cases:
        raise ValueError("no [[case]] tables")
    for i, case in enumerate(cases, 1):
        if not (isinstance(case, dict) and all(isinstance(case.get(k), str) for k in keys)):
            raise ValueError(f"[[case]] number {i}: {' and '.join(keys)} must be strings")
    return cases


def _cases(path: Path) -> List[Dict[str, Any]]:
    """The [[case]] tables of a held-out file, each with a string error and cause."""
    return _case_tables(path, ("error", "cause"))


def _second_labels(path: Path) -> Dict[str, str]:
    """url -> cause of a second labeller's file ([[case]] url, cause)."""
    return {c["url"]: c["cause"] for c in _case_tables(path, ("url", "cause"))}


def measure(path: Path, texts: bool, second: Optional[Dict[str, str]] = None) -> List[str]:
    cases = _cases(path)
    top1 = top2 = recognised = guessed = answered = 0
    misses: "collections.Counter[tuple]" = collections.Counter()
    apart: "collections.Counter[tuple]" = collections.Counter()
    labelled = agree = agreed_top1 = 0
    shown: List[str] = []
    for case in cases:
        result = analyze(case["error"])
        ids = [f.id for f in result.findings]
        answered += bool(ids)
        other = (second or {}).get(case.get("url", ""))
        if other is not None:
            labelled += 1
            if other == case["cause"]:
                agree += 1
                agreed_top1 += bool(ids) and ids[0] == case["cause"]
            else:
                apart[(case["cause"], other)] += 1
        top1 += bool(ids) and ids[0] == case["cause"]
        top2 += case["cause"] in ids[:2]
        recognised += result.recognised
        guessed += bool(ids) and not result.recognised
        if not ids or ids[0] != case["cause"]:
            misses[(case["cause"], ids[0] if ids else "unrecognised")] += 1
            if texts:
                shown.append(
                    f"--- {case.get('url', '?')}\ncause {case['cause']}, ranked {ids[:3]}; "
                    f"how: {case.get('how', '?')}\n{case['error'].strip()}"
                )
    n = len(cases)
    out = [
        f"{path.name}: top-1 {top1}/{n} ({top1 / n:.1%}), top-2 {top2}/{n}, "
        f"recognised {recognised}/{n}, guessed {guessed}/{n}, right when answered {top1}/{answered}"
    ]
    out += [f"  {k} x {cause} -> {got}" for (cause, got), k in misses.most_common()]
    if second is not None:
        out.append(
            f"  second labels: {labelled}/{n} labelled, {agree} agree; top-1 on the agreed "
            f"{agreed_top1}/{agree}"
        )
        out += [f"    {k} x {a} / second: {b}" for (a, b), k in apart.most_common()]
    return out + shown


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", type=Path)
    ap.add_argument("--texts", action="store_true", help="print the missed reports (reads the set)")
    ap.add_argument(
        "--labels",
        nargs="+",
        type=Path,
        default=[],
        help="a second labeller's file per set, in the order of the sets",
    )
    args = ap.parse_args(argv)
    if args.labels and len(args.labels) != len(args.files):
        print("--labels: one file per set, in the order of the sets", file=sys.stderr)
        return 2
    for i, f in enumerate(args.files):
        try:
            second = _second_labels(args.labels[i]) if args.labels else None
        except (OSError, ValueError) as exc:
            print(f"{args.labels[i]}: not a labels file this script reads: {exc}", file=sys.stderr)
            return 2
        try:
            lines = measure(f, args.texts, second)
        except (OSError, ValueError) as exc:  # TOMLDecodeError and UnicodeDecodeError too
            print(f"{f}: not a held-out set this script reads: {exc}", file=sys.stderr)
            return 2
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader closed the pipe; Python's own advice
        # (https://docs.python.org/3/library/signal.html#note-on-sigpipe)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
