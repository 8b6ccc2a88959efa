#!/usr/bin/env python3
"""The rejected experiment of 2026-11-28 (runs-2026-11-28f/README.md): reorder a recognised
text's readings by confidence + BETA x the similarity model's probability, with the model of each
fold built without that held-out set (sets 31-42, out of sample for the rules and the model).
Prints counts only (no text). Run from the repository root:

    python docs/measurements/runs-2026-11-28f/blend_experiment.py   # about 7 minutes
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Dict, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from fixer.explainer import analyze, similar  # noqa: E402
from fixer.system.compat import tomllib  # noqa: E402

D = Path(__file__).resolve().parents[3] / "tests" / "unit" / "explain"
TRAIN = ["cases.toml"] + [f"held_out_{n}.toml" for n in range(3, 43)]
FOLDS = [f"held_out_{n}.toml" for n in range(31, 43)]
BETAS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0)


def main() -> None:
    per = {
        n: similar.labelled_texts(tomllib.loads((D / n).read_text("utf-8")).get("case", []))
        for n in TRAIN
    }
    right = {(mode, b): [0] * len(FOLDS) for mode in ("all", "close") for b in BETAS}
    for k, fold in enumerate(FOLDS):
        model = similar.from_json(
            similar.build([p for n, ps in per.items() if n != fold for p in ps])
        )
        for text, cause in per[fold]:
            p = dict(similar.nearest(text, model))
            read = analyze(text, similar=False).findings
            conf: Dict[str, float] = {}
            for f in read:
                conf[f.id] = max(conf.get(f.id, 0.0), f.confidence)
            for (mode, beta), counts in right.items():
                if not conf:
                    best = max(p, key=lambda c: p[c]) if p else None
                    top: Optional[str] = best if best and p[best] >= similar.MIN_SCORE else None
                else:
                    order = sorted(conf, key=lambda c: -conf[c])
                    close = len(order) >= 2 and conf[order[1]] >= conf[order[0]] - 0.15
                    if mode == "close" and not close:
                        top = read[0].id
                    else:
                        top = max(conf, key=lambda c: conf[c] + beta * p.get(c, 0.0))
                counts[k] += top == cause
        print(fold, flush=True)
    for (mode, beta), counts in right.items():
        print(f"{mode} beta {beta}: {sum(counts)} {counts}")


if __name__ == "__main__":
    main()
