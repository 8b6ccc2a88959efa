"""Round twenty-nine (c): read from the misses of sets 85-88 (the twentieth session's first blind
sets, measured unread on its first tree and after rounds (a) and (b)), each reading derived from
its emitter's source (cited beside the rule in recipes/errors.toml):

- nvcc / ptxas not knowing an architecture, beside a toolkit release named that predates it
  (CUDA 7.5 and compute_60): the toolkit is older than the GPU (cuda-lib-mismatch), never "this
  release dropped it" (fixer.explainer.evidence._release_verdict);
- Theano's CNMeM pool out of memory; bitsandbytes' "Your GPU does not support Int8 Matmul!";
  torch autocast's "Current CUDA Device does not support bfloat16"; HOOMD-blue's and Iray's
  capability checks; COLMAP without CUDA and COLMAP counting no device; dlib.DLIB_USE_CUDA False;
  a TensorRT engine of another TensorRT release; a ROCm extension (libtorch_hip.so) beside a CUDA
  torch;
- evidence: Windows' cudnn64_7.dll names cuDNN 7, not a "cuDNN 64"; a build's "does not have GPU
  support" is no sentence about the machine; torch itself a ROCm build is another vendor's GPU;
  Apple Silicon's Homebrew prefix is a Mac; "nivida" misspelt; "libX.so.N is needed" a missing
  library's words.

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

#: (architecture, a CUDA release before it was introduced): sm_60 came with CUDA 8.0, sm_70 with 9.0
_PREDATES = st.sampled_from([("60", "7.5"), ("61", "7.0"), ("70", "8.0"), ("72", "8.0")])


@settings(max_examples=examples(60), deadline=None)
@given(
    pair=_PREDATES,
    form=st.sampled_from(["Cuda{v}+cudnn5", "CUDA {v}", "/usr/local/cuda-{v}/bin/nvcc"]),
)
def test_a_toolkit_release_older_than_the_architecture_is_an_older_toolkit(pair, form):
    arch, release = pair
    text = (
        f"nvcc fatal   : Unsupported gpu architecture 'compute_{arch}'\n{form.format(v=release)}\n"
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text
    # no release named: the rule's own reading (a toolkit that dropped it, CUDA 13's range) stands
    assert (
        _ids(f"nvcc fatal   : Unsupported gpu architecture 'compute_{arch}'\n")[0]
        == "gpu-arch-unsupported"
    )
    # a release that dropped it named: the GPU is too old for the toolkit
    assert (
        _ids(f"nvcc fatal   : Unsupported gpu architecture 'compute_{arch}'\nCUDA 13.0\n")[0]
        == "gpu-arch-unsupported"
    )


@settings(max_examples=examples(40), deadline=None)
@given(
    case=st.sampled_from(
        [
            (
                "initCnmem: cnmemInit call failed! Reason=CNMEM_STATUS_OUT_OF_MEMORY. numdev=1",
                "out-of-memory",
            ),
            ("ERROR: Your GPU does not support Int8 Matmul!", "gpu-arch-unsupported"),
            (
                "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
                "gpu-arch-unsupported",
            ),
            (
                "The device Tesla K80 with computed capability 3.7 does not support HOOMD-blue.",
                "gpu-arch-unsupported",
            ),
            (
                "GPU 1 (NVIDIA RTX PRO 5000 Blackwell) with CUDA compute capability 12.0\nis unsupported by this version of iray photoreal.",
                "gpu-arch-unsupported",
            ),
            (
                "ERROR: Dense stereo reconstruction requires CUDA, which is not available on your system.",
                "cpu-only-build",
            ),
            ("Check failed: num_cuda_devices > 0 (0 vs. 0)", "gpu-missing"),
            (">>> dlib.DLIB_USE_CUDA\nFalse", "cpu-only-build"),
            (
                "The engine plan file is not compatible with this version of TensorRT, expecting library version 5.1.2 got 5.1.5, please rebuild.",
                "cuda-lib-mismatch",
            ),
            (
                "Error Code 1: Serialization (Serialization assertion safeVersionRead == safeSerializationVersion failed.Version tag does not match.",
                "cuda-lib-mismatch",
            ),
            (
                "ImportError: libtorch_hip.so: cannot open shared object file: No such file or directory",
                "pip-conflict",
            ),
        ]
    ),
    noise=NOISE,
)
def test_round_twenty_nine_c_emitters(case, noise):
    line, want = case
    assert _ids(noise + line + "\n")[0] == want, line


@settings(max_examples=examples(30), deadline=None)
@given(dll=st.sampled_from(["cudnn64_7.dll", "cudnn64_8.dll", "cudnn64_6.dll"]))
def test_the_64_of_a_windows_cudnn_dll_is_no_major(dll):
    text = (
        f"Could not Find '{dll}' (yet I have it installed)\n"
        "pip install torch==1.2.0 torchvision==0.4.0 -f https://download.pytorch.org/whl/torch_stable.html\n"
    )
    found = _ids(text)
    assert found[0] == "cudnn-missing", (text, found)


def test_a_builds_missing_gpu_support_is_no_sentence_about_the_machine():
    text = (
        "WARNING:root:This caffe2 python run does not have GPU support. Will run in CPU only mode.\n"
        "WARNING:root:Debug message: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    )
    assert _ids(text)[0] == "driver-missing"
    said = "I don't have a GPU\nWARNING:root:Debug message: libcuda.so.1: cannot open shared object file: No such file or directory\n"
    assert _ids(said)[0] == "gpu-missing"


@settings(max_examples=examples(40), deadline=None)
@given(
    machine=st.sampled_from(
        [
            "torch.__version__  = 2.7.0+rocm6.3",
            "PyTorch version: 2.1.0+rocm5.6",
            "torch==2.4.1+rocm6.1",
            "/opt/homebrew/lib/python3.11/site-packages/torch/__init__.py",
            "i don't have nivida gpu",
        ]
    )
)
def test_a_machine_without_an_nvidia_gpu_named_another_way(machine):
    text = f"{machine}\nAssertionError: Torch not compiled with CUDA enabled\n"
    assert _ids(text)[0] == "gpu-missing", text


def test_a_rocm_extension_beside_a_cuda_torch_is_not_an_amd_machine():
    text = (
        "ImportError: libtorch_hip.so: cannot open shared object file: No such file or directory\n"
        "PyTorch version: 1.9.0+cu111\n[pip3] torch==1.9.0+cu111\n[pip3] torchaudio==0.10.0.dev20210902+rocm4.1\n"
    )
    assert _ids(text)[0] == "pip-conflict"


@settings(max_examples=examples(30), deadline=None)
@given(
    lib=st.sampled_from(["libcublas.so.9.0", "libcudart.so.10.1", "libcufft.so.10"]),
    word=st.sampled_from(["needed", "required"]),
)
def test_a_library_said_to_be_needed_is_missing(lib, word):
    text = f"However, I met the following trouble, {lib} is {word}!\nTraceback (most recent call last):\n"
    assert _ids(text)[0] == "cuda-lib-missing", text
