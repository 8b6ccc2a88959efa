"""Round sixteen's classes: text damaged on its way into the paste, a dispatcher's wording, and a
library table.

- Typographic quotes: an issue tracker, a forum or a word processor turns the ASCII quotes of a
  pasted message into ‘ ’ “ ” (or ´ « »); the scanner maps each back to its ASCII quote before
  any pattern runs (fixer/explainer/scan.py, ascii_quotes), so every template of the catalogue
  reads the same with its quotes in either form.
- The c10 dispatcher's "Could not run 'NS::OP' with arguments from the 'CUDA' backend"
  (OperatorEntry::reportError; 'CUDATensorId' in torch 1.5; some reports drop the quotes) for an
  extension library's operator: that library's build registered no CUDA kernel, the CPU build
  (torchvision's CUDA wheel registers csrc/ops/cuda/*.cu, its CPU wheel none): cpu-only-build
  first, the mix of indexes (pip-conflict) second. torch's own aten::/prim:: operators, and the
  Autograd/Sparse/Quantized keys, are not read so.
- cuDSS, cuTENSOR and cuDLA in the family table (their wheels' files): a library of theirs that
  cannot be opened is cuda-lib-missing, and the catalogue's round trip draws them.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

import string
from typing import Dict, List, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import analyze, load_catalogue, parse_library
from fixer.explainer.scan import TYPOGRAPHIC_QUOTES, ascii_quotes
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids
from tests.unit.explain.test_catalogue import FAMILIES

CAT = load_catalogue()
_SLOTS = {
    "lib": "libcudnn_ops.so.9",
    "lib2": "libcudnn_cnn.so.9",
    "dll": "cudnn_ops64_9.dll",
    "dir": "/usr/local/lib/python3.12/dist-packages/nvidia/cudnn/lib",
    "sym": "cudnnCreate",
    "name": "cuDNN",
}


def _filled(template: str) -> str:
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    return template.format(**{f: _SLOTS.get(f, "0") for f in fields})


def _first(text: str) -> str:
    found = analyze(text).findings
    return found[0].id if found else "unrecognised"


#: every template of the catalogue (rules and loader wordings) whose text holds a quote, filled
QUOTED: List[Tuple[str, str, str]] = [
    (where, text, _first(text))
    for where, text in (
        [(r.where, _filled(t)) for r in CAT.rules for t in r.templates]
        + [(lr.where, _filled(t)) for lr in CAT.loaders for t in lr.templates]
    )
    if "'" in text or '"' in text
]


def _smarten(text: str, picks: List[int]) -> str:
    """Each quote of the text replaced as `picks` says: 0 keeps it, k > 0 is the k-th
    typographic form of that quote (cycled)."""
    out: List[str] = []
    i = 0
    for ch in text:
        forms = TYPOGRAPHIC_QUOTES.get(ch)
        if forms:
            k = picks[i % len(picks)]
            i += 1
            out.append(forms[(k - 1) % len(forms)] if k else ch)
        else:
            out.append(ch)
    return "".join(out)


def test_every_typographic_quote_maps_to_its_ascii_quote_one_for_one():
    for ascii_q, forms in TYPOGRAPHIC_QUOTES.items():
        joined = "".join(forms)
        assert ascii_quotes(joined) == ascii_q * len(forms)
    assert len(QUOTED) >= 50  # the catalogue's quoted templates are all here


@settings(max_examples=examples(20), deadline=None)
@given(picks=st.lists(st.integers(0, 8), min_size=1, max_size=12))
def test_a_smartened_template_ranks_the_same_first_cause(picks: List[int]) -> None:
    """For EVERY quoted template: a generated choice of its quotes in typographic form ranks the
    same first cause as the ASCII form, and the scanner restores the text character for
    character."""
    moved: Dict[str, Tuple[str, str]] = {}
    for where, text, first in QUOTED:
        smart = _smarten(text, picks)
        assert ascii_quotes(smart) == text
        got = _first(smart)
        if got != first:
            moved[where] = (first, got)
    assert not moved, moved


# --- the dispatcher's wording for an extension's operator --------------------------------------

EXT_OP = st.tuples(
    st.sampled_from(
        ["torchvision", "torchaudio", "detectron2", "torch_scatter", "mmcv", "xformers"]
    ),
    st.sampled_from(["nms", "roi_align", "roi_pool", "deform_conv2d", "ps_roi_align", "rnnt_loss"]),
).map("::".join)
TORCH_OP = st.sampled_from(
    ["aten::empty_strided", "aten::_cudnn_rnn", "aten::add.out", "prim::Constant"]
)
HEAD = st.sampled_from(["NotImplementedError: ", "RuntimeError: ", "ERROR: ", ""])


def _reported(op: str, form: int, others: str) -> str:
    """The dispatcher's message for the CUDA key in torch 1.6+ (0), torch 1.5 (1), or as
    reports shorten it (2: no quotes, no "the")."""
    if form == 0:
        return (
            f"Could not run '{op}' with arguments from the 'CUDA' backend. This could be because "
            "the operator doesn't exist for this backend, or was omitted during the selective/"
            "custom build process (if using custom build). If you are a Facebook employee using "
            "PyTorch on mobile, please visit https://fburl.com/ptmfixes for possible resolutions. "
            f"'{op}' is only available for these backends: [{others}]."
        )
    if form == 1:
        return (
            f"Could not run '{op}' with arguments from the 'CUDATensorId' backend. '{op}' is only "
            f"available for these backends: [{others}]."
        )
    return f"Could not run '{op}' with arguments from CUDA backend"


OTHERS = st.sampled_from(
    ["CPU, Meta, QuantizedCPU, BackendSelect, Python", "CPUTensorId, VariableTensorId", "CPU"]
)


@settings(max_examples=examples(30), deadline=None)
@given(op=EXT_OP, form=st.integers(0, 2), others=OTHERS, head=HEAD)
def test_an_extension_operator_without_a_cuda_kernel_is_its_cpu_build(op, form, others, head):
    found = _ids(head + _reported(op, form, others))
    assert found[0] == "cpu-only-build", found
    assert found[1] == "pip-conflict", found  # the mix of indexes that put it there


@settings(max_examples=examples(20), deadline=None)
@given(op=TORCH_OP, form=st.integers(0, 2), others=OTHERS, op2=EXT_OP)
def test_torch_s_own_operators_and_other_keys_are_not_a_cpu_build(op, form, others, op2):
    assert "cpu-only-build" not in _ids(_reported(op, form, others))
    for key in ("SparseCUDA", "QuantizedCUDA", "AutogradCUDA"):
        text = f"Could not run '{op2}' with arguments from the '{key}' backend."
        assert _ids(text)[:1] == ["pip-conflict"], text  # round eleven (a)'s reading stays


# --- CUDA libraries new to the family table ----------------------------------------------------

NEW = {"cuDSS": "libcudss", "cuTENSOR": "libcutensor", "cuDLA": "libcudla"}
#: each family's libraries, as its wheel names them (the cites in recipes/errors.toml)
PARTS = {
    "cuDSS": ["", "_commlayer_nccl", "_commlayer_openmpi", "_mtlayer_gomp"],
    "cuTENSOR": ["", "Mg", "Mp"],
    "cuDLA": [""],
}


def test_the_catalogue_round_trip_draws_the_new_families():
    drawn = {f.name for f in FAMILIES}
    assert set(NEW) <= drawn, drawn


@settings(max_examples=examples(30), deadline=None)
@given(
    lib=st.sampled_from(sorted(NEW)).flatmap(
        lambda n: st.tuples(st.just(n), st.sampled_from(PARTS[n]))
    ),
    major=st.integers(0, 3),
    head=st.sampled_from(["ImportError: ", "OSError: ", ""]),
)
def test_a_new_cuda_library_that_cannot_be_opened_is_cuda_lib_missing(lib, major, head):
    name, part = lib
    lib = f"{NEW[name]}{part}.so.{major}"
    fam = parse_library(lib, CAT.families)
    assert fam is not None and fam.family is not None and fam.family.name == name, lib
    text = f"{head}{lib}: cannot open shared object file: No such file or directory"
    assert _ids(text)[0] == "cuda-lib-missing", text
