"""Round thirteen (a)'s readings, each from its emitter's source.

- ld.so's "OBJECT: undefined symbol: SYM" (glibc elf/dl-lookup.c) names the object that asked
  for the symbol. A framework's own compiled Python module (a name with one of CPython's
  extension suffixes: cupy/cuda/cudnn.cpython-310-x86_64-linux-gnu.so) is a framework library,
  never a cuDNN file because its name starts with "cudnn": a cuDNN symbol it lacks is read like
  torch's libtorch_cuda.so's (the loaded cuDNN is older than the build's; an entry of the
  deprecated _v2.._v7 suffixes, which the next major removes, is another major), while a cuDNN
  sub-library that lacks a cuDNN symbol stays two cuDNN releases mixed. The wording without
  OBJECT, which matches inside the same line, is that same lookup and adds no reading of its own.
- torch 2.3.0's "Plan failed with a cudnnException / a CuDNNError / an OutOfMemoryError: ..."
  (Conv_v8.cpp's try_configs/try_plans loop warns per failed plan and tries the next): harmless
  alone; "GET/FIND was unable to find an engine" after it is the failure. The OutOfMemoryError
  form quotes the allocator's "CUDA out of memory", which keeps its own reading.
- Theano's cuDNN checks (theano/gpuarray/dnn.py at rel-1.0.0, theano/sandbox/cuda at rel-0.9.0):
  a version below v5 (or below 7.0.2 on Volta) is cudnn-too-old; "Mixed dnn version" is the
  header/library pair judged like every framework's; a failed test compile or library search is
  cudnn-missing; a failed cudnnCreate is Theano's "too old driver"; too little free memory is
  out-of-memory.

Values are generated; the wordings are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.rules import cudnn_relation
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

NOISE = st.sampled_from(["", "epoch 3: loss 0.41\n", "Traceback (most recent call last):\n"])
SITE = st.sampled_from(
    ["/usr/local/lib/python3.10/dist-packages", "/opt/conda/lib/python3.11/site-packages"]
)
PYTAG = st.sampled_from(
    [
        "cpython-310-x86_64-linux-gnu",
        "cpython-312-x86_64-linux-gnu",
        "abi3",
        "cpython-39-aarch64-linux-gnu",
    ]
)
CUDNN_SYM = st.sampled_from(
    [
        "cudnnGetConvolutionForwardAlgorithm",
        "cudnnGetLibConfig",
        "cudnnGetLastErrorString",
    ]
)
MAJOR = st.integers(5, 9)


@settings(max_examples=examples(25), deadline=None)
@given(
    before=NOISE,
    site=SITE,
    tag=PYTAG,
    mod=st.sampled_from(["cupy/cuda/cudnn", "cupy_backends/cuda/libs/cudnn", "torch/_C"]),
    sym=CUDNN_SYM,
    node=st.one_of(st.none(), MAJOR),
)
def test_an_extension_module_lacking_a_cudnn_symbol_is_not_two_cudnn_releases(
    before, site, tag, mod, sym, node
):
    version = f", version libcudnn.so.{node}" if node is not None else ""
    text = f"{before}ImportError: {site}/{mod}.{tag}.so: undefined symbol: {sym}{version}"
    ids = _ids(text)
    assert ids[0] == "cudnn-too-old"
    assert "cudnn-mixed" not in ids


@settings(max_examples=examples(20), deadline=None)
@given(
    site=SITE,
    tag=PYTAG,
    base=st.sampled_from(
        ["cudnnSetFilterNdDescriptor", "cudnnSetPooling2dDescriptor", "cudnnActivationForward"]
    ),
    suffix=st.integers(2, 9),
)
def test_a_deprecated_suffixed_cudnn_entry_is_another_major(site, tag, base, suffix):
    """cudnn.h 5-7: the _v2.._v7 entries are deprecated routines the next major removes; cuDNN 8's
    _v8 names are its new API (added within a major)."""
    text = f"ImportError: {site}/cupy/cuda/cudnn.{tag}.so: undefined symbol: {base}_v{suffix}"
    want = "cudnn-major-mismatch" if suffix <= 7 else "cudnn-too-old"
    assert _ids(text)[0] == want


@settings(max_examples=examples(20), deadline=None)
@given(
    part=st.sampled_from(["ops", "cnn", "adv", "graph", "ops_infer"]),
    major=MAJOR,
    sym=CUDNN_SYM,
    needer=st.booleans(),
)
def test_a_cudnn_library_lacking_a_cudnn_symbol_stays_mixed(part, major, sym, needer):
    obj = f"/usr/lib/x86_64-linux-gnu/libcudnn_{part}.so.{major}: " if needer else ""
    assert _ids(f"ImportError: {obj}undefined symbol: {sym}")[0] == "cudnn-mixed"


PLAN = st.sampled_from(
    [
        "a cudnnException: CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR: cudnnFinalize Descriptor Failed cudnn_status: CUDNN_STATUS_NOT_SUPPORTED",
        "a CuDNNError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
        "an OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(
    before=NOISE,
    plan=PLAN,
    line=st.integers(1, 2000),
    op=st.sampled_from(["conv2d", "conv3d", "conv1d"]),
    after=st.sampled_from(["", "GET", "FIND"]),
)
def test_torch_2_3_plan_warning_is_noise_unless_no_plan_ran(before, plan, line, op, after):
    text = (
        f"{before}/venv/lib/python3.11/site-packages/torch/nn/modules/conv.py:456: UserWarning: "
        f"Plan failed with {plan} (Triggered internally at ../aten/src/ATen/native/cudnn/"
        f"Conv_v8.cpp:{line}.)\n  return F.{op}(input, weight, bias, self.stride,\n"
    )
    if after:
        text += f"RuntimeError: {after} was unable to find an engine to execute this computation\n"
    ids = _ids(text)
    if "OutOfMemoryError" in plan:
        # the allocator's own message, quoted in the warning, reads as memory pressure either way
        assert ids[0] == "out-of-memory"
    elif after:
        assert "log-noise" not in ids
        assert ids[0] == "cudnn-incomplete"
    else:
        assert ids == ["log-noise"]


def _v(t: tuple) -> int:
    return t[0] * 1000 + t[1] * 100 + t[2]


VER = st.tuples(st.integers(4, 9), st.integers(0, 9), st.integers(0, 9))
WRAP = st.sampled_from(
    [
        "RuntimeError: You enabled cuDNN, but we aren't able to use it: {}",
        "Can not use cuDNN on context None: {}",
        "Can not use cuDNN on context dev0: {}",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(before=NOISE, wrap=WRAP, header=VER, lib=VER, kind=st.integers(0, 6), mb=st.integers(0, 74))
def test_theano_cudnn_checks(before, wrap, header, lib, kind, mb):
    if kind == 0:
        text, want = (
            wrap.format(f"cuDNN version is too old. Update to v5* or higher, was {_v(lib)}."),
            "cudnn-too-old",
        )
    elif kind == 1:
        text, want = wrap.format("Use cuDNN 7.0.2 or higher for Volta."), "cudnn-too-old"
    elif kind == 2:
        err = "b'/usr/bin/ld: cannot find -lcudnn\\ncollect2: error: ld returned 1 exit status\\n'"
        text, want = (
            wrap.format(f"cannot compile with cuDNN. We got this error:\n{err}"),
            "cudnn-missing",
        )
    elif kind == 3:
        text = 'RuntimeError: Could not find cudnn library (looked for v5* to v7*). Check your cudnn installation. Maybe using the Theano flag dnn.base_path can help you. Current value "/usr/local/cuda"'
        want = "cudnn-missing"
    elif kind == 4:
        text = f"RuntimeError: ('Error creating cudnn handle. This can be a sign of a too old driver.', {kind % 3 + 1})"
        want = "driver-too-old"
    elif kind == 5:
        text, want = (
            f"RuntimeError: Can not enable cuDNN as there is only {mb} MB of free GPU memory.",
            "out-of-memory",
        )
    else:
        if header == lib:
            return
        text = f"RuntimeError: Mixed dnn version. The header is version {_v(header)} while the library is version {_v(lib)}."
        rel = cudnn_relation(".".join(map(str, lib)), ".".join(map(str, header)))
        # a library newer than the header of its major: another installation found first
        # (engine._NEWER_COPY, round twenty-eight); older: too old
        newer = "cudnn-shadowed" if lib > header else "cudnn-too-old"
        want = "cudnn-major-mismatch" if header[0] != lib[0] else newer
        assert rel is not None
    assert _ids(before + text)[0] == want


# the sweep of torch 2.9.1's, CuPy v13.6.0's and Triton's sources

CAPS = [
    (3, 0),
    (3, 5),
    (3, 7),
    (5, 0),
    (5, 2),
    (6, 0),
    (6, 1),
    (7, 0),
    (7, 5),
    (8, 0),
    (8, 6),
    (8, 9),
]
MINS = [(3, 5), (3, 7), (5, 0), (5, 2), (6, 0), (6, 1), (7, 0), (7, 5), (8, 0), (9, 0)]


@settings(max_examples=examples(30), deadline=None)
@given(
    cap=st.sampled_from(CAPS),
    lo=st.sampled_from(MINS),
    gpu=st.sampled_from(["Tesla K80", "GeForce GTX 1080", "Tesla T4"]),
)
def test_torch_capability_below_the_build_minimum_is_unsupported(cap, lo, gpu):
    """torch/cuda/__init__.py _check_capability: a capability below the build's minimum."""
    text = (
        f"UserWarning: \n    Found GPU0 {gpu} which is of cuda capability {cap[0]}.{cap[1]}.\n"
        "    Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
        f"    ({lo[0]}.{lo[1]}) - (12.0)\n"
    )
    ids = _ids(text)
    if cap < lo:
        assert ids[0] == "gpu-arch-unsupported"
    else:
        assert "gpu-arch-unsupported" not in ids


FAMILY_LIB = st.sampled_from(
    [
        ("libcudnn", "cudnn-missing"),
        ("libcublas", "cuda-lib-missing"),
        ("libcusparse", "cuda-lib-missing"),
        ("libnvJitLink", "cuda-lib-missing"),
        ("libnvrtc", "cuda-lib-missing"),
        ("libcudart", "cuda-lib-missing"),
    ]
)


@settings(max_examples=examples(20), deadline=None)
@given(before=NOISE, lib=FAMILY_LIB, paths=st.lists(SITE, min_size=1, max_size=3))
def test_torch_preload_of_a_cuda_wheel_not_found(before, lib, paths):
    """torch/__init__.py _preload_cuda_deps: the glob's library family decides."""
    text = f"{before}ValueError: {lib[0]}.so.*[0-9] not found in the system path {paths!r}"
    assert _ids(text)[0] == lib[1]


@settings(max_examples=examples(30), deadline=None)
@given(
    before=NOISE,
    kind=st.integers(0, 5),
    toolkit=st.tuples(st.integers(10, 13), st.integers(0, 9)),
    torch_cuda=st.tuples(st.integers(11, 13), st.integers(0, 9)),
)
def test_torch_cpp_extension_cuda_checks(before, kind, toolkit, torch_cuda):
    tk, tc = "%d.%d" % toolkit, "%d.%d" % torch_cuda
    if kind == 0:
        msg = "The detected CUDA version (%s) mismatches the version that was used to compilePyTorch (%s). Please make sure to use the same CUDA versions."
        text, want = f"RuntimeError: ({msg!r}, {tk!r}, {tc!r})", "cuda-lib-mismatch"
    elif kind == 1:
        text = (
            f"RuntimeError: The detected CUDA version ({tk}) mismatches the version that was used to "
            f"compile\nPyTorch ({tc}). Please make sure to use the same CUDA versions."
        )
        want = "cuda-lib-mismatch"
    elif kind == 2:
        text = (
            f"UserWarning: The detected CUDA version ({tk}) has a minor version mismatch with the "
            f"version that was used to compile PyTorch ({tc}). Most likely this shouldn't be a problem."
        )
        want = "log-noise"
    elif kind == 3:
        text = "RuntimeError: CUDA was not found on the system, please set the CUDA_HOME or the CUDA_PATHenvironment variable or add NVCC to your system PATH. The extension compilation will fail."
        want = "cuda-lib-missing"
    elif kind == 4:
        text = f"FileNotFoundError: nvcc not found at '/usr/local/cuda-{tk}/bin/nvcc'. Ensure CUDA path '/usr/local/cuda-{tk}' is correct."
        want = "cuda-lib-missing"
    else:
        text, want = (
            f"ValueError: Unknown CUDA arch ({tk}) or GPU not supported",
            "gpu-arch-unsupported",
        )
    assert _ids(before + text)[0] == want


@settings(max_examples=examples(15), deadline=None)
@given(
    before=NOISE,
    failed=st.booleans(),
    dll=st.sampled_from(["nvrtc64_120_0.dll", "cudart64_12.dll"]),
)
def test_nvml_driver_and_cupy_cuda_path_warning(before, failed, dll):
    assert (
        _ids(before + "RuntimeError: cuda driver can't be loaded, is cuda enabled?")[0]
        == "driver-missing"
    )
    text = (
        "C:\\Python311\\Lib\\site-packages\\cupy\\_environment.py:216: UserWarning: CUDA path could "
        "not be detected. Set CUDA_PATH environment variable if CuPy fails to load.\n  warnings.warn(\n"
    )
    if failed:
        text += f"RuntimeError: CuPy failed to load {dll}: FileNotFoundError: Could not find module '{dll}' (or one of its dependencies). Try using the full path with constructor syntax.\n"
    ids = _ids(before + text)
    assert ids[0] == ("cuda-lib-missing" if failed else "log-noise")
