"""A guess by similarity, for a text that nothing else reads: no message of the catalogue, no
finding's own words ([[fallback]]). A linear classifier is trained on labelled public reports
that are no longer a blind measure (tests/unit/explain: cases.toml, the held-out sets read while
rules were written, and the sets given to it as data unread) and shipped as
recipes/similar_reports.json (written by scripts/build_similar_reports.py); the cause it gives the
text the highest probability is the guess.

What it claims is what it computes: "public reports with words like these were most often caused
by X". It stays a guess (the text is not recognised), ranks below every reading of a message, and
carries the check that decides. Nothing acts on it: explain only ranks causes.

Terms are words of three or more letters, digits and underscores (lowercased), and each pair of
neighbouring words; a term's weight in a text is (1 + log of its count) x its IDF over the labelled
reports, the vector then scaled to length 1 (sublinear TF-IDF: Manning, Raghavan and Schütze,
"Introduction to Information Retrieval", 2008, sections 6.2-6.4). The classifier is multinomial
logistic regression (softmax; the same book, section 14.6, and Bishop, "Pattern Recognition and
Machine Learning", 2006, section 4.3.4), fitted by stochastic gradient descent with an L2 penalty
in a fixed order (a seeded shuffle), so the same reports give the same model. Chosen over the
per-cause TF-IDF centroid by leave-one-file-out cross-validation on the read sets
(`scripts/build_similar_reports.py --cross-validate`, docs/measurements/runs-2026-11-28e)."""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import math
import random
import re
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from fixer.system.paths import recipes_dir

#: the model's format; build() writes it, from_json() refuses any other
SCHEMA = 2
#: the file in the recipes directory
MODEL_FILE = "similar_reports.json"
#: the weights kept per cause (the largest in size): the rest move the cross-validated measure
#: little (docs/measurements/runs-2026-11-28e)
KEEP = 500
#: stochastic gradient descent: passes over the reports, step, L2 penalty, shuffle seed
EPOCHS = 15
STEP = 0.5
L2 = 1e-4
SEED = 0
#: below this probability the guess is not made. The guess's first cause is right on about 3 in
#: 10 texts where it gives that cause under 0.2 (19/63 in the read sets' cross-validation,
#: docs/measurements/runs-2026-11-28e; 7/24 of the texts left unanswered in the left-out measure
#: of sets 31-42, runs-2026-11-28g), against 1 in 18 by chance: a guess worth ranking, with its
#: probability and the check that decides, rather than no answer. Every text of those measures
#: gets at least 0.11; this floor only keeps a flat guess (every cause alike) unsaid.
MIN_SCORE = 0.1

_WORD = re.compile(r"[a-z_][a-z0-9_]{2,40}")

#: What each cause means, as the labelled reports were labelled (the collectors' definitions):
#: the guess names the cause in these words.
MEANING = {
    "gpu-missing": "the machine, runtime or container has no usable NVIDIA GPU",
    "driver-missing": "an NVIDIA GPU is there but no working driver reaches the process",
    "driver-too-old": "the driver is older than the CUDA the build needs",
    "gpu-arch-unsupported": "the GPU's compute capability is not supported by the build",
    "cpu-only-build": "the framework (or an extension) installed is a build without CUDA",
    "cudnn-missing": "no cuDNN is installed or found by the loader",
    "cudnn-too-old": "a cuDNN of the right major but older than the build needs",
    "cudnn-major-mismatch": "a cuDNN of another major version than the build needs",
    "cudnn-conflict": "two copies of cuDNN in one process, and the wrong one wins",
    "cudnn-shadowed": "another cuDNN earlier on the search path shadows the right one",
    "cudnn-mixed": "files of different cuDNN releases mixed in one copy",
    "cudnn-incomplete": "a cuDNN copy missing some of its sub-libraries",
    "cuda-lib-missing": "a CUDA library (cudart, cuBLAS, nvrtc, ...) or the toolkit cannot be found",
    "cuda-lib-mismatch": "a CUDA library or toolkit of the wrong version is found and used",
    "system-runtime-too-old": "glibc, libstdc++ or the OS is too old for the binary",
    "out-of-memory": "the GPU (or the host) ran out of memory",
    "log-noise": "the lines are harmless warnings; the failure, if any, is elsewhere",
    "pip-conflict": "the package manager's resolution (incompatible pins, a wrong index or wheel)",
}


def terms(text: str) -> "collections.Counter[str]":
    """The text's terms and their counts: its words and each pair of neighbouring words."""
    words = _WORD.findall(text.lower())
    out = collections.Counter(words)
    out.update(f"{a} {b}" for a, b in zip(words, words[1:]))
    return out


def _vector(counts: Mapping[str, int], idf: Mapping[str, float]) -> Dict[str, float]:
    v = {t: (1.0 + math.log(n)) * idf[t] for t, n in counts.items() if t in idf}
    norm = math.sqrt(sum(x * x for x in v.values()))
    return {t: x / norm for t, x in v.items()} if norm else {}


def _scores(
    v: Mapping[str, float], weights: Mapping[str, Mapping[str, float]], bias: Mapping[str, float]
) -> Dict[str, float]:
    return {c: bias[c] + sum(w.get(t, 0.0) * x for t, x in v.items()) for c, w in weights.items()}


def _softmax(scores: Mapping[str, float]) -> Dict[str, float]:
    top = max(scores.values())
    e = {c: math.exp(s - top) for c, s in scores.items()}
    z = sum(e.values())
    return {c: x / z for c, x in e.items()}


def build(labelled: Sequence[Tuple[str, str]], keep: int = KEEP) -> Dict[str, object]:
    """The model (JSON-able) from (text, cause) pairs: the IDF of every term that occurs in two
    reports or more, and per cause the bias and the `keep` largest weights of the fitted
    softmax regression."""
    # in one order whatever the input's (SGD's result depends on the order it sees the reports)
    docs = [(terms(text), cause) for text, cause in sorted(labelled, key=lambda tc: (tc[1], tc[0]))]
    df: "collections.Counter[str]" = collections.Counter()
    for counts, _ in docs:
        df.update(counts.keys())
    n = len(docs)
    idf = {t: math.log((n + 1) / (k + 1)) for t, k in df.items() if k >= 2}
    data = [(_vector(counts, idf), cause) for counts, cause in docs]
    causes = sorted({cause for _, cause in data})
    weights: Dict[str, Dict[str, float]] = {c: {} for c in causes}
    bias = {c: 0.0 for c in causes}
    rng = random.Random(SEED)
    order = list(range(len(data)))
    for _ in range(EPOCHS):
        rng.shuffle(order)
        for i in order:
            v, y = data[i]
            p = _softmax(_scores(v, weights, bias))
            for c in causes:
                g = p[c] - (1.0 if c == y else 0.0)
                w = weights[c]
                for t, x in v.items():
                    old = w.get(t, 0.0)
                    w[t] = old - STEP * (g * x + L2 * old)
                bias[c] -= STEP * g
    kept: Dict[str, Dict[str, float]] = {}
    for c in causes:
        top = sorted(weights[c].items(), key=lambda kv: (-abs(kv[1]), kv[0]))[:keep]
        kept[c] = {t: round(x, 5) for t, x in sorted(top) if round(x, 5)}
    used = {t for w in kept.values() for t in w}
    per_cause = collections.Counter(cause for _, cause in data)
    return {
        "schema": SCHEMA,
        "reports": n,
        "per_cause": dict(sorted(per_cause.items())),
        "idf": {t: round(idf[t], 5) for t in sorted(used)},
        "bias": {c: round(bias[c], 5) for c in causes},
        "weights": kept,
    }


@dataclasses.dataclass(frozen=True)
class Model:
    reports: int
    idf: Mapping[str, float]
    weights: Mapping[str, Mapping[str, float]]
    bias: Mapping[str, float]


def _numbers(d: Mapping[str, object]) -> bool:
    return all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in d.values())


def from_json(raw: object) -> Model:
    """The model of build()'s JSON; ValueError naming what is wrong otherwise."""
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise ValueError(f"not a similar-reports model of schema {SCHEMA}")
    idf, weights, bias, reports = (raw.get(k) for k in ("idf", "weights", "bias", "reports"))
    if not (isinstance(idf, dict) and isinstance(weights, dict) and isinstance(bias, dict)):
        raise ValueError("idf, weights and bias (objects) are required")
    if not isinstance(reports, int) or isinstance(reports, bool):
        raise ValueError("reports (an integer) is required")
    if not _numbers(idf) or not _numbers(bias):
        raise ValueError("idf and bias: a number per term and per cause are required")
    if set(weights) != set(bias) or not weights:
        raise ValueError("weights and bias must name the same causes")
    for cause, w in weights.items():
        if not isinstance(w, dict) or not _numbers(w) or not all(t in idf for t in w):
            raise ValueError(f"weights {cause!r}: a number per term with an IDF is required")
    return Model(reports, idf, weights, bias)


@functools.lru_cache(maxsize=4)
def load(path: Optional[Path] = None) -> Optional[Model]:
    """The shipped model (recipes/similar_reports.json), or None where it is absent or unreadable:
    a guess is never worth hiding what the text says."""
    try:
        return from_json(json.loads((path or recipes_dir() / MODEL_FILE).read_text("utf-8")))
    except (OSError, ValueError):  # JSONDecodeError and UnicodeDecodeError too
        return None


def nearest(text: str, model: Model) -> List[Tuple[str, float]]:
    """Each cause with the probability the model gives it for the text, likeliest first (ties by
    name); empty when the text shares no term with the model."""
    v = _vector(terms(text), model.idf)
    if not v:
        return []
    p = _softmax(_scores(v, model.weights, model.bias))
    return sorted(p.items(), key=lambda kv: (-kv[1], kv[0]))


def telling_line(text: str, model: Model, cause: str) -> str:
    """The line of the text whose terms weigh most for the cause (the last of equals)."""
    c = model.weights.get(cause, {})
    best, weight = "", 0.0
    for line in text.splitlines():
        w = sum(c.get(t, 0.0) for t in terms(line))
        if line.strip() and w >= weight and w > 0:
            best, weight = line.strip(), w
    return best


def labelled_texts(tables: Iterable[Mapping[str, object]]) -> List[Tuple[str, str]]:
    """(error, cause) of [[case]] tables that have both as strings."""
    return [
        (str(c["error"]), str(c["cause"]))
        for c in tables
        if isinstance(c.get("error"), str) and isinstance(c.get("cause"), str)
    ]
