#!/usr/bin/env python3
"""The example notebook as a Colab user reads it: its saved outputs (scripts/regenerate_notebook.py)
rendered to HTML by nbconvert, laid out by headless Chromium at Colab's width, then checked and
photographed.

    python scripts/notebook_screenshot.py [OUT_DIR]     # default: a temporary folder

The check is the browser's own layout: in the page Chromium laid out, every <pre> (the tool's
outputs, commands included) must fit its box (scrollWidth <= clientWidth: nothing scrolls
sideways), and every word in it (a run without white space: a path, a pin such as
libcudnn8=8.9.7.29-1+cuda12.2) must lie on one line unless it alone is wider than the box: a long
line wraps at a space, and a copy gives it back whole (the wrap is layout, not a newline). Prints
what it measured as JSON and the paths of the HTML and the PNG (look at the PNG, and say what you
saw); exits 1 when a <pre> overflows or a word is cut. Needs nbconvert and Chromium (chromium,
chromium-browser or google-chrome on PATH)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

REPO = Path(__file__).resolve().parent.parent
NOTEBOOK = REPO / "examples" / "colab_quickstart.ipynb"
#: Colab's output area is about 1000 px wide.
WIDTH = 1000

#: Run by the browser after layout: what overflows, as JSON in a <script id="ccf-layout">.
_CHECK = """<script>
function ccfWordsBroken(pre) {
  // every word (a run without white space) laid out on one line, unless wider than the box
  var broken = [], walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT), node;
  var box = pre.getBoundingClientRect().width;
  while ((node = walker.nextNode())) {
    var re = /\\S+/g, m;
    while ((m = re.exec(node.data))) {
      var r = document.createRange();
      r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      // one rect per text fragment (a line can hold several, of different fonts): the
      // fragments lie on more than one line when one starts below another's middle
      var rects = Array.prototype.filter.call(r.getClientRects(), function (x) {
        return x.width > 0;
      });
      var lines = rects.some(function (a) {
        return rects.some(function (b) { return b.top > a.top + a.height / 2; });
      });
      if (lines && r.getBoundingClientRect().width < box) {
        broken.push(m[0]);
      }
    }
  }
  return broken;
}
window.addEventListener('load', function () {
  var pres = document.querySelectorAll('pre'), over = [], broken = [];
  pres.forEach(function (p, i) {
    if (p.scrollWidth > p.clientWidth + 1) {
      over.push({index: i, scroll: p.scrollWidth, client: p.clientWidth,
                 start: p.textContent.slice(0, 100)});
    }
    ccfWordsBroken(p).forEach(function (w) { broken.push({index: i, word: w}); });
  });
  var s = document.createElement('script');
  s.type = 'application/json'; s.id = 'ccf-layout';
  s.textContent = JSON.stringify({pre: pres.length, overflowing: over, broken_words: broken,
    page: document.documentElement.scrollWidth, window: window.innerWidth,
    text: Array.prototype.map.call(pres, function (p) { return p.textContent; })});
  document.body.appendChild(s);
});
</script>"""


def browser() -> Optional[str]:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def render_html(notebook: Path, out_dir: Path) -> Path:
    """The notebook as nbconvert's HTML (its saved outputs; nothing is run)."""
    import nbconvert
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    path = out_dir / (notebook.stem + ".html")
    path.write_text(body, encoding="utf-8")
    return path


def _chromium(args: List[str], timeout: float = 120) -> str:
    exe = browser()
    if exe is None:
        raise RuntimeError("no Chromium found (apt-get install chromium)")
    r = subprocess.run(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return r.stdout


def layout(html: Path, width: int = WIDTH) -> Dict[str, Any]:
    """What Chromium's layout of `html` says: how many <pre>, which overflow, their texts."""
    checked = html.with_name(html.stem + ".checked.html")
    checked.write_text(
        html.read_text(encoding="utf-8").replace("</body>", _CHECK + "</body>"), encoding="utf-8"
    )
    dom = _chromium(
        [
            f"--window-size={width},2000",
            "--virtual-time-budget=5000",
            "--dump-dom",
            checked.as_uri(),
        ]
    )
    m = re.search(r'<script type="application/json" id="ccf-layout">(.*?)</script>', dom, re.S)
    if m is None:
        raise RuntimeError("Chromium did not run the layout check")
    import html as _html

    return dict(json.loads(_html.unescape(m.group(1))))


def screenshot(html: Path, png: Path, width: int = WIDTH, height: int = 9000) -> Path:
    _chromium([f"--window-size={width},{height}", f"--screenshot={png}", html.as_uri()])
    return png


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    html = render_html(NOTEBOOK, out)
    seen = layout(html)
    png = screenshot(html, out / (html.stem + ".png"))
    print(json.dumps({k: v for k, v in seen.items() if k != "text"}, indent=2))
    print(f"html: {html}\npng:  {png}")
    return 1 if seen["overflowing"] or seen["broken_words"] else 0


if __name__ == "__main__":
    sys.exit(main())
