"""Round twenty-nine (d): read from the misses of sets 89-92 (the twentieth session's second blind
sets, measured unread on its first tree and after round (c)), each reading derived from its
emitter's source (cited beside the rule in recipes/errors.toml):

- TensorFlow's CUDA diagnostics "kernel version X does not match DSO version Y": the kernel module
  and the user-space driver of two versions, a driver update that needs a reboot (driver-missing);
- LLVM's NVPTX "PTX version X does not support target 'sm_NN'": the compiler built into the
  framework predates the GPU (gpu-arch-unsupported);
- an undefined torch C++ symbol of a const member (_ZNK) or without the file that needs it: an
  extension built against another torch (pip-conflict);
- nvcc's "Unsupported gpu architecture" quoted without its "nvcc fatal :" prefix;
- numba's low-occupancy hint is harmless;
- the words "no GPU found" beside an NVIDIA GPU named: the driver does not reach it.

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

_DRIVER = st.from_regex(r"\A[3-5][0-9]{2}\.[0-9]{1,3}(\.[0-9]{1,2})?\Z", fullmatch=True)


@settings(max_examples=examples(60), deadline=None)
@given(kernel=_DRIVER, dso=_DRIVER, noise=NOISE)
def test_tensorflow_kernel_module_and_user_space_driver_of_two_versions(kernel, dso, noise):
    text = (
        noise
        + "E tensorflow/stream_executor/cuda/cuda_driver.cc:406] failed call to cuInit: CUDA_ERROR_NO_DEVICE\n"
        f"E tensorflow/stream_executor/cuda/cuda_diagnostics.cc:303] kernel version {kernel} does not match DSO "
        f"version {dso} -- cannot find working devices in this configuration\n"
    )
    assert _ids(text)[0] == "driver-missing", text


@settings(max_examples=examples(60), deadline=None)
@given(
    pair=st.sampled_from(
        [
            ("8.5", "sm_120", "8.7"),
            ("8.6", "sm_120a", "8.7"),
            ("7.8", "sm_90a", "8.0"),
            ("9.0", "sm_107a", "9.4"),
        ]
    ),
    alt=st.booleans(),
    noise=NOISE,
)
def test_llvm_emitting_a_ptx_version_older_than_the_gpus_target(pair, alt, noise):
    ptx, target, need = pair
    also = f" (or '{target}a')" if alt and not target.endswith("a") else ""
    text = (
        noise
        + f"LLVM ERROR: PTX version {ptx} does not support target '{target}'{also}. Minimum required PTX version is {need}\n"
    )
    assert _ids(text)[0] == "gpu-arch-unsupported", text


@settings(max_examples=examples(40), deadline=None)
@given(
    sym=st.sampled_from(
        [
            "_ZNK2at6Tensor6deviceEv",
            "_ZNK5torch8autograd4Node4nameB5cxx11Ev",
            "_ZN3c104cuda9SetDeviceEi",
            "_ZNK3c1010TensorImpl4sizeEl",
        ]
    ),
    prefix=st.sampled_from(["ImportError ", "ImportError: ", "OSError: "]),
)
def test_a_torch_symbol_an_extension_cannot_find_is_another_torchs_extension(sym, prefix):
    text = f"{prefix}undefined symbol: {sym}\n"
    assert _ids(text)[0] == "pip-conflict", text


@settings(max_examples=examples(30), deadline=None)
@given(
    arch=st.sampled_from(["compute_86", "compute_89", "compute_90", "sm_120"]),
    quote=st.sampled_from(['"', "", "`"]),
)
def test_nvccs_unknown_architecture_quoted_without_its_prefix(arch, quote):
    text = f"I meet the error: {quote}Unsupported gpu architecture '{arch}'{quote}\n"
    assert _ids(text)[0] == "cuda-lib-mismatch", text


@settings(max_examples=examples(30), deadline=None)
@given(grid=st.integers(1, 127), failure=st.booleans())
def test_numbas_low_occupancy_hint_is_harmless(grid, failure):
    hint = f"NumbaPerformanceWarning: Grid size {grid} will likely result in GPU under-utilization due to low occupancy.\n"
    if failure:
        text = (
            hint
            + "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY\n"
        )
        assert _ids(text)[0] == "out-of-memory", text
    else:
        assert _ids(hint)[0] == "log-noise", hint


@settings(max_examples=examples(40), deadline=None)
@given(
    gpu=st.sampled_from(["Tesla K80", "GeForce RTX 3060", "NVIDIA A100", ""]),
    words=st.sampled_from(
        [
            'xmrig writes "No GPU found"',
            "GPU not detected, exiting",
            "no cuda capable devices detected",
        ]
    ),
)
def test_the_words_no_gpu_found_beside_a_gpu_named(gpu, words):
    text = (f"My machine has a {gpu} GPU and drivers installed.\n" if gpu else "") + words + "\n"
    assert _ids(text)[0] == ("driver-missing" if gpu else "gpu-missing"), text
