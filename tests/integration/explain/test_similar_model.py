"""recipes/similar_reports.json is exactly what scripts/build_similar_reports.py builds from the
training sets (a full rebuild: about 30 s of training, so here and not in the unit tier, which checks
the training files' digests)."""

from __future__ import annotations

from fixer.explainer import similar
from fixer.system.paths import recipes_dir
from tests.helpers.envs import load_script


def test_the_shipped_model_is_rebuilt_byte_for_byte():
    build = load_script("build_similar_reports")
    shipped = (recipes_dir() / similar.MODEL_FILE).read_text(encoding="utf-8")
    assert build.model_text() == shipped, "run scripts/build_similar_reports.py"
