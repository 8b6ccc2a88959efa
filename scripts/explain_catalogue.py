#!/usr/bin/env python3
"""Print explain's catalogue (recipes/errors.toml): its size, its size by source, how many rules cite a
source line, and every rule, loader wording and library family with each citation as file:line@ref
(or what@release:RELEASE). Maintainers: `python scripts/explain_catalogue.py` (`--markdown` for tables).

The loader (fixer.explainer.catalogue.parse_cite) refuses a citation that names neither a line nor a
release, so every citation printed here has one of the two."""

from __future__ import annotations

import collections
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixer.explainer import load_catalogue  # noqa: E402
from fixer.explainer.catalogue import Cite, parse_cite  # noqa: E402


def source_of(cite: Cite) -> str:
    """The project a citation names: "pytorch/pytorch", "pypi:torch", "bminor/glibc", "docs.nvidia.com"..."""
    m = re.match(r"https?://([^/\s]+)", cite.source)
    if m:
        return m.group(1)
    first = cite.source.split(" ")[0]
    if re.fullmatch(r"[\w.\-]+/[\w.\-]+|pypi:[\w.\-]+", first):
        return first
    return cite.source


def _cites(texts: Sequence[str]) -> List[Cite]:
    out = []
    for t in texts:
        c = parse_cite(t)
        assert c is not None, t  # the loader refuses these; kept as a guard
        out.append(c)
    return out


Table = Tuple[str, str, int, int, List[Cite]]


def main(argv: List[str]) -> int:
    cat = load_catalogue()
    md = "--markdown" in argv
    tables: List[Table] = []
    for r in cat.rules:
        tables.append((r.where, f"rule {r.id}", len(r.patterns), len(r.templates), _cites(r.cites)))
    for lr in cat.loaders:
        tables.append(
            (lr.where, f"loader {lr.kind}", len(lr.patterns), len(lr.templates), _cites(lr.cites))
        )
    for ev in cat.evidence:
        tables.append((ev.where, f"evidence {ev.kind}", len(ev.patterns), 0, _cites(ev.cites)))
    families = [(f"family {f.name}", len(f.stems), _cites(f.cites)) for f in cat.families]
    _summary(cat, tables)
    _by_source(tables, md)
    print()
    _tables(tables, families, md)
    return 0


def _summary(cat: Any, tables: List[Table]) -> None:
    patterns = sum(t[2] for t in tables)
    templates = sum(t[3] for t in tables)
    print(
        f"catalogue: {len(cat.rules)} rules, {len(cat.loaders)} loader wordings, {len(cat.evidence)} "
        f"evidence tables, {len(cat.families)} library families, {patterns} message patterns, "
        f"{templates} templates"
    )
    rules_line = sum(1 for r in cat.rules if any(c.lines for c in _cites(r.cites)))
    loaders_line = sum(1 for lr in cat.loaders if any(c.lines for c in _cites(lr.cites)))
    all_cites = [c for t in tables for c in t[4]]
    print(
        f"rules citing a source file and line: {rules_line}/{len(cat.rules)}; loader wordings: "
        f"{loaders_line}/{len(cat.loaders)}; the others cite a release "
        f"(citations: {sum(1 for c in all_cites if c.lines)} at a line, "
        f"{sum(1 for c in all_cites if not c.lines)} at a release)"
    )


def _by_source(tables: List[Table], md: bool) -> None:
    by_source: Dict[str, List[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
    for _, _, n_pat, _, cites in tables:
        seen = set()
        for c in cites:
            s = source_of(c)
            by_source[s][0 if c.lines else 1] += 1
            if s not in seen:
                seen.add(s)
                by_source[s][2] += 1
                by_source[s][3] += n_pat
    print(
        "\nsize by source (citations at a line / at a release; rules and loader wordings citing it; their patterns):"
    )
    if md:
        print(
            "| source | at a line | at a release | rules+wordings | patterns |\n|---|---|---|---|---|"
        )
    for src, (nl, nr, nt, np_) in sorted(by_source.items(), key=lambda kv: (-kv[1][2], kv[0])):
        print(
            f"| {src} | {nl} | {nr} | {nt} | {np_} |"
            if md
            else f"  {src:28s} {nl:3d} line  {nr:3d} release  {nt:3d} tables  {np_:3d} patterns"
        )


def _tables(tables: List[Table], families: List[Tuple[str, int, List[Cite]]], md: bool) -> None:
    if md:
        print("| where | what | patterns | templates | cites |\n|---|---|---|---|---|")
        for w, what, p, t, cites in tables:
            print(f"| {w} | {what} | {p} | {t} | {'<br>'.join(c.short() for c in cites)} |")
        for what, n, cites in families:
            print(f"|  | {what} | {n} stems |  | {'<br>'.join(c.short() for c in cites)} |")
        return
    for w, what, p, t, cites in tables:
        print(f"{w:18s} {what}  ({p} patterns, {t} templates)")
        for c in cites:
            print(f"    {c.short()}")
    for what, n, cites in families:
        print(f"{'':18s} {what}  ({n} stems)")
        for c in cites:
            print(f"    {c.short()}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
