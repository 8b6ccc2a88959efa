"""explain on the table of real public reports (tests/unit/explain/cases.toml): the confirmed cause
must be ranked first. Known misses are xfail(strict=True) with their reason.

Held-out set 3 (held_out_3.toml, 60 reports collected blind) was measured before any change
(43/60, 71.7 %) and then READ while the patterns of round three were written from their emitters
(ptxas, the driver's error codes, jaxlib's plugin check, pip's resolver, cuDNN's sub-library
status): it is no longer unseen. Its rate is printed and guarded, not a measure of unseen reports.

Held-out set 4 (held_out_4.toml, 59 reports collected blind) measured 39/59 (66.1 %) before round
four and 44/59 (74.6 %) when its misses were first read; it was then READ while patterns were
written (torch's cuDNN check wrapped by a terminal, PaddlePaddle's CPU-build message, JAX's
fallback warning, ...): it is no longer unseen either; its rate is printed and guarded.

Held-out set 5 (held_out_5.toml, 60 reports collected blind) was measured once, after rounds
three and four: 41/60 (68.3 %). It was then READ while round five's patterns were written (the
cuDNN copies a paste shows decide shadowed / conflict / incomplete; JAX's minimum; pip's and
uv's resolver reports, the "built without CUDA" answers, TensorFlow's device filter, the
driver-loading wrappers, TensorFlow's harmless start-up lines, all from their emitters): it
is no longer unseen; its rate is printed and guarded. Round five's measure is a new blind set.

Held-out set 6 (held_out_6.toml, 54 reports collected blind while round five was written; its
collector read no explainer code and ran no explain, and the engineers of round five never
opened it) measured 37/54 (68.5 %) on the tree before round five and 38/54 (70.4 %) after it.
Nobody has read its misses into a pattern; round six (the no-GPU answers beside a driver version
or a CPU-wheel install, from torch's and NVIDIA's sources) left it at 38/54.

Held-out set 7 (held_out_7.toml, 48 reports collected blind while round six was written, by a
collector that read no explainer code and ran no explain) was measured once, after round six:
35/48 (72.9 %; 39/48 with the second-ranked cause, 43/48 recognised). Then sets 6 and 7 were
READ: round seven's classes came from their misses, each rule from its emitter (pytest's failure
marker, the insufficient driver beside a framework release the driver cannot run, TensorFlow's
is_gpu_available, ldconfig's WSL warning, PaddleClas's CPU check, a message wrapped at a space):
42/54 and 37/48 after it; they are no longer unseen.

Held-out set 8 (held_out_8.toml, 48 reports collected blind while round seven was written) was
measured once, after rounds six and seven: 35/48 (72.9 %; 38/48 with the second-ranked cause,
43/48 recognised), the same 35/48 as the tree before round six. Then its misses were READ
for round eight (torch's "Unable to find a valid cuDNN algorithm", whose emitter tries every
algorithm and skips those that run out of memory; a copy named after "instead of" is the one
looked for, not one present; torch's own cuDNN in torch/lib beside a failing other major; a
Mac has no NVIDIA GPU): 40/48 after it; it is no longer unseen.

Held-out set 9 (held_out_9.toml, 48 reports collected blind while round eight was written) was
measured once, after round eight: 38/48 (79.2 %; 39/48 with the second-ranked cause, 43/48
recognised), the same 38/48 as the tree this session started from. Then its misses were READ
for round nine (ONNX Runtime's provider message quotes the provider's name; the BFC allocator's
memory dump; two CuPy packages in one environment): 42/48 after it; it is no longer unseen.

Held-out set 10 (held_out_10.toml, 57 reports collected blind while rounds eight and nine were
written) was measured once, after round nine: 45/57 (78.9 %; 47/57 with the second-ranked cause,
51/57 recognised), the same 45/57 as the tree this session started from. Then its misses were
READ for round ten (TensorFlow's "No algorithm worked!", Poetry's "version solving failed"):
47/57 after it; it is no longer unseen.

Held-out sets 11 (held_out_11.toml, 48 reports) and 12 (held_out_12.toml, 54 reports) were
collected blind at the same time by two helpers (no report in both), while round eleven was
written from emitters named before either set was measured or read. Each was measured on the
tree before round eleven and after it, without reading it: 31/48 (64.6 %) and 35/54 (64.8 %)
both times. Then their
misses were READ for round twelve (Triton's libcuda lookup, Caffe2's and cudnn.torch's cuDNN
checks, torch's cnn_infer warning, ONNX Runtime's build without the CUDA provider, TF-TRT's
optional TensorRT, TensorFlow's fused batch norm; in its review, TensorFlow's own "no GPU"
answers for 2.11+ on native Windows): 33/48 and 43/54 after it; they are no longer unseen.

Held-out sets 13 (held_out_13.toml, 45 reports) and 14 (held_out_14.toml, 45 reports) were
collected blind at the same time by two helpers (no report in both), while round thirteen swept
emitters' sources without reading either. Each was measured on the tree before round thirteen
and after it, without reading it: 26/45 (57.8 %) and 33/45 (73.3 %) both times. Then their misses
were READ for round fourteen (ONNX Runtime's provider list without CUDA and its two wheels
installed together, ORT 1.x's failed native import, Paddle's list of candidate DLLs; a GPU the
paste names, or none, beside "Found no NVIDIA driver"; TensorFlow's cudart stub line and its
device log's compute capability; Caffe's CUDA_CHECK): 31/45 and 38/45 after it; they are no
longer unseen.

Held-out sets 15 (held_out_15.toml, 44 reports) and 16 (held_out_16.toml, 48 reports) were
collected blind at the same time by two helpers (no report in both) after round fourteen, and
measured without reading them on its tree (f7b4b70) and on the trees before rounds thirteen and
fourteen: 35/44 (79.5 %) and 38/48 (79.2 %) on all three. Then their misses were READ for round
fifteen (Windows error numbers in any language, the Windows loader's entry-point wording, ld.so
lines wrapped inside a token or with the colon lost; LLVM's ignored target feature, Paddle's
CPU-only check, cudnn.torch's version and dropout checks, AliceVision's CUDA device check):
39/44 and 41/48 after it; they are no longer unseen.

Held-out sets 17 (held_out_17.toml, 45 reports) and 18 (held_out_18.toml, 45 reports) were
collected blind at the same time by two other helpers while round fifteen was written, and
measured without reading them before round fifteen (f7b4b70) and after it (1a0049d): 37/45
(82.2 %) and 37/45 (82.2 %) both times (ff0c02e, before rounds thirteen and fourteen: 37/45 and
35/45). Then their misses were READ for round sixteen (typographic quotes read as ASCII ones;
PyTorch's dispatcher finding no CUDA kernel of an extension's operator; the cuDSS, cuTENSOR and
cuDLA libraries): 39/45 and 38/45 after it; they are no longer unseen.

Held-out sets 19 (held_out_19.toml, 45 reports) and 20 (held_out_20.toml, 46 reports) were
collected blind at the same time by two more helpers after round fifteen, and measured without
reading them before round fifteen (f7b4b70), after it (2fcfe6e) and after round sixteen
(ea2851c): 33/45 (73.3 %) and 34/46 (73.9 %) all three times; again after round seventeen (five
emitter families read from their sources without reading any set, and the no-NVIDIA-GPU evidence;
5191b08): 33/45 and 34/46 (top-2 34 and 36, recognised 38 and 39). Then their misses were READ
for round eighteen (torch 2.11's capability warning, NVML that did not load, cudarc's loader,
PaddlePaddle's first cuDNN header check, uv's "cannot be used", a glibc symbol version named
alone, and the runtime's strings cut or framed by a wrapper): 40/45 and 39/46 after it; they are
no longer unseen.

Held-out sets 21 (held_out_21.toml, 37 reports) and 22 (held_out_22.toml, 38 reports) were
collected blind by two more helpers while round eighteen was written (a shared claims file kept
them apart; every URL of sets 2-20 and cases.toml excluded), and measured without reading them
before round seventeen (bd1d659), after it (bec7891) and after round eighteen (7b61eaa): 25/37
(67.6 %) and 24/38 (63.2 %) all three times. Their misses were then READ for round nineteen
(a CPU-only build beside no NVIDIA GPU, torch's OutOfMemoryError by class, xFormers' Triton
warning, numba's missing driver function, Julia's dlopen, DeepFaceLab's and R torch's checks,
cuDNN not found in plain words): 28/37 and 35/38 after it; they are no longer unseen.

Held-out sets 23 (held_out_23.toml, 45 reports) and 24 (held_out_24.toml, 46 reports) were
collected blind by two more helpers while round nineteen was written (a shared claims file kept
them apart; every URL of sets 2-22 and cases.toml excluded; the brief gave DESIGN's definitions of
cuda-lib-missing, "cannot be found", and cuda-lib-mismatch, "of the wrong version ... found and
used"), and measured without reading them before round nineteen (5e0ea0a) and after it: 34/45
(75.6 %) both times, and 25/46 (54.3 %) then 26/46 (56.5 %). Their misses were then READ for
round twenty (the user's words for a machine without an NVIDIA GPU, cut quotes, XGBoost's,
PaddlePaddle's, TensorRT's, nvidia-docker's and CTranslate2's messages, llama.cpp's BLAS = 0, CUDA
and cuDNN headers by family): 39/45 and 35/46; they are no longer unseen.

Held-out sets 25 (held_out_25.toml, 45 reports) and 26 (held_out_26.toml, 45 reports) were
collected blind by two more helpers while round twenty was written (every URL of sets 2-24,
cases.toml and the unlabelled sample of round nineteen (b) excluded; the same brief as sets 23
and 24), and measured without reading them before round nineteen (5e0ea0a: 36/45 and 21/45),
after it (7c05ddc: 37/45 and 23/45) and after round twenty (37/45 and 26/45). Then their misses
were READ for round twenty-one (NVML's mismatch in any wrapper, the toolkit's stub libcuda, pip in
any case and on an old glibc, ollama's and ggml's and PaddlePaddle's driver answers, TensorRT's
cuDNN pair, CMake's CUDA finds, a Mac or an AMD GPU in the user's words, a parenthetical or a quoted
error as its own clause): 45/45 and 36/45; they are no longer unseen.

Held-out sets 27-30 (held_out_27.toml .. held_out_30.toml: 50, 45, 45 and 48 reports) were collected
blind by four helpers at once (every URL of sets 2-26 and cases.toml excluded; leans: the PyTorch
ecosystem, TensorFlow / JAX, other runtimes, end-user applications) while round twenty-one was
written, and measured without reading them before round twenty-one (7e9ff57), after it (d82ae36)
and after the fallbacks ([[fallback]], 9751387): 39/50, 29/45, 25/45, 35/48 the first two times,
41/50, 32/45, 26/45, 36/48 the third. Then their misses were READ for round twenty-two: 47/50,
40/45, 32/45, 40/48; they are no longer unseen.

Held-out sets 31-34 (held_out_31.toml .. held_out_34.toml: 45, 40, 42 and 36 reports) were
collected blind by four more helpers while round twenty-two was written (every URL of sets 2-30
excluded; leans: 2016-2020, 2024-2026 stacks, Windows / WSL, containers and clusters), and measured
without reading them on each tree: 31/45, 29/40, 25/42, 24/36 before round twenty-one; the same
after it; 34/45, 30/40, 26/42, 25/36 after the fallbacks; 34/45, 30/40, 27/42, 25/36 after round
twenty-two's rules. Their (cause, first-ranked) pairs were then printed, and set 32's five
"log-noise -> unrecognised" prompted the log-noise fallback (the finding's own definition:
warnings only, no error line): 35/45, 33/40, 27/42, 25/36. Their texts have not been read.

Held-out sets 35-38 (held_out_35.toml .. held_out_38.toml: 38, 34, 45 and 45 reports) were collected
blind by four helpers while round twenty-three was written (every URL of sets 2-34 excluded;
leans: none, notebook platforms and conda, inference and serving tools, research code), and sets
39-42 (43, 34, 45 and 40 reports; every URL of sets 2-38 excluded; leans: none, the cuDNN causes,
small and non-English projects, the driver and GPU causes) by four more while the guess by
similarity was written. None of their texts has been read. Measured (docs/measurements/
runs-2026-11-28e): at 62d6d72 (the session's start) 28/38, 27/34, 35/45, 34/45 and 30/43, 18/34,
32/45, 20/40; after round twenty-three (f98f1c7) the same; with the guess by similarity as a
TF-IDF centroid (3d4d723) 33/38, 30/34, 36/45, 36/45 and 32/43, 20/34, 32/45, 21/40; as the
softmax regression chosen by cross-validation on the read sets (d973b7c) 31/38, 28/34, 36/45,
35/45 and 31/43, 20/34, 32/45, 26/40. Sets 31-34 on the same trees: 35, 33, 27, 25 (62d6d72 and
f98f1c7), 36, 33, 33, 26 (3d4d723), 36, 33, 32, 26 (d973b7c).

Sets 31-42 then became the guess by similarity's data, still unread (scripts/build_similar_reports.py
TRAINED): measured before with each set left out of the model in turn (the whole explainer, each
set's reports out of sample for the rules and for the guess: 36, 34, 31, 26, 32, 29, 37, 35, 31,
21, 34, 25; 371/487 against 366 with the model of the read sets), and guarded since at what the
model trained on them reads (in sample for the guess: a regression guard, not a measure). Once
they were training data, their misses whose right cause was ranked below the first (24 reports,
sets 33-42) were printed once to look for a class of ranking error; none was found and no rule
was written from them.

Held-out sets 43-45 (held_out_43.toml .. held_out_45.toml: 30, 45 and 45 reports) were collected
blind by three helpers while the guess was retrained (every URL of the sets before and cases.toml
excluded; leans: none, starting from framework, application and environment projects), and
measured without reading them at bda357e (the session's start: 24/30, 33/45, 31/45) and with the
model trained on sets 31-42 as well (25/30, 33/45, 31/45). Sets 46-49 (held_out_46.toml ..
held_out_49.toml: 37, 45, 32 and 38 reports) were collected blind by four more helpers after that
(every URL of sets 2-45 excluded; leans: none, starting from the frameworks, end-user
applications, environments, research code) and measured without reading them, once at bda357e
(33/37, 33/45, 22/32, 27/38) and once on the tree that trains on sets 31-42 (33/37, 33/45, 20/32,
27/38). The texts of sets 43-49 have not been read, and the guess by similarity never trains on
them (tests/unit/explain/test_similar.py).

In round twenty-four (docs/measurements/runs-2026-11-28g) the misses of sets 31-42 left out of the
guess's training were read (they had become its training data) and rules were written from their
emitters. Sets 50-55 (held_out_50.toml .. held_out_55.toml: 35, 30, 36, 35, 45 and 35 reports)
were collected blind by six helpers (every URL of sets 2-49 excluded; leans: none, starting from
the frameworks, end-user applications, older and Windows reports, containers and other
languages, vision and scientific libraries, other bindings) and measured without reading them at
70d38c2 (the session's start: 22, 26, 27, 26, 27, 24), after the round's rules (the same), and
after the guess's floor came down to 0.1 (22, 27, 27, 28, 27, 24). Sets 43-49 were measured at
the same points (202, 202, 207 of 272). The texts of sets 43-55 have not been read (one label's
`how` of set 54 was printed once by mistake), and the guess never trains on them.

In the sixteenth session (docs/measurements/runs-2026-11-28h) sets 43-49 became the validation
sets: the guess's settings were chosen on them (none moved them), and the count of their misses
per first-ranked rule was looked at (rule titles and labels, no text). Two misses under the FFmpeg
NVENC rule led back to FFmpeg's nvenc.c, which prints the driver requirement after a failed
load of the driver's encode library as well: that reading was corrected from the source, and
sets 45 and 47 gain one each (209 of 272). Sets 50-55 stay the test sets: 155 of 216, unmoved.
Sets 56-58 (held_out_56.toml .. held_out_58.toml: 45 reports each) were collected blind by three
helpers (every URL of the earlier sets excluded: 2616; leans: the newest reports, 2025-2026; the
serving and generation stacks; TensorFlow, JAX and research code, notebooks and clusters) and
measured without reading them on the session's first tree (61bdf6e) and its last: 40, 38 and 38
both times (116 of 135). Their texts have not been read, and the guess never trains on them.
In the seventeenth session sets 43-55 became read sets (their misses were read for round
twenty-six; the guess trains on 43-52); sets 56-58 became validation sets (counts and labels per
rule looked at, no text).
Sets 59-61 (held_out_59.toml .. held_out_61.toml: 30, 34 and 38 reports) were collected the same
way on the seventeenth session (every earlier URL excluded: 2780; leans: Windows, WSL, conda and
2017-2022; libraries beyond PyTorch; Docker, clusters and notebooks) and measured without reading
them at 9e9aa32: 26, 32 and 26 (84 of 102), and again at the end of round twenty-six (129b030):
the same. Not read, never trained on. Sets 62-64 (held_out_62.toml .. held_out_64.toml: 45, 45
and 19 reports; leans: reports not in English; LLM inference and training stacks; scientific
computing and notebooks; every earlier URL excluded: 2888) were collected during round
twenty-six and measured once, unread, at its end (129b030): 34, 39 and 17 (9e9aa32: 34, 38, 17);
set 64 is too small to guard.
In the eighteenth session (docs/measurements/runs-2026-11-29) sets 59-64 became read sets: their
misses were read for round twenty-seven (tests/unit/explain/test_emitters_round27.py; 174 -> 182 of
211), and the guess trains on them and on 53-55 (scripts/build_similar_reports.py). Sets 56-58
stay the validation sets (121 of 135 before and after). Sets 65-68 (held_out_65.toml ..
held_out_68.toml: 34, 25, 33 and 27 reports; leans: libraries built on the frameworks; research
code 2017-2022; the newest stacks; end-user applications; every earlier URL excluded: 2997) were
collected blind during the session, measured unread at 0a1d19b (25, 17, 28, 21: 91 of 119) and
at b868c85 (24, 20, 28, 21: 93), then read for round twenty-seven (b). Sets 69-72
(held_out_69.toml .. held_out_72.toml: 14, 22, 29 and 40 reports; leans: 2023-2026; Windows and
conda; clusters and servers; building CUDA extensions; every earlier URL excluded: 3116) were
collected blind after them, measured unread at 0a1d19b (80 of 105) and 313de8a (84), then read for
round twenty-seven (c); the guess does not train on them. Sets 73-76 (held_out_73.toml ..
held_out_76.toml: 29, 18, 25 and 31 reports; leans: PyTorch and its ecosystem; TensorFlow, Keras
and JAX; inference engines; GPU computing beyond deep learning; every earlier URL excluded: 3221)
were collected blind after those and measured, unread, on the session's first tree (0a1d19b: 24,
14, 19, 20: 77 of 103) and its last (e2369b7: 25, 13, 19, 19: 76).
In the nineteenth session (docs/measurements/runs-2026-11-29b) sets 73-76 became read sets: their
misses were read for round twenty-eight (tests/unit/explain/test_emitters_round28.py; 76 -> 89 of
103). The guess does not train on them. Sets 77-80 (held_out_77.toml .. held_out_80.toml) were
collected blind in the same session and measured unread (111 of 152 on the session's first tree and
after round twenty-eight (a)); 78-80 were then read for round twenty-eight (b), and 77 was not. The
guess trains on none of them. Sets 81-84 (held_out_81.toml .. held_out_84.toml), collected blind
after that, were the session's final test: 109 of 122 on its first tree and on its last. In the
twentieth session 77 and 81-84 became read sets: their misses were read for round twenty-nine
(tests/unit/explain/test_emitters_round29.py; 77: 33 -> 34, 81-84: 109 -> 116 of 122). The guess
trains on none of them. Sets 85-88 (held_out_85.toml .. held_out_88.toml) were collected blind in
the same session (every earlier URL excluded: 3452) and measured unread on its first tree and after
round twenty-nine (a) and its emitter sweep (b): 124 of 159 both times; then read for round
twenty-nine (c) (140 of 159 after it). Sets 89-92, collected blind after that, were measured
unread on the session's first tree and on the tree of round (c) (134 of 160 both times), then read
for round twenty-nine (d) (140 of 160). Sets 93-94 were the session's final test
(docs/measurements/runs-2026-11-29c); the twenty-first session read them for round thirty (a)
(47 -> 52 of 57). Sets 95-98 were collected blind in that session, measured unread (113 of 140),
then read for round thirty (c). Sets 99-102 were that session's final test, unread."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Dict, List

import pytest

from fixer.system.compat import tomllib
from fixer.explainer import explain
from fixer.model import FINDING_IDS

ALL = tomllib.loads((Path(__file__).parent / "cases.toml").read_text(encoding="utf-8"))["case"]


#: held_out_N.toml, "held-out-N" (see the module docstring): set 3 measured blind once (43/60),
#: then read while round three's patterns were written; set 4 the same (39/59, round four); set 5
#: measured after rounds three and four (41/60), then read in round five; set 6 measured before
#: (37/54) and after (38/54) round five, set 7 once after round six (35/48), both then read in
#: round seven; set 8 measured once after round seven (35/48), then read in round eight; set 9
#: measured once after round eight (38/48), then read in round nine; set 10 measured once after
#: round nine (45/57), then read in round ten; sets 11 and 12 measured before and after round
#: eleven (31/48 and 35/54 both times), then read in round twelve
@functools.lru_cache(maxsize=None)
def held_out(name: str) -> List[Dict[str, Any]]:
    """The cases of held_out_N.toml ("held-out-N"), read when a test asks (not at collection:
    each pytest-xdist worker collects every module)."""
    path = Path(__file__).parent / f"held_out_{name.rsplit('-', 1)[1]}.toml"
    return tomllib.loads(path.read_text(encoding="utf-8"))["case"]


#: the table the catalogue was developed against
CASES = [c for c in ALL if "set" not in c]
#: held-out sets: collected after the patterns were written, measured apart, never fitted
HELD_OUT = [c for c in ALL if "set" in c]
REPOS = (
    "pytorch/",
    "tensorflow/tensorflow",
    "jax-ml/jax",
    "googlecolab/colabtools",
    "SYSTRAN/faster-whisper",
    "OpenNMT/CTranslate2",
    "microsoft/onnxruntime",
)


def _top(case):
    found = explain(case["error"])
    return found[0].id if found else None


def test_the_table_is_real_and_large_enough():
    assert len(CASES) >= 40 and len(HELD_OUT) >= 30
    urls = [c["url"] for c in ALL]
    assert len(set(urls)) == len(urls), "duplicate report"
    for c in ALL:
        assert c["cause"] in FINDING_IDS, c
        assert c["confirmed_by"] in ("maintainer", "user-fix", "report", "version-check"), c
        assert c["how"].strip() and c["error"].strip(), c
        assert any(f"github.com/{r}" in c["url"] for r in REPOS), c["url"]


def test_ranked_first_for_at_least_90_percent():
    hits = sum(_top(c) == c["cause"] for c in CASES)
    rate = hits / len(CASES)
    print(
        f"explain ranks the confirmed cause first for {hits}/{len(CASES)} real cases ({rate:.1%})"
    )
    assert rate >= 0.9


#: the rate set 3 reached once its classes were read from their emitters (43/60 before)
SET3_GUARD = 55
#: the rate set 4 reached once its classes were read from their emitters (39/59 blind)
SET4_GUARD = 55
#: set 5 measured blind after rounds three and four (41/60), then read while round five's
#: patterns were written (the cuDNN copies a paste shows: fixer.explainer.copies; the
#: emitters of the other classes: recipes/errors.toml, round five); 55 since round twenty-two:
#: jaxlib's log paths (external/org_tensorflow/...) no longer count as TensorFlow, and one report
#: right only through them (TensorFlow in the same environment, not in the paste) is lost
#: 54 since round twenty-eight: XLA's "driver's CUDA version is older than the PTX compiler
#: version" is its own warning (it compiles serially and goes on), read as log-noise with the older
#: driver second; the labelled reports of that warning alone split 2 log-noise (google/brax#488 in
#: set 10, one of set 78) to 1 driver-too-old (jax-ml/jax#19821 here, where the array printed too)
SET5_GUARD = 54
#: set 6 measured blind after round five (38/54), then read in round seven (44 since round
#: fourteen; 45 since round seventeen: another vendor's graphics named in lower case; 46 since
#: round nineteen: "don't have a GPU" beside "Torch not compiled with CUDA enabled")
#: 47 since round twenty-two (its evidence and fallbacks)
SET6_GUARD = 47
#: set 7 measured blind after round six (35/48), then read in round seven
SET7_GUARD = 37
#: set 8 measured blind after round seven (35/48), then read in round eight (41 since round
#: eleven, 42 since round fourteen, 43 since round fifteen)
SET8_GUARD = 43
#: set 9 measured blind after round eight (38/48), then read in round nine (42); 41 since round
#: fourteen: torch's "Found no NVIDIA driver" with no GPU named either way ranks gpu-missing first
#: (the message's first request; 9 gpu-missing to 1 driver-missing over cases.toml and sets
#: 3-12), which reads sets 8, 11, 12 and 14 right once more each and set 9's one driver-missing
#: report of that kind (CompVis/stable-diffusion#161, WSL 1) second
SET9_GUARD = 41
#: set 10 measured blind after round nine (45/57), then read in round ten (49 since round eleven)
#: 50 since round twenty-two (its evidence and fallbacks)
SET10_GUARD = 50
#: set 11 measured blind before and after round eleven (31/48), then read in round twelve (33;
#: 37 after round thirteen, 38 after round fourteen)
SET11_GUARD = 38
#: set 12 measured blind before and after round eleven (35/54), then read in round twelve (43;
#: 44 after round fourteen)
#: 45 since round twenty-two (its evidence and fallbacks)
SET12_GUARD = 45
#: set 13 measured blind before and after round thirteen (26/45), then read in round fourteen
#: (32 since round eighteen: a glibc symbol version named without the loader's sentence)
SET13_GUARD = 32
#: set 14 measured blind before and after round thirteen (33/45), then read in round fourteen
#: 39 since round twenty-two (its evidence and fallbacks)
SET14_GUARD = 39
#: set 15 measured blind after round fourteen (35/44), then read in round fifteen
SET15_GUARD = 39
#: set 16 measured blind after round fourteen (38/48), then read in round fifteen
SET16_GUARD = 41
#: set 17 measured blind before and after round fifteen (37/45), then read in round sixteen
#: 40 since round twenty-two (its evidence and fallbacks)
SET17_GUARD = 40
#: set 18 measured blind before and after round fifteen (37/45), then read in round sixteen
#: 39 since round twenty-two (its evidence and fallbacks)
SET18_GUARD = 39
#: sets 19 and 20 measured blind before and after rounds fifteen, sixteen and seventeen (33/45,
#: 34/46), then read in round eighteen (40/45, 39/46)
#: 41 since round twenty-two (its evidence and fallbacks)
SET19_GUARD = 41
#: 40 since round twenty-two (its evidence and fallbacks)
SET20_GUARD = 40
#: sets 21 and 22 measured blind before and after rounds seventeen and eighteen (25/37, 24/38),
#: then read in round nineteen (28/37, 35/38)
#: 30 since round twenty-five (torch's CUDA not available beside "an Nvidia v100 node")
SET21_GUARD = 30
#: 36 since round twenty-two (its evidence and fallbacks)
SET22_GUARD = 36
#: sets 23 and 24 measured blind before and after round nineteen (34/45 both times; 25/46, then
#: 26/46), then read in round twenty (39/45, 35/46)
#: 40 since round twenty-two (its evidence and fallbacks); 41 since round twenty-six (a CUDA
#: release named that knows nvcc's unknown architecture)
SET23_GUARD = 41
#: 39 since round twenty-two (its evidence and fallbacks); 38 since round twenty-nine (d): nvcc's
#: "Unsupported gpu architecture 'compute_75'" quoted without its "nvcc fatal :" prefix is now read
#: as nvcc's own message, and beside "CUDA9.2" (older than sm_75) as an older toolkit
#: (cuda-lib-mismatch), the reading most labelled reports of a toolkit older than the GPU give (18
#: to 11 over the read sets); this report's thread says gpu-arch-unsupported
SET24_GUARD = 38
#: sets 25 and 26 measured blind before round nineteen (36/45, 21/45), after it (37/45, 23/45) and
#: after round twenty (37/45, 26/45), then read in round twenty-one (45/45, 36/45); set 26 at 35
#: since round twenty-two (CUDA error 803 read as driver-missing, as cuda.h defines it: one report
#: labelled driver-too-old is lost, two labelled driver-missing gained elsewhere)
SET25_GUARD = 45
SET26_GUARD = 35
#: sets 27-30 measured blind before round twenty-one (39/50, 29/45, 25/45, 35/48), after it (the
#: same) and after the fallbacks (41/50, 32/45, 26/45, 36/48), then read in round twenty-two
SET27_GUARD = 47
SET28_GUARD = 40
SET29_GUARD = 32
SET30_GUARD = 40
#: sets 31-34 measured blind on each tree of rounds twenty-one and twenty-two (the module
#: docstring); not read
#: 36, 33, 32, 26 since the guess by similarity (d973b7c; the module docstring)
#: sets 35-42 measured blind on each tree of round twenty-three and the guess by similarity (the
#: module docstring); not read
#: sets 31-42 since they train the guess by similarity (in sample; the module docstring):
#: 40, 35, 37, 27, 34, 32, 39, 41, 33, 30, 38, 32; read in round twenty-four, since then:
SET31_GUARD = 40
SET32_GUARD = 35
SET33_GUARD = 39
#: 28 since round twenty-six (a Jetson names its NVIDIA GPU)
SET34_GUARD = 28
SET35_GUARD = 35
SET36_GUARD = 32
SET37_GUARD = 39
SET38_GUARD = 41
#: 34 since torch's printed is_built() False reads a build without CUDA (the sixteenth session)
SET39_GUARD = 34
#: 32 since a build said in Chinese to be the CPU one no longer reads as a machine without a GPU
#: round twenty-seven: the guess trained on 53-55 and 59-64 too loses one each of 40, 41 and 49
#: (the guess's in-sample readings of the sets it trains on: read sets 0-55 gain seven in all)
SET40_GUARD = 31
SET41_GUARD = 41
SET42_GUARD = 34
#: sets 43-45 measured blind before and after the guess was trained on sets 31-42 (the module
#: docstring); not read, never trained on
#: sets 43-49 were read in round twenty-six (the seventeenth session): 43 and 44 then gain one and
#: three, 45 two, 47 four, 48 three, 49 three
SET43_GUARD = 28
SET44_GUARD = 39
#: 33 since FFmpeg's requirement line after a failed load of the driver's encode library no
#: longer reads driver-too-old (the sixteenth session; the module docstring)
SET45_GUARD = 38
#: sets 46-49 measured blind at bda357e and after the guess was trained on sets 31-42 (the module
#: docstring); not read, never trained on
SET46_GUARD = 36
#: 34 since the same (the sixteenth session); 38 since round twenty-six
SET47_GUARD = 40
SET48_GUARD = 26
SET49_GUARD = 34
#: sets 43-49 since the guess's floor came down (round twenty-four): 25, 34, 32, 34, 33, 22, 27;
#: sets 50-55 measured blind at 70d38c2 and on each tree of round twenty-four (the module
#: docstring); not read, never trained on
#: sets 50-52 were read in round twenty-six (f) (the seventeenth session): 50 gains four, 52 six
SET50_GUARD = 27
SET51_GUARD = 28
SET52_GUARD = 34
#: 32, 37 and 29 since round twenty-seven (the guess trains on 53-55)
SET53_GUARD = 32
SET54_GUARD = 37
SET55_GUARD = 29
#: sets 56-58 measured blind at 61bdf6e and at the sixteenth session's last tree (the same: 40,
#: 38, 38; the module docstring); not read, never trained on
#: round twenty-seven: the guess retrained on 53-55 and 59-64 moves one report of 56 and one of
#: 58 (56 loses a cuda-lib-mismatch, 58 gains a pip-conflict: 121 of 135 either way)
SET56_GUARD = 41
SET57_GUARD = 38
#: 40 since round twenty-six (JAX's TPU / ROCm start-up lines read as harmless), 41 since DGL's
#: CPU package is read (counts only)
SET58_GUARD = 42
#: round twenty-six (g): the guess trains on the read sets 43-52 too (scripts/
#: build_similar_reports.py); sets 43-52 then gain what it learnt of them, validation 54, 55 and 56
#: one, three and two (counts only); 53, 57 and 58 unmoved
#: round twenty-six (h): sets 53-55 read for rules (53 gains two, 54 one, 55 two); the guess is
#: not trained on them (trained, validation 56-58 stayed at 121 of 135, and two guards fell)
#: sets 59-61 measured blind at 9e9aa32 (the module docstring); sets 62-64 measured blind at
#: 129b030; all six read in round twenty-seven (the eighteenth session: 174 -> 182 of 211 by its
#: rules) and the guess trains on them (190): guarded at what it reads of them
SET59_GUARD = 27
SET60_GUARD = 33
SET61_GUARD = 31
SET62_GUARD = 40
SET63_GUARD = 41
#: sets 65-68 (34, 25, 33 and 27 reports) collected blind in the eighteenth session and measured
#: unread at 0a1d19b (25, 17, 28, 21) and b868c85 (24, 20, 28, 21); then read in round
#: twenty-seven (b): 27, 20, 29, 22; the guess then trains on them: 30, 23, 31, 25 (validation
#: 56-58 unmoved at 121 of 135). Sets 66 and 68 are below the 30 a guarded set needs.
SET65_GUARD = 30
SET67_GUARD = 31
#: sets 69-72 (14, 22, 29 and 40 reports) collected blind in the eighteenth session, measured
#: unread at 0a1d19b (13, 18, 22, 27) and 313de8a (13, 18, 23, 30), then read in round
#: twenty-seven (c): 13, 20, 24, 32. The guess is not trained on them (trained, validation 56-58
#: stayed at 121 and the read sets lost three). Only set 72 has the 30 a guarded set needs.
SET72_GUARD = 32
#: sets 73-76 (29, 18, 25 and 31 reports): the session's final blind sets, measured once at its
#: first tree (0a1d19b: 24, 14, 19, 20) and at its last (e2369b7: 25, 13, 19, 19); not read,
#: never trained on. Only set 76 has the 30 a guarded set needs. Read in the nineteenth session
#: for round twenty-eight (28, 14, 22 and 25 after it; test_emitters_round28.py): set 76 guarded at
#: what it reads now.
SET76_GUARD = 25
#: sets 77-80 (36, 36, 40 and 40 reports; leans: PyTorch and its ecosystem; TensorFlow, Keras and
#: JAX; inference engines; GPU computing beyond deep learning; every earlier URL excluded: 3177)
#: collected blind in the nineteenth session and measured unread at its first tree (88b4224, the
#: same at 15ab490 after round twenty-eight (a)): 33, 21, 32, 25 (111 of 152). Set 77 is not read
#: and never trained on: guarded at what it reads (33). Sets 78-80 were then read for round
#: twenty-eight (b) (23, 36, 29 after it) and are guarded at that. Set 77 was read in the twentieth
#: session for round twenty-nine (test_emitters_round29.py): 34, guarded at that.
SET77_GUARD = 34
SET78_GUARD = 23
SET79_GUARD = 36
SET80_GUARD = 29
#: sets 81-84 (26, 30, 40 and 26 reports; leans: 2024-2026 across the stacks; Windows, WSL and conda;
#: containers, clusters and hosted notebooks; end-user applications and research code; every earlier
#: URL excluded: 3323) collected blind after 77-80 read, the session's final test: measured unread on
#: its first tree (88b4224) and its last, 21, 28, 34, 26 both times (109 of 122). Not read, never
#: trained on; sets 82 and 83 have the 30 a guarded set needs. All four were read in the twentieth
#: session for round twenty-nine (test_emitters_round29.py): 23, 30, 37, 26, guarded at that.
SET82_GUARD = 30
SET83_GUARD = 37
#: sets 85-88 (43, 40, 34 and 42 reports; leans: 2017-2020; 2021-2023; 2024-2026; tools beyond
#: the big frameworks; every earlier URL excluded: 3452) collected blind in the twentieth session
#: and measured unread on its first tree (29bfac5) and after rounds twenty-nine (a) and (b)
#: (ef76d1e): 35, 35, 26, 28 both times (124 of 159). Read for round twenty-nine (c)
#: (test_emitters_round29c.py): 40, 37, 29, 34, guarded at that. The guess trains on none of them.
SET85_GUARD = 40
SET86_GUARD = 37
SET87_GUARD = 29
SET88_GUARD = 34
#: sets 89-92 (40, 39, 41 and 40 reports; leans: PyTorch and its ecosystem; TensorFlow, Keras and
#: JAX; inference engines and applications; GPU computing beyond deep learning and its platforms;
#: every earlier URL excluded: 3611) collected blind after 85-88 were read: the twentieth session's
#: final test, measured unread on its first tree (29bfac5) and its last: 35, 29, 38, 32 both times
#: (134 of 160). Then read for round twenty-nine (d) (test_emitters_round29d.py): 37, 30, 38,
#: 35, guarded at that. The guess trains on none of them.
SET89_GUARD = 37
SET90_GUARD = 30
SET91_GUARD = 38
SET92_GUARD = 35
#: sets 93-94 (25 and 32 reports; leans: the deep-learning frameworks; everything beyond them;
#: every earlier URL excluded: 3771) collected blind after 89-92 were read: the twentieth session's
#: final test, measured unread on its first tree (29bfac5) and its last: 21 and 26 both times (47
#: of 57). Then read for round thirty (a) in the twenty-first session (test_emitters_round30.py):
#: 24 and 28 (52 of 57), set 94 guarded at that; set 93 is below the 30 a guarded set needs.
#: The guess trains on neither.
SET94_GUARD = 28
#: sets 95-98 (30, 41, 27 and 42 reports; leans: 2017-2020; 2021-2023; 2024-2026; beyond the big
#: frameworks; every earlier URL excluded: 3828) collected blind in the twenty-first session,
#: measured unread on its first tree (f80f93d) and after rounds thirty (a) and (b) (e07d37a): 24,
#: 37, 23, 29 both times (113 of 140; docs/measurements/runs-2026-11-29d). Then read for round
#: thirty (c) (test_emitters_round30.py): 27, 41, 23, 35, guarded at that but set 97, below the
#: 30 a guarded set needs. The guess trains on none of them.
SET95_GUARD = 27
SET96_GUARD = 41
SET98_GUARD = 35
#: sets 99-102 (26, 26, 19 and 11 reports; leans: the deep-learning frameworks and their
#: libraries; applications users run; GPU computing beyond deep learning and its platforms; the
#: cuDNN and driver causes; every earlier URL excluded: 3968) collected blind after 95-98 were
#: read: the twenty-first session's final test, measured unread on its first tree (f80f93d) and
#: after round thirty (c): 21, 19, 11, 9 both times (60 of 82). Not read, never trained on; each
#: is below the 30 a guarded set needs.
#: set 64 (19 reports, 17 right at 129b030) is below the 30 a guarded set needs: kept as data, and
#: its 19 reports count in the measures of docs/measurements/runs-2026-11-28i, not guarded here

#: Each held-out set: its reports and the number guarded. Set 2's guard is 90 %; sets 3 and 4
#: were read while patterns were written (regression guards, not measures); set 5 too (round 5);
#: sets 6 and 7 too (round 7); sets 8, 9 and 10 too (rounds 8, 9 and 10); sets 11 and 12 too
#: (round 12); sets 13 and 14 too (round 14); sets 15 and 16 too (round 15); sets 17 and 18 too
#: (round 16); sets 19 and 20 too (round 18); sets 21 and 22 too (round 19); sets 23 and 24 too
#: (round 20). Sets 25 and 26 are unread: measured blind.
HELD_OUT_SETS = {
    "held-out-2": 27,
    "held-out-3": SET3_GUARD,
    "held-out-4": SET4_GUARD,
    "held-out-5": SET5_GUARD,
    "held-out-6": SET6_GUARD,
    "held-out-7": SET7_GUARD,
    "held-out-8": SET8_GUARD,
    "held-out-9": SET9_GUARD,
    "held-out-10": SET10_GUARD,
    "held-out-11": SET11_GUARD,
    "held-out-12": SET12_GUARD,
    "held-out-13": SET13_GUARD,
    "held-out-14": SET14_GUARD,
    "held-out-15": SET15_GUARD,
    "held-out-16": SET16_GUARD,
    "held-out-17": SET17_GUARD,
    "held-out-18": SET18_GUARD,
    "held-out-19": SET19_GUARD,
    "held-out-20": SET20_GUARD,
    "held-out-21": SET21_GUARD,
    "held-out-22": SET22_GUARD,
    "held-out-23": SET23_GUARD,
    "held-out-24": SET24_GUARD,
    "held-out-25": SET25_GUARD,
    "held-out-26": SET26_GUARD,
    "held-out-27": SET27_GUARD,
    "held-out-28": SET28_GUARD,
    "held-out-29": SET29_GUARD,
    "held-out-30": SET30_GUARD,
    "held-out-31": SET31_GUARD,
    "held-out-32": SET32_GUARD,
    "held-out-33": SET33_GUARD,
    "held-out-34": SET34_GUARD,
    "held-out-35": SET35_GUARD,
    "held-out-36": SET36_GUARD,
    "held-out-37": SET37_GUARD,
    "held-out-38": SET38_GUARD,
    "held-out-39": SET39_GUARD,
    "held-out-40": SET40_GUARD,
    "held-out-41": SET41_GUARD,
    "held-out-42": SET42_GUARD,
    "held-out-43": SET43_GUARD,
    "held-out-44": SET44_GUARD,
    "held-out-45": SET45_GUARD,
    "held-out-46": SET46_GUARD,
    "held-out-47": SET47_GUARD,
    "held-out-48": SET48_GUARD,
    "held-out-49": SET49_GUARD,
    "held-out-50": SET50_GUARD,
    "held-out-51": SET51_GUARD,
    "held-out-52": SET52_GUARD,
    "held-out-53": SET53_GUARD,
    "held-out-54": SET54_GUARD,
    "held-out-55": SET55_GUARD,
    "held-out-56": SET56_GUARD,
    "held-out-57": SET57_GUARD,
    "held-out-58": SET58_GUARD,
    "held-out-59": SET59_GUARD,
    "held-out-60": SET60_GUARD,
    "held-out-61": SET61_GUARD,
    "held-out-62": SET62_GUARD,
    "held-out-63": SET63_GUARD,
    "held-out-65": SET65_GUARD,
    "held-out-67": SET67_GUARD,
    "held-out-72": SET72_GUARD,
    "held-out-76": SET76_GUARD,
    "held-out-77": SET77_GUARD,
    "held-out-78": SET78_GUARD,
    "held-out-79": SET79_GUARD,
    "held-out-80": SET80_GUARD,
    "held-out-82": SET82_GUARD,
    "held-out-83": SET83_GUARD,
    "held-out-85": SET85_GUARD,
    "held-out-86": SET86_GUARD,
    "held-out-87": SET87_GUARD,
    "held-out-88": SET88_GUARD,
    "held-out-89": SET89_GUARD,
    "held-out-90": SET90_GUARD,
    "held-out-91": SET91_GUARD,
    "held-out-92": SET92_GUARD,
    "held-out-94": SET94_GUARD,
    "held-out-95": SET95_GUARD,
    "held-out-96": SET96_GUARD,
    "held-out-98": SET98_GUARD,
}


@pytest.mark.parametrize("name", sorted(HELD_OUT_SETS))
def test_held_out_rate(name):
    """Each held-out set: measured, printed, and guarded. Set 2 (30 reports): 27 of 30 when
    collected; 30 of 30 once the older TensorFlow ptxas wording, ptxas's "Unsupported .version"
    and ldd's "=> not found" were read from their emitters (recipes/errors.toml cites them; those
    three reports are no longer unseen). Sets 3 and 4: see the module docstring. Set 5 (60
    reports, collected blind) was measured after rounds three and four (41/60) and read in
    round five; the rules came from the emitters and the copies a paste shows, not its cases.
    Sets 6 and 7: measured blind, then read in round seven; set 8 in round eight, set 9 in round nine, set 10 in round ten, sets 11 and 12
    in round twelve, sets 13 and 14 in round fourteen, sets 15 and 16 in round fifteen, sets 17
    and 18 in round sixteen; sets 19 and 20 are unread (the module docstring)."""
    guard = HELD_OUT_SETS[name]
    cases = HELD_OUT if name == "held-out-2" else held_out(name)
    assert len(cases) >= 30 and all(c["cause"] in FINDING_IDS for c in cases)
    hits = sum(_top(c) == c["cause"] for c in cases)
    print(
        f"{name}: explain ranks the confirmed cause first for {hits}/{len(cases)} "
        f"({hits / len(cases):.1%})"
    )
    assert hits >= guard


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            c,
            id=c["url"].split("github.com/")[1],
            marks=[pytest.mark.xfail(strict=True, reason=c["xfail"])] if c.get("xfail") else [],
        )
        for c in CASES
    ],
)
def test_case(case):
    assert _top(case) == case["cause"]
