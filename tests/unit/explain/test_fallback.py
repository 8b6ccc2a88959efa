"""[[fallback]]: a finding's own words, read only where no message of the catalogue is recognised
(or only harmless lines).

Invariants, over generated texts:
- a text that holds a message the catalogue knows is read from its messages only: no reading of
  it comes from a fallback, and the fallbacks change nothing in it;
- a text with a finding's words and no known message is still *not recognised* (exit 1), and its
  first reading is the finding those words point to, as a guess below every message's reading,
  with the check that decides and the words it read;
- a text with none of those words has no reading at all;
- a catalogue's [[fallback]] tables are checked like its rules: a bad one is refused, naming it.
"""

from __future__ import annotations


import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fixer.cli import main
from fixer.errors import RecipeError
from fixer.explainer import analyze, load_catalogue, parse_catalogue
from fixer.explainer.engine import FALLBACK_CONFIDENCE
from tests.helpers.examples import examples

CAT = load_catalogue()
FALLBACKS = CAT.fallbacks
EXAMPLES = [(fb, e) for fb in FALLBACKS for e in fb.examples]
#: the findings a `family` fallback may give: the kinds of failure of the families it can name
FAMILY_IDS = {
    kind: {getattr(f, kind) for f in CAT.families if getattr(f, kind)}
    for kind in ("missing", "mismatch")
}
#: lines before an error that hold no message (TensorFlow's oneDNN notice is one explain knows:
#: its line is read as harmless, and a line the notice is joined with is that notice's)
PLAIN = st.sampled_from(
    [
        "",
        "Epoch 1/10",
        'Traceback (most recent call last):\n  File "infer.py", line 12, in <module>',
    ]
)


def _from_words(f) -> bool:
    """The finding is a guess read from a finding's words (a [[fallback]])."""
    return any(e.startswith("read from its words: ") for e in f.evidence)


def _guessed(text: str):
    return [f for f in analyze(text).findings if _from_words(f)]


@pytest.mark.parametrize(
    "fb,example", EXAMPLES, ids=[f"{fb.where}#{i}" for i, (fb, _) in enumerate(EXAMPLES)]
)
@settings(max_examples=examples(10), deadline=None)
@given(noise=PLAIN, after=st.sampled_from(["", "\nthanks for any help", "\n\n(env: Ubuntu 22.04)"]))
def test_a_findings_words_alone_are_a_guess(fb, example, noise, after):
    # a traceback reports an error: never beside a guess of harmless warnings
    assume(not (fb.id == "log-noise" and "Traceback" in noise))
    text = f"{noise}\n{example}{after}"
    result = analyze(text)
    # a harmless line the catalogue knows (TensorFlow's oneDNN notice) is recognised, and ranks
    # below the guess; with nothing else, the text is not recognised
    known = [f for f in result.findings if not _from_words(f)]
    assert result.recognised == bool(known) and all(f.id == "log-noise" for f in known), text
    first = result.findings[0]
    if fb.id:
        assert first.id == fb.id, (text, [f.id for f in result.findings])
    else:
        assert first.id in FAMILY_IDS[fb.family], text
    assert first.confidence == FALLBACK_CONFIDENCE
    assert _from_words(first)
    assert result.check_for(first.id)


def test_every_fallback_has_examples_and_each_reads_as_its_own():
    assert FALLBACKS and all(fb.examples and fb.basis for fb in FALLBACKS)
    assert {fb.id for fb in FALLBACKS if fb.id} <= set(FAMILY_IDS["missing"]) | {
        "gpu-missing",
        "driver-too-old",
        "driver-missing",
        "out-of-memory",
        "gpu-arch-unsupported",
        "cpu-only-build",
        "cuda-lib-mismatch",
        "cudnn-too-old",
        "system-runtime-too-old",
        "pip-conflict",
        "cuda-lib-missing",
        "log-noise",
    }


#: the fixed texts of the rules that report a failure (a harmless line alone leaves the words of
#: the rest of the paste to be read: that is what the fallbacks are for)
RULE_TEXTS = [
    t
    for r in CAT.rules
    for t in r.templates
    if "{" not in t and not r.benign and r.id != "log-noise"
]


@settings(max_examples=examples(60), deadline=None)
@given(
    template=st.sampled_from(RULE_TEXTS),
    words=st.sampled_from([e for _, e in EXAMPLES]),
    before=st.booleans(),
)
def test_a_known_message_is_never_read_from_words(template, words, before):
    """Beside a message the catalogue knows, a finding's words add no reading."""
    assume(any(f.id != "log-noise" for f in analyze(template).findings))
    text = f"{words}\n{template}" if before else f"{template}\n{words}"
    result = analyze(text)
    assert result.recognised, text
    assert not _guessed(text), text


@settings(max_examples=examples(40), deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "my training loss is nan after epoch 3",
                "Epoch 1/10",
                "Downloading model.safetensors: 100%",
                "INFO: started server process [1234]",
                "the output images look washed out",
                "Loading checkpoint shards: 100%|██████████| 2/2",
                "warnings.warn(",
            ]
        ),
        min_size=1,
        max_size=6,
    )
)
def test_words_of_no_finding_give_no_reading(lines):
    text = "\n".join(lines)
    result = analyze(text, similar=False)  # (the guess by similarity is test_similar's)
    assert not result.recognised and not result.findings, text


def test_the_last_words_rank_first():
    """As for messages, the words nearest the end of the paste (errors come last) rank first."""
    first = "not enough GPU memory for this model"
    last = "please upgrade your NVIDIA driver and try again"
    assert analyze(f"{first}\n{last}").findings[0].id == "driver-too-old"
    assert analyze(f"{last}\n{first}").findings[0].id == "out-of-memory"


def test_a_guess_is_no_gpu_when_the_paste_says_so():
    """The paste's evidence decides a guess as it decides a message's reading."""
    text = "I have an AMD Radeon card.\nerror while loading shared libraries: libcuda.so.1:"
    assert analyze(text).findings[0].id == "gpu-missing"


def test_the_cli_says_not_recognised_and_shows_the_guess(capsys):
    assert (
        main(["explain", "--no-detect", "Exception: No GPU found, please run without --cuda"]) == 1
    )
    out = capsys.readouterr().out
    assert "Not recognised" in out and "The cause below is a guess" in out
    assert "gpu-missing" in out and "check:" in out


def test_the_cli_json_keeps_recognised_false(capsys):
    import json

    assert main(["explain", "--no-detect", "--json", "CUDAError InsufficientDriver"]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["recognised"] is False and body["findings"][0]["id"] == "driver-too-old"


#: the smallest catalogue a [[fallback]] can be checked in (one rule, one fallback): parsing the
#: shipped file costs a second and a half
MINIMAL = """schema = 2

[[rule]]
id = "out-of-memory"
title = "t"
patterns = ['CUDA out of memory']
templates = ["CUDA out of memory"]
fix = "f"
cites = ["pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp:1@v2.0.0 (t)"]

[[fallback]]
{table}
"""
GOOD = {
    "id": '"out-of-memory"',
    "title": '"The text says memory ran out"',
    "patterns": """['(?i:out of memory)']""",
    "check": '"nvidia-smi"',
    "fix": '"ask for less"',
    "basis": '"memory said to be exhausted"',
    "examples": '["memory ran out of memory"]',
}


def _table(**changes: str) -> str:
    fields = {**GOOD, **changes}
    return "\n".join(f"{k} = {v}" for k, v in fields.items() if v)


def test_the_minimal_catalogue_parses():
    cat = parse_catalogue(MINIMAL.format(table=_table()), "errors.toml")
    assert [fb.id for fb in cat.fallbacks] == ["out-of-memory"]


BAD = {
    "no basis": ({"basis": ""}, "missing key 'basis'"),
    "both id and family": ({"family": '"missing"'}, "either `id`"),
    "a family kind that is none": ({"id": "", "family": '"gone"'}, "family 'gone' must be one of"),
    "an unknown finding": ({"id": '"out-of-mem"'}, "is not a finding id"),
    "a family without a library group": (
        {"id": "", "family": '"missing"'},
        "names a `lib` or a `name` group",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_fallback_is_refused_naming_it(case):
    changes, message = BAD[case]
    with pytest.raises(RecipeError) as info:
        parse_catalogue(MINIMAL.format(table=_table(**changes)), "errors.toml")
    assert message in info.value.message and "fallback" in info.value.message
    assert info.value.line is not None


@settings(max_examples=examples(30), deadline=None)
@given(
    warning=st.sampled_from(
        [
            "UserWarning: the default will change in a future release",
            "[W] [TRT] Using an engine plan file across different models of devices is not recommended",
            'time=2024-01-01T00:00:00Z level=WARN msg="slow start"',
        ]
    ),
    error=st.sampled_from(
        [
            "RuntimeError: the job stopped",
            "Traceback (most recent call last):",
            "ERROR: the job stopped",
            "Segmentation fault (core dumped)",
            "an error stopped the run",
        ]
    ),
    before=st.booleans(),
)
def test_warnings_beside_an_error_are_not_read_as_harmless(warning, error, before):
    """log-noise is guessed only where no line reports an error."""
    assert analyze(warning).findings[0].id == "log-noise"
    text = f"{error}\n{warning}" if before else f"{warning}\n{error}"
    assert "log-noise" not in [f.id for f in analyze(text).findings], text
