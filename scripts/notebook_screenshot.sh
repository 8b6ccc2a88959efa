#!/usr/bin/env bash
# The example notebook as a Colab user reads it: rendered to HTML by nbconvert (its saved outputs,
# from scripts/regenerate_notebook.py), then photographed by headless Chromium.
#
#   scripts/notebook_screenshot.sh [OUT_DIR]      # default: a temporary folder; prints the paths
#
# Needs nbconvert (pip install nbconvert) and Chromium (apt-get install chromium). The PNG is
# not kept in the repository: look at it, and say what you saw.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
python -m nbconvert --to html --output-dir "$out" --output colab_quickstart examples/colab_quickstart.ipynb >/dev/null 2>&1
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -z "$browser" ]; then
  echo "no Chromium found (apt-get install chromium); the HTML is $out/colab_quickstart.html"
  exit 1
fi
# 1000 px wide, as Colab's output area; tall enough for the whole notebook
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1000,"${HEIGHT:-9000}" --screenshot="$out/colab_quickstart.png" \
  "file://$(cd "$out" && pwd)/colab_quickstart.html" >/dev/null 2>&1
echo "html: $out/colab_quickstart.html"
echo "png:  $out/colab_quickstart.png"
