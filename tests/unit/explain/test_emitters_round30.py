"""Round thirty (a): read from the misses of sets 93-94 (the twentieth session's final blind sets,
measured unread on its first and its last tree), each reading derived from its emitter's source
(cited beside the rule in recipes/errors.toml):

- MXNet's imperative API choosing a GPU context in a build without CUDA: "GPU support is
  disabled. Compile MXNet with USE_CUDA=1" (cpu-only-build);
- PaddlePaddle's loader note "[Recommend] copy cudnn into ...", logged only after every name of
  the cuDNN library failed to load (cudnn-missing);
- PaddlePaddle's loader suggestion "After Mac OS 10.11, using the DYLD_LIBRARY_PATH ..." is
  printed on every platform: it names no Mac;
- an allocation that "could not" / "cannot" be made reads as memory running out, as "failed to
  allocate" did;
- Python's "cannot import name X from Y": two packages of releases that do not go together.

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import analyze
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

_TIME = st.from_regex(r"\A[0-2][0-9]:[0-5][0-9]:[0-5][0-9]\Z", fullmatch=True)
_OP = st.from_regex(r"\A_?[a-z][a-z_]{1,20}\Z", fullmatch=True)


@settings(max_examples=examples(60), deadline=None)
@given(t=_TIME, op=_OP, line=st.integers(1, 400), noise=NOISE)
def test_mxnet_imperative_api_in_a_build_without_cuda(t, op, line, noise):
    text = (
        noise
        + f"[{t}] src/imperative/./imperative_utils.h:{line}: GPU support is disabled. Compile MXNet "
        "with USE_CUDA=1 to enable GPU support.\n"
        "Traceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\n'
        f"mxnet.base.MXNetError: [{t}] src/imperative/imperative.cc:{line}: Operator {op} is not "
        "implemented for GPU.\n"
    )
    assert _ids(text)[0] == "cpu-only-build", text


@settings(max_examples=examples(60), deadline=None)
@given(
    where=st.sampled_from(
        [
            "CUDA installation directory. \n For instance, download cudnn-10.0-windows10-x64-v7.6.5.32.zip from NVIDIA's official website, \nthen, unzip it and copy it into C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v10.0\nYou should do this according to your CUDA installation directory and CUDNN version.",
            "/usr/local/cuda/ \n For instance, sudo tar -xzf cudnn-7.5-osx-x64-v5.0-ga.tgz -C /usr/local \n sudo chmod a+r /usr/local/cuda/include/cudnn.h /usr/local/cuda/lib/libcudnn*",
        ]
    ),
    cc=st.sampled_from(["6.1", "7.5", "8.6"]),
    noise=NOISE,
)
def test_paddles_loader_note_after_no_cudnn_loaded(where, cc, noise):
    text = (
        noise
        + f"W0804 21:55:45.072443 12172 device_context.cc:404] Please NOTE: device: 0, GPU Compute Capability: {cc}, Driver API Version: 11.2, Runtime API Version: 10.2\n"
        f"W0804 21:55:45.073442 12172 dynamic_loader.cc:238] Note: [Recommend] copy cudnn into {where}\n"
        "Traceback (most recent call last):\n"
        '  File "train.py", line 53, in <module>\n'
    )
    assert _ids(text)[0] == "cudnn-missing", text


@settings(max_examples=examples(40), deadline=None)
@given(lib=st.sampled_from(["libcudnn.so", "libcublas.so", "libcuda.so"]), noise=NOISE)
def test_paddles_loader_suggestion_names_no_mac(lib, noise):
    text = (
        noise
        + f"W0508 21:40:15.979074  1551 dynamic_loader.cc:412] The third-party dynamic library ({lib}) that Paddle depends on is not configured correctly. (error code is {lib}: cannot open shared object file: No such file or directory)\n"
        "  Suggestions:\n"
        "  1. Check if the third-party dynamic library (e.g. CUDA, CUDNN) is installed correctly and its version is matched with paddlepaddle you installed.\n"
        "  2. Configure third-party dynamic library environment variables as follows:\n"
        "  - Linux: set LD_LIBRARY_PATH by `export LD_LIBRARY_PATH=...`\n"
        "  - Windows: set PATH by `set PATH=XXX;%PATH%`\n"
        "  - Mac: set  DYLD_LIBRARY_PATH by `export DYLD_LIBRARY_PATH=...` [Note: After Mac OS 10.11, using the DYLD_LIBRARY_PATH is impossible unless System Integrity Protection (SIP) is disabled.]\n"
    )
    assert "gpu-missing" not in _ids(text)[:1], text
    if lib == "libcuda.so":
        # a Mac the user names is still read as one: no NVIDIA GPU for the driver library
        assert _ids("I run it on Mac OS 14.\n" + text)[0] == "gpu-missing"


@settings(max_examples=examples(60), deadline=None)
@given(
    verb=st.sampled_from(["Could not", "could not", "Cannot", "cannot", "can't", "Couldn't"]),
    what=st.sampled_from(
        [
            "shared buffer for CUDA basecaller",
            "memory",
            "80.000000MB memory on GPU 0",
            "the device buffer",
        ]
    ),
    prefix=st.sampled_from(
        [
            "terminate called after throwing an instance of 'std::runtime_error'\n  what():  ",
            "ERROR: ",
            "",
        ]
    ),
)
def test_an_allocation_that_could_not_be_made_is_memory_running_out(verb, what, prefix):
    text = f"{prefix}{verb} allocate {what}.\nAborted (core dumped)\n"
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(60), deadline=None)
@given(
    name=st.from_regex(r"\A[a-z][A-Za-z_]{2,30}\Z", fullmatch=True),
    module=st.from_regex(r"\A[a-z][a-z_]{1,12}(\.[a-z_]{1,12}){0,3}\Z", fullmatch=True),
)
def test_a_name_one_package_expects_of_another_is_a_release_mismatch(name, module):
    text = (
        "Traceback (most recent call last):\n"
        '  File "run.py", line 3, in <module>\n'
        f"ImportError: cannot import name '{name}' from '{module}'\n"
    )
    result = analyze(text)
    assert result.findings[0].id == "pip-conflict", text
    # a guess from the words, never a recognised message
    assert not result.recognised


def test_a_name_from_an_unknown_location_is_not_read_as_a_release_mismatch():
    text = "ImportError: cannot import name 'x' from 'pkg' (unknown location)\n"
    assert "pip-conflict" not in _ids(text)[:1]
