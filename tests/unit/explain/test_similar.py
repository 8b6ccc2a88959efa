"""The guess by similarity (fixer.explainer.similar, recipes/similar_reports.json): for a text
that nothing else reads, the cause whose labelled public reports are most like it.

- The shipped model is what scripts/build_similar_reports.py builds, from the read sets (3-30,
  43-55, 59-68) and the sets given to it as data (31-42), never from a validation set (56-58) or
  a set that is still a blind measure (69 on).
- Building is deterministic and does not depend on the order of the reports; a text made of one
  cause's words is nearest that cause.
- The guess is made only where nothing else reads the text; it is not recognised, at 0.3, with a
  line of the text, how it was read and the check that decides; never log-noise where a line
  reports an error.
- A missing or broken model gives no guess and no crash; a malformed model is refused naming what
  is wrong.
- The CLI shows it as the user sees it: not recognised (exit 1), the guess and its check."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fixer.cli import main
from fixer.explainer import analyze, similar
from fixer.explainer.engine import FALLBACK_CONFIDENCE, SIMILAR_WHERE
from fixer.system.paths import recipes_dir
from tests.helpers.envs import load_script
from tests.helpers.examples import examples

BUILD = load_script("build_similar_reports")


def test_the_shipped_model_is_built_from_its_training_sets_only():
    """Its training files are the read sets and sets 31-42, unchanged since it was built (their
    sha256), with the module's parameters; never a validation set (56-58) or a blind one (69 on).
    (tests/integration/explain/test_similar_model.py rebuilds it.)"""
    shipped = json.loads((recipes_dir() / similar.MODEL_FILE).read_text(encoding="utf-8"))
    assert shipped["trained_on"] == BUILD.trained_on(), (
        "a training file changed: run scripts/build_similar_reports.py"
    )
    assert shipped["params"] == {
        "keep": similar.KEEP,
        "epochs": similar.EPOCHS,
        "step": similar.STEP,
        "l2": similar.L2,
        "seed": similar.SEED,
    }
    for row in shipped["trained_on"]:
        m = re.fullmatch(r"held_out_(\d+)\.toml", row["file"])
        assert row["file"] == "cases.toml" or (
            m and (int(m.group(1)) <= 55 or 59 <= int(m.group(1)) <= 68)
        ), row
    assert [row["file"] for row in shipped["trained_on"]] == BUILD.TRAIN
    assert similar.load() is not None


def test_cross_validation_refuses_a_fold_it_does_not_train_on(capsys):
    """--folds names training files only: a blind set (or a typo) is one line and exit 2, and
    nothing is built."""
    with pytest.raises(SystemExit) as e:
        BUILD.main(["--cross-validate", "--folds", "held_out_56.toml", "held_out_31.toml"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("--folds: not a training file: held_out_56.toml")


COMMON = ["error", "the", "when", "running", "python", "import"]


@st.composite
def corpora(draw):
    """Two to five causes, each with its own words, and three to six reports per cause made of
    its words and common ones."""
    causes = draw(
        st.lists(st.sampled_from(sorted(similar.MEANING)), min_size=2, max_size=5, unique=True)
    )
    rng = random.Random(draw(st.integers(0, 10**6)))
    own = {c: [f"{c.replace('-', '_')}_w{i}" for i in range(8)] for c in causes}
    reports = []
    for c in causes:
        for _ in range(rng.randint(3, 6)):
            words = rng.sample(own[c], 4) + rng.sample(COMMON, 2)
            rng.shuffle(words)
            reports.append((" ".join(words), c))
    return reports, own


def _held(reports, cause, words):
    """The cause's own words that two of its reports or more hold (a term of one report has no
    IDF, so the model cannot know it)."""
    return [w for w in words if sum(w in r.split() for r, c in reports if c == cause) >= 2]


@settings(max_examples=examples(30), deadline=None)
@given(data=corpora(), seed=st.integers(0, 10**6))
def test_building_ignores_the_order_and_a_cause_s_own_words_are_nearest_it(data, seed):
    reports, own = data
    shuffled = list(reports)
    random.Random(seed).shuffle(shuffled)
    assert similar.build(reports) == similar.build(shuffled)
    model = similar.from_json(similar.build(reports))
    for cause, words in own.items():
        held = _held(reports, cause, words)
        if len(held) < 2:
            continue
        text = "Traceback:\n" + " ".join(held) + " error"
        assert similar.nearest(text, model)[0][0] == cause, text


@settings(max_examples=examples(20), deadline=None)
@given(data=corpora())
def test_analyze_guesses_with_the_model_it_is_given(data):
    """analyze(text, similar=MODEL) guesses with that model (cross-validation builds one per
    fold): a text of one cause's words gets that cause, from that model's reports."""
    reports, own = data
    model = similar.from_json(similar.build(reports))
    for cause, words in own.items():
        held = _held(reports, cause, words)
        if len(held) < 2 or cause == "log-noise":
            continue
        text = " ".join(held)
        if (
            analyze(text, similar=False).findings
            or similar.nearest(text, model)[0][1] < similar.MIN_SCORE
        ):
            continue  # something else reads it, or too weak to guess: not this test's
        result = analyze(text, similar=model)
        assert result.findings[0].id == cause and not result.recognised, text
        assert f"trained on {len(reports)} labelled" in " ".join(result.findings[0].evidence)


KNOWN = [
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB",
    "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
    "RuntimeError: Found no NVIDIA driver on your system.",
    "Exception: No GPU found, please run without --cuda",
]
NOISE_LINES = st.sampled_from(
    ["", "Epoch 1/10", "loading model weights", "step 200 loss 0.31", "INFO: started"]
)


@settings(max_examples=examples(30), deadline=None)
@given(known=st.sampled_from(KNOWN), before=st.lists(NOISE_LINES, max_size=3))
def test_no_guess_where_anything_else_reads_the_text(known, before):
    result = analyze("\n".join([*before, known]))
    assert result.findings
    assert SIMILAR_WHERE not in result.rules
    assert not any(e.startswith("read by similarity:") for f in result.findings for e in f.evidence)


WORDS = st.sampled_from(
    [
        "kernel", "crashed", "while", "training", "model", "segfault", "gpu", "cuda", "process",
        "exited", "code", "worker", "died", "tensor", "device", "launch", "failed", "stack",
        "frame", "module", "illegal", "access", "encountered", "library", "version",
    ]
)  # fmt: skip


def test_a_text_nothing_else_reads_gets_the_guess():
    result = analyze("RuntimeError: CUDA error: an illegal memory access was encountered")
    assert result.rules == (SIMILAR_WHERE,) and not result.recognised


@settings(max_examples=examples(20), deadline=None)
@given(text=st.text(alphabet="0123456789-#:.()[]", min_size=1, max_size=60))
def test_a_text_without_words_gets_no_guess(text):
    """No line whose words weigh for a cause: "words like these" would say nothing, whatever
    probability the model's biases give (similar.MIN_SCORE is low)."""
    assert SIMILAR_WHERE not in analyze(text).rules


@settings(max_examples=examples(40), deadline=None)
@given(lines=st.lists(st.lists(WORDS, min_size=2, max_size=8), min_size=1, max_size=5))
# a break the rules read as a wrap ("...version" + "stack..." hold a catalogue literal): the line
# quoted is still one the user pasted (the guess reads the text as pasted)
@example(lines=[["kernel", "version"], ["stack", "kernel"]])
def test_a_guess_is_said_to_be_one(lines):
    text = "\n".join(" ".join(line) for line in lines)
    result = analyze(text)
    if SIMILAR_WHERE not in result.rules:
        return  # something else read it (a fallback's words): not this test's
    assert result.recognised is False
    (guess,) = result.findings
    assert guess.confidence == FALLBACK_CONFIDENCE
    assert guess.evidence[0] in [line.strip() for line in text.splitlines()]
    assert guess.evidence[1].startswith("read by similarity:")
    assert result.checks and result.checks[0][0] == guess.id


ERROR_LINES = st.sampled_from(
    [
        "Traceback (most recent call last):",
        "RuntimeError: the job stopped",
        "fatal: could not continue",
        "Segmentation fault (core dumped)",
        "[E] engine build failed",
    ]
)
WARNING_LINES = st.sampled_from(
    [
        "UserWarning: this option is deprecated",
        "WARNING: the TensorRT library was not found, TF-TRT is disabled",
        "FutureWarning: the default will change",
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(
    warnings=st.lists(WARNING_LINES, min_size=1, max_size=4),
    error=ERROR_LINES,
    at=st.integers(0, 4),
)
def test_never_harmless_where_a_line_reports_an_error(warnings, error, at):
    lines = list(warnings)
    lines.insert(min(at, len(lines)), error)
    result = analyze("\n".join(lines))
    if SIMILAR_WHERE in result.rules:
        assert result.findings[0].id != "log-noise", lines


@pytest.mark.parametrize("content", [None, "", "{", "[]", '{"schema": 9}', '{"schema": 1}'])
def test_a_missing_or_broken_model_gives_no_guess(tmp_path, content):
    path = tmp_path / "model.json"
    if content is not None:
        path.write_text(content)
    assert similar.load(path) is None


JUNK = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@settings(max_examples=examples(60), deadline=None)
@given(idf=JUNK, weights=JUNK, bias=JUNK, reports=JUNK)
def test_a_malformed_model_is_refused_naming_what_is_wrong(idf, weights, bias, reports):
    raw = {
        "schema": similar.SCHEMA,
        "idf": idf,
        "weights": weights,
        "bias": bias,
        "reports": reports,
    }
    try:
        model = similar.from_json(raw)
    except ValueError as exc:
        assert str(exc)
        return
    # what it accepts it can use, on any text (terms of the model's own among them)
    assert isinstance(model.reports, int)
    for text in ["cuda error while loading", " ".join(str(t) for t in model.idf)]:
        similar.nearest(text, model)


def test_the_cli_says_not_recognised_and_shows_the_guess_by_similarity(capsys):
    text = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert SIMILAR_WHERE in analyze(text).rules
    assert main(["explain", "--no-detect", text]) == 1
    out = capsys.readouterr().out
    assert "Not recognised" in out and "The cause below is a guess" in out
    assert "read by similarity" in out and "check:" in out


def test_the_json_keeps_recognised_false(capsys):
    text = "RuntimeError: CUDA error: an illegal memory access was encountered"
    assert main(["explain", "--no-detect", "--json", text]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["recognised"] is False and body["rules"] == [SIMILAR_WHERE]
    assert body["findings"][0]["evidence"][1].startswith("read by similarity:")
