"""Round eleven (b)'s readings, each from the code that prints the message.

- TensorFlow's "not built with CUDA kernel binaries compatible with compute capability X":
  GetValidDeviceIds (gpu_device.cc) warns when no TF_CUDA_COMPUTE_CAPABILITIES entry has the
  device's major and a minor at most its minor, and still adds the device: alone, a slow first
  run (log-noise, benign), never a CPU-only build. With TensorFlow's kernel loader reporting
  "'cuModuleLoadData(&module, data)' failed with 'CUDA_ERROR_INVALID_PTX'" (a PTX JIT
  compilation failed, cuda.h) in the same paste, the build has no usable code for this GPU.
- vLLM's _check_if_gpu_supports_dtype: bfloat16 on a GPU below compute capability 8.0.
- xFormers' xFormersInvalidLibException: built for another torch (or Python) than the one that
  runs: pip-conflict; equal versions decide nothing here.
- bitsandbytes 0.38-0.42's CUDA setup: no binary named after torch's CUDA (pip-conflict), or no
  libcudart found when its library did not load (cuda-lib-missing).
- JAX's "Unable to initialize backend 'cuda': ..." with an AttributeError on a jaxlib / plugin
  module: the plugin and jaxlib are of different releases; other payloads keep their reading.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

CC = st.builds(
    lambda ma, mi, a: f"{ma}.{mi}{a}",
    st.integers(3, 12),
    st.integers(0, 9),
    st.sampled_from(["", "a"]),
)


def _jit(cc: str, n: int, old: bool) -> str:
    where = (
        f"2024-12-25 21:32:43.137142: W tensorflow/core/common_runtime/gpu/gpu_device.cc:{n}]"
        if old
        else f"W0000 00:00:1753232013.685876   {n} gpu_device.cc:{n}]"
    )
    return (
        f"{where} TensorFlow was not built with CUDA kernel binaries compatible with compute "
        f"capability {cc}. CUDA kernels will be jit-compiled from PTX, which could take 30 "
        "minutes or longer."
    )


def _ptx(n: int, status: str) -> str:
    return (
        f"2025-11-24 23:14:48.524495: W tensorflow/compiler/mlir/tools/kernel_gen/"
        f"tf_gpu_runtime_wrappers.cc:{n}] 'cuModuleLoadData(&module, data)' failed with '{status}'"
    )


@settings(max_examples=examples(100), deadline=None)
@given(cc=CC, n=st.integers(1, 99999), old=st.booleans(), before=NOISE, twice=st.booleans())
def test_tensorflow_jit_warning_alone_is_a_slow_first_run(cc, n, old, before, twice):
    line = _jit(cc, n, old)
    text = before + line + ("\n" + line if twice else "")
    found = explain(text)
    assert [f.id for f in found][:1] == ["log-noise"]
    assert found[0].severity == "info"  # harmless unless an error follows
    assert "cpu-only-build" not in [f.id for f in found]


@settings(max_examples=examples(100), deadline=None)
@given(cc=CC, n=st.integers(1, 99999), old=st.booleans(), before=NOISE)
def test_tensorflow_jit_then_invalid_ptx_has_no_code_for_the_gpu(cc, n, old, before):
    text = f"{before}{_jit(cc, n, old)}\nI0000 created device GPU:0\n{_ptx(n, 'CUDA_ERROR_INVALID_PTX')}"
    found = explain(text)
    assert found[0].id == "gpu-arch-unsupported" and found[0].severity == "error"
    # the warning is no longer said to be harmless (other start-up lines may still be)
    assert not any(f.id == "log-noise" and "PTX" in f.title for f in found)
    assert "cpu-only-build" not in [f.id for f in found]


@settings(max_examples=examples(50), deadline=None)
@given(cc=CC, n=st.integers(1, 99999), old=st.booleans())
def test_neighbours_of_the_jit_warning_keep_their_readings(cc, n, old):
    """A PTX newer than the driver's compiler stays the driver's; an INVALID_PTX without the
    warning is not read as this build's missing code."""
    text = f"{_jit(cc, n, old)}\n{_ptx(n, 'CUDA_ERROR_UNSUPPORTED_PTX_VERSION')}"
    assert _ids(text)[0] == "driver-too-old"
    assert "gpu-arch-unsupported" not in _ids(_ptx(n, "CUDA_ERROR_INVALID_PTX"))


GPU_NAME = st.sampled_from(
    [
        "Tesla T4",
        "Tesla V100-SXM2-16GB",
        "NVIDIA GeForce GTX 1080 Ti",
        "Quadro RTX 6000",
        "Tesla P100-PCIE-16GB",
    ]
)


@settings(max_examples=examples(100), deadline=None)
@given(
    gpu=GPU_NAME,
    major=st.integers(3, 7),
    minor=st.integers(0, 9),
    none=st.booleans(),
    tick=st.sampled_from(["the`dtype`", "the `dtype`"]),
    before=NOISE,
)
def test_vllm_bfloat16_on_a_gpu_below_8_0(gpu, major, minor, none, tick, before):
    has = (
        "does not have a compute capability" if none else f"has compute capability {major}.{minor}"
    )
    text = (
        f"{before}ValueError: Bfloat16 is only supported on GPUs with compute capability of at "
        f"least 8.0. Your {gpu} GPU {has}. You can use float16 instead by explicitly setting "
        f"{tick} flag in CLI, for example: --dtype=half."
    )
    found = explain(text)
    assert found[0].id == "gpu-arch-unsupported"
    assert gpu in found[0].title


VERSION = st.builds(
    lambda a, b, c, cu: f"2.{a}.{b}{cu}",
    st.integers(0, 9),
    st.integers(0, 3),
    st.integers(0, 2),
    st.sampled_from(["", "+cu118", "+cu121", "+cu124"]),
)
PY = st.sampled_from(["3.9.18", "3.10.12", "3.10.13", "3.11.5", "3.12.3"])


@settings(max_examples=examples(150), deadline=None)
@given(
    built=VERSION,
    have=VERSION,
    py_built=PY,
    py_have=PY,
    cuda=st.sampled_from(["1108", "1201", "1204"]),
)
def test_xformers_built_for_another_torch_is_a_release_conflict(
    built, have, py_built, py_have, cuda
):
    text = (
        "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
        f"    PyTorch {built} with CUDA {cuda} (you have {have})\n"
        f"    Python  {py_built} (you have {py_have})\n"
        "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)\n"
        "  Set XFORMERS_MORE_DETAILS=1 for more details"
    )
    ids = _ids(text)
    if built != have or py_built != py_have:
        assert ids[:1] == ["pip-conflict"]
    else:
        assert "pip-conflict" not in ids  # equal versions: the load failed for another reason


BNB_CUDA = st.sampled_from(["110", "111", "117", "118", "120", "121", "122", "123", "124"])
NOT_DETECTED = (
    "CUDA SETUP: Problem: The main issue seems to be that the main CUDA runtime library was not "
    "detected.\nCUDA SETUP: Solution 1: To solve the issue the libcudart.so location needs to be "
    "added to the LD_LIBRARY_PATH variable"
)
DESPITE = (
    "RuntimeError:\n        CUDA Setup failed despite GPU being available. Please run the "
    "following command to get more information:\n\n        python -m bitsandbytes"
)


@settings(max_examples=examples(100), deadline=None)
@given(cuda=BNB_CUDA, nocublaslt=st.booleans(), also=st.booleans(), despite=st.booleans())
def test_bitsandbytes_without_a_binary_for_torch_s_cuda(cuda, nocublaslt, also, despite):
    lib = f"libbitsandbytes_cuda{cuda}{'_nocublaslt' if nocublaslt else ''}.so"
    text = (
        f"CUDA SETUP: Required library version not found: {lib}. Maybe you need to compile it "
        "from source?\nCUDA SETUP: Defaulting to libbitsandbytes_cpu.so..."
        + (f"\n{NOT_DETECTED}" if also else "")
        + (f"\n{DESPITE}" if despite else "")
    )
    found = explain(text)
    assert found[0].id == "pip-conflict" and lib in found[0].title
    assert "cuda-lib-missing" not in [f.id for f in found]


@settings(max_examples=examples(30), deadline=None)
@given(despite=st.booleans(), before=NOISE)
def test_bitsandbytes_runtime_not_detected_and_the_bare_failure(despite, before):
    ids = _ids(before + NOT_DETECTED + (f"\n{DESPITE}" if despite else ""))
    assert ids[0] == "cuda-lib-missing"
    # alone, "failed despite GPU being available" does not say why: no reading of these rules
    assert not {"pip-conflict", "cuda-lib-missing"} & set(_ids(before + DESPITE))


JAX_MODULE = st.sampled_from(
    [
        "jaxlib.xla_extension",
        "jaxlib.xla_client",
        "jax_cuda12_plugin._versions",
        "jax_cuda12_plugin.cuda_plugin_extension",
        "jax_plugins.xla_cuda12",
        "jax._src.lib",
    ]
)
ATTR = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{2,30}", fullmatch=True)
ADVICE = " (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu to skip this backend.)"


@settings(max_examples=examples(100), deadline=None)
@given(mod=JAX_MODULE, attr=ATTR, prefix=st.sampled_from(["", "AttributeError: "]), before=NOISE)
def test_jax_plugin_attribute_error_is_a_release_conflict(mod, attr, prefix, before):
    text = (
        f"{before}RuntimeError: Unable to initialize backend 'cuda': {prefix}module '{mod}' has "
        f"no attribute '{attr}'{ADVICE}"
    )
    found = explain(text)
    assert found[0].id == "pip-conflict"
    assert mod in found[0].title


PAYLOADS = st.sampled_from(
    [
        "Unable to use CUDA because of the following issues with CUDA components:\nUnable to load cuDNN. Is it installed?",
        "Unable to load cuDNN.",
        "module 'numpy' has no attribute 'float'",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(payload=PAYLOADS)
def test_jax_backend_other_payloads_keep_their_reading(payload):
    wrapped = _ids(f"RuntimeError: Unable to initialize backend 'cuda': {payload}{ADVICE}")
    alone = _ids(payload)
    assert wrapped[:1] == alone[:1]
    assert "pip-conflict" not in wrapped or "pip-conflict" in alone
