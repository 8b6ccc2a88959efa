"""The "loaded from more than one directory" reading of cudnn-mixed needs lines that say a cuDNN
file WAS loaded (the loader's "calling init:", ldd's "NAME => PATH (0x...)", a /proc/PID/maps
mapping). Paths that only appear in a "cannot open" message or a search list never make it: a
log naming two cuDNN directories while one file is missing is a missing file, not a mix.
One directory is not read as a mix by any reading, the guess by similarity included: the load
lines in the text answer the mix's own check (found by CI: two cuDNN 8 sub-libraries loaded from
one directory were guessed cudnn-mixed from their words once the guess's floor came down).
Checked over generated directories, file names and line forms."""

from __future__ import annotations

import os

from hypothesis import example, given, settings, strategies as st

import fixer
from tests.helpers.examples import examples

_SEG = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.-", min_size=1, max_size=8).filter(
    lambda s: s not in (".", "..")
)
DIRS = st.lists(_SEG, min_size=1, max_size=4).map(lambda p: "/" + "/".join(p))
NAMES = st.sampled_from(
    [
        "libcudnn.so.9",
        "libcudnn_ops.so.9",
        "libcudnn_cnn.so.9",
        "libcudnn_graph.so.9",
        "libcudnn_engines_precompiled.so.9",
        "libcudnn_cnn_infer.so.8",
        "libcudnn_ops_infer.so.8",
    ]
)


def _loaded(form: str, path: str, i: int) -> str:
    name = os.path.basename(path)
    return {
        "init": f"     {1000 + i}:     calling init: {path}",
        "ldd": f"\t{name} => {path} (0x{0x7F0000000000 + i * 0x100000:016x})",
        "maps": f"{0x7F0000000000 + i * 0x100000:x}-{0x7F0000080000 + i * 0x100000:x} r-xp 00000000 08:01 {1234 + i}"
        f"          {path}",
    }[form]


@settings(max_examples=examples(60), deadline=None)
@given(a=DIRS, b=DIRS, n1=NAMES, n2=NAMES, form=st.sampled_from(["init", "ldd", "maps"]))
@example(a="/0", b="/0", n1="libcudnn_cnn_infer.so.8", n2="libcudnn_ops_infer.so.8", form="init")
def test_two_load_directories_read_as_mixed(a: str, b: str, n1: str, n2: str, form: str) -> None:
    text = "\n".join([_loaded(form, f"{a}/{n1}", 0), _loaded(form, f"{b}/{n2}", 1)])
    ids = [f.id for f in fixer.explain(text, detect=False).explanation.findings]
    if a != b:
        assert ids and ids[0] == "cudnn-mixed", (text, ids)
    else:
        assert "cudnn-mixed" not in ids, (text, ids)


@settings(max_examples=examples(60), deadline=None)
@given(a=DIRS, b=DIRS, n1=NAMES, n2=NAMES)
def test_paths_in_a_not_found_message_are_not_a_mix(a: str, b: str, n1: str, n2: str) -> None:
    text = (
        f"Could not load library {n1}. Error: {a}/{n1}: cannot open shared object file: No such file or directory\n"
        f"searched: {a}/{n1} {b}/{n2}"
    )
    ids = [f.id for f in fixer.explain(text, detect=False).explanation.findings]
    assert "cudnn-mixed" not in ids, (text, ids)
    assert ids and ids[0] == "cudnn-missing", (text, ids)
