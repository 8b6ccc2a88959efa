"""scripts/explain_held_out.py: a set measured as counted pairs, and a file that is no held-out
set refused in one line, exit 2."""

from __future__ import annotations

import pytest

from tests.helpers.envs import load_script

SCRIPT = load_script("explain_held_out")

GOOD = """
[[case]]
url = "https://example.invalid/1"
cause = "cudnn-missing"
error = "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory"

[[case]]
url = "https://example.invalid/2"
cause = "out-of-memory"
error = "-- 404 --"  # no words: no rule reads it, and no guess either
"""


def test_a_set_is_counted_and_its_misses_shown_only_as_pairs(tmp_path, capsys):
    f = tmp_path / "set.toml"
    f.write_text(GOOD)
    assert SCRIPT.main([str(f)]) == 0
    out = capsys.readouterr().out
    assert "top-1 1/2 (50.0%), top-2 1/2, recognised 1/2" in out
    assert "1 x out-of-memory -> unrecognised" in out
    assert "-- 404 --" not in out  # the text stays unread without --texts


@pytest.mark.parametrize(
    "content",
    [
        None,
        "x = [",
        "schema = 1\n",
        "case = 3\n",
        "[[case]]\nerror = 3\ncause = 'x'\n",
        b"\xff\xfe",
    ],
    ids=["missing", "not-toml", "no-cases", "cases-not-tables", "error-not-text", "not-utf8"],
)
def test_a_file_that_is_no_held_out_set_is_one_line_exit_2(tmp_path, capsys, content):
    f = tmp_path / "set.toml"
    if isinstance(content, bytes):
        f.write_bytes(content)
    elif content is not None:
        f.write_text(content)
    assert SCRIPT.main([str(f)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{f}: not a held-out set this script reads: ")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_second_labellers_causes_give_the_agreement_and_the_top1_on_it(tmp_path, capsys):
    f = tmp_path / "set.toml"
    f.write_text(GOOD)
    labels = tmp_path / "labels.toml"
    labels.write_text(
        '[[case]]\nurl = "https://example.invalid/1"\ncause = "cudnn-missing"\n\n'
        '[[case]]\nurl = "https://example.invalid/2"\ncause = "log-noise"\n'
    )
    assert SCRIPT.main([str(f), "--labels", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "right when answered 1/1" in out
    assert "second labels: 2/2 labelled, 1 agree; top-1 on the agreed 1/1" in out
    assert "1 x out-of-memory / second: log-noise" in out
    assert "-- 404 --" not in out


@pytest.mark.parametrize("content", [None, "x = [", '[[case]]\nurl = 1\ncause = "x"\n'])
def test_a_labels_file_it_cannot_read_is_one_line_exit_2(tmp_path, capsys, content):
    f = tmp_path / "set.toml"
    f.write_text(GOOD)
    labels = tmp_path / "labels.toml"
    if content is not None:
        labels.write_text(content)
    assert SCRIPT.main([str(f), "--labels", str(labels)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a labels file this script reads" in err


def test_labels_files_must_pair_with_the_sets(tmp_path, capsys):
    f = tmp_path / "set.toml"
    f.write_text(GOOD)
    assert SCRIPT.main([str(f), str(f), "--labels", str(f)]) == 2
    assert "one file per set" in capsys.readouterr().err
