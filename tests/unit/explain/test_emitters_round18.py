"""Round eighteen: read from the emitters after the misses of held-out sets 19 and 20 were read.

- torch 2.11's capability warning (torch/cuda/__init__.py:334-371@2.11.0): "Found GPU{i} {name}
  which is of compute capability (CC) X.Y." and the list of the build's CCs, printed only when no
  CC of the build runs on the device: gpu-arch-unsupported.
- The runtime's strings as wrappers cut or frame them: "no kernel image is available for
  execution" cut before "on the device"; "Error text: invalid device function" (any case of
  "error" before it).
- NVML that did not load (nvidia-smi 580's "couldn't find libnvidia-ml.so library", pynvml's
  LibraryNotFound / DriverNotLoaded, Go's "could not load NVML library"): driver-missing, the
  paste's GPU deciding as for the other no-driver messages.
- cudarc's loader ("Unable to find {lib} lib under the names", "Unable to dynamically load the
  \"{lib}\" shared library"): the library's name decides (cuda: the driver; cudnn; the others).
- PaddlePaddle's "[cudnn init] libcudnn vN with header vM unmatched": cudnn-major-mismatch.
- mshadow's "Create cublas handle failed": read as cuBLAS's NOT_INITIALIZED (memory first).
- uv's "cannot be used" / "are incompatible" after "we can conclude that", and the derivation a
  user quotes: pip-conflict.
- A glibc / libstdc++ symbol version named without the loader's sentence: system-runtime-too-old.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

NUM = st.integers(0, 99)
CC = st.sampled_from([50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 120])
NAMES = st.sampled_from(
    [
        "NVIDIA GeForce GTX 1080",
        "Tesla P100-PCIE-16GB",
        "NVIDIA GeForce GTX 1050 Ti",
        "Orin",
        "Quadro P4000",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(
    i=st.integers(0, 7), name=NAMES, cc=CC, code=st.lists(CC, min_size=1, max_size=6), noise=NOISE
)
def test_torch_2_11_capability_warning(i, name, cc, code, noise):
    lines = [
        f"{noise}/usr/lib/python3/site-packages/torch/cuda/__init__.py:371: UserWarning: Found GPU{i} "
        f"{name} which is of compute capability (CC) {cc // 10}.{cc % 10}.",
        "The following list shows the CCs this version of PyTorch was built for and the hardware "
        "CCs it supports:",
    ] + [f"- {c // 10}.{c % 10} which supports hardware CC >={c // 10}.{c % 10}" for c in code]
    text = "\n".join(lines)
    assert _ids(text)[0] == "gpu-arch-unsupported", (text, _ids(text))


@settings(max_examples=examples(20), deadline=None)
@given(
    cut=st.integers(0, 4),
    prefix=st.sampled_from(
        ["torch.AcceleratorError: CUDA error: ", "RuntimeError: CUDA error: ", "Error: "]
    ),
)
def test_a_cut_no_kernel_image_still_reads(cut, prefix):
    tail = " on the device"[: len(" on the device") - cut * 3]
    text = f"{prefix}no kernel image is available for execution{tail}"
    assert _ids(text)[0] == "gpu-arch-unsupported", text


@settings(max_examples=examples(20), deadline=None)
@given(code=st.sampled_from(["98", "8"]), word=st.sampled_from(["Error", "error", "ERROR"]), n=NUM)
def test_invalid_device_function_after_any_error_word(code, word, n):
    text = (
        f"CUDA Error:\n    File:       inference.cpp\n    Line:       {n}\n    {word} code: {code}\n"
        f"    {word} text: invalid device function"
    )
    assert _ids(text)[0] == "gpu-arch-unsupported", text


NVML = st.sampled_from(
    [
        "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the "
        "NVIDIA Display Driver is properly installed and present in your system.",
        "pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found",
        'the pod error, the message is "couldn\'t initialize gonvml: could not load NVML library"',
        "could not load NVML library: libnvidia-ml.so.1: cannot open shared object file",
        "pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(msg=NVML, noise=NOISE, gpu=st.sampled_from(["", "nvidia", "other", "said"]))
def test_nvml_not_loaded_is_the_driver_unless_there_is_no_gpu(msg, noise, gpu):
    shown = {
        "": "",
        "nvidia": "\nMy GPU is a GeForce RTX 3090",
        "other": "\n00:02.0 VGA compatible controller: Intel Corporation UHD Graphics 630",
        "said": "\nThis machine has no NVIDIA GPU",
    }[gpu]
    got = _ids(noise + msg + shown)
    want = "gpu-missing" if gpu in ("other", "said") else "driver-missing"
    assert got[0] == want, (msg, gpu, got)
    assert {"driver-missing", "gpu-missing"} <= set(got[:3])


@settings(max_examples=examples(30), deadline=None)
@given(
    lib=st.sampled_from(
        [
            "cuda",
            "cudnn",
            "cudart",
            "cublas",
            "cublasLt",
            "curand",
            "nccl",
            "nvrtc",
            "cusparse",
            "cutensor",
        ]
    ),
    new=st.booleans(),
    n=NUM,
)
def test_cudarc_the_library_name_decides(lib, new, n):
    if new:
        text = (
            f'Unable to dynamically load the "{lib}" shared library - searched for library names: '
            f'["lib{lib}.so", "lib{lib}.so.{n}"]. Ensure that `LD_LIBRARY_PATH` has the correct path'
        )
    else:
        text = (
            f"thread 'main' panicked at src/driver/sys/mod.rs:61:9:\nUnable to find {lib} lib under "
            f'the names ["{lib}", "{lib}64_{n}"]. Please open GitHub issue.'
        )
    want = {"cuda": "driver-missing", "cudnn": "cudnn-missing"}.get(lib, "cuda-lib-missing")
    assert _ids(text)[0] == want, (text, _ids(text))


@settings(max_examples=examples(20), deadline=None)
@given(dso=st.integers(2, 9), header=st.integers(2, 9), n=NUM)
def test_paddle_v1_cudnn_header_check(dso, header, n):
    text = (
        f"F0101 00:00:{n:02d}.000000 hl_cuda_cudnn.cc:{n}] Check failed: (cudnn_cuh_major < 4 && "
        f"cudnn_dso_major < 4) || (cudnn_cuh_major == cudnn_dso_major) [cudnn init] libcudnn v{dso} "
        f"with header v{header} unmatched!"
    )
    assert _ids(text)[0] == "cudnn-major-mismatch", text


@settings(max_examples=examples(10), deadline=None)
@given(n=NUM)
def test_mshadow_cublas_handle(n):
    text = (
        "terminate called after throwing an instance of 'dmlc::Error'\n  what():  [18:47:35] "
        f"mshadow/./stream_gpu-inl.h:{n}: Check failed: err == CUBLAS_STATUS_SUCCESS (1 vs. 0) : "
        "Create cublas handle failed"
    )
    assert _ids(text)[:2] == ["out-of-memory", "cuda-lib-mismatch"], _ids(text)


@settings(max_examples=examples(20), deadline=None)
@given(a=st.integers(10, 30), b=st.integers(10, 30), quoted=st.booleans())
def test_uv_cannot_be_used(a, b, quoted):
    if quoted:
        text = (
            f"Because only vllm==0.{a}.1 is available and\nvllm==0.{a}.1 depends on "
            f"torchvision==0.{b}.0,\n\nand mypkg==4.4.0 depends on torchvision>=0.{b + 1}.0\nand "
            "vllm,\n\nmypkg==4.4.0 cannot be used."
        )
    else:
        text = (
            f"  × No solution found when resolving dependencies:\n  ╰─▶ Because only vllm==0.{a}.1 "
            f"is available and vllm==0.{a}.1 depends on torchvision==0.{b}.0, we can conclude that "
            "all versions of vllm cannot be used."
        )
    assert _ids(text)[0] == "pip-conflict", text


@settings(max_examples=examples(20), deadline=None)
@given(
    sym=st.sampled_from(["GLIBC_2.{n}", "GLIBCXX_3.4.{n}", "CXXABI_1.3.{n}"]),
    n=st.integers(10, 39),
    noise=NOISE,
)
def test_a_symbol_version_named_alone(sym, n, noise):
    text = f"{noise}when I import it, it says {sym.format(n=n)} is required"
    assert _ids(text)[0] == "system-runtime-too-old", text
    # the loader's own sentence still reads first, as the loader reads it
    full = f"ImportError: /lib64/libstdc++.so.6: version `{sym.format(n=n)}' not found (required by /x/_C.so)"
    assert _ids(full)[0] == "system-runtime-too-old"
