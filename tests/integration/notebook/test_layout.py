"""The notebook HTML of a result, laid out by a real browser (headless Chromium) at Colab's
width: a line longer than the output area wraps at a space instead of scrolling sideways, no word
(a path, a pin such as libcudnn8=8.9.7.29-1+cuda12.2) is cut, and the text a person copies is
the command whole (the wrap is layout, not a newline).

Two pages: the example notebook as nbconvert renders its saved outputs (what
scripts/notebook_screenshot.py photographs), and generated recordings of long command lines,
through fixer.render.record / recorded_html as every API result's _repr_html_ makes them.
Skipped, saying why, where Chromium or nbconvert is missing."""

from __future__ import annotations

import html
import importlib.util
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import render
from tests.helpers.examples import examples
from tests.helpers.paths import REPO

pytestmark = pytest.mark.integration
pytest.importorskip("nbconvert", reason="nbconvert renders the notebook: pip install nbconvert")


def _script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "notebook_screenshot", REPO / "scripts" / "notebook_screenshot.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SHOT = _script()
if SHOT.browser() is None:
    pytest.skip("no Chromium (apt-get install chromium)", allow_module_level=True)

APT = (
    "apt-get install -y --no-install-recommends --allow-downgrades "
    "--allow-change-held-packages -- libcudnn8=8.9.7.29-1+cuda12.2"
)


def test_the_example_notebook_fits_colabs_width(tmp_path: Path) -> None:
    seen = SHOT.layout(SHOT.render_html(SHOT.NOTEBOOK, tmp_path))
    assert seen["pre"] > 0
    assert seen["overflowing"] == [] and seen["broken_words"] == []
    assert seen["page"] <= seen["window"]  # the page itself never scrolls sideways
    # the plan's apt command is longer than the area: wrapped, and whole in the text
    assert any(APT in text for text in seen["text"])


WORD = st.text(alphabet="abcdefxyz0123456789.=+-_/|}!?():→—", min_size=1, max_size=40)
LINE = st.lists(WORD, min_size=8, max_size=30).map(lambda ws: "apt-get install " + " ".join(ws))


@settings(
    max_examples=examples(30),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(lines=st.lists(LINE, min_size=1, max_size=6))
def test_long_lines_wrap_between_words_and_copy_whole(tmp_path: Path, lines: List[str]) -> None:
    parts = []
    for line in lines:
        console = render.record(lambda line=line: render.out().print(line, markup=False))
        parts.append(render.recorded_html(console))
    page = tmp_path / "lines.html"
    page.write_text(
        "<html><head><meta charset='utf-8'></head><body>" + "".join(parts) + "</body></html>",
        encoding="utf-8",
    )
    seen: Dict[str, Any] = SHOT.layout(page)
    assert seen["overflowing"] == [] and seen["broken_words"] == []
    texts = [html.unescape(t) for t in seen["text"]]
    for line, text in zip(lines, texts):
        assert text.rstrip("\n") == line  # no newline added where the browser wrapped
