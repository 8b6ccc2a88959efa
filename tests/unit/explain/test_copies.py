"""The cuDNN copies a paste shows decide between the cuDNN readings (fixer.explainer.copies):
the emitters' own strings (TF/XLA cuda_dnn.cc, torch's backends/cudnn, PaddlePaddle's
gpu_context, JAX's plugin check, cuDNN 8/9's sub-library loaders) with generated versions,
beside generated listings in the forms pip, conda, ldconfig and users print them."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples

MAJORS = st.integers(min_value=7, max_value=9)
MINORS = st.integers(min_value=1, max_value=9)
PATCH = st.integers(min_value=0, max_value=5)


def _decided(f) -> str:
    return next((e for e in f.evidence if e.startswith("decided by:")), "")


def _check_message(framework: str, lo: str, bu: str) -> str:
    """A version check as each framework prints it (the templates of recipes/errors.toml)."""
    if framework == "tf":
        return (
            f"E external/xla/xla/stream_executor/cuda/cuda_dnn.cc:447] Loaded runtime CuDNN "
            f"library: {lo} but source was compiled with: {bu}.  CuDNN library needs to have "
            "matching major version and equal or higher minor version.\n"
        )
    if framework == "torch":
        t = lambda v: "(" + ", ".join(v.split(".")) + ")"  # noqa: E731
        return (
            f"RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against {t(bu)} "
            f"but found runtime version {t(lo)}. PyTorch already comes bundled with cuDNN. One "
            "option to resolving this error is to ensure PyTorch can find the bundled cuDNN.\n"
        )
    mm = lambda v: ".".join(v.split(".")[:2])  # noqa: E731
    return (
        "W0101 00:00:00.000000  123 device_context.cc:404] WARNING: device: 0. The installed "
        f"Paddle is compiled with CUDNN {mm(bu)}, but CUDNN version in your machine is "
        f"{mm(lo)}, which may cause serious incompatible bug.\n"
    )


def _listing(form: str, version: str) -> str:
    major = version.split(".")[0]
    return {
        "pip": f"$ pip list | grep cudnn\nnvidia-cudnn-cu12     {version}.70\n",
        "freeze": f"$ pip freeze\nnvidia-cudnn-cu12=={version}.70\n",
        "conda": f"$ conda list cudnn\ncudnn                     {version}.77             h90431f1_0    conda-forge\n",
        "file": f"my env/lib holds libcudnn{version} too\n",
        "words": f"cuDNN version: {version}\n",
        "dpkg": f"$ dpkg -l | grep cudnn\nii  libcudnn{major}   {version}.29-1+cuda12.2  amd64  cuDNN runtime libraries\n",
        "header": "$ grep -A2 'define CUDNN_MAJOR' /usr/include/cudnn_version.h\n"
        + "".join(
            f"#define CUDNN_{k} {v}\n"
            for k, v in zip(("MAJOR", "MINOR", "PATCHLEVEL"), version.split("."))
        ),
        "find": f"$ find / -name 'libcudnn.so*'\n/opt/cudnn/lib/libcudnn.so.{version}\n",
        "ldconfig": f"\tlibcudnn.so.{major} (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.{major}\n",
    }[form]


@settings(max_examples=examples(100), deadline=None)
@given(
    major=MAJORS,
    lo_minor=MINORS,
    up=st.integers(min_value=1, max_value=4),
    patch=PATCH,
    fw=st.sampled_from(["tf", "torch", "paddle"]),
    form=st.sampled_from(["pip", "freeze", "conda", "file", "words", "dpkg", "header", "find"]),
)
def test_a_fitting_copy_in_the_paste_makes_an_older_loaded_one_shadowed(
    major, lo_minor, up, patch, fw, form
):
    """loaded < built (same major): a present copy that fits the build (same major, minor not
    older) and is not the loaded one decides for cudnn-shadowed; a listing of the loaded copy
    alone, or of another major, keeps cudnn-too-old."""
    lo, bu = f"{major}.{lo_minor}.{patch}", f"{major}.{lo_minor + up}.0"
    fitting = f"{major}.{lo_minor + up + (patch % 2)}.{patch}"
    msg = _check_message(fw, lo, bu)
    top = explain(msg + _listing(form, fitting))[0]
    assert top.id == "cudnn-shadowed", (msg, form)
    assert fitting.split(".")[0] in _decided(top)
    ids = [f.id for f in explain(msg + _listing(form, fitting))]
    assert "cudnn-too-old" in ids  # the older copy stays the alternative
    assert explain(msg + _listing(form, lo))[0].id == "cudnn-too-old"
    other = f"{major + 1}.{lo_minor + up}.0"
    assert explain(msg + _listing(form, other))[0].id == "cudnn-too-old"
    assert explain(msg)[0].id == "cudnn-too-old"


FRAMEWORK_LINES = {
    "torch": '  File "/venv/lib/python3.11/site-packages/whisperx/asr.py", line 12\nimport torch\n',
    "ctranslate2": "ctranslate2 4.4.0 is installed\n",
    "onnxruntime": "onnxruntime-gpu is installed\n",
    "tensorflow": "import tensorflow as tf\n",
    "paddle": "import paddle\n",
}


def _failure(major: int, part: str) -> str:
    if major == 8:
        lib = f"libcudnn_{part}_infer.so.8"
        return f"Could not load library {lib}. Error: {lib}: cannot open shared object file: No such file or directory\n"
    lib = f"libcudnn_{part}.so.{major}"
    return f"Unable to load any of {{{lib}.1.0, {lib}.1, {lib}, libcudnn_{part}.so}}\n"


@settings(max_examples=examples(100), deadline=None)
@given(
    want=st.sampled_from([8, 9]),
    fws=st.lists(st.sampled_from(sorted(FRAMEWORK_LINES)), min_size=2, max_size=2, unique=True),
    shown=st.sampled_from(["pin", "pip", "words", "ldconfig"]),
    part=st.sampled_from(["ops", "cnn"]),
)
def test_two_frameworks_and_two_cudnn_majors_make_a_conflict(want, fws, shown, part):
    """A sub-library of cuDNN N fails to load while the paste shows cuDNN M (M != N): with two GPU
    frameworks named, cudnn-conflict ranks first; with one, the reading is not a conflict."""
    have = 17 - want  # 8 <-> 9
    other = {
        "pin": f"nvidia-cudnn-cu12=={have}.1.0.70 was installed by the other package\n",
        "pip": f"nvidia-cudnn-cu12     {have}.1.0.70\n",
        "words": f"the other one requires cuDNN {have}\n",
        "ldconfig": f"\tlibcudnn_ops.so.{have} (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.{have}\n",
    }[shown]
    text = "".join(FRAMEWORK_LINES[f] for f in fws) + _failure(want, part) + other
    top = explain(text)[0]
    assert top.id == "cudnn-conflict", text
    assert f"cuDNN {want}" in _decided(top) and f"cuDNN {have}" in _decided(top)
    alone = _failure(want, part) + other
    assert explain(alone)[0].id != "cudnn-conflict"


@settings(max_examples=examples(60), deadline=None)
@given(
    major=st.sampled_from([8, 9]),
    part=st.sampled_from(["ops", "cnn", "adv", "engines_tensor_ir", "engines_precompiled"]),
    where=st.sampled_from(["the wheel", "cuda-redist-cudnn", "the jar", "this package"]),
)
def test_a_statement_that_the_part_is_not_in_the_copy_makes_it_incomplete(major, part, where):
    """libcudnn's own loader failed for its sub-library: "these libraries are not inside X"
    decides for cudnn-incomplete; "not in LD_LIBRARY_PATH" (the search path) does not."""
    fail = _failure(major, part)
    top = explain(fail + f"These libraries are NOT inside {where}.\n")[0]
    assert top.id == "cudnn-incomplete" and "NOT inside" in _decided(top)
    lib = f"libcudnn_{part}.so.{major}"
    assert explain(fail + f"{lib} is not in your LD_LIBRARY_PATH\n")[0].id == "cudnn-missing"


@settings(max_examples=examples(60), deadline=None)
@given(installed=MAJORS, minimum=MAJORS, minor=MINORS, patch=PATCH)
def test_jax_judges_the_installed_cudnn_against_its_minimum(installed, minimum, minor, patch):
    """JAX's check is `min_supported_version <= version` (jax_plugins/cuda/__init__.py
    _version_check): a minimum of another major than the installed cuDNN is a major mismatch."""
    inst = installed * 1000 + minor * 100 + patch
    low = minimum * 1000 + 100
    if low <= inst:
        return  # the check passed: JAX prints nothing
    text = (
        "RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\n"
        f"Outdated cuDNN installation found.\nVersion JAX was built against: {inst}\n"
        f"Minimum supported: {low}\nInstalled version: {inst}\n"
        f"The local installation version must be no lower than {low}.\n"
    )
    top = explain(text)[0]
    assert top.id == ("cudnn-major-mismatch" if installed != minimum else "cudnn-too-old")


def _windows_failure(major: int, part: str) -> str:
    """cuDNN 8/9's own loader on Windows (libcudnn's strings: "Could not load library %s. Error
    code %d" / "Could not locate %s", then "Please make sure %s is in your library path!")."""
    dll = f"cudnn_{part}_infer64_8.dll" if major == 8 else f"cudnn_{part}64_9.dll"
    return f"Could not load library {dll}. Error code 126\nPlease make sure {dll} is in your library path!\n"


@settings(max_examples=examples(60), deadline=None)
@given(
    major=st.sampled_from([8, 9]),
    part=st.sampled_from(["ops", "cnn", "adv"]),
    windows=st.booleans(),
    torch_line=st.sampled_from(
        [
            "conda install pytorch torchvision cudatoolkit=11 -c pytorch-nightly\n",
            "pip install torch==2.{n}.0 --index-url https://download.pytorch.org/whl/cu121\n",
            "It fails in the forward pass of nn.Conv2d\n",
            "out = F.conv2d(x, w)\n",
        ]
    ),
    other=st.sampled_from(["", "import ctranslate2\n", "import onnxruntime\n"]),
    n=st.integers(min_value=0, max_value=9),
)
def test_a_torch_process_that_cannot_load_its_cudnn_part_has_an_incomplete_copy(
    major, part, windows, torch_line, other, n
):
    """torch's pip and conda packages bring their cuDNN whole: a sub-library that a torch process
    (torch installed, torch's cuDNN layers failing) cannot load is a part its copy cannot reach
    (cudnn-incomplete), unless another framework that loads cuDNN itself is named (then the
    failing process may be that one's: cuDNN missing from the search path, or the two frameworks'
    conflict where torch's release gives another cuDNN major)."""
    fail = _windows_failure(major, part) if windows else _failure(major, part)
    text = torch_line.replace("{n}", str(n)) + other + fail
    top = explain(text)[0]
    if other:  # missing, or a conflict where torch's release names another cuDNN major
        assert top.id in ("cudnn-missing", "cudnn-conflict"), text
    else:
        assert top.id == "cudnn-incomplete", text
        assert any("cudnn-missing" == f.id for f in explain(text)[1:])


@settings(max_examples=examples(60), deadline=None)
@given(
    pair=st.sampled_from(
        [
            ("torch", "jax[cuda12]"),
            ("torch", "onnxruntime-gpu"),
            ("paddlepaddle-gpu", "torch"),
            ("torch", "whisper-app"),
            ("speech-kit", "jax[cuda12]"),
        ]
    ),
    pin_a=st.tuples(st.integers(8, 9), st.integers(0, 9)),
    pin_b=st.tuples(st.integers(8, 9), st.integers(0, 9)),
    form=st.sampled_from(["pip", "uv"]),
)
def test_a_resolver_that_cannot_pair_two_frameworks_cudnn_pins_is_a_conflict(
    pair, pin_a, pin_b, form
):
    """pip's ResolutionImpossible and uv's PubGrub report with nvidia-cudnn in the conflict: with
    two GPU frameworks among the holders, cudnn-conflict; with one (the other an application
    that pins a cuDNN wheel), not a conflict between frameworks."""
    a, b = pair
    ra = f"nvidia-cudnn-cu12=={pin_a[0]}.{pin_a[1]}.0.1"
    rb = f"nvidia-cudnn-cu12>={pin_b[0]}.{pin_b[1]}"
    if form == "pip":
        report = (
            f"ERROR: Cannot install {a} and {b} because these package versions have "
            "conflicting dependencies.\n\nThe conflict is caused by:\n"
            f"    {a} 2.1.1 depends on {ra}\n    {b} 0.4.30 depends on {rb}\n"
        )
    else:
        report = (
            "  × No solution found when resolving dependencies:\n"
            f"  ╰─▶ Because {a}==2.1.1 depends on {ra} and {b}==0.4.30 depends on {rb}, we can "
            f"conclude that {a}==2.1.1 and {b}==0.4.30 are incompatible.\n"
        )
    two = not ({a, b} & {"whisper-app", "speech-kit"})
    ids = [f.id for f in explain(report)]
    assert (bool(ids) and ids[0] == "cudnn-conflict") == two, (report, ids)


@settings(max_examples=examples(60), deadline=None)
@given(
    lo=st.tuples(MAJORS, MINORS, PATCH),
    bu=st.tuples(MAJORS, MINORS, PATCH),
)
def test_mxnet_s_any_difference_warning_is_judged_by_the_pair(lo, bu):
    """MXNet warns for any pair that differs (src/base.cc CuDNNLibChecks): a compatible pair is
    harmless, an older one too old, another major a major mismatch (fixer.rules.cudnn_relation)."""
    from fixer.rules import cudnn_relation

    li, bi = (v[0] * 1000 + v[1] * 100 + v[2] for v in (lo, bu))
    if li == bi:
        return  # MXNet prints nothing
    text = (
        f"[08:32:10] ../src/base.cc:80: cuDNN lib mismatch: linked-against version {li} != "
        f"compiled-against version {bi}.  Set MXNET_CUDNN_LIB_CHECKING=0 to quiet this warning."
    )
    want = {
        "ok": "log-noise",
        "older": "cudnn-too-old",
        "other-major": "cudnn-major-mismatch",
    }[cudnn_relation(".".join(map(str, lo)), ".".join(map(str, bu))) or "ok"]
    assert explain(text)[0].id == want


def test_zlib_that_cudnn_8_loads_on_windows_is_part_of_an_incomplete_install():
    """cuDNN 8's own loader names zlibwapi.dll like one of its parts (Windows)."""
    for text in (
        "Could not locate zlibwapi.dll. Please make sure it is in your library path!",
        "Could not load library zlibwapi.dll. Error code 126\nPlease make sure zlibwapi.dll is in your library path!",
    ):
        top = explain(text)[0]
        assert top.id == "cudnn-incomplete" and "does not ship" in top.title


@settings(max_examples=examples(60), deadline=None)
@given(
    want=st.integers(7, 9),
    have=st.integers(7, 9),
    form=st.sampled_from(["I have cuDNN {m} installed", "setup: cuda12.4 cudnn{m}", "cuDNN {m}"]),
)
def test_a_bare_cudnn_major_stated_as_present_decides_the_major(want, have, form):
    """A library of cuDNN N that cannot be found beside a statement of cuDNN M on the machine:
    another major decides cudnn-major-mismatch, the same major leaves cuDNN missing from the search
    path; a stated requirement ("cuDNN M is required") is no presence."""
    fail = f"ImportError: libcudnn.so.{want}: cannot open shared object file: No such file or directory\n"
    top = explain(fail + form.format(m=have) + "\n")[0]
    assert top.id == ("cudnn-major-mismatch" if want != have else "cudnn-missing")
    assert explain(fail + f"cuDNN {have} is required\n")[0].id == "cudnn-missing"


@settings(max_examples=examples(30), deadline=None)
@given(
    code=st.integers(min_value=1, max_value=1500),
    spelling=st.sampled_from(["LoadLibrary", "Loadlibrary", "loadlibrary"]),
)
def test_onnx_runtime_s_loadlibrary_failure_is_read_with_or_without_its_quotes(code, spelling):
    """ONNX Runtime's Windows loader (core/platform/windows/env.cc): its plug-in failed to load,
    so a library it depends on (cuDNN first, the CUDA libraries the alternative) is missing, also
    when a user retells the line without its quotes."""
    quoted = f'LoadLibrary failed with error {code} "" when trying to load "C:\\\\Program Files\\\\app\\\\onnxruntime_providers_cuda.dll"'
    retold = (
        f"  {spelling} failed with error {code} when trying to load onnxruntime_providers_cuda.dll"
    )
    for text in (quoted, retold):
        ids = [f.id for f in explain(text)]
        assert ids[:2] == ["cudnn-missing", "cuda-lib-missing"], (text, ids)
