"""Malformed recipe files are refused with a RecipeError naming FILE:LINE, and the CLI exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixer import recipebook as rec
from fixer.cli import main
from fixer.errors import RecipeError

from tests.unit.recipes.conftest import GOOD_BUILD


def _errors(path: Path):
    return rec.validate([str(path.parent)])


def _only(path: Path) -> RecipeError:
    errs = _errors(path)
    assert len(errs) == 1, [str(e) for e in errs]
    return errs[0]


def test_good_extra_file_loads(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD)
    r = rec.load([str(p.parent)])
    (b,) = r.builds_for("torch", "9.9.0")
    assert b.requires == ("nvidia-cudnn-cu12==9.10.2.21",) and str(p) in r.files


def test_unknown_key_with_suggestion(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('python = ">=3.10"', 'pyhton = ">=3.10"'))
    e = _only(p)
    assert e.path == str(p) and e.line == 9
    assert "unknown key 'pyhton'" in e.message and "did you mean 'python'?" in e.message
    assert str(e).startswith(f"{p}:9: ")


def test_unknown_table_with_suggestion(write_recipe):
    p = write_recipe("mine.toml", "schema = 1\n\n[[biuld]]\nsource = 'x'\n")
    e = _only(p)
    assert e.line == 3 and "'biuld'" in e.message and "did you mean 'build'?" in e.message


def test_wrong_type(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('cuda = "12.6"', "cuda = 12.6"))
    e = _only(p)
    assert e.line == 7 and "cuda" in e.message and "got float 12.6" in e.message


def test_wrong_type_in_list(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('["7.5", "8.0"]', '["7.5", 8]'))
    e = _only(p)
    assert e.line == 10 and "item 2" in e.message


def test_bad_specifier(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('">=3.10"', '">=3.10,<<3.15"'))
    e = _only(p)
    assert e.line == 9 and "not a valid version specifier" in e.message


def test_bad_requirement(write_recipe):
    p = write_recipe(
        "mine.toml",
        GOOD_BUILD.replace('"nvidia-cudnn-cu12==9.10.2.21"', '"nvidia-cudnn-cu12=9.10.2.21"'),
    )
    e = _only(p)
    assert e.line == 13 and "not a valid requirement" in e.message


def test_bad_version_and_local_label(write_recipe):
    p = write_recipe(
        "mine.toml", GOOD_BUILD.replace('version = "9.9.0"', 'version = "9.9.0+cu126"')
    )
    e = _only(p)
    assert e.line == 5 and "local label" in e.message


def test_missing_required_key(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('source = "test"\n', ""))
    e = _only(p)
    assert (
        e.line == 1 + GOOD_BUILD.lstrip("\n").splitlines().index("[[build]]")
        and "'source'" in e.message
    )


def test_duplicate_build_names_both_places(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD + "\n" + GOOD_BUILD.replace("schema = 1\n", ""))
    e = _only(p)
    assert e.line == 18 and "duplicate build torch 9.9.0 variant cu126" in e.message
    assert f"first defined at {p}:3" in e.message


def test_duplicate_across_files(write_recipe):
    write_recipe("a.toml", GOOD_BUILD)
    p = write_recipe("b.toml", GOOD_BUILD)
    e = _only(p)
    assert e.path == str(p) and "a.toml:3" in e.message


def test_cuda_without_driver_floor(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('cuda = "12.6"', 'cuda = "99.0"'))
    assert any(e.line == 7 and "CUDA 99.0 has no [[driver_floor]]" in e.message for e in _errors(p))


def test_cudnn_pin_disagrees_with_cudnn(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('cudnn = "9.10.2"', 'cudnn = "9.5.1"'))
    errs = _errors(p)
    assert any(
        e.line == 8 and "requires nvidia-cudnn-cu12==9.10.2.21 but cudnn says 9.5.1" in e.message
        for e in errs
    )


def test_cudnn_pin_for_another_cuda_major(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace("nvidia-cudnn-cu12==", "nvidia-cudnn-cu13=="))
    errs = _errors(p)
    assert any("a CUDA 13 cuDNN" in e.message and e.line == 13 for e in errs), [
        str(e) for e in errs
    ]


def test_range_below_built_with(write_recipe):
    p = write_recipe(
        "mine.toml",
        GOOD_BUILD.replace('"nvidia-cudnn-cu12==9.10.2.21"', '"nvidia-cudnn-cu12>=9.1,<10"'),
    )
    e = _only(p)
    assert "admits cuDNN 9.1" in e.message


def test_cpu_build_that_requires_nvidia_libs(write_recipe):
    text = GOOD_BUILD.replace('cuda = "12.6"\ncudnn = "9.10.2"\n', "").replace(
        'compute_capabilities = ["7.5", "8.0"]\n', ""
    )
    p = write_recipe("mine.toml", text.replace('variant = "cu126"', 'variant = "cpu"'))
    e = _only(p)
    assert "has no cuda but requires NVIDIA libraries" in e.message and e.line == 10


def test_cudnn_release_rows_are_checked(write_recipe):
    p = write_recipe(
        "mine.toml",
        """
        schema = 1

        [[cudnn]]
        version = "9.99.0"
        cuda_majors = [12]
        pip = { "nvidia-cudnn-cu13" = "9.99.0.1" }
        apt = { "libcudnn8" = "9.99.0.1-1" }
        source = "test"
        """,
    )
    msgs = [e.message for e in _errors(p)]
    assert any("CUDA 13 build but cuda_majors is [12]" in m for m in msgs)
    assert any("libcudnn8 is for cuDNN 8" in m for m in msgs)


def test_toml_syntax_error(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace('variant = "cu126"', 'variant = "cu126'))
    e = _only(p)
    assert e.path == str(p) and e.line == 6 and "TOML syntax error" in e.message


def test_missing_or_wrong_schema(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD.replace("schema = 1\n", ""))
    assert "missing `schema = 1`" in _only(p).message
    p.write_text(GOOD_BUILD.replace("schema = 1", "schema = 2"))
    rec.clear_cache()
    e = _only(p)
    assert e.line == 2 and "unsupported schema 2" in e.message


def test_load_raises_the_first_error_and_counts_the_rest(write_recipe):
    p = write_recipe(
        "mine.toml", GOOD_BUILD.replace('cuda = "12.6"', "cuda = 12.6").replace('"8.0"]', "8]")
    )
    with pytest.raises(RecipeError) as info:
        rec.load([str(p.parent)])
    assert info.value.exit_code == 2 and info.value.path == str(p) and info.value.line == 7
    assert "1 more problem" in (info.value.hint or "")


def test_missing_directory(tmp_path):
    with pytest.raises(RecipeError) as info:
        rec.load([str(tmp_path / "nope")])
    assert "does not exist" in str(info.value)
    assert len(rec.validate([str(tmp_path / "nope")])) == 1


def test_cache_sees_edits(write_recipe):
    p = write_recipe("mine.toml", GOOD_BUILD)
    assert rec.validate([str(p.parent)]) == []
    import os
    import time

    p.write_text(GOOD_BUILD.replace('cuda = "12.6"', "cuda = 12.6"))
    st = p.stat()
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    time.sleep(0)
    assert len(rec.validate([str(p.parent)])) == 1


# --- CLI -------------------------------------------------------------------------------------


def test_cli_validate_clean(capsys):
    assert main(["recipes", "validate"]) == 0
    assert "no problems" in capsys.readouterr().out


def test_cli_validate_reports_every_error_with_file_line(write_recipe, capsys):
    p = write_recipe(
        "mine.toml",
        GOOD_BUILD.replace('python = ">=3.10"', 'pyhton = ">=3.10"').replace(
            'cuda = "12.6"', "cuda = 12.6"
        ),
    )
    assert main(["recipes", "validate", "--recipes", str(p.parent)]) == 2
    err = capsys.readouterr().err
    assert f"{p}:7:" in err and f"{p}:9:" in err and "did you mean 'python'?" in err


def test_cli_validate_json(write_recipe, capsys):
    import json

    p = write_recipe("mine.toml", GOOD_BUILD.replace('cuda = "12.6"', "cuda = 12.6"))
    assert main(["recipes", "validate", "--recipes", str(p.parent), "--json"]) == 2
    body = json.loads(capsys.readouterr().out)
    assert (
        body["ok"] is False
        and body["errors"][0]["line"] == 7
        and body["errors"][0]["path"] == str(p)
    )


def test_cli_other_commands_exit_2_on_a_broken_dir(write_recipe, capsys):
    p = write_recipe("mine.toml", "schema = 1\n[[build]\n")
    assert main(["recipes", "list", "--recipes", str(p.parent)]) == 2
    assert f"{p}:2:" in capsys.readouterr().err


def test_single_table_instead_of_array(write_recipe):
    p = write_recipe("mine.toml", 'schema = 1\n\n[build]\nframework = "torch"\n')
    e = _only(p)
    assert "must be an array of tables, written [[build]]" in e.message and e.line == 3


def test_errors_toml_is_not_a_recipe(write_recipe):
    write_recipe("errors.toml", "this is = not [[recipes]] at all\n")
    p = write_recipe("mine.toml", GOOD_BUILD)
    assert rec.validate([str(p.parent)]) == []
