"""The rule base (recipes/errors.toml) and its loader: context decides between causes, versions
are compared, harmless lines never win, and a bad rules file is refused with FILE:LINE."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixer.errors import RecipeError, UsageError
from fixer.explainer import (
    analyze,
    explain,
    load_rules,
    normalize_version,
    parse_rules,
    rules_files,
)
from tests.helpers.explained import ids

FAILED_CONV = (
    "tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. "
    "This is probably because cuDNN failed to initialize, so try looking to see if a warning log "
    "message was printed above."
)
LOADED_OLD = (
    "E tensorflow/stream_executor/cuda/cuda_dnn.cc:362] Loaded runtime CuDNN library: 8.0.5 but source "
    "was compiled with: 8.1.0.  CuDNN library needs to have matching major version"
)
NOISE = (
    "E0000 00:00:1737659286.484845  763412 cuda_dnn.cc:8310] Unable to register cuDNN factory: Attempting to "
    "register factory for plugin cuDNN when one has already been registered"
)


def test_shipped_rules_load():
    rules = load_rules()
    assert len(rules) >= 20 and all(r.cites for r in rules)
    assert rules_files()[0].name == "errors.toml"


def test_failed_to_get_convolution_algorithm_alone_is_out_of_memory():
    found = explain(FAILED_CONV)
    assert found[0].id == "out-of-memory" and 0.4 < found[0].confidence < 0.8


def test_failed_to_get_convolution_algorithm_after_the_version_line_is_too_old():
    found = explain(LOADED_OLD + "\n" + FAILED_CONV)
    assert found[0].id == "cudnn-too-old" and found[0].confidence >= 0.9
    # the convolution failure is the version's symptom: its readings stay below verify's 0.5 cut
    assert all(f.confidence < 0.5 for f in found[1:])
    assert "8.0.5" in found[0].title and "8.1.0" in found[0].title


def test_dnn_library_not_found_after_the_version_line_is_too_old():
    assert ids(LOADED_OLD + "\nUNIMPLEMENTED: DNN library is not found.")[0] == "cudnn-too-old"


def test_dnn_library_not_found_after_a_failed_dlopen_is_missing():
    text = (
        "W dso_loader.cc:64] Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open "
        "shared object file: No such file or directory\nDNN library is not found."
    )
    assert ids(text)[0] == "cudnn-missing"


def test_log_noise_alone_is_the_cause_and_never_outranks_a_real_one():
    alone = explain(NOISE)
    assert [f.id for f in alone] == ["log-noise"] and alone[0].severity == "info"
    mixed = explain(NOISE + "\n" + FAILED_CONV)
    assert mixed[0].id == "out-of-memory"
    noise = [f for f in mixed if f.id == "log-noise"][0]
    assert noise.confidence < mixed[0].confidence


def test_a_check_printed_as_failed_is_never_benign():
    """TensorFlow/XLA print this only when their own check failed: even when the pair
    looks compatible by the major/minor rule, the text is a failure, not a harmless line. A check
    that refused a newer copy wants the build's own release (TF 1.x's compatibility version): the
    copy that loaded is another one than the build's."""
    text = "Loaded runtime CuDNN library: 9.3.0 but source was compiled with: 9.1.0."
    found = explain(text)
    assert found[0].id != "log-noise" and found[0].severity != "info"
    assert found[0].id == "cudnn-shadowed" and "check refused" in found[0].title
    older = explain("Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.1.2.")
    assert older[0].id == "cudnn-too-old" and "check failed" in older[0].title


def test_other_major_is_major_mismatch():
    found = explain(
        "cuDNN version incompatibility: PyTorch was compiled  against (9, 1, 0) but found runtime version (8, 9, 7)."
    )
    assert found[0].id == "cudnn-major-mismatch" and "8.9.7" in found[0].title


@pytest.mark.parametrize(
    "raw,want",
    [
        ("(9, 19, 0)", "9.19.0"),
        ("9.19.0", "9.19.0"),
        ("91900", "9.19.0"),
        ("7102", "7.1.2"),
        ("8906", "8.9.6"),
        ("x", None),
    ],
)
def test_normalize_version(raw, want):
    assert normalize_version(raw) == want


def test_nvrtc_missing_behind_a_cudnn_message_is_a_cuda_library():
    text = (
        "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: "
        "No such file or directory\nPlease make sure libcudnn_cnn_infer.so.8 is in your library path!"
    )
    assert ids(text)[:2] == ["cuda-lib-missing", "cudnn-missing"]


def test_two_cudnn_directories_in_a_loader_trace_are_mixed():
    text = (
        "calling init: /venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9\n"
        "calling init: /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9\n"
    )
    assert ids(text)[0] == "cudnn-mixed"
    assert "cudnn-mixed" not in ids(
        "calling init: /a/libcudnn.so.9\ncalling init: /a/libcudnn_ops.so.9\n"
    )


def test_unrecognised_text_is_said_honestly():
    r = analyze("Segmentation fault in my own code", similar=False)
    assert r.findings == () and r.recognised is False
    # with the guess by similarity: still not recognised, and every finding says how it was read
    r = analyze("Segmentation fault in my own code")
    assert r.recognised is False
    assert all(f.evidence[1].startswith("read by similarity:") for f in r.findings)


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_text_is_a_usage_error(text):
    with pytest.raises(UsageError):
        explain(text)


GOOD = """schema = 2
[[rule]]
id = "out-of-memory"
title = "oom {what}"
patterns = ['(?P<what>CUDA out of memory)']
fix = "free memory"
sources = ["https://example.org/1"]
cites = ["pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp:1133@v2.4.0"]
"""


@pytest.mark.parametrize(
    "mutation,message,line",
    [
        (("fix = ", "fixx = "), "unknown key 'fixx' (did you mean 'fix'?)", 6),
        (
            ('id = "out-of-memory"', 'id = "out-of-memroy"'),
            "is not a finding id (did you mean 'out-of-memory'?)",
            3,
        ),
        (
            ("(?P<what>CUDA out of memory)", "(?P<what>CUDA out of memory"),
            "bad regular expression",
            5,
        ),
        (
            ('title = "oom {what}"', 'title = "oom {who}"'),
            "uses {who}, which no pattern captures",
            4,
        ),
        (("schema = 2", "schema = 3"), "expected `schema = 2`", 1),
        (('sources = ["https://example.org/1"]', 'sources = ["example.org"]'), "is not a URL", 7),
        (
            ('cites = ["pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp:1133@v2.4.0"]', ""),
            "missing key 'cites'",
            2,
        ),
        # a cite names its file and line at a tag or commit, or its release
        ((":1133@v2.4.0", "@v2.4.0"), "names no line and no release", 8),
        ((":1133@v2.4.0", ":@v2.4.0"), "names no line and no release", 8),
        ((":1133@v2.4.0", ":1133"), "names no line and no release", 8),
        (
            (
                "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp:1133@v2.4.0",
                "https://docs.nvidia.com/cuda/",
            ),
            "names no line and no release",
            8,
        ),
        (
            ('fix = "free memory"', 'fix = "free memory"\ntemplates = ["{nope}"]'),
            "template uses {nope}",
            7,
        ),
        (
            (
                'fix = "free memory"',
                "fix = \"free memory\"\nalternatives = [{ id = 'gpu-missing', confidence = 0.9, title = 't', check = 'c' }]",
            ),
            "more likely than the rule itself",
            7,
        ),
        (
            ('fix = "free memory"', 'fix = "free memory"\nwhen_env = ["gpu-hot"]'),
            "unknown environment fact 'gpu-hot'",
            7,
        ),
        (
            (
                'fix = "free memory"',
                "fix = \"free memory\"\nversions = { loaded = 'a', built = 'b' }",
            ),
            "which no pattern captures",
            7,
        ),
        (
            ('fix = "free memory"', 'fix = "free memory"\nloaded_form = "hundreds"'),
            "'loaded_form' must be \"thousands\"",
            7,
        ),
        (("[[rule]]", "[[rules]]"), "unknown table or key 'rules' (did you mean 'rule'?)", 2),
        (('fix = "free memory"', 'fix = "free memory'), "TOML syntax error", 6),
    ],
)
def test_bad_rules_file_names_file_and_line(mutation, message, line):
    text = GOOD.replace(*mutation)
    with pytest.raises(RecipeError) as exc:
        parse_rules(text, "/x/errors.toml")
    assert message in str(exc.value)
    assert str(exc.value).startswith(f"/x/errors.toml:{line}: "), str(exc.value)


def test_recipes_dir_overrides_the_shipped_rules(tmp_path: Path):
    (tmp_path / "errors.toml").write_text(GOOD)
    r = analyze("RuntimeError: CUDA out of memory. Tried to allocate", extra_dirs=[str(tmp_path)])
    assert [f.id for f in r.findings] == ["out-of-memory"] and r.findings[
        0
    ].title == "oom CUDA out of memory"
    assert r.rules == ("errors.toml:2",)
    with pytest.raises(RecipeError, match="does not exist"):
        load_rules([str(tmp_path / "nope")])
