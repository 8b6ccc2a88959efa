"""Round twenty-eight (the nineteenth session): read from the misses of sets 73-76, the eighteenth
session's final blind sets, each reading derived from its emitter's source (cited beside the rule
in recipes/errors.toml, or beside engine._NEWER_COPY).

- A framework's cuDNN check that refused a *newer* copy of its own major (torch 0.3's exact
  major.minor check, TensorFlow 1.x's compatibility version, Caffe2 before cuDNN 7): the check
  wants the build's own release, so the copy that loaded is another one, found first
  (cudnn-shadowed); an older copy stays cudnn-too-old.
- torch's NNPACK warning "Could not initialize NNPACK! Reason: Unsupported hardware": a CPU
  library that falls back (log-noise), never the cause of another failure beside it.
- torchaudio's own check of its CUDA build against torch's: two wheels from different indexes
  (pip-conflict), as torchvision's.
- Colab's GPU notebook's "SystemError: GPU device not found" and SegAlign's "Error: No GPU device
  found!": the framework sees no GPU (gpu-missing, the build and the driver the alternatives).
- PG-Strom's "capability X.Y, NOT SUPPORTED": a GPU below the capability it needs.
- OptiX: the driver's libnvoptix absent (OPTIX_ERROR_LIBRARY_NOT_FOUND, 7804: driver-missing);
  a driver older than the SDK's ABI (OPTIX_ERROR_UNSUPPORTED_ABI_VERSION, 7801: driver-too-old);
  a bare "optixInit() failed" most often the latter.
- RELION's "compiled without CUDA of at least version 7.0": a build without CUDA.
- XLA's warning that the ptxas it invokes is from CUDA 12.0 to 12.6.2: an older toolkit's ptxas
  found first (cuda-lib-mismatch).

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

# --- a cuDNN check that refused a newer copy ----------------------------------------------------

_MINOR = st.integers(0, 9)
_PATCH = st.integers(0, 9)


def _int(major: int, minor: int, patch: int) -> str:
    return str(major * 1000 + minor * 100 + patch)


@settings(max_examples=examples(200), deadline=None)
@given(
    major=st.integers(5, 8),
    built=st.tuples(_MINOR, _PATCH),
    loaded=st.tuples(_MINOR, _PATCH),
    form=st.sampled_from(["torch", "tf"]),
    noise=NOISE,
)
def test_a_check_that_refused_a_newer_copy_of_its_major_reads_another_copy(
    major, built, loaded, form, noise
):
    """loaded newer than built (same major) under a check printed as failed: cudnn-shadowed;
    older: cudnn-too-old (torch 0.3's wording, TensorFlow 1.4's compatibility-version wording)."""
    if built == loaded:
        return
    b, lo = _int(major, *built), _int(major, *loaded)
    if form == "torch":
        line = f"RuntimeError: cuDNN version mismatch: PyTorch was compiled against {b} but linked against {lo}"
    else:
        line = (
            f"E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: {lo} "
            f"(compatibility version {lo[:-2]}00) but source was compiled with {b} (compatibility "
            f"version {b[:-2]}00).  If using a binary install, upgrade your CuDNN library to match."
        )
    found = _ids(noise + line + "\n")
    assert found[0] == ("cudnn-shadowed" if loaded > built else "cudnn-too-old"), line


# --- NNPACK ---------------------------------------------------------------------------------------

_NNPACK = st.sampled_from(
    [
        "[W NNPACK.cpp:{n}] Could not initialize NNPACK! Reason: Unsupported hardware.",
        "[W521 09:41:02.512345 NNPACK.cpp:{n}] Could not initialize NNPACK! Reason: Unsupported hardware.",
    ]
)


@settings(max_examples=examples(60), deadline=None)
@given(line=_NNPACK, n=st.integers(1, 200), noise=NOISE, failure=st.booleans())
def test_nnpack_on_an_unsupported_cpu_is_noise_and_never_outranks_a_failure(
    line, n, noise, failure
):
    """alone: log-noise; beside torch's out-of-memory error: the failure first."""
    text = noise + line.format(n=n) + "\n"
    if failure:
        text += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
    assert _ids(text)[0] == ("out-of-memory" if failure else "log-noise"), text


# --- torchaudio's CUDA check ----------------------------------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(
    torch_cuda=st.tuples(st.integers(10, 13), st.integers(0, 9)),
    audio_cuda=st.tuples(st.integers(10, 13), st.integers(0, 9)),
    noise=NOISE,
)
def test_torchaudio_built_for_another_cuda_is_two_wheels_from_two_indexes(
    torch_cuda, audio_cuda, noise
):
    if torch_cuda == audio_cuda:
        return
    t, a = "%d.%d" % torch_cuda, "%d.%d" % audio_cuda
    text = (
        f"{noise}RuntimeError: Detected that PyTorch and TorchAudio were compiled with different "
        f"CUDA versions. PyTorch has CUDA version {t} whereas TorchAudio has CUDA version {a}. "
        "Please install the TorchAudio version that matches your PyTorch version.\n"
    )
    assert _ids(text)[0] == "pip-conflict", text


# --- no GPU seen ----------------------------------------------------------------------------------


@settings(max_examples=examples(40), deadline=None)
@given(
    line=st.sampled_from(["SystemError: GPU device not found", "Error: No GPU device found!"]),
    noise=NOISE,
)
def test_a_program_that_counted_no_gpu_reads_no_gpu(line, noise):
    found = _ids(f"{noise}{line}\n")
    assert found[0] == "gpu-missing" and "cpu-only-build" in found


# --- PG-Strom -------------------------------------------------------------------------------------


@settings(max_examples=examples(60), deadline=None)
@given(
    cc=st.tuples(st.integers(1, 3), st.integers(0, 7)),
    name=st.sampled_from(["Quadro K600", "GeForce GTX 580", "Tesla C2050"]),
    supported=st.booleans(),
)
def test_pg_strom_marks_a_gpu_below_its_capability(cc, name, supported):
    mark = "" if supported else ", NOT SUPPORTED"
    text = (
        f"LOG:  GPU0 {name} (7 SMs, 784MHz), L2 512KB, RAM 4033MB (256bits, 2700MHz), "
        f"capability {cc[0]}.{cc[1]}{mark}\n"
    )
    found = _ids(text)
    if supported:
        assert "gpu-arch-unsupported" not in found[:1], text
    else:
        assert found[0] == "gpu-arch-unsupported", text


# --- OptiX ----------------------------------------------------------------------------------------

_OPTIX_CODE = st.sampled_from(
    [
        "Optix call (optixInit()) failed with code {code} (line {n})",
        "Optix call 'optixInit()' failed with code {code} (line {n})",
        "OptiX error: {code}",
    ]
)
_OPTIX_NAME = {
    7801: ("OPTIX_ERROR_UNSUPPORTED_ABI_VERSION", "Unsupported ABI version"),
    7804: ("OPTIX_ERROR_LIBRARY_NOT_FOUND", "Library not found"),
}


@settings(max_examples=examples(100), deadline=None)
@given(
    code=st.sampled_from([7801, 7804, 7800, 7990, 7999]),
    form=st.sampled_from(["code", "name", "string"]),
    wording=_OPTIX_CODE,
    n=st.integers(1, 400),
    noise=NOISE,
)
def test_optix_init_reads_the_drivers_library_and_its_abi(code, form, wording, n, noise):
    """7804 (the driver's libnvoptix absent): driver-missing; 7801 (the driver older than the
    SDK's ABI): driver-too-old; other codes are not read as either."""
    if form == "code" or code not in _OPTIX_NAME:
        line = wording.format(code=code, n=n)
    elif form == "name":
        line = f"OptiX initialization failed: {_OPTIX_NAME[code][0]}"
    else:
        line = f"optix_wrapper.cpp:{n} Optix Error: '{_OPTIX_NAME[code][1]}'"
    found = _ids(noise + line + "\n")
    if code == 7801:
        assert found[0] == "driver-too-old", line
    elif code == 7804:
        assert found[0] == "driver-missing" and "driver-too-old" in found, line
    else:
        assert not found or found[0] not in ("driver-missing",), line


def test_a_bare_optix_init_failure_is_most_often_an_older_driver():
    found = _ids("Uncaught exception: Optix call 'optixInit()' failed.\n")
    assert found[:2] == ["driver-too-old", "driver-missing"]


# --- RELION ---------------------------------------------------------------------------------------


@settings(max_examples=examples(30), deadline=None)
@given(noise=NOISE, repeat=st.integers(1, 3))
def test_relion_without_cuda_is_a_build_without_cuda(noise, repeat):
    line = "+ WARNING : Relion was compiled without CUDA of at least version 7.0 - you do NOT have support for GPUs\n"
    assert _ids(noise + line * repeat)[0] == "cpu-only-build"


# --- XLA's ptxas version warning ------------------------------------------------------------------


@settings(max_examples=examples(80), deadline=None)
@given(
    minor=st.integers(0, 6),
    patch=st.integers(0, 84),
    method=st.sampled_from(["ptxas", "nvlink"]),
    noise=NOISE,
)
def test_xla_invoking_a_ptxas_of_cuda_12_0_to_12_6_2_is_an_older_toolkit_found_first(
    minor, patch, method, noise
):
    text = (
        f"{noise}E0103 16:41:38.489316 2217885 ptx_compiler_helpers.cc:87] *** WARNING *** "
        f"Invoking {method} with version 12.{minor}.{patch}, which corresponds to a CUDA version "
        "<=12.6.2. CUDA versions 12.x.y up to and including 12.6.2 miscompile certain edge cases "
        "around clamping.\nPlease upgrade to CUDA 12.6.3 or newer.\n"
    )
    assert _ids(text)[0] == "cuda-lib-mismatch", text


# --- "CPU Only Machine" in any case ---------------------------------------------------------------


@settings(max_examples=examples(40), deadline=None)
@given(
    only=st.sampled_from(["only", "Only", "ONLY"]),
    noun=st.sampled_from(["machine", "Machine", "laptop", "Server", "instance"]),
    sep=st.sampled_from([" ", "-"]),
)
def test_a_cpu_only_machine_said_in_any_case_has_no_gpu(only, noun, sep):
    """The no-nvidia-gpu-said evidence reads the user's "CPU Only Machine" as "CPU-only machine";
    beside the driver library that does not load, no GPU ranks first."""
    text = (
        'I had "ImportError: libcuda.so.1: cannot open shared object file: No such file or '
        f'directory" on my local env (CPU{sep}{only} {noun})\n'
    )
    assert _ids(text)[0] == "gpu-missing", text


# --- (b), sets 78-80 read -------------------------------------------------------------------------


@settings(max_examples=examples(40), deadline=None)
@given(
    codec=st.sampled_from(["h264_nvenc", "hevc_nvenc", "av1_nvenc", "h264_cuvid"]),
    case=st.sampled_from(["Unknown", "unknown"]),
    noise=NOISE,
)
def test_an_ffmpeg_without_the_nvidia_codec_is_a_build_without_it(codec, case, noise):
    kind = "decoder" if codec.endswith("cuvid") else "encoder"
    assert _ids(f"{noise}{case} {kind} '{codec}'\n")[0] == "cpu-only-build"


@settings(max_examples=examples(40), deadline=None)
@given(
    codec=st.sampled_from(["h264_nvenc", "hevc_nvenc"]),
    what=st.sampled_from(
        [
            "Cannot get the preset configuration",
            "OpenEncodeSessionEx failed",
            "InitializeEncoder failed",
        ]
    ),
    addr=st.sampled_from(["000001e8482050c0", "0x55d0c0a3c0c0"]),
)
def test_nvenc_invalid_struct_version_is_a_driver_older_than_the_sdk(codec, what, addr):
    text = f"[{codec} @ {addr}] {what}: invalid version (15)\n"
    assert _ids(text)[0] == "driver-too-old", text
    other = f"[{codec} @ {addr}] {what}: out of memory (10)\n"
    assert "driver-too-old" not in _ids(other)[:1], other


@settings(max_examples=examples(30), deadline=None)
@given(n=st.integers(1, 400), first=st.booleans())
def test_the_drivers_linker_refusing_xlas_cubin_is_an_older_driver(n, first):
    kernel = "RuntimeError: Unknown: no kernel image is available for execution on the device"
    link = (
        f"in external/org_tensorflow/tensorflow/stream_executor/cuda/cuda_asm_compiler.cc({n}): "
        "'cuLinkAddData( link_state, CU_JIT_INPUT_CUBIN, static_cast<void*>(image.bytes.data()), "
        'image.bytes.size(), "", 0, nullptr, nullptr)\''
    )
    text = f"{kernel}\n{link}\n" if first else f"{link}\n{kernel}\n"
    assert _ids(text)[:2] == ["driver-too-old", "gpu-arch-unsupported"], text
    assert _ids(kernel + "\n")[0] == "gpu-arch-unsupported"


@settings(max_examples=examples(30), deadline=None)
@given(code=st.sampled_from([222, 35, 2, 46]), noise=NOISE)
def test_tensorrts_cuda_initialization_failure_222_is_the_drivers_jit(code, noise):
    text = (
        f"{noise}ERROR: CUDA initialization failure with error {code}. Please check your CUDA "
        "installation:  http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html\n"
    )
    found = _ids(text)
    assert (found[:1] == ["driver-too-old"]) == (code in (222, 35)), text


@settings(max_examples=examples(30), deadline=None)
@given(
    name=st.sampled_from(["NVDIA", "NVIDA", "Nvida", "NIVIDIA", "NVIDIA"]),
    noun=st.sampled_from(["GPU", "card", "graphics card"]),
)
def test_a_misspelt_nvidia_in_no_gpu_said_still_says_no_gpu(name, noun):
    text = (
        f"I don't have an {name} {noun} so I tried to run with CPU only.\n"
        "RuntimeError: CUDA failed with error CUDA driver version is insufficient for CUDA runtime version\n"
    )
    assert _ids(text)[0] == "gpu-missing", text


@settings(max_examples=examples(30), deadline=None)
@given(
    driver=st.sampled_from(["550.78", "535.104.05", "570.124.06"]),
    form=st.sampled_from(["Nvidia Driver: v{d}", "NVIDIA driver {d}", "nvidia driver: {d}"]),
)
def test_a_new_driver_named_in_an_issue_template_beside_an_insufficient_driver(driver, form):
    """cudaErrorInsufficientDriver beside a driver that runs every CUDA 12 build: no driver
    reached the process (driver-missing), the template's "Nvidia Driver: v550.78" read as the
    driver's version like nvidia-smi's."""
    text = (
        "CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version\n"
        + form.format(d=driver)
        + "\n"
    )
    assert _ids(text)[0] == "driver-missing", text


def test_thrust_function_attributes_of_an_invalid_device_function():
    text = "RuntimeError: function_attributes(): after cudaFuncGetAttributes: invalid device function\n"
    assert _ids(text)[0] == "gpu-arch-unsupported"


@settings(max_examples=examples(30), deadline=None)
@given(
    model=st.sampled_from(["rx 6600", "RX 580", "RX 7900 XTX", "Radeon RX 6800", "intel IGPU"]),
)
def test_an_amd_rx_model_or_an_intel_igpu_is_another_vendors_graphics(model):
    text = f"GPU: {model}\nCannot load libnvidia-encode.so.1\n"
    assert _ids(text)[0] == "gpu-missing", text
    nvidia = "GPU: RTX 3060\nCannot load libnvidia-encode.so.1\n"
    assert _ids(nvidia)[0] == "driver-missing"


def test_im_running_without_gpu_is_the_users_statement():
    text = "I'm running without  GPU\n[hevc_nvenc @ 0x56547a989800] Cannot load libcuda.so.1\n"
    assert _ids(text)[0] == "gpu-missing"
