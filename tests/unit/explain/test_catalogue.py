"""The catalogue's own round trip, over generated inputs: every template of every rule and loader
wording, its slots filled with Hypothesis-drawn versions, library names (from the family table),
directories and symbols, is explained with that template's finding first. The expected finding
is computed from the same rules the catalogue cites (fixer.rules for cuDNN pairs, the family
table for loader failures), never written per case."""

from __future__ import annotations

import re
import string
from typing import Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from fixer.explainer import analyze, load_catalogue, parse_library
from fixer.explainer.catalogue import Family, Rule, parse_cite
from fixer.explainer.engine import _COLAB_TEXT
from fixer.model import FINDING_IDS
from fixer.rules import cudnn_relation
from tests.helpers.examples import examples

CAT = load_catalogue()
FAMILIES = [
    f
    for f in CAT.families
    if f.role not in ("framework", "system-runtime", "optional")
    and any(s.startswith("lib") for s in f.stems)
]  # the GPU stack with a Linux name (zlibwapi.dll is Windows-only)
RUNTIMES = [
    f for f in CAT.families if f.role == "system-runtime"
]  # tests/unit/explain/test_version_nodes.py
SETTINGS = settings(
    max_examples=examples(25),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# Hypothesis draws from_regex strategies several times slower than the same language written out
# with text() (same alphabet and lengths): these are the regexes in the comments, spelled as text().
_LOWER, _UPPER, _DIGITS = string.ascii_lowercase, string.ascii_uppercase, string.digits


def _word(first: str, rest: str, min_rest: int, max_rest: int) -> st.SearchStrategy[str]:
    """[first][rest]{min_rest,max_rest}"""
    head = st.sampled_from(first) if first else st.just("")
    return st.tuples(head, st.text(rest, min_size=min_rest, max_size=max_rest)).map("".join)


dirs = st.one_of(
    st.sampled_from(
        [
            "/usr/lib/x86_64-linux-gnu",
            "/usr/local/cuda/lib64",
            "/opt/conda/lib",
            "/usr/local/lib/python3.12/dist-packages/nvidia/cudnn/lib",
        ]
    ),
    # /([a-z][a-z0-9_.\-]{0,10}){1,5}
    st.lists(_word(_LOWER, _LOWER + _DIGITS + "_.-", 0, 10), min_size=1, max_size=5).map(
        lambda p: "/" + "/".join(p)
    ),
)
_CUDNN_PART = st.tuples(
    _word("", _LOWER, 2, 8),  # [a-z]{2,8}(?:_[a-z]{2,8})?
    st.one_of(st.just(""), _word("_", _LOWER, 2, 8)),
).map("".join)
_CUDNN_SYM = _word(_UPPER, _UPPER + _LOWER, 2, 20)  # [A-Z][A-Za-z]{2,20}
_SYM_TAIL = _word("", _UPPER + _LOWER + _DIGITS + "_", 1, 20)  # [A-Za-z0-9_]{1,20}
small = st.integers(1, 99999)


def _symbol_prefix(fam: Family) -> str:
    """A literal symbol name the family's first symbol pattern accepts."""
    rx = fam.symbols[0].pattern.lstrip("^")
    rx = re.sub(
        r"\{0,\d+\}", "*", re.sub(r"\{1,\d+\}", "+", rx)
    )  # bounded quantifiers read as * / +
    return rx.replace("[A-Z]", "G").replace(r"\d+", "5").replace("_*", "__").replace(r"\w*", "x")


@st.composite
def library_of(draw: st.DrawFn, fam: Family) -> str:
    stems = [s for s in fam.stems if s.startswith("lib")]
    stem = draw(st.sampled_from(stems))
    if fam.role == "cudnn" and draw(st.booleans()):
        stem += "_" + draw(_CUDNN_PART)
    ver = draw(
        st.one_of(
            st.just(""),
            st.integers(1, 13).map(lambda v: f".{v}"),
            st.tuples(st.integers(1, 13), st.integers(0, 9)).map(lambda t: f".{t[0]}.{t[1]}"),
        )
    )
    return f"{stem}.so{ver}"


def _windows_stems(fam: Family) -> List[str]:
    return [s for s in fam.stems if not s.startswith("lib")]


#: the GPU stack's families with a Windows build (cuDLA is Jetson's, Linux only)
WIN_FAMILIES = [f for f in FAMILIES if _windows_stems(f)]


@st.composite
def dll_of(draw: st.DrawFn, fam: Family) -> str:
    """A Windows DLL of the family, as its wheels and toolkits name them: STEM64_MAJOR.dll
    (cudnn_ops64_9.dll, cublasLt64_12.dll, nvcuda64_12.dll reads as the driver's nvcuda)."""
    stem = draw(st.sampled_from(_windows_stems(fam)))
    if fam.role == "cudnn" and draw(st.booleans()):
        stem += "_" + draw(_CUDNN_PART)
    return f"{stem}64_{draw(st.integers(8, 13))}.dll"


def _cudnn_forms(major: int, minor: int, patch: int) -> Dict[str, str]:
    n = major * 10000 + minor * 100 + patch if major >= 9 else major * 1000 + minor * 100 + patch
    return {
        "": f"{major}.{minor}.{patch}",
        "_int": str(n),
        "_tuple": f"({major}, {minor}, {patch})",
        "_mm": f"{major}.{minor}",
        # cudnnGetVersion() // 1000 "." % 1000 // 100: OpenCV's decode up to 4.9 (loaded_form)
        "_k": f"{n // 1000}.{n % 1000 // 100}",
    }


@st.composite
def cudnn_pair(draw: st.DrawFn) -> Tuple[Tuple[int, int, int], Tuple[int, int, int]]:
    built = (draw(st.integers(5, 9)), draw(st.integers(0, 9)), draw(st.integers(0, 9)))
    kind = draw(st.sampled_from(["older", "newer", "other-major"]))
    if kind == "older":
        assume(built[1] > 0)
        loaded = (built[0], draw(st.integers(0, built[1] - 1)), draw(st.integers(0, 9)))
    elif kind == "newer":
        loaded = (built[0], draw(st.integers(built[1], 9)), draw(st.integers(0, 9)))
    else:
        loaded = (
            draw(st.sampled_from([m for m in range(5, 10) if m != built[0]])),
            draw(st.integers(0, 9)),
            0,
        )
    return loaded, built


def _fields(template: str) -> List[str]:
    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


def _expected_for_versions(
    rule: Rule, loaded: Tuple[int, int, int], built: Tuple[int, int, int]
) -> str:
    rel = cudnn_relation(".".join(map(str, loaded)), ".".join(map(str, built)))
    if rel == "ok" and rule.compatible_is_benign:
        return "log-noise"
    if rel == "other-major":
        return "cudnn-major-mismatch"
    if rule.id == "cudnn-too-old" and loaded > built:
        # a check printed as failed is never benign; one that refused a newer copy wants the
        # build's own release, so another copy than the build's loaded (engine._NEWER_COPY)
        return "cudnn-shadowed"
    return rule.id


RULE_TEMPLATES = [(r, t) for r in CAT.rules for t in r.templates]
#: a template with no slot is one text: explained once, not drawn again by Hypothesis
FIXED_TEMPLATES = [(r, t) for r, t in RULE_TEMPLATES if not _fields(t)]
SLOTTED_TEMPLATES = [(r, t) for r, t in RULE_TEMPLATES if _fields(t)]
LOADER_TEMPLATES = [(lr, t) for lr in CAT.loaders for t in lr.templates]


def test_every_rule_and_loader_wording_has_templates_and_cites():
    assert all(r.templates and r.cites for r in CAT.rules), [
        r.where for r in CAT.rules if not r.templates
    ]
    assert all(lr.templates and lr.cites for lr in CAT.loaders)
    # an optional family (TF-TRT's TensorRT) means no finding of its own: its failed load is
    # dropped with the whole wrapper line (fixer/explainer/loader.py _without_optional)
    assert all(f.missing in FINDING_IDS for f in FAMILIES)
    assert all(f.missing is None for f in CAT.families if f.role == "optional")
    assert RUNTIMES and all(f.nodes and f.mismatch in FINDING_IDS and f.check for f in RUNTIMES)


def test_every_cite_names_a_line_or_a_release():
    """The loader refuses others; this checks the shipped catalogue through the same parser, and
    that a line-cited source names a file and a tag or commit."""
    cites = (
        [c for r in CAT.rules for c in r.cites]
        + [c for lr in CAT.loaders for c in lr.cites]
        + [c for f in CAT.families for c in f.cites]
    )
    parsed = [parse_cite(c) for c in cites]
    assert all(p is not None for p in parsed), [c for c, p in zip(cites, parsed) if p is None]
    for p in parsed:
        assert p is not None and p.ref
        if p.lines is not None:
            assert p.path and all(int(n) > 0 for n in re.findall(r"\d+", p.lines)), p.text
    # most rules cite a source line; the rest a release (scripts/explain_catalogue.py lists which)
    line_cited = [
        r for r in CAT.rules if any(getattr(parse_cite(c), "lines", None) for c in r.cites)
    ]
    assert len(line_cited) >= 0.8 * len(CAT.rules)


@pytest.mark.parametrize(
    "rule,template",
    FIXED_TEMPLATES,
    ids=[f"{r.where}#{i}" for i, (r, _) in enumerate(FIXED_TEMPLATES)],
)
def test_fixed_rule_template_round_trip(rule: Rule, template: str) -> None:
    text = template.format()
    found = analyze(text).findings
    assert found and found[0].id == rule.id, (text, [(f.id, f.confidence) for f in found])


@pytest.mark.parametrize(
    "rule,template",
    SLOTTED_TEMPLATES,
    ids=[f"{r.where}#{i}" for i, (r, _) in enumerate(SLOTTED_TEMPLATES)],
)
@SETTINGS
@given(data=st.data())
def test_rule_template_round_trip(rule: Rule, template: str, data: st.DataObject) -> None:
    _rule_round_trip(rule, template, data)


# The @given tests above and below keep their bodies in a helper: Hypothesis keys each test by a
# digest of its function's source, tokenized again for every parametrized case (a sixth of this
# file's time when the body was here).


def _rule_round_trip(rule: Rule, template: str, data: st.DataObject) -> None:
    """Fill the template's slots with drawn values; the rule's id (or what its versions decide)
    ranks first."""
    values: Dict[str, str] = {"n": str(data.draw(small)), "dir": data.draw(dirs)}
    expected = rule.id
    fields = _fields(template)
    if any(
        f in fields
        for f in (
            "loaded",
            "built",
            "loaded_int",
            "built_int",
            "loaded_tuple",
            "built_tuple",
            "loaded_mm",
            "built_mm",
            "loaded_k",
        )
    ):
        loaded, built = data.draw(cudnn_pair())
        if any(f.endswith(("_mm", "_k")) for f in fields):
            loaded, built = (loaded[0], loaded[1], 0), (built[0], built[1], 0)
        for suffix, v in _cudnn_forms(*loaded).items():
            values["loaded" + suffix] = v
        for suffix, v in _cudnn_forms(*built).items():
            values["built" + suffix] = v
        if rule.versions and not rule.library:
            expected = _expected_for_versions(rule, loaded, built)
    if "version_int" in fields:
        b = data.draw(st.integers(1000, 130000))
        v = data.draw(st.integers(100, 130000))
        values["version_int"], values["build_int"] = str(v), str(b)
        if v >= b and rule.compatible_is_benign:
            expected = "log-noise"
    if "name" in fields:
        names = [n for f in FAMILIES for n in f.names]
        values["name"] = data.draw(st.sampled_from(names))
        assume(
            any(p.search(template.format(**{**_dummy(fields), **values})) for p in rule.patterns)
        )
    if "lib" in fields or "lib2" in fields:
        fam = data.draw(st.sampled_from(FAMILIES))
        values["lib"] = data.draw(library_of(fam))
        values["lib2"] = data.draw(library_of(fam))
    if "sym" in fields:
        values["sym"] = "cudnn" + data.draw(_CUDNN_SYM)
    text = template.format(**{**_dummy(fields), **values})
    found = analyze(text).findings
    assert found, text
    assert found[0].id == expected, (text, [(f.id, f.confidence) for f in found])


def _dummy(fields: List[str]) -> Dict[str, str]:
    return {f: "0" for f in fields}


@pytest.mark.parametrize(
    "loader,template",
    LOADER_TEMPLATES,
    ids=[f"{lr.where}#{i}" for i, (lr, _) in enumerate(LOADER_TEMPLATES)],
)
@SETTINGS
@given(data=st.data())
def test_loader_template_round_trip(loader, template: str, data: st.DataObject) -> None:
    _loader_round_trip(loader, template, data)


def loader_text(data: st.DataObject, template: str) -> Tuple[Family, str]:
    """A loader wording's template filled for a drawn family: its library names, a symbol of
    its own, a directory, a number; a Windows DLL only where the template has a {dll} slot, and
    then from a family with a Windows build."""
    fam = data.draw(st.sampled_from(WIN_FAMILIES if "{dll}" in template else FAMILIES))
    lib, lib2 = data.draw(library_of(fam)), data.draw(library_of(fam))
    sym = _symbol_prefix(fam) + data.draw(_SYM_TAIL)
    dll = data.draw(dll_of(fam)) if "{dll}" in template else ""
    text = template.format(
        lib=lib, lib2=lib2, dll=dll, dir=data.draw(dirs), sym=sym, n=data.draw(small)
    )
    return fam, text


def _loader_round_trip(loader, template: str, data: st.DataObject) -> None:
    """A library of any family in the loader's wording: the family's cause of that kind ranks
    first."""
    fam, text = loader_text(data, template)
    expected: Optional[str] = {
        "missing": fam.missing,
        "wrapper": fam.missing,
        "damaged": fam.damaged,
        "symbol": fam.mismatch,
        "version": fam.mismatch,
    }[loader.kind]
    if (
        expected == "driver-missing"
        and loader.kind in ("missing", "wrapper")
        and _COLAB_TEXT.search(text)
    ):
        expected = "gpu-missing"  # no driver on Colab: a CPU runtime (test_environment.py)
    found = analyze(text).findings
    assert found and found[0].id == expected, (text, [(f.id, f.confidence) for f in found])


@SETTINGS
@given(data=st.data())
def test_library_names_parse_to_their_family(data: st.DataObject) -> None:
    fam = data.draw(st.sampled_from(FAMILIES))
    directory = data.draw(dirs)
    name = data.draw(library_of(fam))
    lib = parse_library(f"{directory}/{name}", CAT.families)
    assert lib is not None and lib.family is fam and lib.directory == directory and lib.name == name
    m = re.search(r"\.so\.([\d.]+)$", name)
    assert lib.version == (m.group(1) if m else None)


@pytest.mark.parametrize(
    "name,family,version",
    [
        ("cudnn64_8.dll", "cuDNN", "8"),
        ("cudnn_ops64_9.dll", "cuDNN", "9"),
        ("cublasLt64_12.dll", "cuBLAS", "12"),
        ("cudart64_110.dll", "CUDA runtime (cudart)", "11.0"),
        ("nvcuda.dll", "NVIDIA driver", None),
    ],
)
def test_windows_names_parse_to_their_family(name, family, version):
    lib = parse_library("C:\\Program Files\\NVIDIA\\bin\\" + name, CAT.families)
    assert lib is not None and lib.windows and lib.family is not None
    assert lib.family.name == family and lib.version == version


@SETTINGS
@given(data=st.data())
def test_the_last_of_two_loader_errors_ranks_first(data: st.DataObject) -> None:
    """Errors come last in a log: with two equally sure failures, the later one is the cause."""
    a, b = data.draw(st.sampled_from(FAMILIES)), data.draw(st.sampled_from(FAMILIES))
    assume(a.missing != b.missing)
    la, lb = data.draw(library_of(a)), data.draw(library_of(b))
    text = (
        f"{la}: cannot open shared object file: No such file or directory\n...\n"
        f"{lb}: cannot open shared object file: No such file or directory\n"
    )
    if {a.missing, b.missing} == {"cudnn-missing", "cuda-lib-missing"}:
        # except that cuDNN sits on the CUDA libraries: those are the cause to fix first
        assert analyze(text).findings[0].id == "cuda-lib-missing"
    else:
        assert analyze(text).findings[0].id == b.missing


def test_catalogue_script_prints_size_by_source_and_every_rule_with_its_cite(capsys):
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[3] / "scripts" / "explain_catalogue.py"
    spec = importlib.util.spec_from_file_location("explain_catalogue", script)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"catalogue: {len(CAT.rules)} rules, ")
    assert "size by source" in out and "bminor/glibc" in out
    for r in CAT.rules:
        assert r.where in out
        for c in r.cites:
            cite = parse_cite(c)
            assert cite is not None and cite.short() in out
