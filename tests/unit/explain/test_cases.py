"""explain on the table of real public reports (tests/unit/explain/cases.toml): the confirmed cause
must be ranked first. Known misses are xfail(strict=True) with their reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixer.system.compat import tomllib
from fixer.explainer import explain
from fixer.model import FINDING_IDS

CASES = tomllib.loads((Path(__file__).parent / "cases.toml").read_text(encoding="utf-8"))["case"]
REPOS = (
    "pytorch/",
    "tensorflow/tensorflow",
    "jax-ml/jax",
    "googlecolab/colabtools",
    "SYSTRAN/faster-whisper",
    "OpenNMT/CTranslate2",
    "microsoft/onnxruntime",
)


def _top(case):
    found = explain(case["error"])
    return found[0].id if found else None


def test_the_table_is_real_and_large_enough():
    assert len(CASES) >= 40
    urls = [c["url"] for c in CASES]
    assert len(set(urls)) == len(urls), "duplicate report"
    for c in CASES:
        assert c["cause"] in FINDING_IDS, c
        assert c["confirmed_by"] in ("maintainer", "user-fix", "report", "version-check"), c
        assert c["how"].strip() and c["error"].strip(), c
        assert any(f"github.com/{r}" in c["url"] for r in REPOS), c["url"]


def test_ranked_first_for_at_least_90_percent():
    hits = sum(_top(c) == c["cause"] for c in CASES)
    rate = hits / len(CASES)
    print(
        f"explain ranks the confirmed cause first for {hits}/{len(CASES)} real cases ({rate:.1%})"
    )
    assert rate >= 0.9


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c,
            id=c["url"].split("github.com/")[1],
            marks=[pytest.mark.xfail(strict=True, reason=c["xfail"])] if c.get("xfail") else [],
        )
        for c in CASES
    ],
)
def test_case(case):
    assert _top(case) == case["cause"]
