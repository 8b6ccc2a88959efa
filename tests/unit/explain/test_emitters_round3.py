"""Round three's readings, from their emitters' own format strings (recipes/errors.toml cites
each): ptxas's option parser, the driver's module-image codes, jaxlib's plugin version check, pip's
resolver, cuDNN's sub-library status, and a framework's cuDNN check with two frameworks in the
paste. Values are generated; the wording is the emitter's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples

#: ptxas 13.0's lowest accepted --gpu-name (`ptxas --help`): below it, a dropped architecture
LOWEST_CUDA13 = 75
ARCH = st.integers(min_value=10, max_value=129)
SUFFIX = st.sampled_from(["", "a", "f"])
VERSION = st.tuples(st.integers(0, 20), st.integers(0, 99), st.integers(0, 20)).map(
    lambda t: ".".join(map(str, t))
)
NAME = st.from_regex(r"[a-z][a-z0-9_\-]{1,20}", fullmatch=True)
FRAMEWORK_LINES = {
    "torch": "import torch",
    "jax": "import jax.numpy as jnp",
    "tensorflow": "import tensorflow as tf",
}


def _top(text: str) -> str:
    found = explain(text)
    return found[0].id if found else ""


@settings(max_examples=examples(100), deadline=None)
@given(arch=ARCH, suffix=SUFFIX, kind=st.sampled_from(["sm", "compute"]))
def test_ptxas_unknown_architecture_reads_by_the_side_of_the_gap(arch, suffix, kind):
    """ptxas: "Value '%s' is not defined for option '%s'". Below the range every current ptxas
    accepts, the toolkit dropped the GPU; inside it, the ptxas is older than the GPU."""
    text = f"ptxas fatal   : Value '{kind}_{arch}{suffix}' is not defined for option 'gpu-name'"
    want = "gpu-arch-unsupported" if arch < LOWEST_CUDA13 else "cuda-lib-mismatch"
    assert _top(text) == want


@settings(max_examples=examples(60), deadline=None)
@given(
    code=st.sampled_from(
        [
            "cudaErrorUnsupportedPtxVersion",
            "cudaErrorCompatNotSupportedOnDevice",
        ]
    ),
    n=st.integers(0, 999),
    call=st.sampled_from(["cudaStreamCreateWithFlags(&s, 1)", "cudaMalloc(&p, n)"]),
)
def test_the_runtimes_enum_names_of_driver_errors(code, n, call):
    """cuda-samples' check(): "CUDA error at %s:%d code=%d(%s) \\"%s\\"" with the enum name.
    (cudaErrorSystemDriverMismatch, 803, is read as driver-missing from round twenty-two:
    test_emitters_round22.py.)"""
    assert _top(f'CUDA error at main.cu:{n} code={n}({code}) "{call}"') == "driver-too-old"


@settings(max_examples=examples(60), deadline=None)
@given(
    name=st.sampled_from(["CUDA_ERROR_INVALID_SOURCE", "CUDA_ERROR_INVALID_IMAGE"]),
    prefix=st.sampled_from(["cupy.cuda.driver.CUDADriverError: ", "RuntimeError: ", ""]),
)
def test_a_rejected_module_image_reads_as_the_architecture(name, prefix):
    """CuPy: "%s: %s" % (cuGetErrorName, cuGetErrorString); cuGetErrorString(200 / 300)."""
    text = f"{prefix}{name}: device kernel image is invalid"
    found = [f.id for f in explain(text)]
    assert found[0] == "gpu-arch-unsupported" and "driver-too-old" in found


@settings(max_examples=examples(60), deadline=None)
@given(plugin=NAME, pv=VERSION, jv=VERSION, wrap=st.booleans())
def test_jaxlib_plugin_version_check(plugin, pv, jv, wrap):
    """jaxlib/plugin_support.py: the warning, also wrapped by a notebook after the comma."""
    brk = "\n" if wrap else " "
    text = (
        f"RuntimeWarning: JAX plugin {plugin} version {pv} is installed,{brk}but it is not "
        f"compatible with the installed jaxlib version {jv}, so it will not be used."
    )
    assert _top(text) == "pip-conflict"


@settings(max_examples=examples(100), deadline=None)
@given(
    holder=NAME,
    hv=VERSION,
    dep=NAME,
    dv=VERSION,
    you=st.sampled_from(["you", "you'll"]),
    fws=st.lists(st.sampled_from(sorted(FRAMEWORK_LINES)), max_size=3, unique=True),
    cudnn=st.booleans(),
)
def test_pip_resolver_conflicts(holder, hv, dep, dv, you, fws, cudnn):
    """pip's _warn_about_conflicts line; a cuDNN wheel pinned by one package and replaced by
    another's install, with two GPU frameworks in the paste, is a cuDNN conflict between them."""
    dep = "nvidia-cudnn-cu12" if cudnn else dep
    text = "\n".join(FRAMEWORK_LINES[f] for f in fws) + (
        "\nERROR: pip's dependency resolver does not currently take into account all the "
        "packages that are installed. This behaviour is the source of the following dependency "
        f"conflicts.\n{holder} {hv} requires {dep}=={dv}1, but {you} have {dep} {dv} which is "
        "incompatible.\n"
    )
    want = "cudnn-conflict" if cudnn and len(fws) >= 2 else "pip-conflict"
    assert _top(text) == want


@settings(max_examples=examples(60), deadline=None)
@given(
    prefix=st.sampled_from(
        [
            "RuntimeError: cuDNN error: ",
            "RuntimeError: CUDNN_BACKEND_TENSOR_DESCRIPTOR cudnnFinalize failedptrDesc->finalize() cudnn_status: ",
        ]
    ),
    said=st.sampled_from(
        [
            "",
            "libcudnn_engines_tensor_ir.so.9 is missing from site-packages/nvidia/cudnn/lib\n",
            "the nvidia-cudnn-cu13 wheel is incomplete\n",
        ]
    ),
)
def test_sublibrary_version_mismatch_is_mixed_unless_a_file_is_said_missing(prefix, said):
    """cudnnStatus_t CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH: two releases were loaded together."""
    found = [f.id for f in explain(said + prefix + "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH")]
    if said:
        assert found[:2] == ["cudnn-incomplete", "cudnn-mixed"]
    else:
        assert found[:2] == ["cudnn-mixed", "cudnn-incomplete"]


@settings(max_examples=examples(100), deadline=None)
@given(
    built=st.tuples(st.integers(8, 9), st.integers(1, 9)),
    back=st.integers(1, 9),
    fws=st.lists(st.sampled_from(sorted(FRAMEWORK_LINES)), max_size=3, unique=True),
)
def test_an_older_cudnn_with_two_frameworks_is_their_conflict(built, back, fws):
    """XLA's / TensorFlow's check ("Loaded runtime CuDNN library: %s but source was compiled
    with: %s") names an older copy; with two GPU frameworks in the paste, the first one's copy."""
    major, minor = built
    lo = f"{major}.{max(0, minor - back)}.0"
    text = "\n".join(FRAMEWORK_LINES[f] for f in fws) + (
        f"\nE cuda_dnn.cc:417] Loaded runtime CuDNN library: {lo} but source was compiled with: "
        f"{major}.{minor}.0.  CuDNN library needs to have matching major version and equal or "
        "higher minor version.\n"
    )
    found = [f.id for f in explain(text)]
    if len(fws) >= 2:
        assert found[:2] == ["cudnn-conflict", "cudnn-too-old"]
    else:
        assert found[0] == "cudnn-too-old"


def _ort_releases():
    from fixer.recipebook import load

    return sorted(
        {
            (b.version, int(b.cudnn.split(".")[0]))
            for b in load().builds_for("onnxruntime")
            if b.cudnn and b.cuda
        }
    )


@settings(max_examples=examples(100), deadline=None)
@given(
    release=st.sampled_from(_ort_releases()),
    have=st.integers(7, 10),
    minor=st.integers(0, 9),
    form=st.sampled_from(["int", "dotted"]),
)
def test_a_plugin_failure_reads_the_major_from_the_build_tables(release, have, minor, form):
    """onnxruntime's provider bridge names only its CUDA plug-in; the release the paste names
    gives the cuDNN major (recipes/others.toml, from the ONNX Runtime CUDA EP table). Shown
    another major only: cudnn-major-mismatch; the same major: the copy is not searched."""
    version, built = release
    majors = {m for v, m in _ort_releases() if v == version}
    cudnn = f"{have}{minor}0{minor}" if form == "int" else f"{have}.{minor}.1"
    text = (
        f"onnxruntime-gpu {version}\ncuDNN version: {cudnn}\n"
        "[E:onnxruntime:Default, provider_bridge_ort.cc:1992 onnxruntime::TryGetProviderInfo_CUDA] "
        "provider_bridge_ort.cc:1637 onnxruntime::ProviderLibrary::Get [ONNXRuntimeError] : 1 : "
        'FAIL : LoadLibrary failed with error 126 "" when trying to load '
        '"C:\\venv\\Lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll"\n'
    )
    top = explain(text)[0]
    if len(majors) == 1 and have != built:
        assert top.id == "cudnn-major-mismatch" and f"onnxruntime {version}" in top.evidence[-1]
    else:
        assert top.id == "cudnn-missing"


@settings(max_examples=examples(60), deadline=None)
@given(
    want=st.integers(7, 10),
    other=st.integers(7, 10),
    word=st.sampled_from(["requires", "needs", "built with", "compiled against", "at least"]),
    stated=st.booleans(),
)
def test_a_cudnn_version_stated_as_a_requirement_is_not_evidence_of_a_copy(
    want, other, word, stated
):
    """ "cuDNN: X" / "cuDNN Ver. N" beside the error says what is installed; "requires cuDNN X"
    says what is needed, and decides nothing about the copies present."""
    fail = f"ImportError: libcudnn.so.{want}: cannot open shared object file: No such file or directory\n"
    line = f"cuDNN: {other}.1.1\n" if stated else f"this build {word} cuDNN {other}.1\n"
    top = explain(fail + line)[0]
    if stated and other != want:
        assert top.id == "cudnn-major-mismatch"
    else:
        assert top.id == "cudnn-missing"


@settings(max_examples=examples(60), deadline=None)
@given(
    major=st.integers(8, 9),
    minor=st.integers(1, 9),
    back=st.integers(1, 9),
    jax=st.booleans(),
)
def test_torchs_check_keeps_its_alternatives_with_one_framework_or_two(major, minor, back, jax):
    """torch's check ("cuDNN version incompatibility: PyTorch was compiled against %s but linked
    against %s"): its alternative reading (a shadowing copy) stays with the conflict reading."""
    lo = max(0, minor - back)
    text = ("import jax.numpy as jnp\n" if jax else "") + (
        "RuntimeError: cuDNN version incompatibility: PyTorch was compiled against "
        f"({major}, {minor}, 2) but linked against ({major}, {lo}, 3)"
    )
    ids = [f.id for f in explain(text)]
    first = ["cudnn-conflict", "cudnn-too-old"] if jax else ["cudnn-too-old"]
    assert ids[: len(first)] == first and "cudnn-shadowed" in ids
