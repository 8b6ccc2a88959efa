"""Every bundled environment's doctor, plan, lock and report output, and explain's answer on every
case of tests/unit/explain/cases.toml, written into one folder: run it on two trees and `diff -r`
the folders to show a change of layout changed no behaviour.

    python scripts/golden_outputs.py OUT            # this tree
    PYTHONPATH=OTHER_TREE python scripts/golden_outputs.py OUT2   # another tree, same commands

Each command runs in a child process (`python -m fixer ...`); each file holds the exit code on its first line, then stdout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENTS = sorted(p.stem for p in (ROOT / "fixer" / "environments").glob("*.json"))
COMMANDS = {
    "doctor": ["doctor", "--json"],
    "doctor-text": ["doctor"],
    "plan": ["plan", "--json"],
    "plan-text": ["plan"],
    "plan-apt": ["plan", "--json", "--cudnn-from", "apt"],
    "lock": ["lock", "--json", "-o", "stack.lock.toml"],
    "report": ["report", "--json"],
}


def run(args: list, stdin: str = "") -> str:
    """Exit code and stdout of `python -m fixer ARGS` in an empty folder, with the file `lock -o`
    wrote there appended."""
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1", TERM="dumb")
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH") or str(ROOT)  # this tree unless told
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run(
            [sys.executable, "-m", "fixer", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            cwd=cwd,
        )
        written = Path(cwd, "stack.lock.toml")
        stdout = proc.stdout + (written.read_text() if written.exists() else "")
    # a lock's creation time is the one field that differs between two runs of the same tree
    stdout = re.sub(r'("created": |created = )"[^"]*"', r'\1"(time)"', stdout)
    return f"exit {proc.returncode}\n{stdout}"


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name in ENVIRONMENTS:
        for key, args in COMMANDS.items():
            (out / f"{name}.{key}.txt").write_text(run([*args, "--environment", name]))
    cases = tomllib.loads((ROOT / "tests/unit/explain/cases.toml").read_text(encoding="utf-8"))[
        "case"
    ]
    for i, case in enumerate(cases):
        (out / f"explain-{i:03d}.json").write_text(
            run(["explain", "--json", "--no-detect", "-"], case["error"])
        )
    print(
        json.dumps(
            {
                "environments": len(ENVIRONMENTS),
                "explain cases": len(cases),
                "files": len(list(out.iterdir())),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
