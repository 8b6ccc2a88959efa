#!/bin/bash
# `colab-cudnn-fix verify` on the GPU machine with its stdout piped (as in a notebook's `!` cell)
# at COLUMNS=60 and COLUMNS=100 (issue 13: tables too narrow for their cells become lists; paths
# and commands are never wrapped or cut). Nothing on the machine is changed. About 1 minute.
# Usage (repo root, GPU machine): bash scripts/device/verify_narrow.sh
# Output in $OUT:
#   verify_narrow_60.txt, verify_narrow_100.txt  what `COLUMNS=N colab-cudnn-fix verify | cat` printed, then
#                                                "exit: N" (0 when every framework passed)
#   verify_narrow.json                           one `colab-cudnn-fix verify --json` run (the names checked below)
#   verify_narrow_check.txt                      the checks, one line each, PASS or FAIL:
#     - no "…" anywhere (nothing cut);
#     - every mapped cuDNN file of --json is a whole "  mapped PATH" line at both widths;
#     - every conv case (case, dtype, layout) is a table row at 100 columns and a list entry
#       ("CASE", "  dtype: D", "  layout: L") at 60;
#     - at 100 every case-table line fits in 100 columns;
#     - every finding's fix is whole on one line.
# Expected: every check PASS; verify passes (exit 0) for torch, jax and cupy on the healthy machine.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
py=${PY:-$(command -v python3)}
if ! "$py" -c "import torch" 2>/dev/null; then    # the frameworks' venv, when python3 on PATH is another one
  for c in /opt/*/.venv/bin/python3; do "$c" -c "import torch" 2>/dev/null && { py=$c; break; }; done
fi
# `colab-cudnn-fix` as a user types it: the console script of this checkout, run by that interpreter.
bin=$(mktemp -d /tmp/ccf-bin.XXXX); trap 'rm -rf "$bin"' EXIT
printf '#!/bin/sh\nexec "%s" -c "import sys; from fixer.cli.entry import main; sys.exit(main())" "$@"\n' "$py" > "$bin/colab-cudnn-fix"
chmod +x "$bin/colab-cudnn-fix"; export PATH="$bin:$PATH"
echo "python: $py; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"

for w in 60 100; do
  f=$o/verify_narrow_$w.txt
  COLUMNS=$w colab-cudnn-fix verify 2> "$f.stderr" | cat > "$f"
  echo "exit: ${PIPESTATUS[0]}" >> "$f"
  [ -s "$f.stderr" ] || rm -f "$f.stderr"
done
colab-cudnn-fix verify --json > "$o/verify_narrow.json" 2> /dev/null

"$py" - "$o" <<'PY' | tee "$o/verify_narrow_check.txt"
import json, os, sys
o = sys.argv[1]
text = {w: open(os.path.join(o, "verify_narrow_%d.txt" % w)).read() for w in (60, 100)}
data = json.load(open(os.path.join(o, "verify_narrow.json")))
results = data.get("results", [])
bad = 0


def check(ok, what):
    global bad
    bad += not ok
    print(("PASS " if ok else "FAIL ") + what)


for w, t in sorted(text.items()):
    lines = t.splitlines()
    check("\u2026" not in t, "%d columns: no '\u2026' (nothing cut)" % w)
    for r in results:
        fw = r["framework"]
        miss = [p for p in r["mapped"] if "  mapped " + p not in lines]
        check(not miss, "%d columns: %s: all %d mapped files whole on their line%s"
              % (w, fw, len(r["mapped"]), (" (missing: %s)" % miss[:3]) if miss else ""))
        for c in r["cases"]:
            key = [str(c["case"]), str(c["dtype"]), str(c["layout"])]
            if w == 100:
                row = [l for l in lines if l.split()[:3] == key]
                check(bool(row) and all(len(l) <= 100 for l in row),
                      "100 columns: %s: case %s is a table row within 100 columns" % (fw, " ".join(key)))
            else:
                i = [n for n, l in enumerate(lines) if l == key[0]]
                ok = any(lines[n + 1:n + 3] == ["  dtype: " + key[1], "  layout: " + key[2]] for n in i)
                check(ok, "60 columns: %s: case %s is a list entry" % (fw, " ".join(key)))
        for f in r["findings"]:
            if f.get("fix"):
                check(any(f["fix"] in l for l in lines), "%d columns: %s: fix of %s whole on one line" % (w, fw, f["id"]))
    widest = max((len(l) for l in lines), default=0)
    print("     %d columns: %d lines, widest %d characters (lines longer than the width are never-wrapped paths/text)"
          % (w, len(lines), widest))
print("verify --json: " + ", ".join("%s %s (%d cases)" % (r["framework"], r["status"], len(r["cases"])) for r in results))
print("ALL PASS" if not bad else "%d FAILED" % bad)
PY
echo "## verify at 60 columns"; cat "$o/verify_narrow_60.txt" | head -80
echo "## verify at 100 columns"; cat "$o/verify_narrow_100.txt"
