"""The domain rules, each written once; detect, diagnose, resolve, plan, explain and verify call them.

Where each rule comes from:

- cuDNN compatibility, CUDA minor-version compatibility and the SASS/PTX rule: one table,
  COMPAT_RULES, of (subject, framework, releases, rule, source file @ tag). In short: the copy a
  process maps must have the major the framework was built with and, from cuDNN 7, a minor >=
  the built one (before 7: the same minor).
- cudnnGetVersion: from cuDNN 9 it returns M*10000 + m*100 + p, before 9 M*1000 + m*100 + p
  (cudnn_version.h's CUDNN_VERSION macro of each release).
- The sub-libraries a cuDNN copy consists of per major (the files each release ships) and what
  a complete copy is: every one present, every file a loadable ELF object, one version.
- Display names of the frameworks, requirement and pin parsing, and the Environment queries
  that diagnose and resolve both ask.

The rules the scripts that run inside foreign interpreters also need (cuDNN's sub-libraries,
its version integers, its requirement strings) live in fixer/children/childrules.py, stdlib
only; those scripts load it by path and this module imports it.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Set, Tuple, Union

from fixer.children.childrules import (  # the rules the children share, re-exported
    CUDNN_SUBLIBRARIES as CUDNN_SUBLIBRARIES,
    cudnn_requirement as cudnn_requirement,
    cudnn_sublibraries as cudnn_sublibraries,
    cudnn_version_from_int as cudnn_version_from_int,
)
from fixer.system.paths import split_ld_preload
from fixer.system.versions import (  # the requirement parsers, re-exported for rules' callers
    canonical_name as canonical_name,
    major_minor,
    older_minor,
    requirement_name as requirement_name,
    requirement_parts as requirement_parts,
    split_requirement as split_requirement,
    version_key,
)
from fixer.model import (
    Build,
    CudaDriverFloor,
    Environment,
    FrameworkBuild,
    Gpu,
    LibraryCopy,
    LoadResolution,
    Recipes,
)


def expected_cudnn_sonames(major: int) -> Tuple[str, ...]:
    """Every file a complete copy of cuDNN `major` has, by soname: libcudnn.so.9, libcudnn_graph.so.9, ..."""
    return (f"libcudnn.so.{major}",) + tuple(
        f"libcudnn_{s}.so.{major}" for s in cudnn_sublibraries(major)
    )


#: A cuDNN sub-library file name (not the main libcudnn.so.N).
CUDNN_SUBLIBRARY_FILE = re.compile(r"^libcudnn_[a-z_]+\.so(\.\d+)*$")


# ---------------------------------------------------------------------------------------
# cuDNN compatibility, kernels, completeness
# ---------------------------------------------------------------------------------------


def decode_cudnn_version(value: Union[int, str, Sequence[int]]) -> Optional[str]:
    """A cuDNN version in any form the libraries and frameworks print it, as "M.m.p".

    cudnnGetVersion() integers (91900 -> "9.19.0", 8907 -> "8.9.7", 7104 -> "7.1.4", 5105 ->
    "5.1.5"), tuples as torch prints them ((9, 19, 0) or the text "(9, 19, 0)"), and dotted
    strings ("9.19.0.56" -> "9.19.0.56"). None when the value is none of these."""
    if isinstance(value, (tuple, list)):
        parts = [int(p) for p in value]
        return ".".join(str(p) for p in parts) if parts else None
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        t = str(value).strip().strip("()[]")
        if "," in t:
            items = [p.strip() for p in t.split(",") if p.strip()]
            return (
                ".".join(str(int(p)) for p in items)
                if items and all(p.isdigit() for p in items)
                else None
            )
        if re.fullmatch(r"\d+(?:\.\d+)+", t):
            return t
        if not t.isdigit():
            return None
        n = int(t)
    if n < 1000:
        return None
    return cudnn_version_from_int(n)


# ---------------------------------------------------------------------------------------
# The compatibility table: (subject, framework, framework versions, rule, source)
# ---------------------------------------------------------------------------------------


class CompatRule(NamedTuple):
    """One row of COMPAT_RULES: which rule a framework applies in which of its releases, with
    the source it was read from (file @ tag or commit)."""

    subject: str  # "cudnn" (built vs loaded cuDNN), "cuda-minor-version", "kernels"
    framework: str  # "torch", "tensorflow", "xla", "jax", or "*" (the CUDA platform)
    since: str  # first framework release the row covers ("" = from the start)
    before: str  # first release it no longer covers ("" = up to now)
    rule: str  # a key of CUDNN_PREDICATES, or the function that implements the row
    source: str


def _cudnn_same_major_newer_minor_from_7(b: Tuple[int, ...], r: Tuple[int, ...]) -> bool:
    """Same major; the same minor, or (build major >= 7) a loaded minor >= the built one."""
    return r[0] == b[0] and (r[1] == b[1] or (b[0] >= 7 and r[1] >= b[1]))


def _cudnn_same_major_newer_minor(b: Tuple[int, ...], r: Tuple[int, ...]) -> bool:
    """Same major and a loaded minor >= the built one, for every major."""
    return r[0] == b[0] and r[1] >= b[1]


def _jax_major_minor_at_least(b: Tuple[int, ...], r: Tuple[int, ...]) -> bool:
    """jax's own check 0.4.17-0.4.25: build_version // 100 > version // 100 fails, i.e. the
    loaded (major, minor) is at least the built one (a newer major passes this check)."""
    return cudnn_int(r) // 100 >= cudnn_int(b) // 100


def _jax_at_least_8900(b: Tuple[int, ...], r: Tuple[int, ...]) -> bool:
    """jax's own check 0.4.26-0.4.30: min_supported_version=8900 <= cudnnGetVersion()."""
    return cudnn_int(r) >= 8900


def _jax_at_least_9100(b: Tuple[int, ...], r: Tuple[int, ...]) -> bool:
    """jax's own check 0.4.31-0.6.0: min_supported_version=9100 <= cudnnGetVersion() (any
    cuDNN 9, whose integers start at 90000; cuDNN 8.9.7 is 8907)."""
    return cudnn_int(r) >= 9100


def _jax_build_over_100(b: Tuple[int, ...], r: Tuple[int, ...]) -> bool:
    """jax's own check from 0.6.1: build_version // 100 <= cudnnGetVersion() (the runtime is
    not scaled, so any loaded cuDNN of the build's form passes)."""
    return cudnn_int(b) // 100 <= cudnn_int(r)


def cudnn_int(v: Tuple[int, ...]) -> int:
    """(major, minor, patch) -> cudnnGetVersion()'s integer (the inverse of
    cudnn_version_from_int: M*10000+m*100+p from 9 on, M*1000+m*100+p before)."""
    ma, mi, pa = (tuple(v) + (0, 0, 0))[:3]
    return ma * 10000 + mi * 100 + pa if ma >= 9 else ma * 1000 + mi * 100 + pa


#: The predicates of the cuDNN rows, (built, loaded) -> accepted.
CUDNN_PREDICATES = {
    "same-major-newer-minor-from-7": _cudnn_same_major_newer_minor_from_7,
    "same-major-newer-minor": _cudnn_same_major_newer_minor,
    "jax-major-minor-at-least": _jax_major_minor_at_least,
    "jax-at-least-8900": _jax_at_least_8900,
    "jax-at-least-9100": _jax_at_least_9100,
    "jax-build-over-100": _jax_build_over_100,
}

_TF_CC = "tensorflow/tensorflow tensorflow/stream_executor/cuda/cudnn_version.cc"
_JAX_XB = "jax-ml/jax jax/_src/xla_bridge.py _check_cuda_versions"

#: Every compatibility rule, per framework and per era, with the file and tag (or, where the
#: tag of a stored file could not be resolved, its commit) it was read from. A process that
#: loads cuDNN must pass every row of each framework it runs (JAX runs XLA's check in its
#: plugin and its own in Python). tests/unit/test_compat_table.py pins each row: TensorFlow's
#: cudnn_version_test.cc cases, and a property test against each source predicate.
COMPAT_RULES: Tuple[CompatRule, ...] = (
    CompatRule(
        "cudnn",
        "torch",
        "",
        "",
        "same-major-newer-minor-from-7",
        "pytorch/pytorch torch/backends/cudnn/__init__.py _init() @ 017943b70f69 (runtime_major < 7 "
        "or not is_cuda: runtime_minor == compile_minor; else runtime_minor >= compile_minor)",
    ),
    CompatRule(
        "cudnn",
        "tensorflow",
        "",
        "",
        "same-major-newer-minor-from-7",
        _TF_CC + " IsSourceCompatibleWithCudnnLibrary @ 0db332dc4ca5 ('Minor version is "
        "backward-compatible beginning with CuDNN 7'; its cases: cudnn_version_test.cc @ "
        "337fc7c54ae6). A later copy (namespace stream_executor::gpu) and XLA's cuda_dnn.cc drop "
        "the before-7 clause; they agree for every build with cuDNN >= 7 (the TensorFlow "
        "builds in recipes/tensorflow.toml all are)",
    ),
    CompatRule(
        "cudnn",
        "xla",
        "",
        "",
        "same-major-newer-minor",
        "openxla/xla xla/stream_executor/cuda/cuda_dnn.cc IsSourceCompatibleWithCudnnLibrary "
        "@ a51b0f552430 (CudnnSupport::Init; 'CuDNN library needs to have matching major "
        "version and equal or higher minor version')",
    ),
    CompatRule(
        "cudnn",
        "jax",
        "",
        "",
        "same-major-newer-minor",
        "openxla/xla xla/stream_executor/cuda/cuda_dnn.cc @ a51b0f552430, run by jaxlib / the "
        "CUDA plugin (jax pins XLA in third_party/xla: jax-v0.8.0 -> XLA 9f150f6b75c0)",
    ),
    CompatRule(
        "cudnn",
        "jax",
        "0.4.17",
        "0.4.26",
        "jax-major-minor-at-least",
        _JAX_XB + " @ jax-v0.4.17..jax-v0.4.25",
    ),
    CompatRule(
        "cudnn",
        "jax",
        "0.4.26",
        "0.4.31",
        "jax-at-least-8900",
        _JAX_XB + " @ jax-v0.4.26..jax-v0.4.30",
    ),
    CompatRule(
        "cudnn",
        "jax",
        "0.4.31",
        "0.6.1",
        "jax-at-least-9100",
        _JAX_XB + " @ jax-v0.4.31..jax-v0.6.0",
    ),
    CompatRule(
        "cudnn",
        "jax",
        "0.6.1",
        "",
        "jax-build-over-100",
        "jax-ml/jax jax_plugins/cuda/__init__.py _check_cuda_versions @ jax-v0.7.0..jax-v0.11.0 "
        "(jax/_src/xla_bridge.py at jax-v0.6.1)",
    ),
    CompatRule(
        "cuda-minor-version",
        "*",
        "",
        "",
        "cuda_fit",
        "NVIDIA CUDA Compatibility guide, minor-version-compatibility.html Table 1 (11.x >= "
        "450.80.02, 12.x >= 525.60.13, 13.x >= 580); recipes/nvidia.toml [[driver_floor]]",
    ),
    CompatRule(
        "kernels",
        "*",
        "",
        "",
        "runs_on_arch_list",
        "CUDA C++ Programming Guide, 'Binary Compatibility' (cubin for X.y runs on X.z, z >= y) "
        "and 'PTX Compatibility' (PTX for P is JIT-compiled on P' >= P); runs_under for the "
        "limit of minor-version compatibility (no JIT of newer PTX)",
    ),
)


def _in_release(row: CompatRule, version: Optional[str]) -> bool:
    if version is None:
        return row.since == "" and row.before == ""
    v = version_key(version)
    return (not row.since or v >= version_key(row.since)) and (
        not row.before or v < version_key(row.before)
    )


def compat_rules(subject: str, framework: str, version: Optional[str] = None) -> List[CompatRule]:
    """The rows of COMPAT_RULES for `framework` at release `version` (every era when None)."""
    return [
        r
        for r in COMPAT_RULES
        if r.subject == subject
        and r.framework == framework
        and (version is None or _in_release(r, version))
    ]


@functools.lru_cache(
    maxsize=4096
)  # a pure function of its strings; the resolver asks it ~10^5 times a solve
def cudnn_compatible(
    runtime: Optional[str],
    built: Optional[str],
    framework: Optional[str] = None,
    framework_version: Optional[str] = None,
) -> Optional[bool]:
    """Whether a cuDNN `runtime` version works for a framework built against `built`.

    With `framework` (and its release), every COMPAT_RULES row of that framework there must
    accept the pair. Without, the rule all frameworks share (torch and TensorFlow 1.x, the
    strictest): the same major; from cuDNN 7 on a runtime minor >= the built one, before 7 the
    same minor (TensorFlow cudnn_version.cc IsSourceCompatibleWithCudnnLibrary, torch
    backends/cudnn/__init__.py). None when a version is missing or unreadable."""
    r, b = version_key(runtime), version_key(built)
    if len(r) < 2 or len(b) < 2:
        return None
    rows = compat_rules("cudnn", framework, framework_version) if framework else []
    if not rows:
        return _cudnn_same_major_newer_minor_from_7(b, r)
    return all(CUDNN_PREDICATES[row.rule](b, r) for row in rows)


def cudnn_relation(runtime: Optional[str], built: Optional[str]) -> Optional[str]:
    """How a runtime cuDNN relates to the build: "ok", "other-major", "older" (same major, an
    older minor), or "other-minor" (same major, a newer minor that the rule before cuDNN 7
    refused). None when unreadable."""
    ok = cudnn_compatible(runtime, built)
    if ok is None:
        return None
    if ok:
        return "ok"
    r, b = version_key(runtime), version_key(built)
    if r[0] != b[0]:
        return "other-major"
    return "older" if r[:2] < b[:2] else "other-minor"


def runs_on(cc: str, sass: Sequence[str], ptx: Optional[str]) -> bool:
    """SASS for X.Y runs on X.Z with Z >= Y; PTX for P is JIT-compiled on anything >= P."""
    tokens = [f"sm_{s.replace('.', '')}" for s in sass] + (
        [f"compute_{ptx.replace('.', '')}"] if ptx else []
    )
    return runs_on_arch_list(cc, tokens)


def runs_on_arch_list(cc: str, tokens: Sequence[str]) -> bool:
    """Does a GPU of compute capability `cc` run a build shipping `tokens` (torch.cuda.get_arch_list()
    spelling: "sm_90", "sm_90a", "compute_120")? SASS sm_XY runs on X.Z for Z >= Y (same major
    only); PTX compute_XY is JIT-compiled by the driver for any X.Y or newer. An arch-specific
    target (sm_90a, compute_90a) runs on exactly that architecture; a family-specific one
    (sm_100f) on its major with a minor >= its own (CUDA C++ Programming Guide @release:13.0,
    "Binary Compatibility", "PTX Compatibility" and "Feature Availability"; pinned by
    tests/unit/test_compat_table.py and, on compiled fatbins, tests/integration/detect/
    test_fatbin.py)."""
    c = major_minor(cc)
    for t in tokens:
        m = re.match(r"^(sm|compute)_(\d+)(\d)([af]?)$", t)
        if not m:
            continue
        k = (int(m.group(2)), int(m.group(3)))
        if m.group(4) == "a":
            ok = k == c
        elif m.group(1) == "sm" or m.group(4) == "f":
            ok = k[0] == c[0] and k[1:] <= c[1:]
        else:
            ok = k <= c
        if ok:
            return True
    return False


#: The real GPU architectures (compute capability as an integer: 86 for sm_86) each CUDA toolkit's
#: nvcc compiles for, before 13.0: (toolkit, added, removed), applied in order. CMake's table of
#: CMAKE_CUDA_ARCHITECTURES_ALL by toolkit version (Kitware/CMake
#: Modules/Internal/CMakeCUDAArchitecturesAll.cmake:16-103@v4.4.2: the CUDA 7.0 set, then 8.0 adds
#: 60 61 62; 9.0 adds 70 72 and removes 20 21; 10.0 adds 75; 11.0 adds 80 and removes 30; 11.1
#: adds 86; 11.4 adds 87; 11.8 adds 89 90; 12.0 removes 35 37; 12.8 adds 100 101 120; 12.9 adds
#: 103 121). CUDA 13.0 starts a set of its own (:11-14): Turing and newer only.
_NVCC_ARCH_STEPS: Tuple[Tuple[Tuple[int, int], Tuple[int, ...], Tuple[int, ...]], ...] = (
    ((7, 0), (20, 21, 30, 35, 37, 50, 52, 53), ()),
    ((8, 0), (60, 61, 62), ()),
    ((9, 0), (70, 72), (20, 21)),
    ((10, 0), (75,), ()),
    ((11, 0), (80,), (30,)),
    ((11, 1), (86,), ()),
    ((11, 4), (87,), ()),
    ((11, 8), (89, 90), ()),
    ((12, 0), (), (35, 37)),
    ((12, 8), (100, 101, 120), ()),
    ((12, 9), (103, 121), ()),
)
_NVCC_ARCHS_13 = frozenset((75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121))
_NVCC_KNOWN = _NVCC_ARCHS_13.union(*(add for _, add, _ in _NVCC_ARCH_STEPS))


def nvcc_archs(cuda: Tuple[int, ...]) -> FrozenSet[int]:
    """The real architectures the nvcc of CUDA `cuda` (major, minor) compiles for (empty before
    7.0, where the table starts)."""
    if cuda >= (13, 0):
        return _NVCC_ARCHS_13
    out: Set[int] = set()
    for since, added, removed in _NVCC_ARCH_STEPS:
        if cuda >= since:
            out = (out | set(added)) - set(removed)
    return frozenset(out)


def nvcc_compiles_for(cuda: Tuple[int, ...], arch: int) -> Optional[bool]:
    """Does the nvcc (and ptxas) of CUDA `cuda` know architecture `arch` (86 for sm_86 /
    compute_86)? None where the table cannot say: a toolkit before 7.0, or an architecture no
    toolkit of the table lists (sm_32, a Tegra K1 target CMake leaves out)."""
    if cuda < (7, 0) or arch not in _NVCC_KNOWN:
        return None
    return arch in nvcc_archs(cuda)


def build_runs_on(cc: str, build: Build) -> Optional[bool]:
    """True/False when the build's kernel list decides; None when the recipe lists no kernels."""
    if not build.compute_capabilities and not build.ptx:
        return None
    return runs_on(cc, build.compute_capabilities, build.ptx)


def kernel_list(sass: Sequence[str], ptx: Optional[str]) -> str:
    """ "7.5, 8.0, 9.0, PTX 9.0" (or "unknown")."""
    parts = list(sass) + ([f"PTX {ptx}"] if ptx else [])
    return ", ".join(parts) or "unknown"


def unloadable_files(copy: LibraryCopy) -> List[str]:
    """Files of the copy the loader would refuse (truncated, not ELF)."""
    return [f.name for f in copy.files if not f.valid_elf]


def modified_files(copy: LibraryCopy) -> List[str]:
    """Files of the copy that differ from their wheel's RECORD row (size, or sha256 when
    detection hashed them): another release's file under the same name, or a damaged one."""
    return [f.name for f in copy.files if f.differs]


def is_complete(copy: LibraryCopy) -> bool:
    """A cuDNN (or CUDA library) copy is complete when every file it should have is present,
    every file is a loadable ELF object that matches its package's record, and all are of one
    version. An incomplete copy loads but fails ("unable to find an engine",
    CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH) or computes wrong numbers: it needs a reinstall."""
    return (
        not copy.missing
        and not unloadable_files(copy)
        and not copy.mixed
        and not modified_files(copy)
    )


def is_usable(copy: LibraryCopy) -> bool:
    """Complete and of a known version: a copy the resolver may keep as it is."""
    return bool(copy.version) and is_complete(copy)


def cuda_version_from_int(v: int) -> str:
    """cuDriverGetVersion / cudaRuntimeGetVersion: 13000 -> "13.0", 12060 -> "12.6" (1000 *
    major + 10 * minor: pypi:nvidia-cuda-runtime nvidia/cu13/include/cuda.h @13.0.96,
    CUDA_VERSION and cuDriverGetVersion's doc comment; tests/unit/test_rule_sources.py)."""
    return f"{v // 1000}.{(v % 1000) // 10}"


# ---------------------------------------------------------------------------------------
# names
# ---------------------------------------------------------------------------------------

DISPLAY_NAMES = {
    "torch": "PyTorch",
    "tensorflow": "TensorFlow",
    "jax": "JAX",
    "cupy": "CuPy",
    "onnxruntime": "ONNX Runtime",
    "ctranslate2": "CTranslate2",
    "paddle": "PaddlePaddle",
}


def display_name(framework: str) -> str:
    """The name people know a framework by: "torch" -> "PyTorch"."""
    return DISPLAY_NAMES.get(framework, framework)


# ---------------------------------------------------------------------------------------
# requirements and pins
# ---------------------------------------------------------------------------------------


def cudnn_pin(requires: Sequence[str]) -> Tuple[Optional[str], Optional[str]]:
    """The exact cuDNN wheel pin among requirement strings: ("nvidia-cudnn-cu12", "9.1.0.70"), else (None, None)."""
    for r in requires:
        name, version = split_requirement(r)
        if name.startswith("nvidia-cudnn-cu") and version:
            return name, version
    return None, None


@functools.lru_cache(maxsize=8192)  # pure, and asked of the same few hundred packages per resolve
def cuda_major_of_package(name: Optional[str], version: Optional[str] = None) -> Optional[int]:
    """The CUDA major a package is built for, from its name or version: nvidia-cudnn-cu13 -> 13,
    libcudnn9-cuda-12 -> 12, 8.9.7.29-1+cuda12.2 -> 12; None when neither says."""
    m = re.search(r"cu(?:da)?-?(\d{2})", f"{name or ''} {version or ''}")
    return int(m.group(1)) if m else None


def cudnn_major_of_package(name: str) -> Optional[int]:
    """libcudnn9-cuda-12 -> 9, libcudnn8 -> 8; None for the pip wheels (their major is the version's)."""
    m = re.match(r"^(?:lib)?cudnn(\d+)", name)
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------------------------------
# Environment queries shared by diagnose and resolve
# ---------------------------------------------------------------------------------------


def gpu_compute_capability(gpu: Gpu, recipes: Recipes) -> Optional[str]:
    """The GPU's compute capability: detected, else from the recipes' GPU table by PCI id or name."""
    if gpu.compute_capability:
        return gpu.compute_capability
    model = (
        recipes.gpu_by_pci(gpu.pci_device_id) if gpu.pci_device_id else None
    ) or recipes.gpu_by_name(gpu.name)
    return model.compute_capability if model else None


def recipe_build(fw: FrameworkBuild, recipes: Recipes) -> Optional[Build]:
    """The recipe row of an installed build: same framework and public version, the same variant
    when detected, else the only row of its CUDA major."""
    public = fw.version.split("+")[0]
    rows = [b for b in recipes.builds if b.framework == fw.framework and b.version == public]
    for b in rows:
        if fw.variant and b.variant == fw.variant:
            return b
    cuda_rows = [
        b for b in rows if b.cuda and fw.cuda and b.cuda.split(".")[0] == fw.cuda.split(".")[0]
    ]
    return cuda_rows[0] if len(cuda_rows) == 1 else None


def built_cudnn(fw: FrameworkBuild, recipes: Recipes) -> Optional[str]:
    """The cuDNN version an installed framework was built with: detected (major.minor at least),
    else its recipe row's, else whatever detection found."""
    if fw.cudnn and fw.cudnn.count(".") >= 1:
        return fw.cudnn
    row = recipe_build(fw, recipes)
    if row is not None and row.cudnn:
        return row.cudnn
    return fw.cudnn


def same_dir(d: str) -> str:
    """One name for a directory on merged-/usr systems (/lib/x86_64-linux-gnu is /usr/lib/...)."""
    d = os.path.normpath(d)
    return "/usr" + d if d.startswith(("/lib/", "/lib64/")) else d


def copy_at(
    env: Environment, directory: Optional[str], library: str = "cudnn", soname: str = ""
) -> Optional[LibraryCopy]:
    """The copy of `library` detection found in `directory`; with `soname` ("libcudnn.so.8"),
    the one of that major (the cuDNN 8 and 9 pip wheels share nvidia/cudnn/lib)."""
    if directory is None:
        return None
    m = re.search(r"\.so\.(\d+)", soname)
    major = int(m.group(1)) if m else None
    for c in env.libraries:
        if (
            c.library == library
            and os.path.normpath(c.directory) == os.path.normpath(directory)
            and (major is None or c.major in (None, major))
        ):
            return c
    return None


def foreign_cudnn_preloads(
    env: Environment,
) -> List[Tuple[str, Optional[LibraryCopy], List[LoadResolution]]]:
    """cuDNN sub-libraries that LD_PRELOAD forces into every process from another copy than the
    one a framework loads: (the file, its copy when known, the framework loads it mixes with).
    The loader model follows the main libcudnn.so.N through LD_PRELOAD by itself; a preloaded
    sub-library is only borrowed later, when cuDNN dlopens it by soname (verify saw torch and
    JAX map the apt libcudnn_ops next to the pip copy on the GPU machine)."""
    out: List[Tuple[str, Optional[LibraryCopy], List[LoadResolution]]] = []
    for p in split_ld_preload(env.env.get("LD_PRELOAD")):
        if not p.startswith("/") or not CUDNN_SUBLIBRARY_FILE.match(os.path.basename(p)):
            continue
        d = same_dir(os.path.dirname(p))
        copy = next(
            (c for c in env.libraries if c.library == "cudnn" and same_dir(c.directory) == d), None
        )
        mixes = [
            ld
            for ld in env.loads
            if ld.library == "cudnn"
            and ld.consumer != "dlopen"
            and ld.directory
            and not ld.error
            and same_dir(ld.directory) != d
        ]
        if mixes:
            out.append((os.path.normpath(p), copy, mixes))
    return out


def lent_cudnn_sublibraries(
    env: Environment,
) -> List[Tuple[LibraryCopy, List[str], List[LoadResolution]]]:
    """cuDNN sub-libraries an LD_LIBRARY_PATH directory lends to a copy loaded from elsewhere:
    (the lending copy, its sub-library files, the framework loads they mix with).

    libcudnn.so.N dlopens its sub-libraries by soname, and the dynamic loader searches
    LD_LIBRARY_PATH before the calling object's DT_RUNPATH (ld.so(8); NVIDIA's cuDNN carries
    DT_RUNPATH $ORIGIN in the pip wheels and no DT_RPATH). So a directory on LD_LIBRARY_PATH that
    holds only some sub-libraries of the same major hands them to a framework whose libcudnn.so.N
    came from its own copy by path: on the GPU machine torch mapped the apt libcudnn_ops next to
    the pip libcudnn.so.9 that way and verify failed while the main library looked right
    (scripts/device/damage_cycle.sh, case ld-ops; docs/measurements/runs-2026-11-26b/kernel_fix.txt, case 1)."""
    path = [same_dir(d) for d in (env.env.get("LD_LIBRARY_PATH") or "").split(":") if d.strip()]
    lent: Dict[str, Tuple[LibraryCopy, List[str], List[LoadResolution]]] = {}
    for ld in env.loads:
        if ld.library != "cudnn" or ld.consumer == "dlopen" or not ld.directory or ld.error:
            continue
        own = same_dir(ld.directory)
        mine = next(
            (c for c in env.libraries if c.library == "cudnn" and same_dir(c.directory) == own),
            None,
        )
        if mine is None:
            continue
        for d in path:
            if d == own:
                break  # its own folder comes first: its own sub-libraries win
            lender = next(
                (
                    c
                    for c in env.libraries
                    if c.library == "cudnn" and c.major == mine.major and same_dir(c.directory) == d
                ),
                None,
            )
            subs = (
                sorted(f.name for f in lender.files if CUDNN_SUBLIBRARY_FILE.match(f.name))
                if lender
                else []
            )
            if lender is not None and subs:
                lent.setdefault(d, (lender, subs, []))[2].append(ld)
    return list(lent.values())


def older_cuda_libraries(env: Environment) -> List[LoadResolution]:
    """The CUDA libraries (cudart, cuBLAS, cuBLASLt, NVRTC: their versions follow the CUDA
    toolkit's) a framework loads at its CUDA major but an older minor than it was built with:
    they lack symbols the build uses ("undefined symbol: ..., version libcublasLt.so.12").
    The cuda-lib-mismatch finding in diagnose, and the loader fixes in resolve."""
    out = []
    for res in env.loads:
        if res.library == "cudnn" or res.consumer == "dlopen" or not res.path or res.error:
            continue
        fw = env.framework(res.consumer)
        if older_minor(res.version, fw.cuda if fw else None):
            out.append(res)
    return out


def cudnn_loads(env: Environment) -> Dict[str, List[LoadResolution]]:
    """Where each framework's libcudnn.so.N resolves, grouped by soname (frameworks only)."""
    out: Dict[str, List[LoadResolution]] = {}
    for res in env.loads:
        if res.library == "cudnn" and res.consumer != "dlopen":
            out.setdefault(res.soname, []).append(res)
    return out


def driver_cuda_mismatch(
    driver: str, cuda: str, floors: Sequence[CudaDriverFloor]
) -> Optional[str]:
    """Why a driver version cannot report `cuda` as its CUDA (cuDriverGetVersion), or None.

    NVIDIA's table (recipes/nvidia.toml [[driver_floor]], toolkit rows "X.Y"): a toolkit needs
    at least its GA driver, so the driver's CUDA is never newer than the newest toolkit whose
    floor the driver meets, and never older (a driver reports the CUDA of its own branch, which
    is at least that toolkit's). Driver branches rise with CUDA, so both bounds are general."""
    toolkits = sorted(
        (
            (version_key(f.cuda), version_key(f.min_driver), f.cuda, f.min_driver)
            for f in floors
            if f.cuda.count(".") == 1
        ),
        reverse=True,
    )
    want, have = version_key(cuda)[:2], version_key(driver)
    for tk, floor, _name, floor_text in toolkits:
        if tk == want and have < floor:
            return f"CUDA {cuda} needs driver >= {floor_text}, and driver {driver} is older"
    for tk, floor, name, _text in toolkits:
        if have >= floor:
            if want < tk:
                return (
                    f"driver {driver} supports CUDA {name} (it is at least that toolkit's driver), "
                    f"so it cannot report CUDA {cuda}"
                )
            break
    return None


#: condacolab.PREFIX (condacolab 0.1.10): where condacolab installs conda on Colab.
CONDACOLAB_PREFIX = "/usr/local"


def conda_prefix(env: Environment) -> Optional[str]:
    """The conda prefix cuDNN goes into for `env`: the target's own prefix when the target
    interpreter lives in a conda environment (it has conda-meta/), condacolab's /usr/local on
    Colab, else None (no conda target: --cudnn-from conda cannot be planned)."""
    py = env.python
    if py is not None and py.conda and py.prefix and env.runtime.kind != "colab":
        return py.prefix
    if env.runtime.kind == "colab":
        return CONDACOLAB_PREFIX
    if py is not None and py.conda and py.prefix:
        return py.prefix
    return None


def conda_lib_dir(env: Environment) -> Optional[str]:
    """Where conda-forge's cudnn puts libcudnn.so.N for `env` (PREFIX/lib)."""
    prefix = conda_prefix(env)
    return f"{prefix}/lib" if prefix else None


def cudnn_preloads(env: Environment, major: int) -> List[str]:
    """The absolute LD_PRELOAD entries of `env` that are cuDNN `major` libraries (libcudnn.so.N
    or one of its sub-libraries), normalised, in LD_PRELOAD's order."""
    pattern = re.compile(rf"^libcudnn(_[a-z_]+)?\.so\.{major}(\.|$)")
    return [
        os.path.normpath(p)
        for p in split_ld_preload(env.env.get("LD_PRELOAD"))
        if p.startswith("/") and pattern.match(os.path.basename(p))
    ]


# ---------------------------------------------------------------------------------------
# which CUDA variant of a release to install (the wheel index: cu126, cu128, ...; jax[cuda12]/[cuda13])
# ---------------------------------------------------------------------------------------

#: How a build runs under a driver: its CUDA is no newer than the driver's ("native"), or it is
#: newer within the same major and runs by minor-version compatibility ("minor-version").
CudaFit = str

#: NVIDIA's limits of minor-version compatibility, as the plan states them.
MINOR_VERSION_LIMITS = (
    "no PTX JIT of its newer PTX (the GPU needs SASS in the wheel), and no CUDA "
    "feature that needs a newer driver"
)


def driver_cuda(
    driver: Optional[str], reported: Optional[str], floors: Sequence[CudaDriverFloor]
) -> Optional[str]:
    """The CUDA a driver runs natively, as "major.minor": what it reports (cuDriverGetVersion),
    else the newest toolkit of NVIDIA's table (recipes/nvidia.toml toolkit rows, each its GA
    driver) whose driver it meets. None when neither is known."""
    if reported and version_key(reported):
        return ".".join(str(x) for x in (version_key(reported) + (0,))[:2])
    if not driver:
        return None
    have = version_key(driver)
    rows = sorted(
        (
            (version_key(f.cuda), f.cuda)
            for f in floors
            if f.cuda.count(".") == 1 and have >= version_key(f.min_driver)
        ),
        reverse=True,
    )
    return rows[0][1] if rows else None


def minor_version_floor(major: int, floors: Sequence[CudaDriverFloor]) -> Optional[str]:
    """The lowest driver of minor-version compatibility for CUDA `major`.x (NVIDIA's CUDA
    Compatibility guide, Table 1: 11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580): the
    family row ("12") of recipes/nvidia.toml; None where NVIDIA defines none (before CUDA 11)."""
    for f in floors:
        if f.cuda == str(major):
            return f.min_driver
    return None


def cuda_fit(
    cuda: Optional[str],
    driver: Optional[str],
    drv_cuda: Optional[str],
    floors: Sequence[CudaDriverFloor],
) -> Optional[CudaFit]:
    """How a build of CUDA `cuda` runs under a driver whose own CUDA is `drv_cuda`:

    - "native": its CUDA is no newer than the driver's (drivers are backward compatible);
    - "minor-version": newer, of the same major, and the driver is at least that major's
      minor-version-compatibility minimum: it runs with NVIDIA's limits (MINOR_VERSION_LIMITS;
      https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html);
    - None: not at all (another major, or a driver below the minimum).

    "native" too when the driver's CUDA is unknown (nothing to compare)."""
    if not cuda or drv_cuda is None:
        return "native"
    want, have = version_key(cuda)[:2], version_key(drv_cuda)[:2]
    if want <= have:
        return "native"
    if want[:1] != have[:1]:
        return None
    floor = minor_version_floor(want[0], floors)
    if floor is None or not driver or version_key(driver) < version_key(floor):
        return None
    return "minor-version"


def driver_runs_build(driver: str, cuda: str, floors: Sequence[CudaDriverFloor]) -> Optional[bool]:
    """Whether a driver of version `driver` runs a build of CUDA release `cuda` ("10.1"), by
    NVIDIA's table (recipes/nvidia.toml): the CUDA the driver runs natively is the newest toolkit
    whose GA driver it meets (driver_cuda), and cuda_fit decides (natively, or by minor-version
    compatibility from CUDA 11 on; before 11 every release needs its own GA driver). A driver
    below every row: False where the release has a row (it is older than that row's driver),
    None where the table cannot say."""
    have = driver_cuda(driver, None, floors)
    if have is None:
        row = next((f for f in floors if f.cuda == cuda), None)
        return False if row and version_key(driver) < version_key(row.min_driver) else None
    return cuda_fit(cuda, driver, have, floors) is not None


def runs_under(cc: str, sass: Sequence[str], ptx: Optional[str], fit: Optional[CudaFit]) -> bool:
    """Whether a GPU of compute capability `cc` runs a build shipping these kernels under a driver
    it fits as `fit`: natively SASS or PTX (runs_on); by minor-version compatibility SASS only, since
    the older driver's JIT cannot compile the newer toolkit's PTX (cudaErrorUnsupportedPtxVersion:
    "the PTX was generated by a compiler newer than what is supported by the CUDA driver").
    True when the build lists no kernels (nothing to check)."""
    if fit is None:
        return False
    if not sass and not ptx:
        return True
    return runs_on(cc, sass, ptx if fit == "native" else None)


def pick_cuda_variant(
    variants: Sequence[Tuple[str, Sequence[str], Optional[str]]],
    driver: Optional[str],
    drv_cuda: Optional[str],
    ccs: Sequence[str],
    floors: Sequence[CudaDriverFloor],
) -> Optional[Tuple[str, CudaFit]]:
    """Which CUDA variant of one release to install: (its CUDA "major.minor", how it runs).

    `variants` are (CUDA, SASS list, PTX) of the release's builds (cu126, cu128, ... or
    jax[cuda12]/[cuda13]). The rule (PyTorch's install advice; the driver table of NVIDIA's
    toolkit release notes): the highest CUDA no newer than the driver's whose kernels run on
    every GPU. Only when none fits, minor-version compatibility: the lowest CUDA above the
    driver's that the driver runs that way with SASS for every GPU (the fewest features beyond
    what the driver knows). None when no variant runs here, or the driver's CUDA is unknown."""
    if drv_cuda is None:
        return None
    best: Dict[CudaFit, List[Tuple[int, ...]]] = {"native": [], "minor-version": []}
    names: Dict[Tuple[int, ...], str] = {}
    for cuda, sass, ptx in variants:
        fit = cuda_fit(cuda, driver, drv_cuda, floors)
        if fit is None or not all(runs_under(cc, sass, ptx, fit) for cc in ccs):
            continue
        key = version_key(cuda)[:2]
        best[fit].append(key)
        names[key] = ".".join(str(x) for x in key)
    if best["native"]:
        return names[max(best["native"])], "native"
    if best["minor-version"]:
        return names[min(best["minor-version"])], "minor-version"
    return None


def minor_version_note(
    label: str, cuda: str, driver: str, drv_cuda: str, floors: Sequence[CudaDriverFloor]
) -> str:
    """The plan's words when a chosen build runs by minor-version compatibility."""
    cuda = ".".join(str(x) for x in version_key(cuda)[:2])
    floor = minor_version_floor(version_key(cuda)[0], floors) or "?"
    return (
        f"{label} is built with CUDA {cuda}, newer than driver {driver}'s CUDA {drv_cuda}: no variant "
        f"within the driver's own CUDA fits this machine and stack, so it runs by minor-version compatibility (driver >= {floor} for "
        f"CUDA {version_key(cuda)[0]}.x), with NVIDIA's limits: {MINOR_VERSION_LIMITS}; a driver for CUDA "
        f"{cuda} or newer lifts them"
    )
