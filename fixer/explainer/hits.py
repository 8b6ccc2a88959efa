"""One reading of a pasted text (a Hit): the finding it means, how decisive, where in the text."""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional

from fixer.model import Finding

#: No reading is ever certain.
MAX = 0.99
#: How far below its old confidence a reading ranks once the paste's evidence decided for
#: another one (it is kept, as that reading's alternative).
DISPLACED = 0.15


@dataclasses.dataclass
class Hit:
    finding: Finding
    decisive: bool
    offset: int
    where: str
    check: str = ""
    benign: bool = False
    alternative_of: Optional[str] = None
    captures: Dict[str, str] = dataclasses.field(default_factory=dict)
    absent: bool = False  # says a driver/GPU is not there at all (not damaged, not mismatched)
    needs: str = ""  # an [[evidence]] kind this reading needs to rank first
    alt_best: float = 0.0  # the best alternative's confidence of the same message
    fallback: bool = False  # read from a finding's words alone ([[fallback]]), not from a message


def displaced(h: Hit, by: str, **finding_changes: object) -> Hit:
    """`h` kept as the alternative of reading `by`, which took its place: DISPLACED lower, not
    decisive; `finding_changes` (its evidence, say) go into its finding."""
    f = h.finding
    f = dataclasses.replace(f, confidence=round(f.confidence - DISPLACED, 3), **finding_changes)  # type: ignore[arg-type]
    return dataclasses.replace(h, finding=f, decisive=False, alternative_of=by)


def wanted_major(h: Hit) -> Optional[int]:
    """The cuDNN major the reading's text asks for (a failing soname's, a build's), if it names one."""
    for key in ("major", "cudnn"):
        v = h.captures.get(key, "")
        if v.isdigit():
            return int(v)
    return None
