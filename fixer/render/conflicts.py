"""Why no stack fits, in words: the one place that turns the resolver's clashes and ways out
(fixer.model.Clash, WayOut; fixer.resolver finds them) into sentences, for the text output
(fixer.render.error) and for `--json` (fixer.render.error_payload) alike. Pure: no rich, no I/O.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from fixer.system.versions import public
from fixer.model import Clash, Need, Pin, Refusal, WayOut
from fixer.rules import display_name
from fixer.errors import Unsatisfiable

#: At most this many clash sentences (the most telling come first).
MAX_CLASHES = 8

#: What to say when dropping nothing that was asked makes a stack fit.
NO_WAY_OUT = "a newer driver (R580 or later runs every CUDA 12 and 13 build) or another GPU type"


def unsatisfiable_message(frameworks: Sequence[str]) -> str:
    names = ", ".join(display_name(f) for f in frameworks) or "the frameworks"
    return f"no stack fits {names} on this machine"


def unsatisfiable(
    frameworks: Sequence[str], clashes: Sequence[Clash], ways_out: Sequence[WayOut]
) -> Unsatisfiable:
    """The error for "no stack fits": the resolver's data with its words."""
    return Unsatisfiable(
        unsatisfiable_message(frameworks),
        frameworks,
        clashes,
        ways_out,
        clash_lines(clashes),
        way_lines(ways_out),
    )


def clash_lines(clashes: Sequence[Clash]) -> List[str]:
    """One sentence per clash, the refusals that share a reason said once."""
    out: List[str] = []
    refused = _grouped([r for c in clashes if c.kind == "refused" for r in c.refusals])
    said = set()
    for c in clashes:
        if c.kind == "refused":
            for r in c.refusals:
                key = (r.text, r.against, r.chosen)
                if key not in said:
                    said.add(key)
                    out.append(refused[key])
            continue
        out.append(_sentence(c))
    return list(dict.fromkeys(out))[:MAX_CLASHES]


def way_lines(ways: Sequence[WayOut]) -> List[str]:
    """One sentence per way out: what to drop, and what the stack would then change."""
    if not ways:
        return [NO_WAY_OUT]
    out = []
    for w in ways:
        changes = [pin_words(p) for p in w.changes]
        out.append(
            f"{_dropped(w)}: " + ("; ".join(changes[:4]) if changes else "nothing needs to change")
        )
    return out


def pin_words(p: Pin) -> str:
    """A change of the stack in a few words: "raise nvidia-cudnn-cu12 to 9.3.0.75 (safe at run time)"."""
    if p.action == "remove":
        return f"remove {p.name}"
    if p.action == "install" and p.installed == p.version:
        return f"reinstall {p.name} {p.version}"
    if p.installed and public(p.installed) == public(p.version) and p.installed != p.version:
        return f"switch {p.name} {p.installed} to the {p.version} build"
    verb = {"install": "install", "upgrade": "raise", "downgrade": "lower"}.get(p.action, p.action)
    if p.name.startswith("nvidia-cudnn") and p.action == "upgrade":
        return f"raise {p.name} to {p.version} (safe at run time)"
    return f"{verb} {p.name} to {p.version}" if p.installed else f"{verb} {p.name}=={p.version}"


def _dropped(w: WayOut) -> str:
    if w.drop == "keep":
        return f"without --keep {w.name}"
    if w.drop == "version":
        return f"without --{w.name} {w.value}"
    if w.drop == "cuda":
        return f"without --cuda {w.value}"
    if w.drop == "cudnn-from":
        return f"without --cudnn-from {w.value}"
    return f"without {display_name(w.name)}"


def _asked(n: Need) -> str:
    return f"{n.text} ({n.parent})"


def _sentence(c: Clash) -> str:
    if c.kind == "no-build":
        head = f"{display_name(c.subject)}: no build fits" + (
            " " + " and ".join(map(_asked, c.needs)) if c.needs else ""
        )
        reasons = list(_grouped(c.refusals).values())[:3]
        return head + (": " + "; ".join(reasons) if reasons else "")
    words = "; ".join(f"{n.parent} {n.text}" for n in c.needs)
    if c.kind == "no-copy":
        return f"cuDNN {c.subject}: {words}; no cuDNN copy satisfies all of them" + (
            "" if not c.held else " and " + "; ".join(map(_asked, c.held))
        )
    if c.kind == "blocked":
        blocks = list(_grouped(c.refusals).values()) + [
            f"{n.parent} holds {n.text.replace(' stays at ', ' at ')}" for n in c.held
        ]
        return f"cuDNN {c.subject}: {words}; " + "; ".join(list(dict.fromkeys(blocks))[:2])
    if c.kind == "no-build-is":
        return f"{display_name(c.subject)}: no build is " + " and ".join(map(_asked, c.needs))
    if c.kind == "no-single-copy":
        return f"cuDNN {c.subject}: " + words + " - no single copy fits all"
    if c.kind == "refused":
        return "; ".join(_grouped(c.refusals).values())
    return f"{c.subject}: " + "; ".join(f"{n.parent}: {n.text}" for n in c.needs)


def _grouped(refusals: Sequence[Refusal]) -> Dict[Tuple[str, str, bool], str]:
    """Refusals with one reason (the same requirement, the same obstacle) as one sentence, in
    the order the reasons first appear: "torch 2.11.0+cu130, torch 2.10.0+cu130 needs driver
    >= 580.65.06, but driver 570.86.15"."""
    whos: Dict[Tuple[str, str, bool], List[str]] = {}
    for r in refusals:
        whos.setdefault((r.text, r.against, r.chosen), [])
        if r.who not in whos[(r.text, r.against, r.chosen)]:
            whos[(r.text, r.against, r.chosen)].append(r.who)
    out: Dict[Tuple[str, str, bool], str] = {}
    for (text, against, chosen), who in whos.items():
        head = ", ".join(who[:3]) + (f" and {len(who) - 3} more" if len(who) > 3 else "")
        out[(text, against, chosen)] = f"{head} {text}, but {against}" + (
            " is already chosen" if chosen else ""
        )
    return out


__all__ = [
    "MAX_CLASHES",
    "NO_WAY_OUT",
    "clash_lines",
    "pin_words",
    "unsatisfiable",
    "unsatisfiable_message",
    "way_lines",
]
