"""Round twelve (a)'s readings, each from its emitter's source.

- Triton's libcuda_dirs() (triton/common/build.py at 2.1.0) asserts "libcuda.so cannot found!"
  when no directory of the linker cache (ldconfig -p) holds the driver's libcuda.so: the driver's
  library is not where Triton looks (driver-missing), with no GPU set up as the alternative.
- Lua Torch's cudnn.torch (ffi.lua on its R4/R5/R7 branches) raises "libcudnn (RN) not found in
  library path." when no libcudnn.so.N loads: cuDNN N is missing (the major it wants), which a
  listing of only other majors in the paste turns into cudnn-major-mismatch.
- Caffe2's CheckCuDNNVersions (caffe2/core/common_cudnn.h at v0.8.1) enforces an exact match and
  prints "cuDNN compiled (B) and runtime (L) versions mismatch": the pair decides (older:
  cudnn-too-old, another major: cudnn-major-mismatch, a newer one: a failed check, never benign).
- torch's "Attempt to open cnn_infer failed: handle=0 error: <dlerror>" (Conv_v8.cpp's static
  dlopen of libcudnn_cnn_infer.so.8, a TORCH_WARN after which the descriptor is built as before)
  is harmless alone; the dlerror text it quotes is its content, not a failure of its own. cuDNN's
  own "Could not load library libcudnn_cnn_infer.so.8" after it is the failure (cudnn-missing).

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from fixer.rules import cudnn_relation
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

DIR = st.sampled_from(["/usr/lib64-nvidia", "/usr/lib/x86_64-linux-gnu", "/usr/local/nvidia/lib64"])
NOISE = st.sampled_from(["", "epoch 3: loss 0.41\n", "Traceback (most recent call last):\n"])


def _triton(locs: list) -> str:
    msg = "libcuda.so cannot found!\n"
    if locs:
        msg += "Possible files are located at %s." % str(locs)
        msg += "Please create a symlink of libcuda.so to any of the file."
    return (
        '  File "/opt/venv/lib/python3.10/site-packages/triton/common/build.py", line 30, in '
        "libcuda_dirs\n    assert any(os.path.exists(os.path.join(path, 'libcuda.so')) for path "
        f"in dirs), msg\nAssertionError: {msg}"
    )


@settings(max_examples=examples(30), deadline=None)
@given(before=NOISE, dirs=st.lists(DIR, max_size=2, unique=True))
def test_triton_libcuda_not_found_is_driver_missing(before, dirs):
    ids = _ids(before + _triton([f"{d}/libcuda.so.1" for d in dirs]))
    assert ids[0] == "driver-missing"
    assert "gpu-missing" in ids[1:]


def _cudnn_torch(major: int, backslash: bool) -> str:
    r = f"R{major}\\)" if backslash else f"R{major})"
    return (
        "/home/user/torch/install/bin/luajit: /home/user/torch/install/share/lua/5.1/cudnn/"
        f"ffi.lua:1603: 'libcudnn ({r} not found in library path.\n"
        "Please install CuDNN from https://developer.nvidia.com/cuDNN\n"
        f"Then make sure files named as libcudnn.so.{major} or libcudnn.{major}.dylib are placed "
        "in your library load path (for example /usr/local/lib , or manually add a path to "
        "LD_LIBRARY_PATH)\n"
    )


@settings(max_examples=examples(30), deadline=None)
@given(before=NOISE, major=st.integers(2, 9), backslash=st.booleans())
def test_cudnn_torch_not_found_is_missing_with_its_major(before, major, backslash):
    found = explain(before + _cudnn_torch(major, backslash))
    assert found[0].id == "cudnn-missing"
    assert f"libcudnn.so.{major}" in found[0].title


@settings(max_examples=examples(30), deadline=None)
@given(major=st.integers(4, 8), other=st.integers(4, 8))
def test_cudnn_torch_with_only_another_major_listed_is_major_mismatch(major, other):
    listing = f"ii  libcudnn{other}  {other}.0.5-1+cuda8.0  amd64  cuDNN runtime libraries\n"
    ids = _ids(_cudnn_torch(major, False) + listing)
    assert ids[0] == ("cudnn-missing" if other == major else "cudnn-major-mismatch")


@settings(max_examples=examples(20), deadline=None)
@given(major=st.integers(4, 9))
def test_neighbouring_loader_messages_keep_their_readings(major):
    # the generic loader reading of the same library and the driver's own loader failure
    plain = (
        f"OSError: libcudnn.so.{major}: cannot open shared object file: No such file or directory"
    )
    assert _ids(plain)[0] == "cudnn-missing"
    drv = "OSError: libcuda.so.1: cannot open shared object file: No such file or directory"
    assert _ids(drv)[0] == "driver-missing"


# Caffe2's CheckCuDNNVersions (caffe2/core/common_cudnn.h at v0.8.1): CAFFE_ENFORCE fails for any
# pair that differs, so the pair is judged by cudnn_relation and is never benign.
VER = st.tuples(st.integers(5, 9), st.integers(0, 5), st.integers(0, 9))


def _int(v: tuple) -> int:
    return v[0] * 1000 + v[1] * 100 + v[2]


@settings(max_examples=examples(40), deadline=None)
@given(
    before=NOISE,
    built=VER,
    loaded=VER,
    check=st.sampled_from(
        ["version_match", "version_match || backwards_compatible_7 || patch_compatible"]
    ),
)
def test_caffe2_version_check_reads_the_pair(before, built, loaded, check):
    if built == loaded:
        return
    text = (
        f"{before}RuntimeError: [enforce fail at common_cudnn.h:102] {check}. cuDNN compiled "
        f"({_int(built)}) and runtime ({_int(loaded)}) versions mismatch"
    )
    found = explain(text)
    rel = cudnn_relation(".".join(map(str, loaded)), ".".join(map(str, built)))
    # a failed check that refused a newer copy of the same major wants the build's own release
    # (before cuDNN 7 Caffe2 wants version_match): another copy than the build's loaded
    newer = "cudnn-shadowed" if loaded > built else "cudnn-too-old"
    assert found[0].id == ("cudnn-major-mismatch" if rel == "other-major" else newer)
    assert all(f.id != "log-noise" for f in found)


@settings(max_examples=examples(20), deadline=None)
@given(built=VER, loaded=VER)
def test_other_frameworks_version_lines_keep_their_readings(built, loaded):
    # MXNet's warning is benign for a compatible pair; Caffe2's failed check never is
    mx = (
        f"[08:32:10] ../src/base.cc:80: cuDNN lib mismatch: linked-against version {_int(loaded)} "
        f"!= compiled-against version {_int(built)}.  Set MXNET_CUDNN_LIB_CHECKING=0 to quiet this warning."
    )
    rel = cudnn_relation(".".join(map(str, loaded)), ".".join(map(str, built)))
    assert (_ids(mx)[0] == "log-noise") == (rel == "ok")


def _cnn_infer_warning(err: str) -> str:
    return (
        "/opt/venv/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: "
        f"Attempt to open cnn_infer failed: handle=0 error: {err} (Triggered internally at "
        "../aten/src/ATen/native/cudnn/Conv_v8.cpp:78.)"
    )


ERR = st.sampled_from(
    [
        "libcudnn_cnn_infer.so.8: cannot open shared object file: No such file or directory",
        "libnvrtc.so: cannot open shared object file: No such file or directory",
        "/usr/lib/x86_64-linux-gnu/libcudnn_cnn_infer.so.8: undefined symbol: "
        "_ZN5cudnn14cublasSaxpy_v2EP13cublasContextiPKfS3_iPfi, version libcudnn_ops_infer.so.8",
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(before=NOISE, err=ERR)
def test_cnn_infer_warning_alone_is_log_noise(before, err):
    assert _ids(before + _cnn_infer_warning(err))[0] == "log-noise"


@settings(max_examples=examples(20), deadline=None)
@given(err=ERR)
def test_cnn_infer_warning_then_cudnns_own_failure_keeps_the_failure(err):
    lib = "libcudnn_cnn_infer.so.8"
    after = (
        f"\nCould not load library {lib}. Error: {lib}: cannot open shared object file: "
        "No such file or directory\nPlease make sure libcudnn_cnn_infer.so.8 is in your library path!"
    )
    # the warning steps aside: the reading is that of the failure and the dlerror it quoted
    ids = _ids(_cnn_infer_warning(err) + after)
    assert ids[0] != "log-noise"
    assert ids[0] == _ids(err + after)[0]
    assert _ids(after.strip())[0] == "cudnn-missing"


@settings(max_examples=examples(20), deadline=None)
@given(before=NOISE, line=st.integers(70, 99))
def test_cnn_infer_nvrtc_workaround_warning_is_log_noise(before, line):
    text = (
        f"{before}/opt/venv/lib/python3.10/site-packages/torch/nn/modules/conv.py:456: UserWarning: "
        "Applied workaround for CuDNN issue, install nvrtc.so (Triggered internally at "
        f"../aten/src/ATen/native/cudnn/Conv_v8.cpp:{line}.)"
    )
    assert _ids(text)[0] == "log-noise"
