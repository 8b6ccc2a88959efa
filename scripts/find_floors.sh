#!/usr/bin/env bash
# Measures the real lowest versions of the runtime dependencies: for each candidate version of
# one dependency, a throw-away venv gets every direct dependency at its lowest allowed version
# (uv --resolution lowest-direct), that dependency pinned to the candidate, and the newest
# pytest/hypothesis; then the smoke set runs (pytest -m smoke tests/unit/cli tests/integration/cli). Prints PASS/FAIL per
# candidate. Needs uv and an index (PyPI).
#   scripts/find_floors.sh typer 0.9.0 0.12.5 0.15.4 0.16.0
#   PYTHON=3.9 scripts/find_floors.sh rich 12.0.0 13.0.0
set -uo pipefail
cd "$(dirname "$0")/.."
dep="$1"; shift
py="${PYTHON:-3.11}"
for v in "$@"; do
  d="$(mktemp -d)"
  uv venv -q -p "$py" "$d/venv" >/dev/null 2>&1 || { echo "$dep==$v: no Python $py"; continue; }
  if ! uv pip install -q --python "$d/venv/bin/python" --resolution lowest-direct -e . "$dep==$v" \
        >"$d/log" 2>&1; then
    echo "$dep==$v: does not install ($(tail -1 "$d/log"))"; rm -rf "$d"; continue
  fi
  uv pip install -q --python "$d/venv/bin/python" "pytest>=8" "hypothesis>=6" >/dev/null 2>&1
  got="$(uv pip list --python "$d/venv/bin/python" 2>/dev/null | awk 'tolower($1) ~ /^(typer|click|rich|requests|packaging)$/ {printf "%s=%s ", $1, $2}')"
  if "$d/venv/bin/python" -m pytest -q -x -m smoke tests/unit/cli tests/integration/cli -p no:cacheprovider >"$d/test" 2>&1; then
    echo "PASS $dep==$v  [$got]"
  else
    echo "FAIL $dep==$v  [$got] $(grep -m1 -E '^E ' "$d/test" | cut -c1-120)"
  fi
  rm -rf "$d"
done
