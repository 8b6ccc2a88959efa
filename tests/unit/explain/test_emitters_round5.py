"""Round five's readings, from their emitters' own format strings (recipes/errors.toml cites each):
the resolvers' reports (pip's factory.py / package_finder.py, uv's PubGrub report, conda's
exceptions), the frameworks' "built without CUDA" answers, TensorFlow's device filter and the
other compute-capability checks, the wrappers around a failed driver load, TensorFlow's start-up
lines that are harmless, and ldd's view of a pip CUDA library resolved from another CUDA copy.
Values are generated; the wording is the emitter's."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.explainer import explain
from tests.helpers.examples import examples
from tests.helpers.explained import ids as _ids

NAME = st.from_regex(r"[a-z][a-z0-9]{1,10}(?:-[a-z0-9]{1,6}){0,2}", fullmatch=True)
VERSION = st.tuples(st.integers(0, 30), st.integers(0, 30), st.integers(0, 200)).map(
    lambda t: ".".join(map(str, t))
)
SPEC = st.tuples(st.sampled_from(["==", ">=", "<", "~=", "!="]), VERSION).map("".join)


def _top(text: str) -> str:
    found = explain(text)
    return found[0].id if found else ""


# pip/_internal/resolution/resolvelib/factory.py:794-846@25.3 (get_installation_error)
@settings(max_examples=examples(60), deadline=None)
@given(
    causes=st.lists(
        st.tuples(st.one_of(st.none(), st.tuples(NAME, VERSION)), NAME, SPEC),
        min_size=1,
        max_size=4,
    ),
    parts=st.sets(st.sampled_from(["cannot", "caused", "fix", "impossible"]), min_size=1),
)
def test_pip_resolution_impossible_any_part(causes, parts):
    """Any part of pip's ResolutionImpossible report reads as a pip conflict (no cuDNN wheel and
    no second framework in it)."""
    lines = []
    if "cannot" in parts:
        lines.append(
            "ERROR: Cannot install a==1 and b==2 because these package versions have "
            "conflicting dependencies."
        )
    if "caused" in parts:
        lines.append("\nThe conflict is caused by:")
        for parent, name, spec in causes:
            who = f"{parent[0]} {parent[1]} depends on " if parent else "The user requested "
            lines.append(f"    {who}{name}{spec}")
    if "fix" in parts:
        lines.append(
            "\nTo fix this you could try to:\n1. loosen the range of package versions you've "
            "specified\n2. remove package versions to allow pip to attempt to solve the "
            "dependency conflict\n"
        )
    if "impossible" in parts:
        lines.append(
            "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/"
            "dependency-resolution/#dealing-with-dependency-conflicts"
        )
    text = "\n".join(lines)
    assert _top(text) == "pip-conflict", text


# factory.py:693-712@25.3 and package_finder.py:966-974@25.3
@settings(max_examples=examples(60), deadline=None)
@given(
    name=NAME,
    spec=SPEC,
    versions=st.lists(VERSION, max_size=5),
    which=st.sets(st.sampled_from(["could", "nomatch", "python"]), min_size=1),
)
def test_pip_no_matching_distribution(name, spec, versions, which):
    req = name + spec
    lines = []
    if "python" in which:
        lines.append(
            "ERROR: Ignored the following versions that require a different python version: "
            + "; ".join(f"{v} Requires-Python >=3.10" for v in versions or ["1.0"])
        )
    if "could" in which:
        lines.append(
            f"ERROR: Could not find a version that satisfies the requirement {req} "
            f"(from versions: {', '.join(versions) or 'none'})"
        )
    if "nomatch" in which:
        lines.append(f"ERROR: No matching distribution found for {req}")
    text = "\n".join(lines)
    assert _top(text) == "pip-conflict", text


# uv's PubGrub report (crates/uv-resolver/src/error.rs) and conda's exceptions.py:604,683-709@23.1.0
@settings(max_examples=examples(40), deadline=None)
@given(a=NAME, b=NAME, sa=SPEC, sb=SPEC, conda=st.booleans())
def test_uv_and_conda_no_solution(a, b, sa, sb, conda):
    if conda:
        text = (
            "UnsatisfiableError: The following specifications were found to be incompatible "
            f"with each other:\n  - {a}{sa} -> {b}[version='{sb}']"
        )
    else:
        text = (
            "  × No solution found when resolving dependencies:\n"
            f"  ╰─▶ Because {a}{sa} depends on {b}{sa} and you require {b}{sb}, we can conclude "
            "that your requirements are unsatisfiable."
        )
    assert _top(text) == "pip-conflict", text


@settings(max_examples=examples(40), deadline=None)
@given(t=VERSION, j=VERSION, c1=VERSION, c2=VERSION, pip=st.booleans())
def test_two_frameworks_pinning_cudnn_in_a_resolver_report(t, j, c1, c2, pip):
    """A resolver report whose conflict is a cuDNN wheel, with torch and JAX in the paste: the
    frameworks' cuDNN pins conflict (cudnn-conflict); the same report with one framework only is
    a pip conflict."""
    if pip:
        body = (
            "The conflict is caused by:\n"
            f"    torch {t} depends on nvidia-cudnn-cu12=={c1}\n"
            f"    jax[cuda12] {j} depends on nvidia-cudnn-cu12>={c2}"
        )
    else:
        body = (
            "  × No solution found when resolving dependencies:\n"
            f"  ╰─▶ Because torch=={t} depends on nvidia-cudnn-cu12=={c1} and jax[cuda12]=={j} "
            f"depends on nvidia-cudnn-cu12>={c2}, we can conclude that torch=={t} and "
            f"jax[cuda12]=={j} are incompatible."
        )
    assert _top("JAX and PyTorch together:\n" + body) == "cudnn-conflict", body
    one = body.replace("jax[cuda12]", "numpy")
    assert _top(one) == "pip-conflict", one


DEVICE = st.sampled_from(["Tesla K80", "GeForce GTX 670MX", "Quadro K2200", "NVS 5200M"])
CC = st.tuples(st.integers(1, 9), st.integers(0, 9))


# tensorflow/core/common_runtime/gpu/gpu_device.cc (GetValidDeviceIds)
@settings(max_examples=examples(40), deadline=None)
@given(dev=DEVICE, cc=CC, floor=CC, visible=st.booleans(), n=st.integers(0, 3))
def test_tensorflow_ignores_a_gpu_below_its_minimum(dev, cc, floor, visible, n):
    cc, floor = sorted([cc, floor])
    if cc == floor:
        return
    c, m = f"{cc[0]}.{cc[1]}", f"{floor[0]}.{floor[1]}"
    text = (
        f"I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring "
        f"{'visible ' if visible else ''}gpu device (device: {n}, name: {dev}, pci bus id: "
        f"0000:0{n}:00.0, compute capability: {c}) with Cuda compute capability {c}. The minimum "
        f"required Cuda capability is {m}."
    )
    found = explain(text)
    assert found[0].id == "gpu-arch-unsupported" and c in found[0].title, text


# torch/_inductor/exc.py (GPUTooOldForTriton) and flash_attn's flash_api.cpp:303
@settings(max_examples=examples(30), deadline=None)
@given(dev=DEVICE, major=st.integers(3, 6), minor=st.integers(0, 9))
def test_compute_capability_checks_of_triton_and_flash_attention(dev, major, minor):
    text = (
        f"RuntimeError: Found {dev} which is too old to be supported by the triton GPU compiler, "
        "which is used as the backend. Triton only supports devices of CUDA Capability >= 7.0, "
        f"but your device is of CUDA capability {major}.{minor}"
    )
    assert _top(text) == "gpu-arch-unsupported", text
    assert _top("RuntimeError: FlashAttention only supports Ampere GPUs or newer.") == (
        "gpu-arch-unsupported"
    )


CPU_BUILD = [
    "AssertionError: Not compiled with CUDA",  # paddle/fluid/framework.py cuda_places
    "ValueError: The device should not be gpu:0, since PaddlePaddle is not compiled with CUDA",
    "RuntimeError: Not compiled with GPU support",  # torchvision/csrc/ops, built without CUDA
    "PyTorch version: 2.{n}.0+cpu\nCUDA used to build PyTorch: None",  # torch/utils/collect_env
    ">>> tf.test.is_built_with_cuda()\nFalse",
]


@settings(max_examples=examples(30), deadline=None)
@given(text=st.sampled_from(CPU_BUILD), n=st.integers(0, 9))
def test_cpu_build_answers(text, n):
    text = text.format(n=n)
    assert _top(text) == "cpu-only-build", text


# https://www.tensorflow.org/install/pip: 2.10 the last TensorFlow with GPU on native Windows
@settings(max_examples=examples(40), deadline=None)
@given(minor=st.integers(0, 25), patch=st.integers(0, 5), windows=st.booleans())
def test_tensorflow_on_native_windows_from_2_11_is_a_cpu_build(minor, patch, windows):
    where = "C:\\Users\\me\\AppData\\Local\\Programs\\Python" if windows else "/home/me/venv"
    text = (
        f"{where}> python gpu_check.py\nTensor Flow Version: 2.{minor}.{patch}\n"
        "Num GPUs Available:  0"
    )
    ids = _ids(text)
    assert (ids[:1] == ["cpu-only-build"]) == (windows and minor >= 11), (text, ids)


DRIVER_LIBS = st.sampled_from(["libcuda.so", "libcuda.so.1", "libnvidia-ml.so.1"])


# cuda-python cuda/_cuda/ccuda.pyx cuPythonInit; the same wording in other loaders
@settings(max_examples=examples(30), deadline=None)
@given(lib=DRIVER_LIBS, cublas=st.sampled_from(["libcublas.so.12", "libcublasLt.so.11"]))
def test_failed_to_dlopen_names_the_library_whose_family_decides(lib, cublas):
    assert _top(f"RuntimeError: Failed to dlopen {lib}") == "driver-missing"
    assert _top(f"RuntimeError: Failed to dlopen {cublas}") == "cuda-lib-missing"


NOISE = [
    "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
    "How to resolve the warning: `Could not find TensorRT`",
    "I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to "
    "use available CPU instructions in performance-critical operations.",
    "I tensorflow/core/platform/cpu_feature_guard.cc:142] Your CPU supports instructions that "
    "this TensorFlow binary was not compiled to use: AVX2 FMA",
    "I tensorflow/compiler/xla/service/service.cc:168] XLA service 0x5581f0 initialized for "
    "platform CUDA (this does not guarantee that XLA will be used). Devices:",
    "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1858] Adding visible gpu devices: 0",
]
ERRORS = [
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "gpu-arch-unsupported",
    ),
    ("ERROR: No matching distribution found for tensorflow-gpu==1.15", "pip-conflict"),
]


@settings(max_examples=examples(30), deadline=None)
@given(noise=st.lists(st.sampled_from(NOISE), min_size=1, max_size=3), err=st.sampled_from(ERRORS))
def test_harmless_lines_alone_are_noise_and_never_outrank_an_error(noise, err):
    text = "\n".join(noise)
    ex = explain(text)
    assert ex and ex[0].id == "log-noise", text
    assert _top(text + "\n" + err[0]) == err[1]


CPU_SAYS = [
    "I'm using CPU",
    "I am only running on the CPU",
    "This is a CPU-only machine.",
    "运行这一步时我使用的是cpu",
    "我的电脑没有显卡",
    "I don't have a GPU",
]
NO_DRIVER = (
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA "
    "GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"
)


@settings(max_examples=examples(30), deadline=None)
@given(says=st.sampled_from(CPU_SAYS), before=st.booleans())
def test_a_sentence_saying_the_machine_runs_on_cpu_decides_for_no_gpu(says, before):
    text = f"{says}\n{NO_DRIVER}" if before else f"{NO_DRIVER}\n{says}"
    assert _top(text) == "gpu-missing", text
    assert _top(NO_DRIVER) == "gpu-missing"  # torch's first request (round fourteen (b))


CUDA_DEPS = st.sampled_from(
    ["libnvJitLink.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcudart.so.12"]
)
TOOLKIT = st.tuples(st.integers(11, 13), st.integers(0, 9)).map(
    lambda t: f"/usr/local/cuda-{t[0]}.{t[1]}/lib64"
)
SITE = "/home/u/.venv/lib/python3.12/site-packages/nvidia"


# ldd's "\t%s => %s (0x...)" lines (glibc rtld.c) and ld.so's search order (LD_LIBRARY_PATH first)
@settings(max_examples=examples(40), deadline=None)
@given(dep=CUDA_DEPS, toolkit=TOOLKIT, inside=st.booleans(), addr=st.integers(1, 2**40))
def test_ldd_of_a_wheel_library_resolving_cuda_from_a_toolkit(dep, toolkit, inside, addr):
    """The wheel's library resolving a CUDA library from a toolkit directory is a mix of two CUDA
    copies; resolving it inside the wheels' own tree is not."""
    where = f"{SITE}/{dep.split('.')[0][3:].lower()}/lib" if inside else toolkit
    text = (
        f"ldd {SITE}/cusparse/lib/libcusparse.so.12\n"
        f"\tlinux-vdso.so.1 (0x{addr:016x})\n"
        f"\t{dep} => {where}/{dep} (0x{addr:016x})\n"
        f"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x{addr:016x})"
    )
    assert ("cuda-lib-mismatch" in _ids(text)[:1]) == (not inside), text


# the runtime's "out of memory" (driver_types.h:211) as torch, torch 1.x and ONNX Runtime print
# it; XLA's allocator; TensorFlow's BFC allocator, whose "not a failure" variant is harmless
@settings(max_examples=examples(40), deadline=None)
@given(
    form=st.sampled_from(
        [
            "RuntimeError: CUDA error: out of memory",
            "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THC.cpp:{n}",
            "CUDA failure 2: out of memory ; GPU=0 ; hostname=h ; file=f.cc ; line={n}",
            "XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for {n}.00MiB "
            "({n}048576B) on device ordinal 0",
            "W tensorflow/core/common_runtime/bfc_allocator.cc:{n}] Allocator (GPU_0_bfc) ran out "
            "of memory trying to allocate {n}.00GiB (rounded to 2147483648)requested by op Conv2D",
        ]
    ),
    n=st.integers(1, 999),
)
def test_out_of_memory_in_each_wording(form, n):
    text = form.format(n=n)
    assert _top(text) == "out-of-memory", text


@settings(max_examples=examples(20), deadline=None)
@given(n=st.integers(1, 99))
def test_the_allocators_not_a_failure_warning_is_harmless(n):
    text = (
        f"W tensorflow/core/common_runtime/bfc_allocator.cc:{n}] Allocator (GPU_0_bfc) ran out of "
        f"memory trying to allocate {n}.25GiB with freed_by_count=0. The caller indicates that "
        "this is not a failure, but may mean that there could be performance gains if more memory "
        "were available."
    )
    assert _top(text) == "log-noise", text


# jax/_src/lib/__init__.py:37,59-67@jax-v0.4.13 (check_jaxlib_version)
@settings(max_examples=examples(30), deadline=None)
@given(jax=VERSION, jaxlib=VERSION, newer=st.booleans())
def test_jax_and_jaxlib_of_releases_that_do_not_go_together(jax, jaxlib, newer):
    text = (
        f"RuntimeError: jaxlib version {jaxlib} is newer than and incompatible with jax version "
        f"{jax}. Please update your jax and/or jaxlib packages."
        if newer
        else f"RuntimeError: jaxlib is version {jaxlib}, but this version of jax requires "
        f"version >= {jax}."
    )
    assert _top(text) == "pip-conflict", text


# nvcc's "Unsupported gpu architecture '%s'" (nvidia-cuda-nvcc 13.0.88, run here): below sm_75
# the toolkit dropped the GPU; from sm_75 on, only a toolkit older than the GPU rejects it
@settings(max_examples=examples(40), deadline=None)
@given(cc=st.integers(30, 129), kind=st.sampled_from(["sm", "compute"]))
def test_nvcc_unsupported_architecture_splits_at_the_newest_toolkits_floor(cc, kind):
    text = f"nvcc fatal   : Unsupported gpu architecture '{kind}_{cc}'"
    assert _top(text) == ("gpu-arch-unsupported" if cc < 75 else "cuda-lib-mismatch"), text


@settings(max_examples=examples(30), deadline=None)
@given(
    text=st.sampled_from(
        [
            "RuntimeError: CUDA error: unknown error",
            "RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
            "RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 802: system not yet "
            "initialized",
            "Failed to initialize NVML: Unknown Error",
            "nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown",
            "docker: Error response from daemon: unknown or invalid runtime name: nvidia.",
            "numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: \nCUDA driver "
            "library cannot be found.",
            "RuntimeError: CUDA error: PTX JIT compiler library not found",
        ]
    )
)
def test_the_driver_present_but_not_usable(text):
    assert _top(text) == "driver-missing", text


@settings(max_examples=examples(20), deadline=None)
@given(
    text=st.sampled_from(
        [
            "UserWarning: The installed version of bitsandbytes was compiled without GPU support. "
            "8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.",
            "`cutlassF` is not supported because:\n    xFormers wasn't build with CUDA support",
        ]
    )
)
def test_extensions_built_without_cuda(text):
    assert _top(text) == "cpu-only-build", text


def test_a_build_with_no_cuda_toolkit_found():
    text = "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."
    assert _top(text) == "cuda-lib-missing"


MANGLED = st.tuples(
    st.sampled_from(["_ZN3c10", "_ZN2at", "_ZN5torch"]),
    st.from_regex(r"[0-9]{1,2}[A-Za-z_][A-Za-z0-9_]{2,30}", fullmatch=True),
).map("".join)
EXT = st.sampled_from(
    [
        "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so",
        "torchaudio/lib/libtorchaudio.so",
        "xformers/_C.so",
        "torchvision/_C.so",
    ]
)


# an extension missing one of torch's C++ symbols; torchvision's own checks
# (torchvision/extension.py:53-56); NumPy's ABI checks; CuPy's duplicate wheels
@settings(max_examples=examples(40), deadline=None)
@given(ext=EXT, sym=MANGLED, t=CC, v=CC, form=st.integers(0, 3))
def test_packages_built_for_other_releases_of_each_other(ext, sym, t, v, form):
    texts = [
        f"ImportError: /usr/local/lib/python3.10/dist-packages/{ext}: undefined symbol: {sym}",
        "RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA "
        f"major versions. PyTorch has CUDA Version={t[0]}.{t[1]} and torchvision has CUDA "
        f"Version={v[0]}.{v[1]}. Please reinstall the torchvision that matches your PyTorch install.",
        f"RuntimeError: operator torchvision::{ext.split('/')[0][:8]} does not exist",
        f"ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected "
        f"{t[0] * 10 + 8} from C header, got {v[0] * 10} from PyObject",
    ]
    assert _top(texts[form]) == "pip-conflict", texts[form]


@settings(max_examples=examples(30), deadline=None)
@given(built=CC, loaded=CC, tab=st.booleans())
def test_paddles_cuda_runtime_check(built, loaded, tab):
    text = (
        "WARNING: device: 0. The installed" + ("\t" if tab else " ") + "Paddle is compiled with "
        f"CUDA {built[0]}.{built[1]}, but CUDA runtime version in your machine is "
        f"{loaded[0]}.{loaded[1]}, which may cause serious incompatible bug."
    )
    # its "CUDA runtime version in your machine" is the driver's (cudaDriverGetVersion in
    # device_context.cc / gpu_resources.cc): read as driver-too-old since round thirteen (b)
    assert _top(text) == "driver-too-old", text


# xla/service/gpu/nvptx_compiler.cc, both wordings
@settings(max_examples=examples(30), deadline=None)
@given(drv=CC, ptx=VERSION, newer=st.booleans())
def test_xla_driver_older_than_its_ptx_compiler_either_wording(drv, ptx, newer):
    tail = f"the PTX compiler version {ptx}." if newer else f"the ptxas CUDA version ({ptx})."
    text = f"The NVIDIA driver's CUDA version is {drv[0]}.{drv[1]} which is older than {tail}"
    # XLA warns and compiles serially (round twenty-eight): alone, no failure; the older driver
    # is the reading it offers next
    assert _ids(text)[:2] == ["log-noise", "driver-too-old"], text


@settings(max_examples=examples(20), deadline=None)
@given(name=NAME, conda=st.booleans())
def test_resolvers_backtracking_and_search_lines(name, conda):
    text = (
        "Found conflicts! Looking for incompatible packages.\nThis can take several minutes."
        if conda
        else f"INFO: pip is looking at multiple versions of {name} to determine which version is "
        "compatible with other requirements. This could take a while."
    )
    assert _top(text) == "pip-conflict", text


@settings(max_examples=examples(30), deadline=None)
@given(major=st.integers(10, 13), minor=st.integers(0, 9), ge=st.sampled_from([">=", ">"]))
def test_the_container_toolkits_cuda_requirement(major, minor, ge):
    text = (
        f"nvidia-container-cli: requirement error: unsatisfied condition: cuda{ge}{major}.{minor}, "
        "please update your driver to a newer version, or use an earlier cuda container: unknown."
    )
    assert _top(text) == "driver-too-old", text


HEADERS = st.sampled_from(["cuda_runtime.h", "cuda.h", "cublas_v2.h", "cusparse.h", "cuda_fp16.h"])


@settings(max_examples=examples(30), deadline=None)
@given(header=HEADERS, line=st.integers(1, 300), form=st.integers(0, 2))
def test_toolkit_parts_missing_for_a_build_or_a_jit(header, line, form):
    texts = [
        f"src/kern.cu:{line}:10: fatal error: {header}: No such file or directory",
        f'/tmp/tmp_kern.cu({line}): catastrophic error: cannot open source file "{header}"',
        f"/bin/sh: {line}: nvcc: not found",
    ]
    assert _top(texts[form]) == "cuda-lib-missing", texts[form]
    # cuDNN's own header is the cuDNN classes' concern, not this rule's
    assert "cuda-lib-missing" not in _ids("fatal error: cudnn.h: No such file or directory")


# DeepSpeed's op builder (op_builder/builder.py assert_no_cuda_mismatch): a failed check is the
# toolkit/torch mismatch; the accepted combination of one major is harmless
@settings(max_examples=examples(30), deadline=None)
@given(sys_cuda=CC, torch_cuda=CC, accepted=st.booleans())
def test_deepspeeds_cuda_check_failed_or_accepted(sys_cuda, torch_cuda, accepted):
    head = (
        f"Installed CUDA version {sys_cuda[0]}.{sys_cuda[1]} does not match the version torch was "
        f"compiled with {torch_cuda[0]}.{torch_cuda[1]}"
    )
    tail = (
        " but since the APIs are compatible, accepting this combination"
        if accepted
        else ", unable to compile cuda/cpp extensions without a matching cuda version."
    )
    assert _top(head + tail) == ("log-noise" if accepted else "cuda-lib-mismatch"), head + tail


@settings(max_examples=examples(30), deadline=None)
@given(v=VERSION, py=st.integers(8, 13), form=st.integers(0, 3))
def test_a_cpu_build_in_each_listing(v, py, form):
    texts = [
        f">>> torch.__version__\n'{v}+cpu'",
        ">>> print(torch.version.cuda)\nNone",
        f"pytorch                   {v}          py3.{py}_cpu_0    pytorch",
        ">>> paddle.is_compiled_with_cuda()\nFalse",
    ]
    assert _top(texts[form]) == "cpu-only-build", texts[form]
    assert _top(f"torch.version.cuda = 12.{py}") != "cpu-only-build"


# NVIDIA NGC containers' entrypoint: no driver visible, or one older than the image's CUDA
@settings(max_examples=examples(30), deadline=None)
@given(need=CC, have=st.one_of(st.none(), CC))
def test_ngc_containers_driver_checks(need, have):
    if have is None:
        text = (
            "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be "
            "available.\n   Use the NVIDIA Container Toolkit to start this container"
        )
        want = "driver-missing"
    else:
        text = (
            f"ERROR: This container was built for NVIDIA Driver Release {need[0]}{need[1]}5.4{need[1]} "
            f"or later, but\n       version {have[0]}{have[1]}0.1{have[0]} was detected and "
            "compatibility mode is UNAVAILABLE."
        )
        want = "driver-too-old"
    assert _top(text) == want, text
    empty = (
        "ERROR: This container was built for NVIDIA Driver Release 515.48 or later, but\n"
        "       version  was detected and compatibility mode is UNAVAILABLE."
    )
    assert _top(empty) == "driver-missing"


# torch/cuda/__init__.py _check_capability (2.6+): only a capability below the build's minimum is
# a GPU the build cannot run
@settings(max_examples=examples(40), deadline=None)
@given(cc=CC, lo=st.sampled_from([(5, 0), (6, 0), (7, 0), (7, 5), (8, 0)]), indent=st.booleans())
def test_torch_capability_range_warning(cc, lo, indent):
    pad = "    " if indent else ""
    text = (
        f"UserWarning: \n{pad}Found GPU0 NVIDIA X which is of cuda capability {cc[0]}.{cc[1]}.\n"
        f"{pad}Minimum and Maximum cuda capability supported by this version of PyTorch is\n"
        f"{pad}({lo[0]}.{lo[1]}) - (12.0)"
    )
    if cc < lo and lo >= (7, 0):
        assert _top(text) == "gpu-arch-unsupported", text
    if cc >= lo:
        assert _top(text) != "gpu-arch-unsupported", text
