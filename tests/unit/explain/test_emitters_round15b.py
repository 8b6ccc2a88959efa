"""Round fifteen (b)'s readings, each from the code that prints the message.

- LLVM's "'<feature>' is not a recognized feature for this target (ignoring feature)"
  (llvm/lib/MC/MCSubtargetInfo.cpp, ApplyFeatureFlag): the feature is ignored and compilation goes
  on, for any feature name: log-noise; a real failure in the same paste ranks first.
- PaddlePaddle's "Cannot use CUDAPlace in CPU only version" (pybind.cc, compiled in without
  PADDLE_WITH_CUDA/HIP): cpu-only-build.
- cudnn.torch's version checks (ffi.lua, R2-R7 and master's 5.x form): the loaded version against
  the branch's floor: another major is cudnn-major-mismatch, the same major older cudnn-too-old.
- The "dropout supported only in cudnn v5.1 and above" checks (cudnn.torch RNN.lua; PyTorch's
  Python form): the loaded cuDNN is older than 5.1.3; for the Python form shadowing stays second.
- AliceVision's "This program needs a CUDA-Enabled GPU" (gpuSupportCUDA(2, 0) false): no device
  seen is gpu-missing; a device below 2.0 shown (2.1's own line, or the device list) decides
  gpu-arch-unsupported.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

FEATURE = st.one_of(
    st.integers(60, 99).map(lambda n: f"+ptx{n}"),
    st.sampled_from(["sm_90a", "sm_100a", "sm_120", "sse2", "neon", "3dnow"])
    .map(lambda f: st.sampled_from(["+", "-"]).map(lambda s: s + f))
    .flatmap(lambda s: s),
)
OOM = (
    "RuntimeError: CUDA out of memory. Tried to allocate {n}.00 MiB (GPU 0; 6.00 GiB total "
    "capacity; 4.11 GiB already allocated; 34.82 MiB free; 4.42 GiB reserved in total by PyTorch)"
)
NUM = st.integers(1, 999)


@settings(max_examples=examples(25), deadline=None)
@given(feature=FEATURE, n=NUM, times=st.integers(1, 3), before=st.booleans())
def test_an_ignored_llvm_feature_is_noise_below_a_real_failure(feature, n, times, before):
    line = f"'{feature}' is not a recognized feature for this target (ignoring feature)"
    noise = "\n".join([line] * times)
    alone = explain(noise)
    assert alone[0].id == "log-noise" and alone[0].severity == "info", [f.id for f in alone]
    oom = OOM.format(n=n)
    text = f"{noise}\n{oom}" if before else f"{oom}\n{noise}"
    found = _ids(text)
    assert found[0] == "out-of-memory" and "log-noise" in found[1:], (text, found)
    # LLVM's fatal form (checkFeatures) is not the ignored one
    fatal = f"LLVM ERROR: '{feature}' is not a recognized feature for this target"
    assert "log-noise" not in _ids(fatal)[:1]


@settings(max_examples=examples(15), deadline=None)
@given(
    place=st.sampled_from(["CUDAPlace", "CUDAPinnedPlace"]),
    form=st.sampled_from(
        [
            "paddle.fluid.core.EnforceNotMet: Cannot use {p} in CPU only version at "
            "[/paddle/paddle/fluid/pybind/pybind.cc:{n}]",
            "PermissionDeniedError: Cannot use {p} in CPU only version, Please recompile or "
            "reinstall Paddle with CUDA support. (at /paddle/paddle/fluid/pybind/pybind.cc:{n})",
        ]
    ),
    n=NUM,
)
def test_paddle_cpu_only_build_refuses_a_cuda_place(place, form, n):
    text = form.format(p=place, n=n)
    assert _ids(text)[0] == "cpu-only-build", text
    # the CUDAPlace constructor's later wording of the same build keeps the reading
    later = "Cannot use GPU because you have installed CPU version PaddlePaddle."
    assert _ids(f"{later}\n{text}")[0] == "cpu-only-build"


FLOOR_FORMS = {
    "or-above": (
        "{dir}/cudnn/ffi.lua:{n}: These bindings are for version {floor} or above, while the "
        "loaded CuDNN is version: {loaded}  \nAre you using an older or newer version of CuDNN?"
    ),
    "5.x": (
        "Found Environment variable CUDNN_PATH = /usr/lib/x86_64-linux-gnu/libcudnn.so.{m}qlua: "
        "{dir}/cudnn/ffi.lua:{n}: These bindings are for CUDNN 5.x (5005 <= cudnn.version > "
        "6000) , while the loaded CuDNN is version: {loaded}  \nAre you using an older or newer "
        "version of CuDNN?"
    ),
}


@settings(max_examples=examples(30), deadline=None)
@given(
    floor=st.sampled_from([3000, 4005, 5005, 6002, 7000]),
    major=st.integers(2, 8),
    rest=st.integers(0, 999),
    five=st.booleans(),
    n=NUM,
)
def test_cudnn_torch_compares_the_majors(floor, major, rest, five, n):
    loaded = major * 1000 + rest
    if five:
        floor = 5005
        if 5005 <= loaded < 6000:
            loaded = 5000 + rest % 5
        form = FLOOR_FORMS["5.x"]
    else:
        if loaded >= floor:
            loaded = floor - 1 - rest % 500
        form = FLOOR_FORMS["or-above"]
    text = form.format(
        dir="/home/u/torch/install/share/lua/5.1", n=n, floor=floor, loaded=loaded, m=loaded // 1000
    )
    want = "cudnn-major-mismatch" if loaded // 1000 != floor // 1000 else "cudnn-too-old"
    assert _ids(text)[0] == want, (text, _ids(text))


@settings(max_examples=examples(20), deadline=None)
@given(
    v=st.sampled_from(["v5.1", "v 5.1", "5.1"]),
    n=NUM,
    exc=st.sampled_from(["RuntimeError", "Exception"]),
)
def test_dropout_needs_cudnn_5_1(v, n, exc):
    lua = f"/home/u/torch/install/share/lua/5.1/cudnn/RNN.lua:{n}: dropout supported only in cudnn {v} and above"
    assert _ids(lua)[0] == "cudnn-too-old", lua
    py = f"{exc}: dropout supported only in cudnn {v} and above"
    assert _ids(py)[:2] == ["cudnn-too-old", "cudnn-shadowed"], py
    # the Lua form inside a Python-looking traceback keeps the Lua reading alone
    assert "cudnn-shadowed" not in _ids(f"{lua}\n{exc}: {lua}")


AV = "This program needs a CUDA-Enabled GPU (with at least compute {w} 2.0)."


@settings(max_examples=examples(20), deadline=None)
@given(
    w=st.sampled_from(["capablility", "capability"]),
    stamp=st.sampled_from(
        ["[11:54:41.413540][error] ", "[2019-03-01 10:00:00.000000] [error] ", ""]
    ),
    minor=st.integers(0, 3),
    shown=st.sampled_from(["device-list", "own-line"]),
)
def test_alicevision_device_check(w, stamp, minor, shown):
    msg = stamp + AV.format(w=w)
    assert _ids(msg)[:3] == ["gpu-missing", "driver-missing", "gpu-arch-unsupported"], msg
    if shown == "own-line":
        dev = (
            "[error] CUDA-Enabled GPU detected, but the compute capabilities is not enough.\n"
            f" - Device 0: 1.{minor}, global memory: 512MB\n - Requirements: 2.0, global memory: 0MB"
        )
    else:
        dev = f"Device information:\n\t- id:                      0\n\t- compute capability:      1.{minor}"
    assert _ids(f"{dev}\n{msg}")[0] == "gpu-arch-unsupported"
