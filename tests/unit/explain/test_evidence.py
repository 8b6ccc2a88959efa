"""The evidence inside a paste decides between readings, and the line that decided is
named: generated majors, directories and wrap points."""

from __future__ import annotations

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples

MAJORS = st.integers(min_value=5, max_value=10)
DIRS = st.sampled_from(
    ["/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64", "/opt/conda/lib", "/lib64"]
)


def _decided(f) -> str:
    return next((e for e in f.evidence if e.startswith("decided by:")), "")


@settings(max_examples=examples(100), deadline=None)
@given(want=MAJORS, have=MAJORS, d=DIRS)
def test_a_listing_of_another_major_makes_it_a_major_mismatch(want, have, d):
    text = (
        f"ImportError: libcudnn.so.{want}: cannot open shared object file: No such file or directory\n"
        f"$ ldconfig -p | grep cudnn\n\tlibcudnn.so.{have} (libc6,x86-64) => {d}/libcudnn.so.{have}\n"
    )
    top = explain(text)[0]
    if want == have:  # the file is there: the directory is not searched
        assert top.id == "cudnn-missing" and f"libcudnn.so.{have}" in _decided(top)
    else:
        assert top.id == "cudnn-major-mismatch"
        assert f"libcudnn.so.{have}" in _decided(top)


@settings(max_examples=examples(60), deadline=None)
@given(major=st.sampled_from([8, 9]), part=st.sampled_from(["ops", "cnn", "adv", "graph"]), d=DIRS)
def test_a_directory_listing_decides_incomplete_against_not_searched(major, part, d):
    sub = f"libcudnn_{part}.so.{major}"
    fail = f"Unable to load any of {{{sub}.1.0, {sub}.1, {sub}, libcudnn_{part}.so}}\n"
    without = fail + f"$ ls {d}\nlibcudnn.so.{major}\nlibcudnn.so.{major}.1.0\n"
    assert explain(without)[0].id == "cudnn-incomplete"
    with_part = without + f"{sub}\n"
    assert explain(with_part)[0].id == "cudnn-missing"
    # no listing: cuDNN missing first, the incomplete copy as the reading the check decides
    ids = [f.id for f in explain(fail)]
    assert ids[0] == "cudnn-missing" and "cudnn-incomplete" in ids


@settings(max_examples=examples(60), deadline=None)
@given(used=st.integers(0, 16000), status=st.sampled_from(["NOT_INITIALIZED", "INTERNAL_ERROR"]))
def test_memory_ranks_by_the_memory_the_paste_shows(used, status):
    """nvidia-smi's memory decides; a cuDNN that failed to load outranks memory; with neither,
    the status's usual cause (a failed allocation in the handle's creation) stays first and the
    finding says what would decide."""
    bare = f"RuntimeError: cuDNN error: CUDNN_STATUS_{status}\n"
    top = explain(bare)[0]
    assert top.id == "out-of-memory" and any("would decide" in e for e in top.evidence)
    text = bare + f"|  {used}MiB / 16000MiB |\n"
    top = explain(text)[0]
    assert (top.id == "out-of-memory") == (used / 16000 >= 0.9)
    failed_load = "Could not load dynamic library 'libcudnn.so.8'; dlerror: libcudnn.so.8: cannot open shared object file: No such file or directory\n"
    assert explain(failed_load + text)[0].id != "out-of-memory"


@settings(max_examples=examples(100), deadline=None)
@given(cut=st.integers(min_value=1, max_value=70))
def test_a_message_wrapped_mid_word_is_joined(cut):
    """A break inside one of the message's words is joined; one at a space is read as the space
    (a break inside a version number or before punctuation is not joined: no literal spans it)."""
    line = "Loaded runtime CuDNN library: 8.5.0 but source was compiled with: 8.6.0."
    mid_word = line[cut - 1].isalpha() and line[cut].isalpha()
    assume(mid_word or " " in (line[cut - 1], line[cut]))
    text = "E cuda_dnn.cc:417] " + line[:cut] + "\n" + line[cut:] + "\n"
    top = explain(text)[0]
    assert top.id == "cudnn-too-old" and "8.5.0" in top.title


def test_glibcxx_without_required_by_and_pybind_and_benign_lines():
    glibcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.30' not found"
    assert explain(glibcxx)[0].id == "system-runtime-too-old"
    assert explain('ImportError: generic_type: type "Status" is already registered!')[0].id == (
        "cudnn-conflict"
    )
    wsl = "/sbin/ldconfig.real: /usr/lib/wsl/lib/libcuda.so.1 is not a symbolic link"
    assert explain(wsl)[0].id == "log-noise"
    nvrtc = "RuntimeError: nvrtc: error: invalid value for --gpu-architecture (-arch)"
    assert explain(nvrtc)[0].id == "gpu-arch-unsupported"


def test_with_several_frameworks_the_cause_names_whose_failure_it_is():
    text = (
        "import torch\nimport tensorflow as tf\n"
        "E tensorflow/stream_executor/cuda/cuda_dnn.cc:320] Loaded runtime CuDNN library: 7.5.0 "
        "but source was compiled with: 7.6.3.\n"
    )
    top = explain(text)[0]
    assert any("belongs to tensorflow" in e for e in top.evidence), top.evidence
