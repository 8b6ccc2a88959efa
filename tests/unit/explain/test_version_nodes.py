"""glibc's "version `NODE' not found (required by NEEDER)" (elf/dl-version.c, match_symbol), over
generated version nodes, objects and needers: the NODE's namespace decides whose version is
missing. A GLIBC_ / GLIBCXX_ / CXXABI_ / GCC_ node means the system's C/C++ runtime (glibc,
libstdc++, libgcc) is older than the one the needer was built for, whatever library needs it and
wherever it lives; a node named like a cuDNN / CUDA library (libcudnn_graph.so.9, libcudart.so.12)
means a copy of another release of that library was loaded. Expected families come from the
catalogue's family table (nodes, stems), never from a list of cases."""

from __future__ import annotations

from typing import Optional, Tuple

from hypothesis import HealthCheck, given, settings, strategies as st

from fixer.explainer import analyze, load_catalogue
from fixer.explainer.catalogue import Family
from fixer.explainer.loader import family_of_node, find_failures, finding_of
from tests.helpers.examples import examples

CAT = load_catalogue()
RUNTIMES = [f for f in CAT.families if f.role == "system-runtime"]
STACK = [
    f
    for f in CAT.families
    if f.role in ("cudnn", "cuda-lib") and any(s.startswith("lib") for s in f.stems)
]  # with a Linux name (zlibwapi.dll is Windows-only)
SETTINGS = settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# the version nodes each runtime defines, in the forms its version scripts use
# (glibc: GLIBC_2.0 .. GLIBC_2.42, GLIBC_2.2.5, GLIBC_PRIVATE; libstdc++: GLIBCXX_3.4.N, CXXABI_1.3.N,
# CXXABI_TM_1; libgcc: GCC_3.0, GCC_4.2.0, GCC_12.0.0)
_n = st.integers(0, 45)
RUNTIME_NODES = {
    "glibc": st.one_of(
        st.tuples(st.integers(0, 45)).map(lambda t: f"GLIBC_2.{t[0]}"),
        st.tuples(_n, st.integers(1, 9)).map(lambda t: f"GLIBC_2.{t[0]}.{t[1]}"),
        st.just("GLIBC_PRIVATE"),
    ),
    "libstdc++": st.one_of(
        _n.map(lambda n: f"GLIBCXX_3.4.{n}"),
        st.just("GLIBCXX_3.4"),
        _n.map(lambda n: f"CXXABI_1.3.{n}"),
        st.just("CXXABI_TM_1"),
    ),
    "libgcc": st.tuples(st.integers(3, 15), st.integers(0, 9), st.integers(0, 4)).map(
        lambda t: f"GCC_{t[0]}.{t[1]}" + (f".{t[2]}" if t[2] else "")
    ),
}
dirs = st.one_of(
    st.sampled_from(
        [
            "/usr/lib/x86_64-linux-gnu",
            "/lib/x86_64-linux-gnu",
            "/usr/local/cuda/lib64",
            "/opt/conda/lib",
            "/usr/local/lib/python3.12/dist-packages/nvidia/cudnn/lib",
        ]
    ),
    st.lists(st.from_regex(r"[a-z][a-z0-9_.\-]{0,10}", fullmatch=True), min_size=1, max_size=5).map(
        lambda p: "/" + "/".join(p)
    ),
)


@st.composite
def stack_library(draw: st.DrawFn, fam: Optional[Family] = None) -> Tuple[Family, str]:
    """A cuDNN / CUDA library file name of a family (its soname is also its version node)."""
    fam = fam or draw(st.sampled_from(STACK))
    stem = draw(st.sampled_from([s for s in fam.stems if s.startswith("lib")]))
    if fam.role == "cudnn" and draw(st.booleans()):
        stem += "_" + draw(
            st.sampled_from(["graph", "ops", "cnn", "adv", "heuristic", "engines_precompiled"])
        )
    return fam, f"{stem}.so.{draw(st.integers(1, 13))}"


@st.composite
def any_library(draw: st.DrawFn) -> str:
    """Any library path: the GPU stack's, a framework's, a runtime's or an unknown one."""
    name = draw(
        st.one_of(
            stack_library().map(lambda t: t[1]),
            st.sampled_from(
                [
                    "libtorch_cuda.so",
                    "libtorch_python.so",
                    "_pywrap_tensorflow_internal.so",
                    "xla_extension.so",
                    "libc.so.6",
                    "libstdc++.so.6",
                    "libgcc_s.so.1",
                    "libfoo.so.3",
                ]
            ),
            st.from_regex(r"lib[a-z][a-z0-9_]{0,12}\.so(\.[0-9]{1,2}){0,2}", fullmatch=True),
        )
    )
    return f"{draw(dirs)}/{name}"


def _wording(draw: st.DrawFn, obj: str, node: str, needer: str) -> str:
    """One of glibc's wordings, with a Python / framework prefix."""
    soname = obj.rsplit("/", 1)[-1]
    sym = draw(
        st.sampled_from(
            [
                "memcpy",
                "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE7reserveEm",
                "cudnnCreate",
                "cublasLtCreate",
                "__cxa_thread_atexit_impl",
            ]
        )
    )
    body = draw(
        st.sampled_from(
            [
                f"{obj}: version `{node}' not found (required by {needer})",  # dl-version.c:142-144
                f"{obj}: weak version `{node}' not found (required by {needer})",  # dl-version.c:133-135
                f"relocation error: {needer}: symbol {sym} version {node} not defined in file {soname} with link time reference",
                f"relocation error: {needer}: symbol {sym}, version {node} not defined in file {soname} with link time reference",
            ]
        )
    )
    prefix = draw(
        st.sampled_from(
            [
                "",
                "ImportError: ",
                "OSError: ",
                "Traceback (most recent call last):\n  ...\nImportError: ",
            ]
        )
    )
    return prefix + body


@SETTINGS
@given(data=st.data())
def test_a_runtime_node_means_the_runtime_is_too_old(data: st.DataObject) -> None:
    rt = data.draw(st.sampled_from(RUNTIMES))
    node = data.draw(RUNTIME_NODES[rt.name])
    assert family_of_node(node, CAT.families) is rt
    needer = data.draw(any_library())
    # the structural reading: the node decides, whatever object the text blames
    odd = _wording(data.draw, data.draw(any_library()), node, needer)
    assert {(f.provider, f.node) for f in find_failures(odd, CAT) if f.kind == "version"} == {
        (rt, node)
    }, odd
    # the object glibc blames is the one whose version definitions lack the node: the runtime's own file
    stem = data.draw(st.sampled_from(rt.stems))
    obj = f"{data.draw(dirs)}/{stem}.so.{data.draw(st.integers(1, 6))}"
    text = _wording(data.draw, obj, node, needer)
    failures = [f for f in find_failures(text, CAT) if f.kind == "version"]
    assert failures and all(f.provider is rt and f.node == node for f in failures), text
    assert {finding_of(f) for f in failures} == {"system-runtime-too-old"}
    exp = analyze(text)
    top = exp.findings[0]
    assert top.id == "system-runtime-too-old", (text, [f.id for f in exp.findings])
    assert node in top.title and rt.name in top.title, top.title
    assert not any(
        f.id in ("cudnn-mixed", "cuda-lib-mismatch", "cudnn-too-old") for f in exp.findings
    ), text
    assert "manylinux" in top.fix and "base image" in top.fix
    assert dict(exp.checks)["system-runtime-too-old"] == rt.check


@SETTINGS
@given(data=st.data())
def test_a_library_node_means_another_release_of_that_library(data: st.DataObject) -> None:
    fam, node = data.draw(stack_library())
    assert family_of_node(node, CAT.families) is fam
    obj = f"{data.draw(dirs)}/{node}"
    needer_fam, needer_name = data.draw(stack_library())
    needer = f"{data.draw(dirs)}/{needer_name}"
    text = _wording(data.draw, obj, node, needer)
    failures = [f for f in find_failures(text, CAT) if f.kind == "version"]
    assert failures and all(f.provider is fam for f in failures), text
    # the family's own mismatch; a cuDNN node needed by a non-cuDNN library: that library was built
    # against a newer cuDNN than the one loaded (fixer.explainer.loader.finding_of)
    expected = (
        "cudnn-too-old" if fam.role == "cudnn" and needer_fam.role != "cudnn" else fam.mismatch
    )
    assert {finding_of(f) for f in failures} == {expected}
    ids = [f.id for f in analyze(text).findings]
    assert "system-runtime-too-old" not in ids, text
    assert ids[0] in (expected, "cudnn-mixed"), (text, ids)
