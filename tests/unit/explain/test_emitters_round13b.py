"""Round thirteen (b)'s readings, each from the text that prints the message or the line.

- TensorFlow's bug template line "- CUDA/cuDNN version: <cuda>, <cudnn>" (and its issue form's
  "### CUDA/cuDNN version" answer): the user's statement of the installed cuDNN, the second
  version. Beside a failed load of another cuDNN major it decides for cudnn-major-mismatch; of
  the same major the reading stays cudnn-missing.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples

NOISE = st.sampled_from(
    [
        "",
        "Epoch 1/10\n",
        "I0000 00:00:1768485308.759699     549 port.cc:153] oneDNN custom operations are on.\n",
        'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n',
    ]
)


def _ids(text: str) -> list:
    return [f.id for f in explain(text)]


# --- TensorFlow's issue template: "CUDA/cuDNN version" ---------------------------------------

TEMPLATE_LINE = st.sampled_from(
    [
        "- CUDA/cuDNN version: {cuda}{sep}{cudnn}\n- GPU model and memory: {gpu}\n",
        "- **CUDA/cuDNN version**: {cuda}{sep}{cudnn}\n",
        "### CUDA/cuDNN version\n\n{cuda}{sep}{cudnn}\n\n### GPU model and memory\n\n{gpu}\n",
        "CUDA/cuDNN version: CUDA {cuda}{sep}cuDNN {cudnn}\n",
    ]
)
SEP = st.sampled_from([", ", "/", " / ", " and ", "; "])
CUDA = st.sampled_from(["9.0", "10.0", "10.1", "10.2", "11.0", "11.2", "11.8", "12.2"])
GPU = st.sampled_from(["GTX 1080 Ti 11GB", "Tesla T4", "RTX 3090 24GB"])


def _dso_failure(major: int) -> str:
    return (
        "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic "
        f"library 'libcudnn.so.{major}'; dlerror: libcudnn.so.{major}: cannot open shared object "
        "file: No such file or directory; LD_LIBRARY_PATH: /usr/local/cuda/lib64\n"
    )


@settings(max_examples=examples(20), deadline=None)
@given(
    NOISE,
    TEMPLATE_LINE,
    SEP,
    CUDA,
    GPU,
    st.integers(5, 9),
    st.integers(5, 9),
    st.integers(0, 9),
    st.integers(0, 9),
)
def test_template_cudnn_version_is_the_installed_copy(
    noise: str,
    line: str,
    sep: str,
    cuda: str,
    gpu: str,
    have: int,
    want: int,
    minor: int,
    patch: int,
) -> None:
    stated = line.format(cuda=cuda, sep=sep, cudnn=f"{have}.{minor}.{patch}", gpu=gpu)
    ids = _ids(noise + stated + _dso_failure(want))
    assert ids[:1] == (["cudnn-major-mismatch"] if have != want else ["cudnn-missing"])


@settings(max_examples=examples(15), deadline=None)
@given(st.sampled_from(["- CUDA/cuDNN version: {c}\n", "### CUDA/cuDNN version\n\n{c}\n"]), CUDA)
def test_template_line_with_the_cuda_release_only_names_no_cudnn(line: str, cuda: str) -> None:
    # only the CUDA release answered: the CUDA release is not a cuDNN copy; the line alone is
    # no cause
    assert _ids(line.format(c=cuda) + _dso_failure(7))[:1] == ["cudnn-missing"]
    assert _ids(line.format(c=cuda) + "- GPU model and memory: Tesla T4\n") == []
