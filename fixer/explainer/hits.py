"""One reading of a pasted text (a Hit): the finding it means, how decisive, where in the text."""

from __future__ import annotations

import dataclasses
from typing import Dict, Optional

from fixer.model import Finding

#: No reading is ever certain.
MAX = 0.99


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
