"""Round twenty-seven (the eighteenth session): read from the misses of sets 59-64, each reading
derived from its emitter's source (cited beside the rule in recipes/errors.toml).

- StreamExecutor's "Could not find registered platform with name: "cuda"": the CUDA platform
  registers itself only in a build with CUDA, so a lookup that fails, with a list of registered
  platforms that holds no CUDA, is a CPU build of jaxlib / XLA (cpu-only-build).
- CUDAnative.jl's "CUDA X is not supported by\\nyour driver (which supports up to Y)": the driver
  is older than the toolkit (driver-too-old).
- MegEngine's "cudnn version mismatch: compiled with N; detected M at runtime": its wheel's own
  cuDNN is shadowed by another on the search path (cudnn-shadowed).
- nvcc's "Value 'c++NN' is not defined for option 'std'": the nvcc that ran predates the dialect
  the build asks for (cuda-lib-mismatch); a dialect no nvcc defines is not read so.
- Docker's "could not select device driver" beside only another vendor's graphics: no NVIDIA GPU
  at all (gpu-missing); beside an NVIDIA GPU or alone, Docker's own reading.
- Evidence: Mesa's "Intel® Xe Graphics", an issue template's "OS: mac"; Chinese words of a
  library that is not there ("没有包含", "缺失") read like the English ones, and a line that says
  so shows no copy present.
- (b, sets 65-68 read) a driver too old for the build's CUDA release: before CUDA 11 every
  release needs its own driver (NVIDIA's table, fixer.rules.driver_runs_build), read from
  collect_env ("Is CUDA available: No", "CUDA used to build PyTorch", "Nvidia driver version")
  and conda build strings; TensorRT's "CUDA initialization failure with error: 35" (the
  insufficient driver); MMCV without mmcv._ext (its lite package); the defaults channel's CPU
  pytorch selector.
- (c, sets 69-72 read) Windows' page file too small (ERROR_COMMITMENT_LIMIT) and a compiler killed
  by signal 9 are the host's memory; conda's missing __cuda virtual package is the solver
  refusing; the linker without -lcuda is the driver's library; the open kernel modules' wording
  of "no device probed"; no device detected beside an NVIDIA GPU the paste names is the driver
  not reaching it (unless the paste names CUDA_VISIBLE_DEVICES).

Values are generated; the messages are the emitters'."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import analyze, explain
from fixer.recipebook import load as load_recipes
from fixer.rules import driver_runs_build
from fixer.system.versions import version_key
from tests.helpers.examples import examples
from tests.helpers.explained import NOISE
from tests.helpers.explained import ids as _ids

# --- StreamExecutor's platform registry ---------------------------------------------------------

_HEAD = st.sampled_from(
    [
        "RuntimeError: Backend 'gpu' failed to initialize: NOT_FOUND: ",
        "RuntimeError: Backend 'gpu' failed to initialize: Not found: ",
        "Error: xla error ",
        "jaxlib.xla_extension.XlaRuntimeError: NOT_FOUND: ",
    ]
)
_PLATFORMS = st.lists(
    st.sampled_from(["Host", "Interpreter", "ROCM"]), min_size=1, max_size=3, unique=True
)
_BREAK = st.sampled_from([" ", "\n", " \n"])


@settings(max_examples=examples(60), deadline=None)
@given(
    head=_HEAD,
    name=st.sampled_from(["cuda", "CUDA", "gpu"]),
    platforms=_PLATFORMS,
    listed=st.booleans(),
    wrap=_BREAK,
    noise=NOISE,
)
def test_no_cuda_platform_registered_is_a_build_without_cuda(
    head, name, platforms, listed, wrap, noise
):
    """multi_platform_manager.cc / platform_manager.cc: the lookup's NOT_FOUND, with the names
    that registered (later releases) or without (earlier); a notebook may wrap it anywhere."""
    line = f'{head}Could not find{wrap}registered platform with name: "{name}".'
    if listed:
        line += f" Available platform names are:{wrap}{' '.join(platforms)}"
    found = analyze(noise + "\n" + line, similar=False).findings
    assert found[0].id == "cpu-only-build", (line, [f.id for f in found])
    assert "XLA" in found[0].title


@settings(max_examples=examples(40), deadline=None)
@given(head=_HEAD, platforms=_PLATFORMS, where=st.integers(0, 3))
def test_a_registry_that_holds_cuda_or_a_lookup_of_rocm_is_no_cpu_build(head, platforms, where):
    """A list with CUDA in it: the CUDA build is there (the lookup failed for another reason);
    a lookup of "rocm": JAX's ROCm backend failing quietly on an NVIDIA machine."""
    names = list(platforms)
    names.insert(min(where, len(names)), "CUDA")
    cuda_listed = (
        f'{head}Could not find registered platform with name: "cuda". '
        f"Available platform names are: {' '.join(names)}"
    )
    rocm = (
        "Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform "
        f'with name: "rocm". Available platform names are: {" ".join(names)}'
    )
    for line in (cuda_listed, rocm):
        assert not any("XLA build registered no CUDA" in f.title for f in explain(line)), line


# --- CUDAnative.jl's driver check ---------------------------------------------------------------


@settings(max_examples=examples(40), deadline=None)
@given(
    have=st.tuples(st.integers(8, 12), st.integers(0, 2)),
    ahead=st.tuples(st.integers(0, 2), st.integers(0, 2)),
    wrap=st.sampled_from(["\n", " ", "\n    "]),
    noise=NOISE,
)
def test_cudanative_says_the_driver_is_older_than_the_toolkit(have, ahead, wrap, noise):
    """deps/build.jl cuda_support: build_error when toolkit_version > driver_version; the
    message breaks its line after "by" (cited on the rule)."""
    need = (have[0] + ahead[0], have[1] + ahead[1] + (0 if ahead[0] else 1))
    n, h = ".".join(map(str, need)), ".".join(map(str, have))
    line = f"ERROR: LoadError: CUDA {n} is not supported by{wrap}"
    line += f"your driver (which supports up to {h})"
    found = analyze(noise + "\n" + line, similar=False).findings
    assert found[0].id == "driver-too-old", (line, [f.id for f in found])
    assert n in found[0].title and h in found[0].title


# --- MegEngine's cuDNN equality check -----------------------------------------------------------

_CUDNN_INT = st.tuples(st.integers(7, 9), st.integers(0, 9), st.integers(0, 9)).map(
    lambda v: str(v[0] * 1000 + v[1] * 100 + v[2])
)


@settings(max_examples=examples(40), deadline=None)
@given(
    pair=st.tuples(_CUDNN_INT, _CUDNN_INT).filter(lambda p: p[0] != p[1]),
    tail=st.sampled_from(
        [
            "",
            ", may caused by customized environment, for example LD_LIBRARY_PATH on LINUX and "
            "PATH on Windows!!",
        ]
    ),
)
def test_megengine_loaded_another_cudnn_than_its_own(pair, tail):
    """handle.cpp: megdnn_assert(CUDNN_VERSION == cudnnGetVersion(), ...): any other release
    that loads came from the search path ahead of the wheel's own."""
    compiled, found_ = pair
    text = (
        "RuntimeError: assertion `CUDNN_VERSION == cudnnGetVersion()' failed at "
        "../../../../../../dnn/src/cuda/handle.cpp:58: "
        "megdnn::cuda::HandleImpl::HandleImpl(megcoreComputingHandle_t)\n"
        f"extra message: cudnn version mismatch: compiled with {compiled}; detected {found_} "
        f"at runtime{tail}"
    )
    found = analyze(text, similar=False).findings
    assert found[0].id == "cudnn-shadowed", (text, [f.id for f in found])
    assert compiled in found[0].title and found_ in found[0].title


# --- nvcc's C++ dialects ------------------------------------------------------------------------


@settings(max_examples=examples(30), deadline=None)
@given(
    std=st.sampled_from(["c++11", "c++14", "c++17", "c++20"]),
    after=st.sampled_from(["", "\nninja: build stopped: subcommand failed.", "\nerror: command "]),
    noise=NOISE,
)
def test_nvcc_that_does_not_know_the_dialect_is_an_older_toolkit(std, after, noise):
    line = f"nvcc fatal   : Value '{std}' is not defined for option 'std'{after}"
    found = analyze(noise + "\n" + line, similar=False).findings
    assert found[0].id == "cuda-lib-mismatch", (line, [f.id for f in found])
    assert std in found[0].title


@settings(max_examples=examples(10), deadline=None)
@given(std=st.sampled_from(["c++23", "gnu++20", "gnu++17", "c++2b"]))
def test_a_dialect_no_nvcc_defines_is_not_an_older_toolkit(std):
    """No nvcc release defines these (nvcc 13.0 on the GPU machine rejects c++23 with this very
    message: scripts/device/explain_toolchain.sh): no toolkit would help."""
    line = f"nvcc fatal   : Value '{std}' is not defined for option 'std'"
    assert not any("does not know -std" in f.title for f in explain(line)), line


# --- Docker's GPU request on a machine with no NVIDIA GPU ---------------------------------------

_DOCKER = (
    'docker: Error response from daemon: could not select device driver "" with capabilities: '
    "[[gpu]]."
)
_OTHER = st.sampled_from(
    [
        "Graphics Mesa Intel® Xe Graphics (TGL GT2)",
        "Graphics: Intel(R) UHD Graphics 620",
        "00:02.0 VGA compatible controller: Intel Corporation Device 9a49 (rev 01)",
        "GPU: AMD Radeon RX 6700 XT",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(other=_OTHER, before=st.booleans(), noise=NOISE)
def test_docker_without_a_gpu_device_driver_on_a_machine_without_an_nvidia_gpu(
    other, before, noise
):
    paste = noise + "\n" + ("\n".join([other, _DOCKER]) if before else "\n".join([_DOCKER, other]))
    ids = _ids(paste)
    assert ids[0] == "gpu-missing", (paste, ids)
    assert "driver-missing" in ids[1:], (paste, ids)


@settings(max_examples=examples(20), deadline=None)
@given(
    nvidia=st.sampled_from(["", "GPU: NVIDIA GeForce RTX 3090", "Tesla T4 on the host"]),
    noise=NOISE,
)
def test_docker_beside_an_nvidia_gpu_or_alone_keeps_its_own_reading(nvidia, noise):
    paste = noise + "\n" + _DOCKER + ("\n" + nvidia if nvidia else "")
    found = analyze(paste, similar=False).findings
    assert found[0].id == "driver-missing", (paste, [f.id for f in found])
    assert "Docker could not give the container the GPU" in found[0].title


# --- a Mac in an issue template's OS field ------------------------------------------------------


@settings(max_examples=examples(20), deadline=None)
@given(
    field=st.sampled_from(["- OS: mac 13.0", "OS: Mac", "* OS: macintosh", "OS：mac"]),
    noise=NOISE,
)
def test_an_os_field_naming_a_mac_has_no_nvidia_gpu(field, noise):
    paste = f"{noise}\nAssertionError: Torch not compiled with CUDA enabled\n{field}\n- Python: 3.9"
    ids = _ids(paste)
    assert ids[0] == "gpu-missing", (paste, ids)


@settings(max_examples=examples(10), deadline=None)
@given(field=st.sampled_from(["- OS: Ubuntu 22.04", "OS: machine learning box", "OS: macro"]))
def test_an_os_field_naming_no_mac_leaves_the_build_reading(field):
    paste = f"AssertionError: Torch not compiled with CUDA enabled\n{field}"
    assert _ids(paste)[0] == "cpu-only-build", paste


# --- Chinese words of a library that is not there -----------------------------------------------

_ABSENT = st.sampled_from(["没有包含", "没有", "缺少", "缺失", "不包含"])
_DIR = st.sampled_from(
    [
        "runtime\\Lib\\site-packages\\torch\\lib\\路径下",
        "torch/lib目录下",
        "site-packages/nvidia/cudnn/lib 文件夹里",
    ]
)
_PART = st.sampled_from(
    ["cudnn_ops_infer64_8.dll", "cudnn_cnn_infer64_8.dll", "libcudnn_ops.so.9", "libcudnn_cnn.so.9"]
)


@settings(max_examples=examples(40), deadline=None)
@given(where=_DIR, absent=_ABSENT, part=_PART, more=st.sampled_from(["", "，导致asr失败"]))
def test_a_directory_said_in_chinese_to_lack_a_cudnn_sub_library_is_an_incomplete_copy(
    where, absent, part, more
):
    text = f"整合包中{where}{absent}{part}{more}"
    found = analyze(text, similar=False).findings
    assert found[0].id == "cudnn-incomplete", (text, [f.id for f in found])
    assert part in found[0].title
    # read from words: the title does not claim that libcudnn itself loaded
    assert "libcudnn loaded" not in found[0].title


@settings(max_examples=examples(20), deadline=None)
@given(
    absent=st.sampled_from(["找不到", "缺少", "缺失", "没有"]),
    lib=st.sampled_from(["libcudart.so.11.0", "cublas64_11.dll", "libnvrtc.so.12"]),
)
def test_a_cuda_library_said_missing_in_chinese(absent, lib):
    text = f"运行时{absent}{lib}，程序退出"
    assert _ids(text)[0] == "cuda-lib-missing", text


# --- (b, sets 65-68 read) a driver too old for the build's CUDA release -------------------------

FLOORS = load_recipes().driver_floors
#: NVIDIA's toolkit rows (recipes/nvidia.toml): "X.Y" -> the GA driver
_ROWS = {f.cuda: f.min_driver for f in FLOORS if f.cuda.count(".") == 1}
_BEFORE_11 = sorted((c for c in _ROWS if int(c.split(".")[0]) < 11), key=version_key)


def _below(driver: str) -> str:
    """A driver version just below `driver` ("418.39" -> "418.38", "410.48" -> "410.47")."""
    parts = [int(x) for x in driver.split(".")]
    parts[-1] -= 1
    if parts[-1] < 0:
        parts = [parts[0] - 1, 99]
    return ".".join(map(str, parts))


@settings(max_examples=examples(40), deadline=None)
@given(cuda=st.sampled_from(_BEFORE_11), data=st.data())
def test_before_cuda_11_each_release_needs_its_own_driver(cuda, data):
    """fixer.rules.driver_runs_build over NVIDIA's table: a build of CUDA X.Y (X < 11) runs from
    its GA driver on and not below it (no minor-version compatibility before 11)."""
    row = _ROWS[cuda]
    assert driver_runs_build(row, cuda, FLOORS) is True
    assert driver_runs_build(_below(row), cuda, FLOORS) is False
    newer = data.draw(st.sampled_from([c for c in _ROWS if version_key(c) > version_key(cuda)]))
    assert driver_runs_build(_ROWS[newer], cuda, FLOORS) is True  # drivers run older builds


@settings(max_examples=examples(40), deadline=None)
@given(
    cuda=st.sampled_from(_BEFORE_11),
    yes=st.sampled_from(["No", "False"]),
    gpu=st.sampled_from(
        ["GPU 0: Tesla T4", "GPU 0: GeForce GTX 1080 Ti", "GPU 0: Tesla V100-SXM2-16GB"]
    ),
    where=st.sampled_from(["collect_env", "conda"]),
)
def test_collect_env_of_a_build_newer_than_the_driver_reads_driver_too_old(cuda, yes, gpu, where):
    """torch's collect_env: "CUDA used to build PyTorch", "Is CUDA available" (Yes/No before
    torch printed booleans), "Nvidia driver version" (cited on the evidence); the pytorch
    channel's build string names the same release."""
    built = (
        f"CUDA used to build PyTorch: {cuda}.{130}"
        if where == "collect_env"
        else f"[conda] pytorch                   1.3.0           py3.7_cuda{cuda}.243_cudnn7.6.3_0    pytorch"
    )
    driver = _below(_ROWS[cuda])
    paste = (
        f"PyTorch version: 1.3.0\nIs debug build: No\n{built}\nIs CUDA available: {yes}\n"
        f"GPU models and configuration: {gpu}\nNvidia driver version: {driver}\n"
    )
    found = analyze(paste, similar=False).findings
    assert found[0].id == "driver-too-old", (paste, [f.id for f in found])
    assert driver in found[0].title and cuda in found[0].title
    # the same paste with the release's own driver: that driver runs it, nothing says too old
    ok = paste.replace(f"Nvidia driver version: {driver}", f"Nvidia driver version: {_ROWS[cuda]}")
    assert analyze(ok, similar=False).findings[0].id != "driver-too-old", ok


@settings(max_examples=examples(20), deadline=None)
@given(
    head=st.sampled_from(
        ["ERROR: ", "[TRT] [W] ", "[TRT] [E] createInferBuilder: Error Code 6: API Usage Error ("]
    ),
    colon=st.sampled_from([":", ""]),
)
def test_tensorrts_cuda_initialization_failure_35_is_the_insufficient_driver(head, colon):
    """TensorRT prints its first CUDA call's cudaError_t: 35 is cudaErrorInsufficientDriver
    (driver_types.h, cited on the rule); 2, cudaErrorMemoryAllocation, is not a driver's."""
    text = f"{head}CUDA initialization failure with error{colon} 35. Please check your CUDA installation"
    assert _ids(text)[0] == "driver-too-old", text
    for other in ("2", "350", "46"):
        t = text.replace("error" + colon + " 35", f"error{colon} {other}")
        assert "driver-too-old" not in _ids(t)[:1], t


@settings(max_examples=examples(20), deadline=None)
@given(
    how=st.sampled_from(
        [
            "ModuleNotFoundError: No module named 'mmcv._ext'",
            "but getting the error `ModuleNotFoundError: No module named 'mmcv._ext'`",
            '  File "/x/mmcv/utils/ext_loader.py", line 13, in load_ext\n    ext = importlib.'
            "import_module('mmcv.' + name)\nModuleNotFoundError: No module named 'mmcv._ext'",
        ]
    ),
    noise=NOISE,
)
def test_mmcv_without_its_compiled_ops_is_the_lite_package(how, noise):
    found = analyze(noise + "\n" + how, similar=False).findings
    assert found[0].id == "cpu-only-build", (how, [f.id for f in found])
    assert "pip-conflict" in [f.id for f in found[1:]]


def test_the_defaults_channels_cpu_selector_is_a_cpu_build():
    paste = (
        "You requested GPUs: [0]\n            But your machine only has: []\n"
        "# Name                    Version                   Build  Channel\n"
        "_pytorch_select           0.1                       cpu_0\n"
    )
    assert _ids(paste)[0] == "cpu-only-build", paste
    assert _ids(paste.replace("cpu_0", "gpu_0"))[0] != "cpu-only-build"


# --- (c, sets 69-72 read) the host's memory, conda's __cuda, the driver's link library -----------

_DLL = st.sampled_from(
    [
        "caffe2_detectron_ops_gpu.dll",
        "cudnn_cnn_infer64_8.dll",
        "cublasLt64_11.dll",
        "torch_cuda.dll",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(dll=_DLL, head=st.sampled_from(["OSError: ", "", "ImportError: "]), noise=NOISE)
def test_windows_page_file_too_small_is_the_hosts_memory(dll, head, noise):
    """ERROR_COMMITMENT_LIMIT (1455): the load of the DLL failed for want of committable memory,
    not for want of the DLL (cited on the rule)."""
    text = (
        f"{head}[WinError 1455] The paging file is too small for this operation to complete. "
        f'Error loading "C:\\Users\\me\\anaconda3\\envs\\x\\lib\\site-packages\\torch\\lib\\{dll}" '
        "or one of its dependencies."
    )
    found = analyze(noise + "\n" + text, similar=False).findings
    assert found[0].id == "out-of-memory", (text, [f.id for f in found])


@settings(max_examples=examples(30), deadline=None)
@given(
    line=st.sampled_from(
        [
            "nvcc error   : 'cicc' died due to signal 9 (Kill signal)",
            "nvcc error   : 'ptxas' died due to signal 9 (Kill signal)",
            "c++: fatal error: Killed signal terminated program cc1plus",
            "x86_64-linux-gnu-gcc: fatal error: Killed signal terminated program cc1plus",
        ]
    ),
    times=st.integers(1, 4),
    after=st.sampled_from(
        ["", "\nninja: build stopped: subcommand failed.", "\ncompilation terminated."]
    ),
)
def test_a_compiler_killed_by_signal_9_is_the_hosts_memory(line, times, after):
    """gcc's execute(): SIGKILL is "the user or OOM killer" (cited on the rule); nvcc names the
    sub-process the same signal ended."""
    text = "\n".join([line] * times) + after
    assert _ids(text)[0] == "out-of-memory", text


@settings(max_examples=examples(10), deadline=None)
@given(sig=st.sampled_from(["11 (Segmentation fault)", "6 (Aborted)"]))
def test_a_compiler_ended_by_another_signal_is_not_memory(sig):
    text = f"nvcc error   : 'cicc' died due to signal {sig}"
    assert "The compiler was killed" not in " ".join(f.title for f in explain(text)), text


@settings(max_examples=examples(30), deadline=None)
@given(
    spec=st.sampled_from(["", " >=11.8", " >=12", " =* *"]),
    head=st.sampled_from(
        [
            "└─ pytorch 2.0.1 would require\n   └─ ",
            "│  └─ tensorflow 2.9.* cuda*, which requires\n│     └─ ",
            "my hunch is this tiny line `",
        ]
    ),
)
def test_conda_without_its_cuda_virtual_package_is_the_solver_refusing(spec, head):
    """conda's __cuda exists only where libcuda answered (conda/plugins/virtual_packages/cuda.py,
    cited on the rule); libmamba names it missing on the system."""
    text = f"Could not solve for environment specs\n{head}__cuda{spec}, which is missing on the system."
    found = analyze(text, similar=False).findings
    assert found[0].id == "pip-conflict", (text, [f.id for f in found])
    assert {"gpu-missing", "driver-missing"} <= {f.id for f in found[1:]}


@settings(max_examples=examples(20), deadline=None)
@given(
    ld=st.sampled_from(["/usr/bin/ld", "/usr/bin/x86_64-linux-gnu-ld", "ld.gold"]),
    lib=st.sampled_from(["-lcuda", "-lnvidia-ml"]),
    err=st.sampled_from(["", ": No such file or directory"]),
)
def test_the_linker_without_the_drivers_library_is_the_driver(ld, lib, err):
    """libcuda and libnvidia-ml are the driver's (the family's missing finding elsewhere too);
    the toolkit's stub is the alternative."""
    text = f"{ld}: cannot find {lib}{err}\ncollect2: error: ld returned 1 exit status"
    ids = _ids(text)
    assert ids[0] == "driver-missing" and "cuda-lib-missing" in ids[1:], (text, ids)
    assert _ids(text.replace(lib, "-lcudart"))[0] == "cuda-lib-missing"


@settings(max_examples=examples(10), deadline=None)
@given(
    line=st.sampled_from(
        ["NVRM: No NVIDIA devices probed.", "NVRM: None of the NVIDIA devices were initialized."]
    )
)
def test_the_open_kernel_modules_wording_is_read_as_the_closed_ones(line):
    """kernel-open/nvidia/nv.c (cited on the rules): the open modules' wording of the same."""
    assert _ids(f"[    4.512345] {line}")[0] == "driver-missing", line


# --- (c) no device detected beside an NVIDIA GPU the paste names ---------------------------------

_NODEVICE = st.sampled_from(
    [
        "RuntimeError: CUDA error: no CUDA-capable device is detected",
        "CUDA Error CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected while calling init "
        "(cuInit)",
        "cudaErrorNoDevice: no CUDA-capable device is detected",
    ]
)
_NVIDIA = st.sampled_from(
    [
        "[Genesis] Running on [NVIDIA GeForce RTX 4080 SUPER] with backend gs.cuda.",
        "GPU: NVIDIA GeForce RTX 3090",
        "01:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 40GB] (rev a1)",
    ]
)


@settings(max_examples=examples(30), deadline=None)
@given(err=_NODEVICE, gpu=_NVIDIA, before=st.booleans(), noise=NOISE)
def test_no_device_detected_beside_a_named_nvidia_gpu_is_the_driver(err, gpu, before, noise):
    """cudaErrorNoDevice is "no CUDA-capable device is detected by the installed CUDA driver"
    (driver_types.h, cited on the rule): with the GPU named, the driver does not reach it."""
    paste = noise + "\n" + ("\n".join([gpu, err]) if before else "\n".join([err, gpu]))
    ids = _ids(paste)
    assert ids[0] == "driver-missing" and "gpu-missing" in ids[1:], (paste, ids)


@settings(max_examples=examples(20), deadline=None)
@given(
    err=_NODEVICE,
    gpu=_NVIDIA,
    cvd=st.sampled_from(['export CUDA_VISIBLE_DEVICES=""', "CUDA_VISIBLE_DEVICES=-1 python t.py"]),
)
def test_no_device_with_cuda_visible_devices_named_or_no_gpu_named_stays_no_gpu(err, gpu, cvd):
    """CUDA_VISIBLE_DEVICES that hides every device gives the same answer on a machine with the
    GPU; nothing named, the answer's own reading stands."""
    assert _ids("\n".join([cvd, gpu, err]))[0] == "gpu-missing"
    assert _ids(err)[0] == "gpu-missing"
