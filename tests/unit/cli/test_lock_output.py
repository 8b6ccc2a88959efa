"""`lock -o PATH` into a directory that does not exist is refused at once: exit 2, one line
naming the directory, no directory created, and nothing read from an index (the unit tests'
guard fails a test that opens a socket, so the refusal comes before any network)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.cli import main
from tests.helpers.examples import examples

segment = st.text(st.sampled_from("abcxyz-_.0123"), min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..")
)


@settings(max_examples=examples(20), deadline=None)
@given(missing=st.lists(segment, min_size=1, max_size=4))
def test_missing_directories_are_refused_and_never_made(missing, tmp_path_factory) -> None:
    base = tmp_path_factory.mktemp("lock")
    out = base.joinpath(*missing, "x.toml")
    code = main(["lock", "-o", str(out), "--environment", "colab-2025-01-tf215"])
    assert code == 2
    assert not base.joinpath(missing[0]).exists()


def test_the_line_names_the_directory(tmp_path, capsys) -> None:
    out = tmp_path / "no" / "such" / "x.toml"
    assert main(["lock", "-o", str(out), "--environment", "colab-2025-01-tf215"]) == 2
    err = capsys.readouterr().err
    assert f"no such directory: {out.parent}" in err and "Traceback" not in err


@pytest.mark.parametrize("json", [[], ["--json"]])
def test_a_directory_as_the_file_is_refused(tmp_path, capsys, json) -> None:
    assert main(["lock", "-o", str(tmp_path), "--environment", "colab-2025-01-tf215", *json]) == 2
