#!/usr/bin/env python3
"""Print explain's catalogue (recipes/errors.toml): its size by source, and every family, loader
wording and rule with the source it cites. Maintainers: `python scripts/explain_catalogue.py`
(`--markdown` for a table)."""
from __future__ import annotations

import collections
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixer.explainer import load_catalogue  # noqa: E402


def source_of(cite: str) -> str:
    """The project a citation names: "pytorch/pytorch", "openxla/xla", "docs.nvidia.com", "bminor/glibc"..."""
    m = re.match(r"https?://([^/]+)", cite)
    if m:
        return m.group(1)
    m = re.match(r"([\w.\-]+/[\w.\-]+) ", cite)
    if m:
        return m.group(1)
    return cite.split(" ")[0] + " " + cite.split(" ")[1] if " " in cite else cite


def main(argv: list) -> int:
    cat = load_catalogue()
    md = "--markdown" in argv
    by_source: collections.Counter = collections.Counter()
    rows = []
    for r in cat.rules:
        for c in r.cites:
            by_source[source_of(c)] += 1
        rows.append((r.where, f"rule {r.id}", len(r.patterns), len(r.templates), "; ".join(r.cites)))
    for lr in cat.loaders:
        for c in lr.cites:
            by_source[source_of(c)] += 1
        rows.append((lr.where, f"loader {lr.kind}", len(lr.patterns), len(lr.templates), "; ".join(lr.cites)))
    for f in cat.families:
        rows.append(("", f"family {f.name}", len(f.stems), 0, "; ".join(f.cites)))
    patterns = sum(len(r.patterns) for r in cat.rules) + sum(len(lr.patterns) for lr in cat.loaders)
    print(f"catalogue: {len(cat.rules)} rules, {len(cat.loaders)} loader wordings, {len(cat.families)} library families, "
          f"{patterns} message patterns, {sum(len(r.templates) for r in cat.rules) + sum(len(l.templates) for l in cat.loaders)} templates")
    print("\ncitations by source:")
    for src, n in by_source.most_common():
        print(f"  {n:3d}  {src}")
    print()
    if md:
        print("| where | what | patterns | templates | cites |\n|---|---|---|---|---|")
        for w, what, p, t, c in rows:
            print(f"| {w} | {what} | {p} | {t} | {c} |")
    else:
        for w, what, p, t, c in rows:
            print(f"{w:18s} {what}  ({p} patterns, {t} templates)\n    cites: {c}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
