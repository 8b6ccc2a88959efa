#!/usr/bin/env python3
"""Write recipes/similar_reports.json, explain's guess by similarity (fixer.explainer.similar),
from labelled reports that are no longer a blind measure.

    python scripts/build_similar_reports.py                 # write the model
    python scripts/build_similar_reports.py --check         # exit 1 if the shipped one differs
    python scripts/build_similar_reports.py --cross-validate [--keep 300 1000 3000]
        [--folds held_out_31.toml ...]

It trains on TRAIN: the READ sets (cases.toml and held-out sets 3-30, each read while rules were
written; 43-55, read in round twenty-six; 59-68, read in round twenty-seven) and the TRAINED sets (held-out sets 31-42: measured
blind for two sessions, their texts never read, then given to the guess as data once fresh blind
sets took their place). Any other set is never read here: it stays the blind measure of the guess
as of everything else (tests/unit/explain/test_cases.py says which sets are which).

--cross-validate leaves each file out in turn (or only those of --folds), builds the model from
the others and counts, over the left-out reports: how often the model's nearest cause is their
label, over all of them and over those that explain's message rules and fallbacks leave with no
reading at all (where the guess is used); the right share by the probability the model gave its
first cause; and explain's own first-ranked cause with that fold's model, per left-out file (the
measure of the whole explainer on reports the guess has not seen; the rules were written from
the READ sets, so only the TRAINED sets' rows of it are out of sample for the rules as well)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(
    1 + len([p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]), str(REPO)
)

from fixer.explainer import similar  # noqa: E402
from fixer.system.compat import tomllib  # noqa: E402

CASES = REPO / "tests" / "unit" / "explain"
#: the labelled files read while rules were written and trained on (43-55 in round twenty-six,
#: 59-68 in round twenty-seven); 56-58 are the validation sets, never trained on
READ = (
    ["cases.toml"]
    + [f"held_out_{n}.toml" for n in range(3, 31)]
    + [f"held_out_{n}.toml" for n in range(43, 56)]
    + [f"held_out_{n}.toml" for n in range(59, 69)]
)
#: the held-out sets given to the guess as data, unread (their texts were never printed)
TRAINED = [f"held_out_{n}.toml" for n in range(31, 43)]
#: what the shipped model is built from (never a set that is still a blind measure)
TRAIN = READ + TRAINED
OUT = REPO / "recipes" / similar.MODEL_FILE
#: the probability bins --cross-validate reports the right share of
BINS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]


def _labelled(name: str) -> List[Tuple[str, str]]:
    tables = tomllib.loads((CASES / name).read_text(encoding="utf-8")).get("case", [])
    return similar.labelled_texts(tables)


def trained_on(files: Optional[List[str]] = None) -> List[Dict[str, str]]:
    """The files a model is built from, each with its sha256 (the shipped model records them: a
    changed file makes it stale)."""
    return [
        {"file": name, "sha256": hashlib.sha256((CASES / name).read_bytes()).hexdigest()}
        for name in (files or TRAIN)
    ]


def model_text(files: Optional[List[str]] = None, keep: int = similar.KEEP) -> str:
    labelled = [pair for name in (files or TRAIN) for pair in _labelled(name)]
    model = similar.build(labelled, keep)
    model["trained_on"] = trained_on(files)
    model["params"] = {
        "keep": keep,
        "epochs": similar.EPOCHS,
        "step": similar.STEP,
        "l2": similar.L2,
        "seed": similar.SEED,
    }
    return json.dumps(model, indent=0, sort_keys=True, ensure_ascii=False) + "\n"


def cross_validate(keeps: List[int], folds: Optional[List[str]] = None) -> List[str]:
    from fixer.explainer import analyze

    per_file: Dict[str, List[Tuple[str, str]]] = {name: _labelled(name) for name in TRAIN}
    left_out = folds or TRAIN
    # the reports nothing but the guess reads (no message, no fallback)
    unread_by_rules = {
        (name, i)
        for name in left_out
        for i, (text, _) in enumerate(per_file[name])
        if not analyze(text, similar=False).findings
    }
    out = []
    for keep in keeps:
        right = right_unread = 0
        bins = {b: [0, 0] for b in BINS}
        first: List[str] = []
        for name in left_out:
            others = [p for other, pairs in per_file.items() if other != name for p in pairs]
            model = similar.from_json(similar.build(others, keep))
            explained = 0
            for i, (text, cause) in enumerate(per_file[name]):
                found = similar.nearest(text, model)
                ok = bool(found) and found[0][0] == cause
                for low, high in BINS:
                    if found and low <= found[0][1] < high:
                        bins[(low, high)][0] += ok
                        bins[(low, high)][1] += 1
                right += ok
                right_unread += ok and (name, i) in unread_by_rules
                ids = [f.id for f in analyze(text, similar=model).findings]
                explained += bool(ids) and ids[0] == cause
            first.append(f"  {name}: explain first-ranked right {explained}/{len(per_file[name])}")
        total = sum(len(per_file[name]) for name in left_out)
        out.append(
            f"keep {keep}: nearest cause right {right}/{total}; on the reports nothing else "
            f"reads {right_unread}/{len(unread_by_rules)}; by its probability: "
            + ", ".join(f"[{lo:.1f}, {hi:.1f}) {k}/{n}" for (lo, hi), (k, n) in bins.items())
        )
        out.extend(first)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the shipped model differs")
    ap.add_argument("--cross-validate", action="store_true", help="leave-one-file-out measure")
    ap.add_argument("--keep", nargs="+", type=int, default=[similar.KEEP])
    ap.add_argument("--folds", nargs="+", metavar="FILE", help="leave out only these files")
    args = ap.parse_args(argv)
    if args.cross_validate:
        unknown = sorted(set(args.folds or ()) - set(TRAIN))
        if unknown:
            ap.error(f"--folds: not a training file: {', '.join(unknown)}")
        print("\n".join(cross_validate(args.keep, args.folds)))
        return 0
    text = model_text(keep=args.keep[0])
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print(
            f"{OUT.name}: {'up to date' if same else 'differs: run scripts/build_similar_reports.py'}"
        )
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
