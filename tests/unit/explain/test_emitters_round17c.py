"""Round seventeen (c)'s readings: building and loading CUDA extensions, each from the code that
prints the message.

- torch.utils.cpp_extension's "There are no g++ version bounds defined for CUDA version X"
  (_check_cuda_version: a toolkit newer than its 11.0-11.7 table skips the host-compiler check and
  the build goes on): log-noise; the build's own error in the same paste ranks first.
- DeepSpeed's op builder without a toolkit ("CUDA_HOME does not exist, unable to compile CUDA
  op(s)", 0.19's "Unable to run .../nvcc, unable to compile CUDA op(s)", is_cuda_enable's "NAME cuda
  is missing or is incompatible with installed torch"), and apex's / flash-attn's "X was requested,
  but nvcc was not found": cuda-lib-missing.
- NVIDIA apex's "Cuda extensions are being compiled with a version of Cuda that does not match the
  version used to compile Pytorch binaries" (nvcc -V under CUDA_HOME against torch.version.cuda)
  and DeepSpeed's DS_SKIP_CUDA_CHECK=1 warning: cuda-lib-mismatch.
- flash-attn's setup.py "FlashAttention is only supported on CUDA N and above" (nvcc under
  CUDA_HOME older than it compiles with): cuda-lib-mismatch.
- mmcv's device registry "NAME: implementation for device cuda:N not found." (no CUDA
  implementation registered: built without MMCV_WITH_CUDA): cpu-only-build; another device is
  not read so.
- bitsandbytes 0.43.3-0.45 "Could not find the bitsandbytes CUDA binary at ..." (no file named for
  torch's CUDA; the CPU binary's "compiled without GPU support" that follows is its consequence):
  pip-conflict first, cpu-only-build second.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

NUM = st.integers(1, 999)
CUDA_MM = st.tuples(st.integers(10, 13), st.integers(0, 9)).map(lambda t: f"{t[0]}.{t[1]}")
PREFIX = st.sampled_from(["", "Traceback (most recent call last):\n", "  ", "ERROR: "])
#: DeepSpeed's WARNING prefix ({YELLOW} [WARNING] {END}) as a terminal or a log file shows it
DS_WARN = st.sampled_from(["\x1b[93m [WARNING] \x1b[0m ", " [WARNING]  ", "[93m [WARNING] [0m "])
SITE = st.sampled_from(
    [
        "/usr/local/lib/python3.10/dist-packages",
        "/opt/conda/lib/python3.11/site-packages",
        "/home/u/.venv/lib/python3.12/site-packages",
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(compiler=st.sampled_from(["g++", "c++", "clang++"]), cuda=CUDA_MM, noise=NOISE)
def test_no_compiler_bounds_for_a_cuda_release_is_noise_below_the_build_error(
    compiler, cuda, noise
):
    line = f"UserWarning: There are no {compiler} version bounds defined for CUDA version {cuda}"
    assert _ids(noise + line)[0] == "log-noise"
    fail = "csrc/ops.cu:1:10: fatal error: cuda_runtime.h: No such file or directory"
    found = _ids(f"{noise}{line}\n{fail}")
    assert found[0] == "cuda-lib-missing" and "log-noise" in found[1:], found


@settings(max_examples=examples(25), deadline=None)
@given(
    form=st.integers(0, 4),
    op=st.sampled_from(["cpu_adam", "fused_adam", "transformer_inference", "--cuda_ext"]),
    cuda=CUDA_MM,
    warn=DS_WARN,
    head=PREFIX,
    noise=NOISE,
)
def test_no_cuda_toolkit_for_an_extension_build_is_cuda_lib_missing(
    form, op, cuda, warn, head, noise
):
    nvcc = f"/usr/local/cuda-{cuda}/bin/nvcc"
    text = [
        "deepspeed.ops.op_builder.builder.MissingCUDAException: CUDA_HOME does not exist, "
        "unable to compile CUDA op(s)",
        f"MissingCUDAException: Unable to run {nvcc}, unable to compile CUDA op(s): [Errno 2] "
        f"No such file or directory: '{nvcc}'",
        f"{warn}{op.lstrip('-')} cuda is missing or is incompatible with installed torch, only "
        "cpu ops can be compiled!",
        f"RuntimeError: {op} was requested, but nvcc was not found.  Are you sure your "
        "environment has nvcc available?  If you're installing within a container from "
        "https://hub.docker.com/r/pytorch/pytorch, only images whose names contain 'devel' will "
        "provide nvcc.",
        "UserWarning: flash_attn was requested, but nvcc was not found.  Are you sure your "
        "environment has nvcc available?",
    ][form]
    found = _ids(noise + head + text)
    assert found[0] == "cuda-lib-missing", (text, found)


@settings(max_examples=examples(25), deadline=None)
@given(built=CUDA_MM, loaded=CUDA_MM, n=NUM, shown=st.booleans(), noise=NOISE)
def test_apex_built_with_another_cuda_than_torch_is_cuda_lib_mismatch(
    built, loaded, n, shown, noise
):
    before = (
        "\nCompiling cuda extensions with\nnvcc: NVIDIA (R) Cuda compiler driver\n"
        f"Cuda compilation tools, release {loaded}, V{loaded}.{n}\nfrom /usr/local/cuda/bin\n\n"
        if shown
        else ""
    )
    text = (
        f"{noise}{before}RuntimeError: Cuda extensions are being compiled with a version of Cuda "
        "that does not match the version used to compile Pytorch binaries.  Pytorch binaries "
        f"were compiled with Cuda {built}.\nIn some cases, a minor-version mismatch will not "
        "cause later errors:  https://github.com/NVIDIA/apex/pull/323#discussion_r287021798.  "
        "You can try commenting out this check (at your own risk)."
    )
    assert _ids(text)[0] == "cuda-lib-mismatch"


@settings(max_examples=examples(20), deadline=None)
@given(built=CUDA_MM, loaded=CUDA_MM, warn=DS_WARN, noise=NOISE)
def test_deepspeed_skipped_cuda_check_reports_the_mismatch(built, loaded, warn, noise):
    text = (
        f"{noise}{warn}DeepSpeed Op Builder: Installed CUDA version {loaded} does not match the "
        f"version torch was compiled with {built}.Detected `DS_SKIP_CUDA_CHECK=1`: Allowing this "
        "combination of CUDA, but it may result in unexpected behavior."
    )
    assert _ids(text)[0] == "cuda-lib-mismatch"
    # the compatible-minor line of the same check stays harmless
    ok = (
        f"Installed CUDA version {loaded} does not match the version torch was compiled with "
        f"{built} but since the APIs are compatible, accepting this combination"
    )
    assert _ids(ok)[0] == "log-noise"


@settings(max_examples=examples(15), deadline=None)
@given(
    floor=st.sampled_from(["11", "11.6", "11.7"]),
    note=st.sampled_from(
        ["", ".  Note: make sure nvcc has a supported version by running nvcc -V."]
    ),
    head=PREFIX,
    noise=NOISE,
)
def test_flash_attn_toolkit_older_than_its_floor_is_cuda_lib_mismatch(floor, note, head, noise):
    text = f"{noise}{head}RuntimeError: FlashAttention is only supported on CUDA {floor} and above{note}"
    assert _ids(text)[0] == "cuda-lib-mismatch"


@settings(max_examples=examples(25), deadline=None)
@given(
    op=st.sampled_from(
        ["nms_impl", "roi_align_forward_impl", "modulated_deform_conv_forward_impl", "sync_bn_impl"]
    ),
    index=st.one_of(st.none(), st.integers(0, 7)),
    other=st.sampled_from(["cpu", "npu:0", "mlu:1", "mps"]),
    noise=NOISE,
)
def test_mmcv_without_a_cuda_implementation_is_a_cpu_only_build(op, index, other, noise):
    dev = "cuda" if index is None else f"cuda:{index}"
    text = f"{noise}RuntimeError: {op}: implementation for device {dev} not found.\n"
    assert _ids(text)[0] == "cpu-only-build"
    # another device's missing implementation is not a build without CUDA
    assert "cpu-only-build" not in _ids(
        f"RuntimeError: {op}: implementation for device {other} not found.\n"
    )


@settings(max_examples=examples(25), deadline=None)
@given(
    site=SITE,
    cuda=st.integers(110, 130),
    nocublaslt=st.booleans(),
    fallback=st.booleans(),
    noise=NOISE,
)
def test_bitsandbytes_without_a_binary_for_torchs_cuda_is_pip_conflict(
    site, cuda, nocublaslt, fallback, noise
):
    lib = f"libbitsandbytes_cuda{cuda}{'_nocublaslt' if nocublaslt else ''}.so"
    text = (
        f"{noise}WARNING:bitsandbytes.cextension:Could not find the bitsandbytes CUDA binary at "
        f"PosixPath('{site}/bitsandbytes/{lib}')"
    )
    if fallback:  # the CPU binary loaded instead says so next
        text += (
            "\nWARNING:bitsandbytes.cextension:The installed version of bitsandbytes was compiled "
            "without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization "
            "are unavailable."
        )
    found = _ids(text)
    # the direct reading of the CPU binary's line, or the alternative (a harmless line between)
    assert found[0] == "pip-conflict" and "cpu-only-build" in found[1:], found
