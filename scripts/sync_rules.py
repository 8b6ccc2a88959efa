"""Copy the stdlib-only rules block of fixer/rules.py into the scripts that run inside foreign
interpreters (they cannot import the package). tests/unit/test_rules.py fails until this has
been run after an edit of the block.

    python scripts/sync_rules.py          # rewrite the copies
    python scripts/sync_rules.py --check  # exit 1 when a copy differs
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixer import rules  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report copies that differ")
    args = ap.parse_args()
    block = rules.child_block()
    stale = []
    for rel in rules.CHILD_SCRIPTS:
        path = ROOT / "fixer" / rel
        text = path.read_text(encoding="utf-8")
        old = rules.child_block(text)
        if not old:
            print(f"{path}: no RULES-FOR-CHILDREN block", file=sys.stderr)
            return 1
        if old != block:
            stale.append(path)
            if not args.check:
                path.write_text(text.replace(old, block), encoding="utf-8")
    for path in stale:
        print(("differs: " if args.check else "updated: ") + str(path))
    return 1 if (stale and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
