"""[[download]] records: the plan prices its steps from them, and bad records are refused."""

import pytest

from fixer import model as m
from fixer.errors import RecipeError
from fixer.pipeline import plan_for
from fixer.recipebook import load


def test_the_cudnn_repair_is_priced_from_the_recipes():
    planned = plan_for(environment="h200-pip-cudnn-hidden", intent=m.Intent())
    (install,) = [s for s in planned.plan.steps if s.kind == "pip-install"]
    assert install.download_bytes == 366066321  # PyPI's nvidia_cudnn_cu13-9.19.0.56 x86_64 wheel
    assert load().download_size("nvidia_cudnn_cu13", "9.19.0.56") == 366066321


def test_a_pypi_build_takes_its_wheel_size():
    (pypi,) = [b for b in load().builds_for("torch", "2.11.0") if b.index_url is None]
    assert pypi.size_bytes and pypi.size_bytes > 100_000_000


def test_bad_download_records_name_file_and_line(tmp_path):
    (tmp_path / "mine.toml").write_text(
        'schema = 1\n\n[[download]]\ndistribution = "x"\nversion = "1.0"\nbytes = "many"\nsource = "me"\n'
    )
    with pytest.raises(RecipeError) as err:
        load([str(tmp_path)])
    assert "mine.toml:6" in str(err.value) and "bytes" in str(err.value)
    (tmp_path / "mine.toml").write_text(
        'schema = 1\n\n[[download]]\ndistribution = "x"\nversion = "1.0"\nbytes = 1\nsource = "me"\n\n'
        '[[download]]\ndistribution = "x"\nversion = "1.0"\nbytes = 2\nsource = "me"\n'
    )
    with pytest.raises(RecipeError, match="download size of x==1.0"):
        load([str(tmp_path)])
