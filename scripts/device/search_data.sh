#!/bin/bash
# On the GPU machine: detection records each load's search as data
# (LoadResolution.search, .ld_preload), and the later stages read that, never the words.
# For each case (healthy; an LD_LIBRARY_PATH folder with a full cuDNN copy shadowing torch's;
# LD_PRELOAD of the apt libcudnn.so.9; the pip cuDNN hidden) it runs `doctor --json` and checks,
# per load: (a) the directories the search data lists equal those the words of `steps` name
# (read here with the parser the product had before: the check, not the product, reads words);
# (b) the winner's directory is listed under the way it won (the default directories implied);
# then `plan --json`: every pip step's argv is installers.pip_argv of its own Step.pip.
# Every change is undone on exit (trap), even on failure or interrupt.
# Run from the repository root:  bash scripts/device/search_data.sh      Output: $OUT
#   cases.jsonl    the doctor --json of each case (label added)
#   summary.txt    per case and load: "EQUAL" or "DIFF <data> <words>", "WINNER-LISTED" or
#                  "WINNER-MISSING", then per plan "PIP-STEPS-ARE-DATA n" or "PIP-STEP-MISMATCH"  <- read this
# What it must show: no DIFF, no WINNER-MISSING, no PIP-STEP-MISMATCH line.
set -u
o=${OUT:-/tmp/out}; mkdir -p "$o"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
. "$(dirname "$0")/_cudnn_copies.sh"   # $py, $apt and $pipdir, the pip wheel's lib directory
lib=$pipdir
shadow=$(mktemp -d /tmp/search-shadow.XXXXXX)
restore() {
  if [ -d "$lib.hidden" ] && [ ! -e "$lib" ]; then mv "$lib.hidden" "$lib"; fi
  rm -rf "$shadow" "$shadow.json" "$shadow.plan.json"
}
trap restore EXIT INT TERM
cp -a "$apt"/libcudnn*.so.9* "$shadow"/ 2>/dev/null

: > "$o/cases.jsonl"; : > "$o/summary.txt"
case_run() {   # label, then env assignments
  label=$1; shift
  env "$@" $py -m fixer doctor --json > "$shadow.json" 2>/dev/null
  env "$@" $py -m fixer plan --json > "$shadow.plan.json" 2>/dev/null
  $py - "$label" "$shadow.json" "$shadow.plan.json" "$o/cases.jsonl" >> "$o/summary.txt" <<'PY'
import json, os.path as op, re, sys
label, doc_path, plan_path, cases = sys.argv[1:5]
print(f"### {label}")
try:
    doc = json.load(open(doc_path))
except ValueError as exc:
    print(f"doctor: no JSON ({exc})"); sys.exit(0)
with open(cases, "a") as fh:
    fh.write(json.dumps(dict(doc, label=label)) + "\n")

def words(steps):   # the parser fixer/resolve/loader_fixes.py had before issue 9 item 2
    out = []
    for step in steps:
        head, sep, tail = step.partition(": ")
        if not sep or tail == "-":
            continue
        m = re.match(r"^(DT_RPATH|DT_RUNPATH) of (\S+)$", head)
        if m:
            origin = op.dirname(m.group(2))
            out += [op.normpath(e.strip().replace("$ORIGIN", origin).replace("${ORIGIN}", origin))
                    for e in tail.split(":") if e.strip() and not e.startswith("ignored")]
        elif head.endswith("preloads by path"):
            out += [op.dirname(p.strip()) for p in tail.split(",") if p.strip()]
        elif head == "LD_LIBRARY_PATH":
            out += [op.normpath(d) for d in tail.split(":") if d]
        elif head == "LD_PRELOAD":
            out += [op.dirname(p) for p in tail.split() if p.startswith("/")]
        elif head == "ld.so.cache" and tail.startswith("/"):
            out.append(op.dirname(tail.strip()))
    return [op.normpath(d) for d in out]

for ld in doc["environment"]["loads"]:
    data = [s["directory"] for s in ld.get("search", [])]
    said = words(ld.get("steps", []))
    tag = f"{ld['consumer']} {ld['soname']}"
    print(f"  {tag}: " + ("EQUAL" if data == said else f"DIFF {data} {said}"))
    if ld.get("path") and ld.get("via") not in ("default", ""):
        listed = {"via": ld["via"], "directory": op.dirname(ld["path"])} in ld.get("search", [])
        print(f"  {tag}: " + ("WINNER-LISTED" if listed else f"WINNER-MISSING {ld['via']} {ld['path']}"))
    if ld.get("ld_preload"):
        print(f"  {tag}: ld_preload {ld['ld_preload']}")
try:
    body = json.load(open(plan_path))
except ValueError as exc:
    print(f"plan: no JSON ({exc})"); sys.exit(0)
plan = body.get("plan") or {}
from fixer.planner import installers
from fixer.model import PipOptions, from_dict
bad = 0; n = 0
for s in plan.get("steps", []):
    if s["kind"] != "pip-install":
        continue
    n += 1
    opts = from_dict(PipOptions, s["pip"])
    tool = installers.pip_tool(plan.get("installer", "pip"))
    argv = installers.pip_argv(plan["python"], s["packages"] if not opts.requirement_files else (), opts,
                               installer=tool, uv=s["argv"][0] if tool == "uv" else "uv")
    if list(argv) != s["argv"]:
        bad += 1
        print(f"  PIP-STEP-MISMATCH {s['argv']} {list(argv)}")
print(f"  PIP-STEPS-ARE-DATA {n}" if not bad else f"  {bad} of {n} pip steps differ")
PY
}

case_run "healthy"
case_run "LD_LIBRARY_PATH shadow (apt cuDNN copied into $shadow)" LD_LIBRARY_PATH="$shadow:${LD_LIBRARY_PATH:-}"
case_run "LD_PRELOAD of the apt libcudnn.so.9" LD_PRELOAD="$apt/libcudnn.so.9"
mv "$lib" "$lib.hidden"
case_run "pip cuDNN hidden"
mv "$lib.hidden" "$lib"
echo "done" >> "$o/summary.txt"
