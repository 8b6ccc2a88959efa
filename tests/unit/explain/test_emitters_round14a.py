"""Round fourteen (a)'s readings, each from the code that prints the message or the list.

- ONNX Runtime's available providers (get_execution_providers.cc: the providers compiled into
  the build): a list of them without CUDAExecutionProvider is a build without CUDA
  (cpu-only-build); with both onnxruntime and onnxruntime-gpu shown installed (they ship the same
  onnxruntime/ files) it is pip-conflict. A session's providers without CUDA after the CUDA
  provider failed to load keep that failure's reading.
- ONNX Runtime 1.1-1.7's _pybind_state.py only warns when its native module fails to import;
  __init__.py then cannot import the names it defines: on Windows the GPU package's CUDA DLLs,
  then cuDNN's (the order ORT's later checks use); its later checks' own ImportErrors.
- PaddlePaddle's dynload with a ';'-separated list of candidate names: the first names the family.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from typing import List

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids


# --- ONNX Runtime: the available providers without CUDAExecutionProvider ---------------------

#: providers a build without CUDA may list before the CPU one (get_execution_providers.cc)
OTHER_EPS = st.lists(
    st.sampled_from(["OpenVINOExecutionProvider", "DnnlExecutionProvider", "DmlExecutionProvider"]),
    max_size=2,
    unique=True,
)


def _provider_list(others: List[str], azure: bool) -> str:
    names = others + (["AzureExecutionProvider"] if azure else []) + ["CPUExecutionProvider"]
    return "[" + ", ".join(f"'{n}'" for n in names) + "]"


#: how the list reaches a paste: ORT's REPL answer, ORT 1.1's ValueError, applications' wordings
AVAILABLE = st.sampled_from(
    [
        ">>> import onnxruntime\n>>> onnxruntime.get_available_providers()\n{lst}\n",
        "ValueError: ['CUDAExecutionProvider'] does not contain a subset of available providers "
        "{lst}\n",
        "CUDAExecutionProvider not found in onnxruntime.available_providers : {lst}, use CPU "
        "instead. Check onnxruntime-gpu is installed\n",
        "Available providers: {lst}\n",
    ]
)


@settings(max_examples=examples(25), deadline=None)
@given(NOISE, AVAILABLE, OTHER_EPS, st.booleans())
def test_available_providers_without_cuda_are_a_build_without_cuda(
    noise: str, wording: str, others: List[str], azure: bool
) -> None:
    text = noise + wording.format(lst=_provider_list(others, azure))
    assert _ids(text)[:1] == ["cpu-only-build"]


@settings(max_examples=examples(20), deadline=None)
@given(NOISE, OTHER_EPS, st.sampled_from(["ONNX Runtime Providers:\n  ", "providers = ", ""]))
def test_a_list_with_azure_is_the_available_one(noise: str, others: List[str], head: str) -> None:
    # AzureExecutionProvider is listed unasked only by get_available_providers()
    text = noise + head + _provider_list(others, True) + "\n"
    assert _ids(text)[:1] == ["cpu-only-build"]
    # a list that holds CUDA (a GPU build), or a session's own ['CPUExecutionProvider'] with
    # no word of "available", is no such reading
    gpu = "['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'CPUExecutionProvider']"
    assert "cpu-only-build" not in _ids(noise + "Available providers: " + gpu + "\n")
    assert "cpu-only-build" not in _ids(noise + "session providers: ['CPUExecutionProvider']\n")


@settings(max_examples=examples(15), deadline=None)
@given(NOISE, st.integers(0, 9), st.booleans())
def test_a_cuda_provider_that_failed_to_load_keeps_its_reading(
    noise: str, n: int, azure: bool
) -> None:
    failure = (
        f"[W:onnxruntime:Default, onnxruntime_pybind_state.cc:96{n} CreateExecutionProviderInstance]"
        " Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*. Please install "
        "all dependencies as mentioned in the GPU requirements page\n"
    )
    alone = _ids(noise + failure)
    listed = _ids(noise + failure + "Available providers: " + _provider_list([], azure) + "\n")
    assert alone and listed[:1] == alone[:1]
    assert "cpu-only-build" not in listed and "pip-conflict" not in listed


#: how pip and uv show an installed distribution NAME at VERSION
INSTALLED = st.sampled_from(
    [
        " + {name}=={v}\n",
        "{name}=={v}\n",
        "{name:<22}{v}\n",
        "Successfully installed numpy-2.2.3 {name}-{v} protobuf-5.29.3\n",
    ]
)
SYMPTOM = st.sampled_from(
    [
        ">>> onnxruntime.get_available_providers()\n['AzureExecutionProvider', "
        "'CPUExecutionProvider']\n",
        "UserWarning: Specified provider 'CUDAExecutionProvider' is not in available provider "
        "names.Available providers: 'AzureExecutionProvider, CPUExecutionProvider'\n",
        "onnxruntime.capi.onnxruntime_pybind11_state.Fail: CUDA execution provider is not enabled "
        "in this build.\n",
    ]
)


@settings(max_examples=examples(25), deadline=None)
@given(NOISE, INSTALLED, INSTALLED, SYMPTOM, st.integers(16, 23), st.booleans(), st.booleans())
def test_both_onnxruntime_wheels_installed_is_pip_conflict(
    noise: str, cpu: str, gpu: str, symptom: str, minor: int, gpu_first: bool, both: bool
) -> None:
    v = f"1.{minor}.1"
    lines = [cpu.format(name="onnxruntime", v=v), gpu.format(name="onnxruntime-gpu", v=v)]
    if gpu_first:
        lines.reverse()
    if not both:  # one of the two only: no conflict, the build without CUDA stays
        lines = lines[1:]
    ids = _ids(noise + "".join(lines) + symptom)
    assert ids[:1] == (["pip-conflict"] if both else ["cpu-only-build"])


# --- ONNX Runtime: the native module that failed to import ------------------------------------

NAMES = st.sampled_from(["get_all_providers", "get_available_providers", "get_device"])
DIRS = st.sampled_from(
    ["C:\\Programs\\Python\\Python37\\lib\\site-packages", "D:\\venv\\lib\\site-packages"]
)


@settings(max_examples=examples(20), deadline=None)
@given(NOISE, NAMES, DIRS, st.booleans())
def test_native_module_import_failure_reads_the_cuda_dlls_first(
    noise: str, name: str, site: str, warned: bool
) -> None:
    warning = (
        f"{site}\\onnxruntime\\capi\\_pybind_state.py:13: UserWarning: Cannot load "
        "onnxruntime.capi. Error: 'DLL load failed: The specified module could not be found.'\n"
        if warned
        else ""
    )
    text = (
        noise
        + warning
        + f"ImportError: cannot import name '{name}' from 'onnxruntime.capi._pybind_state' "
        f"({site}\\onnxruntime\\capi\\_pybind_state.py)\n"
    )
    assert _ids(text)[:2] == ["cuda-lib-missing", "cudnn-missing"]
    # the CPU package's own dependency named (the VC++ runtime): not a CUDA reading
    vc = "UserWarning: Please install the 2019 Visual C++ runtime and then try again.\n"
    assert "cuda-lib-missing" not in _ids(vc + text)


@settings(max_examples=examples(15), deadline=None)
@given(NOISE, st.sampled_from(["10.0", "10.2", "11.x", "12.x"]), st.integers(7, 9), DIRS)
def test_ort_windows_checks_name_the_missing_part(
    noise: str, cuda: str, cudnn: int, site: str
) -> None:
    toolkit = f"ImportError: CUDA Toolkit {cuda} not installed on the machine.\n"
    assert _ids(noise + toolkit)[:1] == ["cuda-lib-missing"]
    dnn = f"ImportError: cuDNN {cudnn} not installed in {site}\\bin.\n"
    assert _ids(noise + dnn)[:1] == ["cudnn-missing"]


# --- PaddlePaddle: a list of candidate library names ------------------------------------------

PADDLE = (
    "PreconditionNotMetError: The third-party dynamic library ({libs}) that Paddle depends on is "
    "not configured correctly. (error code is 126)\n  Suggestions:\n  1. Check if the third-party "
    "dynamic library (e.g. CUDA, CUDNN) is installed correctly and its version is matched with "
    "paddlepaddle you installed.\n"
)


@settings(max_examples=examples(25), deadline=None)
@given(
    NOISE,
    st.sampled_from(["cublas", "curand", "cusolver", "cusparse", "cufft"]),
    st.integers(10, 12),
    st.integers(0, 8),
    st.booleans(),
)
def test_paddle_candidate_list_first_name_decides(
    noise: str, stem: str, major: int, minor: int, legacy: bool
) -> None:
    names = [f"{stem}64_{major}{minor}.dll", f"{stem}64_{major}.dll"]
    if legacy:  # CUDA >= 11 builds also try the CUDA 10 name last
        names.append(f"{stem}64_10.dll")
    assert _ids(noise + PADDLE.format(libs=";".join(names)))[:1] == ["cuda-lib-missing"]
    # a single name is read as before
    assert _ids(noise + PADDLE.format(libs=f"cudnn64_{minor % 3 + 7}.dll"))[:1] == ["cudnn-missing"]
