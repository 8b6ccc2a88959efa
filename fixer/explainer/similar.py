"""A guess by similarity, for a text that nothing else reads: no message of the catalogue, no
finding's own words ([[fallback]]). The labelled public reports explain has been measured on and
read (tests/unit/explain: cases.toml and the held-out sets marked read) are summed per cause into
one TF-IDF centroid each (recipes/similar_reports.json, written by
scripts/build_similar_reports.py); the text's own TF-IDF vector is compared with each, and the
nearest cause is the guess.

What it claims is what it computes: "public reports with words like these were most often caused
by X". It stays a guess (the text is not recognised), ranks below every reading of a message, and
carries the check that decides. Nothing acts on it: explain only ranks causes.

Terms are words of three or more letters, digits and underscores (lowercased), and each pair of
neighbouring words; a term's weight in a text is (1 + log of its count) x its IDF over the labelled
reports, the vector then scaled to length 1 (the usual sublinear TF-IDF with cosine similarity:
Manning, Raghavan and Schütze, "Introduction to Information Retrieval", 2008, sections 6.2-6.4)."""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import math
import re
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from fixer.system.paths import recipes_dir

#: the model's format; build() writes it, load() refuses any other
SCHEMA = 1
#: the file in the recipes directory
MODEL_FILE = "similar_reports.json"
#: the terms kept per cause (the centroid's heaviest): the measure of scripts/build_similar_reports.py
#: --cross-validate moves little above 1000 (docs/measurements/runs-2026-11-28e)
KEEP = 1000
#: below this similarity the text shares too little with any cause's reports to guess
MIN_SCORE = 0.05

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


def build(labelled: Sequence[Tuple[str, str]], keep: int = KEEP) -> Dict[str, object]:
    """The model (JSON-able) from (text, cause) pairs: the IDF of every term that occurs in two
    reports or more, and per cause the `keep` heaviest terms of the sum of its reports' vectors."""
    docs = [(terms(text), cause) for text, cause in labelled]
    df: "collections.Counter[str]" = collections.Counter()
    for counts, _ in docs:
        df.update(counts.keys())
    n = len(docs)
    idf = {t: math.log((n + 1) / (k + 1)) for t, k in df.items() if k >= 2}
    sums: Dict[str, Dict[str, float]] = collections.defaultdict(dict)
    reports: "collections.Counter[str]" = collections.Counter()
    for counts, cause in docs:
        reports[cause] += 1
        for t, x in _vector(counts, idf).items():
            sums[cause][t] = sums[cause].get(t, 0.0) + x
    centroids: Dict[str, Dict[str, float]] = {}
    for cause in sorted(sums):
        top = sorted(sums[cause].items(), key=lambda kv: (-kv[1], kv[0]))[:keep]
        centroids[cause] = {t: round(x, 5) for t, x in sorted(top)}
    used = {t for c in centroids.values() for t in c}
    return {
        "schema": SCHEMA,
        "reports": n,
        "per_cause": dict(sorted(reports.items())),
        "idf": {t: round(idf[t], 5) for t in sorted(used)},
        "centroids": centroids,
    }


@dataclasses.dataclass(frozen=True)
class Model:
    reports: int
    idf: Mapping[str, float]
    centroids: Mapping[str, Mapping[str, float]]
    norms: Mapping[str, float]


def from_json(raw: object) -> Model:
    """The model of build()'s JSON; ValueError naming what is wrong otherwise."""
    if not isinstance(raw, dict) or raw.get("schema") != SCHEMA:
        raise ValueError(f"not a similar-reports model of schema {SCHEMA}")
    idf, centroids, reports = raw.get("idf"), raw.get("centroids"), raw.get("reports")
    if not isinstance(idf, dict) or not isinstance(centroids, dict) or not isinstance(reports, int):
        raise ValueError("idf, centroids (objects) and reports (an integer) are required")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in idf.values()):
        raise ValueError("idf: a number per term is required")
    norms: Dict[str, float] = {}
    for cause, c in centroids.items():
        if not isinstance(c, dict) or not all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and t in idf
            for t, x in c.items()
        ):
            raise ValueError(f"centroid {cause!r}: term weights of terms with an IDF are required")
        norms[cause] = math.sqrt(sum(float(x) ** 2 for x in c.values()))
    return Model(reports, idf, centroids, norms)


@functools.lru_cache(maxsize=4)
def load(path: Optional[Path] = None) -> Optional[Model]:
    """The shipped model (recipes/similar_reports.json), or None where it is absent or unreadable:
    a guess is never worth hiding what the text says."""
    try:
        return from_json(json.loads((path or recipes_dir() / MODEL_FILE).read_text("utf-8")))
    except (OSError, ValueError):  # JSONDecodeError and UnicodeDecodeError too
        return None


def nearest(text: str, model: Model) -> List[Tuple[str, float]]:
    """Each cause with the cosine similarity of the text to its centroid, nearest first (ties by
    name); empty when the text shares no term with the model."""
    v = _vector(terms(text), model.idf)
    if not v:
        return []
    scores = []
    for cause, c in model.centroids.items():
        norm = model.norms[cause]
        if norm:
            scores.append((cause, sum(x * c.get(t, 0.0) for t, x in v.items()) / norm))
    return sorted(scores, key=lambda kv: (-kv[1], kv[0]))


def telling_line(text: str, model: Model, cause: str) -> str:
    """The line of the text whose terms weigh most in the cause's centroid (the last of equals)."""
    c = model.centroids.get(cause, {})
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
