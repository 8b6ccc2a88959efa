"""Round twenty-six (the seventeenth session): read from the misses of sets 43-49, each reading
derived from its emitter's source.

- JAX logs every backend that fails to start at INFO ("Unable to initialize backend 'tpu': ...")
  and goes on with the others (xla_bridge.backends, fail_quietly): the TPU / ROCm lines are
  harmless (log-noise); the CUDA backend's own line, and a line JAX raised because JAX_PLATFORMS
  asked for the backend, are not read so.
- A Mac named as users write it ("on a mac", "M2 MAX", "those of us on an M1"): no NVIDIA GPU, so
  a framework's "not compiled with CUDA" is a machine without a GPU first (the existing
  no-GPU-for-a-build reading).
- CMake's "Could NOT find CUDA: Found unsuitable version \"7.5\", but required is at least
  \"8.0\"": an older toolkit was found and picked (cuda-lib-mismatch); an empty version is a
  toolkit not found (cuda-lib-missing), as before.
- "Unsupported .version X; current version is Y" beside the driver's JIT at work (cuLinkAddData,
  CUDA_ERROR_INVALID_PTX, libnvidia-ptxjitcompiler): the driver is too old; from a ptxas binary
  it stays the toolkit's (cuda-lib-mismatch).
- nvcc's / ptxas's unknown architecture beside a CUDA release the paste names: the release's
  architectures (fixer.rules.nvcc_compiles_for, CMake's table) decide. A release that knows the
  architecture: another nvcc ran (cuda-lib-mismatch); a release that dropped it: the GPU is too
  old for the toolkit (gpu-arch-unsupported); a release older than it: the rule's order stands.
- (b) a Jetson names its NVIDIA GPU; is_available() "false" in lower case; CatBoost without its
  GPU trainer; xmr-stak's "not compiled for the gpu architecture"; a Radeon typed with NVIDIA's
  letters. (c) NVRTC that cannot open its builtins library. (d) a cuDNN soname asked for in
  words carries its major. (e) a sentence saying both onnxruntime packages are installed.
- (f, sets 50-52 read) whisper's FP16-on-CPU warning is harmless by its emitter; DGL's CPU
  package; Ollama's too-old GPU; PaddlePaddle's own architecture check; Chainer 7 beside CuPy 8.
- (h, sets 53-55 read) XLA that cannot run ptxas; RAPIDS' GPU check; OpenCV's cuDNN check read
  as cuDNN 9 prints it (loaded_form); Docker's refusal to give the GPU; CUDA error 34 (the
  driver's stub); a program going on "without GPU" says nothing of the machine.

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from fixer.rules import nvcc_archs, nvcc_compiles_for
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

# --- JAX's backend start-up lines ---------------------------------------------------------------

_PREFIX = st.sampled_from(
    [
        "",
        "I0820 16:10:25.293788 140208504612672 xla_bridge.py:353] ",
        "xla_bridge.py:841] ",
        "INFO:jax._src.xla_bridge:",
        "2024-01-05 14:05:05,750 - INFO - ",
    ]
)
_QUIET = {
    "tpu": [
        "INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such "
        "file or directory",
        "INVALID_ARGUMENT: TpuPlatform is not available.",
    ],
    "tpu_driver": ["NOT_FOUND: Unable to find driver in registry given worker: "],
    "rocm": [
        'NOT_FOUND: Could not find registered platform with name: "rocm". Available platform '
        "names are: Interpreter Host CUDA",
        "module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'",
    ],
    "plugin": ["xla_extension has no attributes named get_plugin_device_client."],
}
_BACKEND = st.sampled_from(sorted(_QUIET)).flatmap(
    lambda b: st.tuples(st.just(b), st.sampled_from(_QUIET[b]))
)


@settings(max_examples=examples(60), deadline=None)
@given(prefix=_PREFIX, backends=st.lists(_BACKEND, min_size=1, max_size=3), noise=NOISE)
def test_backends_jax_went_on_without_are_harmless(prefix, backends, noise):
    """xla_bridge.backends(): a backend registered fail_quietly that fails is logged at INFO and
    skipped (jax/_src/xla_bridge.py, cited on the rule)."""
    lines = [f"{prefix}Unable to initialize backend '{b}': {err}" for b, err in backends]
    found = explain(noise + "\n" + "\n".join(lines))
    assert found[0].id == "log-noise", (lines, [f.id for f in found])
    assert "JAX" in found[0].title


@settings(max_examples=examples(30), deadline=None)
@given(
    prefix=_PREFIX,
    backend=_BACKEND,
    suffix=st.sampled_from(
        [
            " (set JAX_PLATFORMS='' to automatically choose an available backend)",
            " (you may need to uninstall the failing plugin package, or set JAX_PLATFORMS=cpu "
            "to skip this backend.)",
        ]
    ),
)
def test_a_backend_jax_was_told_to_use_is_not_harmless(prefix, backend, suffix):
    """Raised (JAX_PLATFORMS named it, or a plugin that must not fail quietly): not this reading."""
    b, err = backend
    line = f"RuntimeError: {prefix}Unable to initialize backend '{b}': {err}{suffix}"
    assert not any("JAX start-up" in f.title for f in explain(line)), line


@settings(max_examples=examples(30), deadline=None)
@given(
    prefix=_PREFIX,
    err=st.sampled_from(
        [
            "FAILED_PRECONDITION: No visible GPU devices.",
            "Found cuSOLVER version 11002, but JAX was built against version 11401, which is "
            "newer. The copy of cuSOLVER that is installed must be at least as new as the "
            "version against which JAX was built.",
        ]
    ),
)
def test_the_cuda_backends_own_failure_is_never_read_as_harmless(prefix, err):
    line = f"{prefix}Unable to initialize backend 'cuda': {err}"
    found = explain(line)
    assert found and found[0].id != "log-noise", (line, [f.id for f in found])


# --- a Mac, as users write it -------------------------------------------------------------------

_NOT_COMPILED = st.sampled_from(
    [
        "AssertionError: Torch not compiled with CUDA enabled",
        'I am getting "XGBoost version not compiled with GPU support" error.',
    ]
)
_MAC = st.sampled_from(
    [
        "When I try to train on my mac i get - {err}",
        "Hello. I have Mac PRO with M2 MAX Chipset. {err}",
        "{err}\nWould be good if there was a check for cuda (else mps, for those of us on an M1)",
        "Running on an m3 pro laptop: {err}",
        "using a MacBook Air (M1 chip)\n{err}",
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(err=_NOT_COMPILED, said=_MAC, noise=NOISE)
def test_a_mac_has_no_nvidia_gpu_for_a_cuda_build(err, said, noise):
    paste = noise + "\n" + said.format(err=err)
    ids = _ids(paste)
    assert ids[0] == "gpu-missing", (paste, ids)
    assert "cpu-only-build" in ids[1:], (paste, ids)


@settings(max_examples=examples(30), deadline=None)
@given(
    err=_NOT_COMPILED,
    other=st.sampled_from(
        [
            "the MAC address of eth0 is 00:11:22:33:44:55",
            "my NVMe sits on an M.2 slot",
            "a Tesla M40 and a Quadro M4000 in the box",
            "on a machine with an M2 ssd",
            "installed on an M2 SSD, on the M2 slot",
        ]
    ),
)
def test_what_is_not_a_mac_leaves_the_build_reading(err, other):
    paste = other + "\n" + err
    assert _ids(paste)[0] == "cpu-only-build", paste


# --- CMake's unsuitable CUDA --------------------------------------------------------------------

_RELEASE = st.tuples(st.integers(6, 12), st.integers(0, 9))


@settings(max_examples=examples(40), deadline=None)
@given(
    found=_RELEASE,
    need=_RELEASE,
    what=st.sampled_from(["CUDA", "CUDAToolkit"]),
    exact=st.booleans(),
    wrap=st.sampled_from([" ", "\n  "]),
    noise=NOISE,
)
def test_cmake_found_an_older_cuda_toolkit(found, need, what, exact, wrap, noise):
    """FindPackageHandleStandardArgs: "Found unsuitable version ..., but required is at least /
    exact version ..." (cited on the rule); CMake's message wraps where the terminal does."""
    f, r = ".".join(map(str, found)), ".".join(map(str, need))
    kind = "exact version" if exact else "at least"
    line = (
        "CMake Error at /usr/share/cmake-3.16/Modules/FindPackageHandleStandardArgs.cmake:146 "
        f'(message):\n  Could NOT find {what}: Found unsuitable version "{f}", but required is'
        f'{wrap}{kind} "{r}" (found /usr)'
    )
    found_ = explain(noise + "\n" + line)
    assert found_[0].id == "cuda-lib-mismatch", (line, [x.id for x in found_])
    assert f in found_[0].title and r in found_[0].title


def test_cmake_that_found_no_cuda_version_is_a_missing_toolkit():
    line = (
        'Could NOT find CUDA: Found unsuitable version "", but required is at least "9.0" '
        "(found /usr/local/cuda)"
    )
    assert _ids(line)[0] == "cuda-lib-missing"


# --- the driver's PTX JIT -----------------------------------------------------------------------

_ISA = st.tuples(st.integers(6, 9), st.integers(0, 9))
_JIT_API = (
    "the failure occurs during CUDA kernel linking (`cuLinkAddData()`).",
    "cuModuleLoadDataEx() failed: CUDA_ERROR_INVALID_PTX",
    "CUDA error 'a PTX JIT compilation failed' in func 'load_kernel'",
    "`libcuda.so` and `libnvidia-ptxjitcompiler.so` are both version 595.84.",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported "
    "toolchain.",
)
_JIT = st.sampled_from(_JIT_API)


@settings(max_examples=examples(40), deadline=None)
@given(given_=_ISA, reads=_ISA, jit=_JIT, jit_first=st.booleans(), noise=NOISE)
def test_the_drivers_jit_rejects_newer_ptx(given_, reads, jit, jit_first, noise):
    """cuda.h / driver_types.h: CUDA_ERROR_UNSUPPORTED_PTX_VERSION, most often PTX from a compiler
    newer than the driver's JIT (cited on the rule)."""
    b, r = ".".join(map(str, given_)), ".".join(map(str, reads))
    said = f'fails with "Unsupported .version {b}; current version is {r}"'
    parts = [jit, said] if jit_first else [said, jit]
    ids = _ids(noise + "\n" + "\n".join(parts))
    assert ids[0] == "driver-too-old", (parts, ids)


@settings(max_examples=examples(20), deadline=None)
@given(given_=_ISA, reads=_ISA, jit=st.sampled_from([_JIT_API[0], _JIT_API[3]]))
def test_a_ptxas_binary_that_ran_stays_the_toolkits(given_, reads, jit):
    """The markers that only show the JIT's presence (the driver's own error codes have their own
    rules, which read the driver either way)."""
    b, r = ".".join(map(str, given_)), ".".join(map(str, reads))
    paste = (
        "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: ptxas exited with non-zero error code "
        f"65280, output: ptxas /tmp/tempfile-x, line 5; fatal   : Unsupported .version {b}; "
        f"current version is '{r}'\n{jit}"
    )
    assert _ids(paste)[0] == "cuda-lib-mismatch", paste


# --- nvcc's architectures by release ------------------------------------------------------------


def test_the_release_table_reads_as_cmakes():
    """Points of Kitware/CMake Modules/Internal/CMakeCUDAArchitecturesAll.cmake@v4.4.2."""
    assert nvcc_compiles_for((8, 0), 61) and nvcc_compiles_for((11, 1), 86)
    assert nvcc_compiles_for((11, 0), 86) is False and nvcc_compiles_for((11, 3), 89) is False
    assert nvcc_compiles_for((11, 8), 89) and nvcc_compiles_for((11, 8), 35)
    assert nvcc_compiles_for((12, 0), 35) is False and nvcc_compiles_for((12, 9), 70)
    assert nvcc_compiles_for((13, 0), 70) is False and nvcc_compiles_for((13, 0), 110)
    assert nvcc_compiles_for((10, 2), 30) and nvcc_compiles_for((11, 0), 30) is False
    assert nvcc_compiles_for((12, 8), 120) and nvcc_compiles_for((12, 6), 120) is False
    assert nvcc_compiles_for((6, 5), 52) is None and nvcc_compiles_for((10, 0), 32) is None
    assert nvcc_archs((6, 5)) == frozenset()


_ARCHS = sorted(nvcc_archs((11, 8)) | nvcc_archs((13, 0)) | {20, 30})
_RELEASES = [(m, n) for m in range(8, 14) for n in range(0, 10)]
_NAMING = st.sampled_from(
    [
        "I use GTX 1060 with nvidia driver 390 and CUDA {v}",
        "Cuda compilation tools, release {v}, V{v}.85",
        "-- got cuda version {v}",
        "cuda: {v}",
        "CUDA Version：{v}",
        "RTX3090+TORCH1.7.0+CUDA{v}",
        "error: command '/usr/local/cuda-{v}/bin/nvcc' failed with exit status 1",
    ]
)
_UNKNOWN = st.sampled_from(
    [
        "nvcc fatal   : Unsupported gpu architecture 'compute_{a}'",
        "nvcc fatal : Unsupported gpu architecture 'sm_{a}'",
        "ptxas fatal   : Value 'sm_{a}' is not defined for option 'gpu-name'",
    ]
)


@settings(max_examples=examples(80), deadline=None)
@given(
    arch=st.sampled_from(_ARCHS),
    release=st.sampled_from(_RELEASES),
    naming=_NAMING,
    unknown=_UNKNOWN,
    named_first=st.booleans(),
)
def test_the_release_named_decides_between_another_nvcc_and_a_dropped_gpu(
    arch, release, naming, unknown, named_first
):
    v = f"{release[0]}.{release[1]}"
    parts = [naming.format(v=v), unknown.format(a=arch)]
    paste = "\n".join(parts if named_first else parts[::-1])
    alone = _ids(unknown.format(a=arch))
    found = explain(paste)
    ids = [f.id for f in found]
    knows = nvcc_compiles_for(release, arch)
    if knows:
        assert ids[0] == "cuda-lib-mismatch", (paste, ids)
        assert any(e.startswith("decided by: ") for e in found[0].evidence), found[0].evidence
    elif knows is False and arch < min(nvcc_archs(release)):
        assert ids[0] == "gpu-arch-unsupported", (paste, ids)
    elif knows is False and arch > max(nvcc_archs(release)):
        # round twenty-nine (c): a release that predates the architecture never knew it, so it did
        # not drop it: the toolkit is older than the GPU
        assert ids[0] == "cuda-lib-mismatch", (paste, ids)
    else:
        assert ids[:2] == alone[:2], (paste, ids, alone)


@settings(max_examples=examples(20), deadline=None)
@given(arch=st.sampled_from([61, 70, 86, 89, 120]), unknown=_UNKNOWN)
def test_nvidia_smis_cuda_version_is_not_a_toolkit(arch, unknown):
    """nvidia-smi's header names the CUDA the driver supports, not the toolkit that ran."""
    header = "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |"
    line = unknown.format(a=arch)
    assert _ids(header + "\n" + line)[:2] == _ids(line)[:2]


# --- (b) a Jetson's GPU, a lower-case False, CatBoost's GPU trainer, xmr-stak, a Radeon ------------

_JETSON = st.sampled_from(
    [
        "I successfully install the torch on my jetson nano(Jetpack 4.4 [L4T 32.4.3])",
        "Running on a Jetson AGX Orin with JetPack 6.0",
        "docker run --runtime nvidia -it nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3",
        "Device: Xavier NX, JETPACK 5.1.5",
    ]
)
_FALSE = st.sampled_from(
    [
        "but cuda.is_available() returns false",
        "torch.cuda.is_available() -> false",
        ">>> torch.cuda.is_available()\nFalse",
    ]
)


@settings(max_examples=examples(40), deadline=None)
@given(jetson=_JETSON, unavailable=_FALSE, noise=NOISE)
def test_cuda_unavailable_on_a_jetson_is_a_build_without_cuda(jetson, unavailable, noise):
    """A Jetson module's GPU is NVIDIA's: the paste shows the GPU, so round twenty-five's reading
    (a build without CUDA first) applies."""
    paste = "\n".join([noise, jetson, unavailable])
    ids = _ids(paste)
    assert ids[0] == "cpu-only-build", (paste, ids)


@settings(max_examples=examples(20), deadline=None)
@given(
    word=st.sampled_from(["xavier_uniform_", "nn.init.xavier_normal_", "Xavier initialisation"]),
    unavailable=_FALSE,
)
def test_xavier_initialisation_is_not_a_jetson(word, unavailable):
    assert _ids(word + "\n" + unavailable)[0] == "gpu-missing"


@settings(max_examples=examples(20), deadline=None)
@given(
    form=st.sampled_from(
        [
            "_catboost.CatBoostError: catboost/libs/train_lib/train_model.cpp:{n}: Can't load GPU "
            "learning library. Module was not compiled or driver  is incompatible with package. "
            "Please install latest NVDIA driver and check again",
            "CatboostError: catboost/libs/train_lib/train_model.cpp:{n}: Can't load GPU learning "
            "library. Module was not compiled or CUDA version/driver  is incompatible with package",
        ]
    ),
    n=st.integers(1, 3000),
    noise=NOISE,
)
def test_catboost_without_its_gpu_trainer_is_a_build_without_cuda(form, n, noise):
    """TTrainerFactory::Has(GPU) is false only where the statically registered GPU trainer is not
    linked in (catboost/cuda/train_lib/train.cpp, cited on the rule)."""
    ids = _ids(noise + "\n" + form.format(n=n))
    assert ids[0] == "cpu-only-build" and "driver-too-old" in ids[1:], ids


@settings(max_examples=examples(20), deadline=None)
@given(dev=st.integers(0, 7), arch=st.sampled_from([20, 30, 35, 50, 61, 75, 86]))
def test_a_miner_not_compiled_for_the_gpus_architecture(dev, arch):
    line = f"WARNING: NVIDIA GPU {dev}: miner not compiled for the gpu architecture {arch}."
    found = explain(line)
    assert found[0].id == "gpu-arch-unsupported" and str(arch) in found[0].title, found[0]


def test_a_radeon_named_with_nvidias_letters_is_not_an_nvidia_gpu():
    """Another vendor's brand before "GTX" (a mistyped Radeon RX): the other-gpu evidence decides
    torch's "Found no NVIDIA driver" as no NVIDIA GPU."""
    paste = (
        "I'm on Ubuntu 22.04 and using an  AMD Radeon GTX 6750 GPU.\n"
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
        "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
    )
    assert _ids(paste)[0] == "gpu-missing"
    assert _ids(paste.replace("AMD Radeon GTX 6750", "GeForce GTX 1650"))[0] == "driver-missing"


@settings(max_examples=examples(30), deadline=None)
@given(
    release=st.sampled_from(["11.2", "12.4", "13.0"]),
    form=st.sampled_from(
        [
            "nvrtc: error: failed to open libnvrtc-builtins.so.{r}.\n  Make sure that "
            "libnvrtc-builtins.so.{r} is installed correctly.",
            "nvrtc: error: failed to open nvrtc-builtins64_{rr}.dll.\n  Make sure that "
            "nvrtc-builtins64_{rr}.dll is installed correctly.",
            "nvrtcCompileProgram failed: NVRTC_ERROR unknown\nProgram compile log: nvrtc: error: "
            "failed to load builtins for compute_90\n[CUDA] Error gpu 0: device kernel image is "
            "invalid",
        ]
    ),
    noise=NOISE,
)
def test_nvrtc_without_its_builtins_library(release, form, noise):
    """libnvrtc's own strings (read on the GPU machine, cited on the rule): the builtins library
    of its release is missing, whatever the program reports after it."""
    paste = noise + "\n" + form.format(r=release, rr=release.replace(".", ""))
    found = explain(paste)
    assert found[0].id == "cuda-lib-missing" and "NVRTC" in found[0].title, (paste, found[0])


# --- (d) a cuDNN soname in words, beside the copy the paste says is installed -------------------

_WORDS = st.sampled_from(
    [
        "not able to find libcudnn.so.{want}",
        "Cortex tests fail because it cannot find libcudnn.so.{want}.",
        "the program is unable to load cudnn64_{want}.dll",
    ]
)
_HAVE = st.sampled_from(["cuDNN: {have}.0.4", "cudnn v{have} is installed", "CuDNN 版本: {have}.1"])


@settings(max_examples=examples(40), deadline=None)
@given(words=_WORDS, have=_HAVE, want=st.integers(5, 9), other=st.integers(5, 9))
def test_a_soname_asked_for_in_words_beside_another_major_is_a_major_mismatch(
    words, have, want, other
):
    """A failing soname names the major the build asks for (as a message's own `major` group
    does): beside only another major on the machine, the copy is there, of the wrong major."""
    paste = have.format(have=other) + "\n" + words.format(want=want)
    ids = _ids(paste)
    expected = "cudnn-missing" if other == want else "cudnn-major-mismatch"
    assert ids[0] == expected, (paste, ids)


@settings(max_examples=examples(20), deadline=None)
@given(words=_WORDS, want=st.integers(5, 9))
def test_cudnns_v8_api_is_no_copy(words, want):
    paste = "torch uses the cuDNN v8 API (TORCH_CUDNN_V8_API_ENABLED=1)\n" + words.format(want=want)
    assert _ids(paste)[0] == "cudnn-missing", paste


@settings(max_examples=examples(30), deadline=None)
@given(
    said=st.sampled_from(
        [
            "I had installed both onnxruntime and onnxruntime-gpu.",
            "both the onnxruntime-gpu and the onnxruntime packages are installed",
            "I have both onnxruntime & onnxruntime_gpu in the venv",
        ]
    ),
    providers=st.sampled_from(
        [
            "when I check the providers only ['CPUExecutionProvider'] is available.",
            "ort.get_available_providers() -> available: ['AzureExecutionProvider', "
            "'CPUExecutionProvider']",
        ]
    ),
    said_first=st.booleans(),
)
def test_both_onnxruntime_packages_said_to_be_installed(said, providers, said_first):
    """ONNX Runtime's docs: only one of the two packages in an environment (cited on the rule);
    a sentence saying both are installed shows it as a pip list does."""
    parts = [said, providers] if said_first else [providers, said]
    assert _ids("\n".join(parts))[0] == "pip-conflict", parts


def test_one_onnxruntime_package_named_is_not_both():
    paste = "I installed onnxruntime-gpu.\nonly ['CPUExecutionProvider'] is available"
    assert "pip-conflict" not in _ids(paste)[:1]


# --- (f) sets 50-52 read: DGL, Ollama, PaddlePaddle, Chainer with CuPy 8 ---------------------------


@settings(max_examples=examples(30), deadline=None)
@given(dev=st.sampled_from(["cuda", "gpu"]), line=st.integers(1, 200), noise=NOISE)
def test_dgl_without_a_cuda_device_api_is_its_cpu_package(dev, line, noise):
    """Only a CUDA build registers "device_api.cuda" (cited on the rule)."""
    err = (
        f"dgl._ffi.base.DGLError: [14:00:04] /opt/dgl/src/runtime/c_runtime_api.cc:{line}: Check "
        f"failed: allow_missing: Device API {dev} is not enabled. Please install the cuda version "
        "of dgl."
    )
    assert _ids(noise + "\n" + err)[0] == "cpu-only-build", err


@settings(max_examples=examples(20), deadline=None)
@given(cc=st.sampled_from(["3.0", "3.5", "5.0", "5.2", "6.1"]), noise=NOISE)
def test_ollama_falls_back_to_the_cpu_for_an_old_gpu(cc, noise):
    paste = (
        f"{noise}\n2024/01/14 19:50:06 gpu.go:94: Nvidia GPU detected\n2024/01/14 19:50:06 "
        f"gpu.go:138: CUDA GPU is too old. Falling back to CPU mode. Compute Capability detected: "
        f"{cc}\n2024/01/14 19:50:06 routes.go:953: no GPU detected"
    )
    found = explain(paste)
    assert found[0].id == "gpu-arch-unsupported" and cc in found[0].title, found[0]


@settings(max_examples=examples(20), deadline=None)
@given(
    gen=st.sampled_from(["Pascal", "Maxwell", "Kepler", "Turing"]),
    archs=st.sampled_from(["61 70 75 80 86 90 ", "70 75 80 86 89 90 "]),
    after=st.sampled_from(
        [
            "CUDA error 101 [../third_party/cccl/cub/cub/util_device.cuh, 102]: invalid device "
            "ordinal",
            "",
        ]
    ),
)
def test_paddles_own_architecture_check(gen, archs, after):
    line = (
        "W1125 07:37:50.996143   570 gpu_resources.cc:96] The GPU architecture in your current "
        f"machine is {gen}, which is not compatible with Paddle installation with arch: {archs}, "
        "it is recommended to install the corresponding wheel package according to the "
        "installation information on the official Paddle website."
    )
    assert _ids(line + "\n" + after)[0] == "gpu-arch-unsupported", (line, after)


def test_chainer_7_beside_cupy_8_is_a_conflict_and_cupy_missing_is_not():
    head = "RuntimeError: CUDA environment is not correctly set up\n(see https://github.com/chainer/chainer#installation)."
    assert _ids(head + "No module named 'cupy.util'")[0] == "pip-conflict"
    assert _ids(head + "No module named 'cupy'")[0] == "cpu-only-build"


# --- (h) sets 53-55 read: XLA's ptxas, RAPIDS' GPU check, OpenCV's cuDNN check, Docker, stubs ----


@settings(max_examples=examples(30), deadline=None)
@given(
    form=st.sampled_from(
        [
            "W external/xla/xla/stream_executor/gpu/asm_compiler.cc:85] Couldn't get ptxas "
            "version string: INTERNAL: Couldn't invoke ptxas --version",
            "FAILED_PRECONDITION: Couldn't get ptxas version string: INTERNAL: Couldn't invok",
            "W redzone_allocator.cc:318] INTERNAL: Failed to launch ptxas\nRelying on driver to "
            "perform ptx compilation.",
            "INTERNAL: Couldn't invoke /usr/local/cuda-12.2/bin/ptxas --version",
        ]
    ),
    noise=NOISE,
)
def test_xla_that_cannot_run_ptxas(form, noise):
    found = explain(noise + "\n" + form)
    assert found[0].id == "cuda-lib-missing" and "ptxas" in found[0].title, (form, found[0])


@settings(max_examples=examples(20), deadline=None)
@given(
    form=st.sampled_from(
        [
            "UserWarning: You will need a GPU with NVIDIA Pascal™ or newer architecture\nDetected "
            "GPU 0: Tesla K80\nDetected Compute Capability: 3.7",
            "cudf.errors.UnsupportedCUDAError: A GPU with NVIDIA Volta™ (Compute Capability 7.0) "
            "or newer architecture is required.\nDetected GPU 0: Tesla P4",
            "you will need a GPU with NVIIDA Pascal or newer architecture",
        ]
    )
)
def test_rapids_needs_a_newer_gpu(form):
    assert _ids(form)[0] == "gpu-arch-unsupported", form


def _k(major: int, minor: int) -> str:
    """cudnnGetVersion() read with cuDNN 8's formula, as OpenCV up to 4.9 prints it."""
    n = major * 10000 + minor * 100 if major >= 9 else major * 1000 + minor * 100
    return f"{n // 1000}.{n % 1000 // 100}"


@settings(max_examples=examples(60), deadline=None)
@given(
    loaded=st.tuples(st.integers(7, 9), st.integers(0, 20)),
    built=st.tuples(st.integers(7, 9), st.integers(0, 9)),
)
def test_opencvs_cudnn_check_decoded(loaded, built):
    """OpenCV's checkVersions up to 4.9 divides cuDNN 9's integer by 1000 (cited on the rule):
    decoded right, the same major with a minor not older is harmless, an older minor too old,
    another major a major mismatch."""
    line = (
        f"[ WARN:0@410.036] global init.hpp:32 checkVersions cuDNN reports version "
        f"{_k(*loaded)} which is not compatible with the version {built[0]}.{built[1]} with "
        "which OpenCV was built"
    )
    if loaded[0] < 9 and loaded[1] > 9:
        return  # no cuDNN 7 / 8 minor above 9
    ids = _ids(line)
    if loaded[0] != built[0]:
        assert ids[0] == "cudnn-major-mismatch", (line, ids)
    elif loaded[1] < built[1]:
        assert ids[0] == "cudnn-too-old", (line, ids)
    else:
        assert ids[0] == "log-noise", (line, ids)


def test_docker_that_cannot_give_the_gpu_decides_over_the_containers_no_driver():
    paste = (
        "Host: Ubuntu 24.04, Driver Version: 550.120\n"
        'docker: Error response from daemon: could not select device driver "" with '
        "capabilities: [[gpu]].\nMissing device driver, re-trying without GPU\n"
        "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an "
        "NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
    )
    found = explain(paste)
    assert found[0].id == "driver-missing" and "Docker" in found[0].title, found[0]


@settings(max_examples=examples(20), deadline=None)
@given(
    entry=st.sampled_from(["cuDriverGetVersion", "cuInit", "cuDeviceGet"]),
    prefix=st.sampled_from(["Warp CUDA error: Failed to get driver entry point '{e}' ", ""]),
)
def test_cuda_error_34_is_the_drivers_stub(entry, prefix):
    """CUDA_ERROR_STUB_LIBRARY = cudaErrorStubLibrary = 34 (cuda.h, driver_types.h)."""
    line = prefix.format(e=entry) + "(CUDA error 34)"
    assert _ids(line)[0] == "driver-missing", line
    assert _ids(line.replace("34)", "340)"))[:1] != ["driver-missing"]


@settings(max_examples=examples(20), deadline=None)
@given(verb=st.sampled_from(["re-trying", "retrying", "running", "continuing"]))
def test_a_program_going_on_without_the_gpu_says_nothing_of_the_machine(verb):
    paste = (
        f"Missing device driver, {verb} without GPU\nRuntimeError: Found no NVIDIA driver on your "
        "system. Please check that you have an NVIDIA GPU and installed a driver from "
        "http://www.nvidia.com/Download/index.aspx"
    )
    found = explain(paste)
    assert not any(e.startswith("decided by: Missing device driver") for e in found[0].evidence)
