"""The values that flow between the stages: detect -> diagnose -> resolve -> plan -> apply -> verify.

Every stage takes and returns these frozen dataclasses. They serialise to plain JSON
(`to_dict`) and back (`from_dict`), which is what `doctor --json` writes and
`plan --environment FILE` reads. Annotations use `typing` names (Optional, Tuple) so
that `from_dict` can evaluate them on Python 3.9.

Domain words are named once here as Literals.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import typing
from typing import (
    Any,
    Callable,
    Dict,
    FrozenSet,
    List,
    Literal,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from fixer.system.versions import canonical_name, split_requirement, version_key

#: Version of the JSON written by `doctor --json` (an Environment plus findings). 2: a library
#: copy's package is {"name", "version"} and each load records the directories it searched
#: (`search`) and the LD_PRELOAD entries naming its soname (`ld_preload`) as data.
ENVIRONMENT_SCHEMA = 2

Framework = Literal["torch", "tensorflow", "jax", "cupy", "onnxruntime", "ctranslate2", "paddle"]
FRAMEWORKS: Tuple[str, ...] = typing.get_args(Framework)
#: Frameworks `verify` knows how to exercise, in the order it runs them (fixer.verifier.checks).
VERIFIABLE: Tuple[str, ...] = ("torch", "tensorflow", "jax", "cupy")

Severity = Literal["error", "warning", "info"]

FindingId = Literal[
    "gpu-missing",
    "driver-missing",
    "driver-too-old",
    "gpu-arch-unsupported",
    "cpu-only-build",
    "cudnn-missing",
    "cudnn-too-old",
    "cudnn-major-mismatch",
    "cudnn-conflict",
    "cudnn-shadowed",
    "cudnn-mixed",
    "cudnn-incomplete",
    "cuda-lib-missing",
    "cuda-lib-mismatch",
    "system-runtime-too-old",  # a library needs a newer glibc / libstdc++ / libgcc than the system has
    "out-of-memory",
    "log-noise",
    "pip-conflict",
    "import-failed",  # doctor --deep: a framework fails to import (or to see the GPU) for a reason explain does not know
    "files-modified",  # library files of a pip wheel differ from its RECORD (size; with --deep, sha256)
    "pip-leftovers",  # entries pip moved aside (~...) and an interrupted run left in site-packages
]
FINDING_IDS: Tuple[str, ...] = typing.get_args(FindingId)

#: Where a copy of a library came from.
Origin = Literal[
    "pip",  # an nvidia-* wheel in a site-packages directory
    "apt",  # a Debian package (dpkg lists the file)
    "conda",  # a conda prefix ($CONDA_PREFIX/lib)
    "cuda-toolkit",  # /usr/local/cuda*/ (runfile or toolkit install)
    "ld-library-path",  # a directory named by LD_LIBRARY_PATH, not otherwise known
    "system",  # a system directory with no package owning the file
    "bundled",  # shipped inside a framework's own wheel (e.g. tensorflow, ctranslate2)
    "unknown",
]

RuntimeKind = Literal["colab", "kaggle", "docker", "wsl", "linux", "other"]
Accelerator = Literal["gpu", "tpu", "cpu"]
Installer = Literal["pip", "uv", "apt", "conda"]
StepKind = Literal[
    "pip-uninstall",
    "pip-install",
    "apt-update",
    "apt-install",
    "apt-hold",
    "conda-install",
    "env-fix",
    "restart",
    "verify",
    "cleanup",  # remove pip's moved-aside leftovers (journalled; rollback puts them back)
]
CheckStatus = Literal["passed", "failed", "crashed", "timeout", "skipped"]


# ---------------------------------------------------------------------------------------
# serialisation
# ---------------------------------------------------------------------------------------

T = TypeVar("T")


#: type -> its dataclass field names, or None for a type that is not a dataclass (to_dict asks
#: dataclasses once per type, not once per value: doctor's payload holds ~2000 values).
_FIELD_NAMES: Dict[type, Optional[Tuple[str, ...]]] = {}


def to_dict(value: Any) -> Any:
    """A dataclass (or tuple/list/dict of them) as plain JSON-ready data."""
    cls = type(value)
    names = _FIELD_NAMES.get(cls, ())
    if names == ():
        names = _FIELD_NAMES[cls] = (
            tuple(f.name for f in dataclasses.fields(value))
            if dataclasses.is_dataclass(value) and not isinstance(value, type)
            else None
        )
    if names is not None:
        return {name: to_dict(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return [to_dict(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_dict(v) for k, v in value.items()}
    return value


_HINTS: Dict[type, Dict[str, Any]] = {}


def _hints(cls: type) -> Dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))
    return _HINTS[cls]


#: Where a value sits in the document, for error messages: "$" or another root, or (the parent's
#: place, a field's ".name" / a mapping key's ".'key'" / a list index). A message renders it only
#: when a value is refused (_path): from_dict builds no string per value it accepts (an
#: environment holds some 5,000 values; `fleet` rebuilds one per node).
Where = Union[str, Tuple[Any, Union[str, int]]]
Converter = Callable[[Any, Where], Any]


def _path(where: Where) -> str:
    """The place `where` as the messages name it: "$.environment.libraries[3].directory"."""
    parts: List[str] = []
    while not isinstance(where, str):
        where, step = where
        parts.append(f"[{step}]" if isinstance(step, int) else step)
    return where + "".join(reversed(parts))


#: type -> its converter (data, where) -> value, built once per type from the rules below.
_CONVERTERS: Dict[Any, Converter] = {}
#: cls -> (its field names, and for each field: its name, its place's suffix (".name"), its
#: converter, its grammar (or None) and whether it is required)
_SPECS: Dict[
    type,
    Tuple[
        FrozenSet[str],
        Tuple[Tuple[str, str, Converter, Optional[Tuple["re.Pattern[str]", str]], bool], ...],
    ],
] = {}


def _converter(tp: Any) -> Converter:
    fn = _CONVERTERS.get(tp)
    if fn is None:
        fn = _CONVERTERS[tp] = _make_converter(tp)
    return fn


def _make_converter(tp: Any) -> Converter:
    """The conversion of `tp`'s JSON form, its type inspected once (from_dict turns many values
    of few types). A dataclass's converter calls from_dict, which looks its fields up when
    called: a type that holds itself needs no converter of its own while this one is made."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if tp is Any:
        return lambda data, where: data
    if origin is typing.Union:
        return _union_converter(args)
    if origin is Literal:
        return _literal_converter(args)
    if origin in (tuple, Tuple):
        return _tuple_converter(args)
    if origin in (dict, Dict, Mapping):
        return _mapping_converter(args[1] if args else Any)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        cls = tp
        return lambda data, where: from_dict(cls, data, where)
    if isinstance(tp, type):
        return _plain_converter(tp)
    return lambda data, where: data


def _union_converter(args: Tuple[Any, ...]) -> Converter:
    nullable = type(None) in args
    inner = _converter([a for a in args if a is not type(None)][0])

    def union(data: Any, where: Where) -> Any:
        if data is None:
            if nullable:
                return None
            raise ValueError(f"{_path(where)}: null is not allowed")
        return inner(data, where)

    return union


def _literal_converter(args: Tuple[Any, ...]) -> Converter:
    def literal(data: Any, where: Where) -> Any:
        if not isinstance(data, (str, int, float, bool, type(None))) or data not in args:
            raise ValueError(
                f"{_path(where)}: {_short(data)} is not one of {', '.join(map(repr, args))}"
            )
        return data

    return literal


def _tuple_converter(args: Tuple[Any, ...]) -> Converter:
    if len(args) == 2 and args[1] is Ellipsis:
        conv = _converter(args[0])

        def variadic(data: Any, where: Where) -> Any:
            if not isinstance(data, (list, tuple)):
                raise ValueError(f"{_path(where)}: expected a list, got {type(data).__name__}")
            return tuple([conv(v, (where, i)) for i, v in enumerate(data)])

        return variadic
    convs = tuple(_converter(a) for a in args)

    def fixed(data: Any, where: Where) -> Any:
        if not isinstance(data, (list, tuple)):
            raise ValueError(f"{_path(where)}: expected a list, got {type(data).__name__}")
        if len(convs) != len(data):
            raise ValueError(f"{_path(where)}: expected {len(convs)} items, got {len(data)}")
        return tuple([c(v, (where, i)) for i, (c, v) in enumerate(zip(convs, data))])

    return fixed


def _mapping_converter(vt: Any) -> Converter:
    conv = _converter(vt)

    def mapping(data: Any, where: Where) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"{_path(where)}: expected an object, got {type(data).__name__}")
        return {str(k): conv(v, (where, "." + _short(str(k)))) for k, v in data.items()}

    return mapping


def _plain_converter(tp: type) -> Converter:
    def plain(data: Any, where: Where) -> Any:
        if tp is float and isinstance(data, int) and not isinstance(data, bool):
            return float(data)
        if not isinstance(data, tp) or (tp is int and isinstance(data, bool)):
            raise ValueError(
                f"{_path(where)}: expected {tp.__name__}, got {type(data).__name__} {_short(data)}"
            )
        if isinstance(data, str) and len(data) > MAX_TEXT:
            raise ValueError(f"{_path(where)}: longer than {MAX_TEXT} characters ({len(data)})")
        if isinstance(data, int) and abs(data) > MAX_INT:
            raise ValueError(f"{_path(where)}: {_short(data)} is out of range")
        return data

    if tp is not str:
        return plain

    def text(data: Any, where: Where) -> Any:
        """`plain` for str, its common case first: a JSON string within MAX_TEXT."""
        if type(data) is str and len(data) <= MAX_TEXT:
            return data
        return plain(data, where)

    return text


def _spec(
    cls: type,
) -> Tuple[
    FrozenSet[str],
    Tuple[Tuple[str, str, Converter, Optional[Tuple["re.Pattern[str]", str]], bool], ...],
]:
    """What from_dict needs of `cls`, worked out once per class."""
    spec = _SPECS.get(cls)
    if spec is None:
        hints = _hints(cls)
        fields = dataclasses.fields(cls)
        per_field = []
        for f in fields:
            grammar = _GRAMMAR.get(f.name) or _GRAMMAR.get(f"{cls.__name__}.{f.name}")
            required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            per_field.append(
                (
                    f.name,
                    "." + f.name,
                    _converter(hints[f.name]),
                    (re.compile(grammar[0]), grammar[1]) if grammar is not None else None,
                    required,
                )
            )
        spec = _SPECS[cls] = (frozenset(f.name for f in fields), tuple(per_field))
    return spec


#: Longest string and largest integer any field holds (a path is at most PATH_MAX 4096; an error
#: text or probe detail a few KB). A value past them is hostile or corrupt, never a fact.
MAX_TEXT = 64 * 1024
MAX_INT = 2**63

#: The grammar of fields that later code parses as numbers (fixer.system.versions.version_key,
#: int()) or hands to an installer: by field name ("version", "cuda", ...) for every
#: dataclass, or "Class.field". A version starts with a digit and has at most 64 characters of
#: letters, digits and . + ~ : _ - (PEP 440, Debian Policy 5.6.12 and NVIDIA's driver and
#: library versions are all of this form); a distribution name is a PEP 508 name.
_VERSION_RX = r"[0-9][A-Za-z0-9.+~:_-]{0,63}"
_GRAMMAR: Dict[str, Tuple[str, str]] = {
    name: (_VERSION_RX, "a version (a digit first, at most 64 characters)")
    for name in (
        "version",
        "cuda_version",
        "cuda",
        "cudnn",
        "glibc",
        "ptx",
        "compute_capability",
        "compute_capabilities",
        "cudnn_runtime",
        "named_version",  # a dist-info folder's version: pinned as NAME==VERSION (planner/steps.py)
    )
}
_GRAMMAR["Distribution.name"] = (
    r"[A-Za-z0-9]([A-Za-z0-9._-]{0,126}[A-Za-z0-9])?",
    "a distribution name (PEP 508)",
)
#: A directory of a library copy or of a loader's search: absolute, and nameable in the loader's
#: search lists, which split at ':' and end at a newline (ld.so(8) LD_LIBRARY_PATH, ldconfig(8)
#: ld.so.conf): detection only records such directories, and the planner writes them there.
_GRAMMAR["LibraryCopy.directory"] = (
    r"/[^\x00\n:]{0,4095}",
    "an absolute directory without ':', NUL or newlines (ld.so(8))",
)
_GRAMMAR["SearchDir.directory"] = _GRAMMAR["LibraryCopy.directory"]
#: A framework's distribution is pinned by name in pip's requirements (resolver/stack.py).
_GRAMMAR["FrameworkBuild.distribution"] = _GRAMMAR["Distribution.name"]
_GRAMMAR["Package.name"] = (
    r"[A-Za-z0-9][A-Za-z0-9._+-]{0,127}",
    "a package name (PEP 508, Debian Policy 5.6.1 or conda)",
)


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_grammar(grammar: Tuple["re.Pattern[str]", str], value: Any, where: Where) -> None:
    pattern, what = grammar
    if type(value) is str:
        if not pattern.fullmatch(value):
            raise ValueError(f"{_path(where)}: {_short(value)} is not {what}")
        return
    for i, v in enumerate(value if isinstance(value, tuple) else (value,)):
        if isinstance(v, str) and not pattern.fullmatch(v):
            at = f"{_path(where)}[{i}]" if isinstance(value, tuple) else _path(where)
            raise ValueError(f"{at}: {_short(v)} is not {what}")


def from_dict(cls: Type[T], data: Any, where: Where = "$") -> T:
    """Rebuild a dataclass from `to_dict` output. Unknown keys are refused; missing keys
    take the field's default. Raises ValueError naming the path of a bad value."""
    if not isinstance(data, dict):
        raise ValueError(
            f"{_path(where)}: expected an object for {cls.__name__}, got {type(data).__name__}"
        )
    names, fields = _spec(cls)
    if not data.keys() <= names:
        unknown = sorted(set(data) - names, key=str)
        shown = ", ".join(_short(str(k)) for k in unknown[:3])
        raise ValueError(f"{_path(where)}: unknown key(s) {shown} for {cls.__name__}")
    kwargs: Dict[str, Any] = {}
    for name, suffix, conv, grammar, required in fields:
        if name in data:
            at = (where, suffix)
            value = kwargs[name] = conv(data[name], at)
            if grammar is not None and value is not None:
                _check_grammar(grammar, value, at)
        elif required:
            raise ValueError(f"{_path(where)}: missing key {name!r} for {cls.__name__}")
    return cls(**kwargs)


# ---------------------------------------------------------------------------------------
# detect: facts about the machine. Each fact that can come from several sources says which.
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Gpu:
    """One GPU as detection saw it (NVML, nvidia-smi, sysfs or an override: `source`)."""

    index: int
    name: str
    pci_bus_id: Optional[str] = None  # "00000000:00:06.0"
    pci_device_id: Optional[str] = None  # "0x2335" (device id only, lower case)
    compute_capability: Optional[str] = None  # "9.0"
    memory_mib: Optional[int] = None
    uuid: Optional[str] = None
    source: str = ""  # "nvml", "nvidia-smi", "sysfs", "override", ...


@dataclasses.dataclass(frozen=True)
class Driver:
    """The NVIDIA driver: its version, the highest CUDA it supports and where libcuda is."""

    version: Optional[str] = None  # "580.159.04"
    cuda_version: Optional[str] = None  # highest CUDA the driver supports, "13.0"
    libcuda_path: Optional[str] = None
    kernel_module: Optional[str] = None  # "open" / "proprietary" when known
    source: str = ""
    error: Optional[str] = None  # why the driver is unusable, when it is


@dataclasses.dataclass(frozen=True)
class Runtime:
    """Where the tool runs: Colab, Kaggle, a container, WSL or plain Linux, and the OS underneath."""

    kind: RuntimeKind = "linux"
    accelerator: Optional[Accelerator] = None  # Colab/Kaggle: what the runtime was started with
    image: Optional[str] = None  # matched Colab image (date + commit) when known
    os_name: Optional[str] = None  # "Ubuntu 24.04.3 LTS"
    arch: str = "x86_64"
    glibc: Optional[str] = None  # "2.39"
    in_notebook_kernel: bool = False  # launched from a Jupyter/IPython kernel
    kernel_pid: Optional[int] = None
    kernel_loaded: Tuple[str, ...] = ()  # GPU libraries the kernel process already mapped
    source: str = ""


@dataclasses.dataclass(frozen=True)
class Distribution:
    """One installed Python distribution (a dist-info or egg-info directory) of the target interpreter."""

    name: str  # canonical name (PEP 503: fixer.system.versions.canonical_name)
    version: str
    location: str = ""  # the site-packages directory
    installer: Optional[str] = None  # INSTALLER file: "pip", "uv", "conda", ...
    requires: Tuple[str, ...] = ()  # Requires-Dist lines, verbatim
    editable: bool = False
    # the version the dist-info folder's name gives, when it is not METADATA's (a hand-edited
    # or half-upgraded install): what uv takes as installed (fixer.system.versions.NAMED_VERSION)
    named_version: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class PythonEnv:
    """The target interpreter: its prefix, site-packages, distributions and installers."""

    executable: str
    version: str  # "3.12.3"
    prefix: str = ""
    base_prefix: str = ""
    is_venv: bool = False
    site_packages: Tuple[str, ...] = ()  # in sys.path order
    distributions: Tuple[Distribution, ...] = ()
    pip: Optional[str] = None  # pip version, if importable in the target
    uv: Optional[str] = None  # path of a usable uv binary
    conda: Optional[str] = None  # path of conda/mamba, if any
    externally_managed: bool = False  # PEP 668 marker present
    markers: Dict[str, str] = dataclasses.field(
        default_factory=dict
    )  # PEP 508 marker environment of the target


@dataclasses.dataclass(frozen=True)
class LibFile:
    """One file of a library copy: its name, soname, version and whether it is a loadable ELF."""

    name: str  # file name, "libcudnn_cnn.so.9.14.0" or "libcudnn_cnn.so.9"
    soname: Optional[str] = None  # "libcudnn_cnn.so.9"
    version: Optional[str] = None  # version of this file when it can be told
    size: Optional[int] = None
    valid_elf: bool = True
    # how the file differs from its wheel's RECORD row ("size 123 bytes, RECORD 456"; with
    # --deep "sha256 differs from RECORD"); None when it matches or no RECORD lists it
    differs: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Package:
    """A package that owns files: a pip distribution, a Debian package or a conda package."""

    name: str  # "nvidia-cudnn-cu13", "libcudnn9-cuda-13"
    version: Optional[str] = (
        None  # "9.19.0.56", "9.14.0.64-1"; None when the owner's version is unknown
    )

    def __str__(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name

    @property
    def requirement(self) -> str:
        """pip's spelling of exactly this package: "nvidia-cudnn-cu13==9.19.0.56"."""
        return f"{self.name}=={self.version}" if self.version else self.name


@dataclasses.dataclass(frozen=True)
class LibraryCopy:
    """One copy of a library family in one directory (cuDNN 9 under nvidia/cudnn/lib, ...)."""

    library: str  # "cudnn", "cudart", "cublas", "cublasLt", "nvrtc", "cufft", ...
    major: Optional[int]
    version: Optional[str]  # "9.19.0" (major.minor.patch of the library)
    directory: str
    origin: Origin = "unknown"
    package: Optional[Package] = (
        None  # owning package: nvidia-cudnn-cu13 9.19.0.56, libcudnn9-cuda-13 9.14.0.64-1
    )
    version_source: str = ""  # "dist-info", "soname", "header", "cudnnGetVersion", "dpkg"
    files: Tuple[LibFile, ...] = ()
    missing: Tuple[str, ...] = ()  # sub-libraries this copy should have and lacks
    mixed: bool = False  # files of more than one version in this copy
    cuda_major: Optional[int] = None  # the CUDA major this copy is built for, when known


#: How a directory got into a consumer's search (ld.so(8) order; "preload": the framework loads
#: the file by absolute path itself; "ld.so.cache": the directory of the cache's entry).
SearchVia = Literal[
    "LD_PRELOAD", "preload", "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH", "ld.so.cache"
]


@dataclasses.dataclass(frozen=True)
class SearchDir:
    """One directory a consumer's search order visits for a soname."""

    via: SearchVia
    directory: str  # absolute, normalised, $ORIGIN expanded


@dataclasses.dataclass(frozen=True)
class LoadResolution:
    """Which copy of `library` a framework (or the plain dynamic loader) will load, and why."""

    consumer: str  # "torch", "jax", "tensorflow", ..., or "dlopen"
    library: str  # "cudnn"
    soname: str  # "libcudnn.so.9"
    path: Optional[str]  # the file that wins; None: nothing found
    directory: Optional[str] = None
    version: Optional[str] = None
    via: str = ""  # "preload", "DT_RPATH", "LD_LIBRARY_PATH", "DT_RUNPATH", "ld.so.cache", "default", "LD_PRELOAD"
    steps: Tuple[str, ...] = ()  # the search order walked, for the report
    shadowed: Tuple[str, ...] = ()  # copies that also match but lose (or win over the intended one)
    intended: Optional[str] = (
        None  # the copy the consumer points at itself (its RPATH/RUNPATH/preload), when another wins
    )
    error: Optional[str] = (
        None  # the loader would fail here: "invalid ELF header: /path", "not found"
    )
    # The search as data (detect writes it; `steps` above is the same walk in words, for people):
    search: Tuple[SearchDir, ...] = ()  # directories visited, in order, before the default ones
    #                                         (fixer.detection.loader.DEFAULT_SEARCH, the same for every consumer)
    ld_preload: Tuple[
        str, ...
    ] = ()  # the LD_PRELOAD entries that name this soname, as ld.so splits them


@dataclasses.dataclass(frozen=True)
class FrameworkBuild:
    """What an installed framework was built against, read from its files."""

    framework: str  # one of FRAMEWORKS
    distribution: str  # "torch", "tensorflow", "jax-cuda13-plugin", ...
    version: str  # "2.11.0+cu130"
    location: str = ""
    variant: Optional[str] = None  # "cu130", "cpu", "cuda12", ...
    cuda: Optional[str] = None  # CUDA it was built with: "13.0"; None for a CPU build
    cudnn: Optional[str] = None  # cuDNN it was built with: "9.19.0"
    cudnn_requirement: Optional[str] = (
        None  # its Requires-Dist on cuDNN, "nvidia-cudnn-cu13==9.19.0.56"
    )
    compute_capabilities: Tuple[str, ...] = ()  # SASS targets, "7.5", "8.0", ...
    ptx: Optional[str] = None  # highest PTX target (JIT on newer GPUs)
    is_cuda_build: Optional[bool] = None
    loads_by_path: bool = False  # preloads nvidia wheel libraries by absolute path
    library_file: Optional[str] = None  # its main native library (for RPATH/RUNPATH)
    source: str = ""  # which files answered
    arch_list: Tuple[
        str, ...
    ] = ()  # the targets its own libraries ship, as torch.cuda.get_arch_list()
    #                                         spells them ("sm_90", "sm_90a", "compute_120"); () when not read
    arch_source: Optional[str] = None  # the file they were read from (fixer.detection.fatbin)


@dataclasses.dataclass(frozen=True)
class RuntimeView:
    """What a framework reports once imported (doctor --deep, verify)."""

    framework: str
    imported: bool
    error: Optional[str] = None
    version: Optional[str] = None
    cuda_available: Optional[bool] = None
    cudnn_runtime: Optional[str] = None  # "9.19.0" as the framework reports it
    devices: Tuple[str, ...] = ()
    mapped: Tuple[str, ...] = ()  # GPU library files mapped into the process
    seconds: Optional[float] = None


@dataclasses.dataclass(frozen=True)
class ProbeNote:
    """A line of provenance: which source answered (or failed) during detection."""

    probe: str
    ok: bool
    detail: str = ""


@dataclasses.dataclass(frozen=True)
class Environment:
    """Everything detection read about the machine: what `doctor --json` writes (schema ENVIRONMENT_SCHEMA)."""

    schema: int = ENVIRONMENT_SCHEMA
    tool_version: str = ""
    gpus: Tuple[Gpu, ...] = ()
    driver: Driver = Driver()
    runtime: Runtime = Runtime()
    python: Optional[PythonEnv] = None
    frameworks: Tuple[FrameworkBuild, ...] = ()
    libraries: Tuple[LibraryCopy, ...] = ()
    loads: Tuple[LoadResolution, ...] = ()
    env: Dict[str, str] = dataclasses.field(
        default_factory=dict
    )  # LD_LIBRARY_PATH, LD_PRELOAD, CUDA_VISIBLE_DEVICES, ...
    runtime_views: Tuple[RuntimeView, ...] = ()
    probes: Tuple[ProbeNote, ...] = ()
    # entries an interrupted pip run left moved aside in site-packages or site-packages/nvidia
    # (pip's AdjacentTempDirectory names: "~" + the original name's tail)
    pip_leftovers: Tuple[str, ...] = ()

    def framework(self, name: str) -> Optional[FrameworkBuild]:
        for f in self.frameworks:
            if f.framework == name:
                return f
        return None

    def distribution(self, name: str) -> Optional[Distribution]:
        if self.python is None:
            return None
        want = canonical_name(name)
        for d in self.python.distributions:
            if d.name == want:
                return d
        return None


# ---------------------------------------------------------------------------------------
# diagnose
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Finding:
    """One thing diagnosis (or explain, or a check plugin) found, with its evidence and the fix it implies."""

    id: FindingId
    severity: Severity
    title: str  # one line a person reads
    evidence: Tuple[str, ...] = ()  # paths, versions, messages
    fix: str = ""  # the fix it implies, in words
    frameworks: Tuple[str, ...] = ()
    confidence: float = 1.0  # explain: how sure (0..1)


# ---------------------------------------------------------------------------------------
# recipes: typed facts about releases (loaded from recipes/*.toml by fixer.recipebook)
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Build:
    """One installable build of a framework: a release in one CUDA variant."""

    framework: str  # "torch"
    version: str  # public version, "2.11.0"
    variant: str  # "cu130", "cu126", "cpu", "cuda12", "and-cuda", ...
    cuda: Optional[str]  # "13.0"; None for a CPU build
    cudnn: Optional[str]  # cuDNN built with, "9.19.0"; runtime: same major, minor >= this
    python: str = ""  # PEP 440 specifier, ">=3.10"
    compute_capabilities: Tuple[str, ...] = ()  # SASS targets
    ptx: Optional[str] = None  # highest PTX (JIT-compiled for newer GPUs)
    index_url: Optional[str] = None  # None: PyPI
    packages: Tuple[str, ...] = ()  # requirement strings that install it: "torch==2.11.0+cu130"
    requires: Tuple[
        str, ...
    ] = ()  # exact GPU-library pins it declares: "nvidia-cudnn-cu13==9.19.0.56"
    companions: Tuple[str, ...] = ()  # "torchvision==0.26.0", ...
    size_bytes: Optional[int] = None  # download size of the main wheel, when known
    source: str = ""
    min_compute_capability: Optional[str] = (
        None  # lowest GPU supported where only a floor is documented (JAX, TF)
    )
    note: str = ""  # what was checked / inferred about this record (recipes)


@dataclasses.dataclass(frozen=True)
class CudnnRelease:
    """One cuDNN release: the CUDA majors and GPUs it supports and its pip and apt packages (recipes)."""

    version: str  # "9.19.0"
    cuda_majors: Tuple[int, ...]  # CUDA majors it is built for
    min_compute_capability: Optional[str] = None  # "7.5" from 9.11
    max_compute_capability: Optional[str] = None
    pip: Dict[str, str] = dataclasses.field(
        default_factory=dict
    )  # distribution -> version: {"nvidia-cudnn-cu13": "9.19.0.56"}
    apt: Dict[str, str] = dataclasses.field(default_factory=dict)  # package -> version string
    size_bytes: Optional[int] = None
    source: str = ""
    note: str = ""  # what was checked / inferred about this record (recipes)


@dataclasses.dataclass(frozen=True)
class CudaDriverFloor:
    """The lowest Linux driver for a CUDA toolkit or family (recipes/nvidia.toml)."""

    cuda: str  # "13.0" (toolkit) or "13" (family, minor-version compatibility)
    min_driver: str  # "580.65.06"
    source: str = ""
    note: str = ""  # what was checked / inferred about this record (recipes)


@dataclasses.dataclass(frozen=True)
class GpuModel:
    """One GPU model: its name, compute capability and PCI device ids (recipes)."""

    name: str  # "Tesla T4"
    compute_capability: str  # "7.5"
    pci_device_ids: Tuple[str, ...] = ()  # "0x1eb8"
    source: str = ""
    note: str = ""  # what was checked / inferred about this record (recipes)


# ---------------------------------------------------------------------------------------
# resolve / plan
# ---------------------------------------------------------------------------------------

__all__ = [
    "Intent",
    "Choice",
    "Pin",
    "EnvFix",
    "CudnnChoice",
    "Stack",
    "Need",
    "Refusal",
    "ClashKind",
    "Clash",
    "WayOut",
    "PlanOptions",
    "PipOptions",
    "Step",
    "Plan",
]


@dataclasses.dataclass(frozen=True)
class Intent:
    """What the user asked for. Empty: keep what is installed and make it work."""

    frameworks: Tuple[str, ...] = ()  # --framework (default: those installed)
    versions: Dict[str, str] = dataclasses.field(
        default_factory=dict
    )  # --torch 2.5.1 -> {"torch": "2.5.1"}
    cuda: Optional[str] = None  # --cuda 12.6
    cudnn_from: Optional[Literal["pip", "apt", "conda"]] = None
    keep: Tuple[str, ...] = ()  # --keep NAME: never change these distributions


@dataclasses.dataclass(frozen=True)
class Choice:
    """The build chosen for one framework and what it means for the machine."""

    framework: str
    build: Build
    action: Literal["keep", "install", "change"]
    reason: str = ""
    # set when the build is newer than the driver's CUDA and runs by minor-version compatibility
    # (rules.cuda_fit): the driver's CUDA, the chosen cuXXX and NVIDIA's limits, in words
    minor_version: str = ""


@dataclasses.dataclass(frozen=True)
class Pin:
    """One distribution in the target stack."""

    name: str  # "nvidia-cudnn-cu13"
    version: str  # "9.19.0.56"
    index_url: Optional[str] = None
    action: Literal["keep", "install", "upgrade", "downgrade", "remove"] = "keep"
    installed: Optional[str] = None  # version installed now
    why: str = ""  # which constraint brought it in
    size_bytes: Optional[int] = None
    hashes: Tuple[
        str, ...
    ] = ()  # "sha256:<hex>" of every file of this version (a lock's): installed
    #                                         with --require-hashes --no-deps
    manager: str = "pip"  # who installs it: "pip" (also uv), "apt" or "conda"


@dataclasses.dataclass(frozen=True)
class EnvFix:
    """A change to how libraries are found: not a package."""

    kind: Literal[
        "ld-library-path-drop",
        "ld-library-path-add",
        "ld-so-conf",
        "ipython-preload",
        "ld-preload-drop",
        "env-file",
    ]
    value: str  # the directory / path concerned: a directory for the LD_LIBRARY_PATH and
    #                                         ld-so-conf kinds, the intended libcudnn.so.N for ipython-preload,
    #                                         the forced library for ld-preload-drop, the env file's path for env-file
    why: str = ""


@dataclasses.dataclass(frozen=True)
class CudnnChoice:
    """The copy of one cuDNN major every framework of the stack maps."""

    source: str  # "pip", "apt", "conda", or the origin of a copy on disk
    package: Optional[Package] = (
        None  # nvidia-cudnn-cu12 9.3.0.75, libcudnn8 8.9.7.29-1+cuda12.2, cudnn 9.3.0.75
    )
    directory: Optional[str] = None  # where the copy is, for a copy on disk

    def __str__(self) -> str:
        return str(self.package) if self.package else (self.directory or self.source)


@dataclasses.dataclass(frozen=True)
class Stack:
    """The stack the machine should run: the builds chosen, the pins, the cuDNN copy and the loader fixes."""

    choices: Tuple[Choice, ...] = ()
    pins: Tuple[Pin, ...] = ()
    cudnn: Optional[str] = None  # the cuDNN version the stack runs on, "9.19.0"
    cudnn_from: Optional[str] = None  # "pip", "apt", "conda"
    env_fixes: Tuple[EnvFix, ...] = ()
    apt: Dict[str, str] = dataclasses.field(default_factory=dict)  # package -> exact version
    notes: Tuple[str, ...] = ()  # why, in words
    conda: Dict[str, str] = dataclasses.field(
        default_factory=dict
    )  # conda-forge package -> exact version (--cudnn-from conda)
    cudnn_runtime: Dict[str, str] = dataclasses.field(
        default_factory=dict
    )  # cuDNN major -> the version every framework maps: {"9": "9.3.0.75"}
    cudnn_copies: Dict[str, CudnnChoice] = dataclasses.field(
        default_factory=dict
    )  # cuDNN major -> the copy every framework maps


# Why no stack fits, as data (fixer.resolver finds it; fixer.render.conflicts says it in words).


@dataclasses.dataclass(frozen=True)
class Need:
    """One requirement in a clash: who asks and what, as the resolver's provider states it."""

    parent: str  # a candidate's label, "this machine", "--keep torch"
    text: str  # the constraint: "needs driver >= 580.65.06", "is 9.1.0.70"
    asked: bool = False  # it comes from what the user asked (--keep, --torch, ...)


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A candidate ruled out by one requirement of its own: `who` `text`, but `against`."""

    who: str  # "torch 2.11.0+cu130"
    text: str  # "needs driver >= 580.65.06"
    against: str  # a machine fact ("driver 570.86.15") or a candidate already chosen
    chosen: bool = False  # `against` is a candidate already chosen, not a machine fact
    hardware: bool = False  # `against` is the driver or the GPU


ClashKind = Literal[
    "no-build",  # no build of framework `subject` fits the machine (and `needs`, what was asked): `refusals`
    "no-copy",  # cuDNN major `subject`: no copy satisfies every one of `needs` (and `held`)
    "blocked",  # cuDNN major `subject`: the copies that satisfy `needs` are blocked: `refusals`, `held`
    "no-build-is",  # framework `subject`: no build meets `needs` (what was asked, what the machine has)
    "no-single-copy",  # cuDNN major `subject`: `needs` ask different copies
    "refused",  # `refusals` (one): a candidate the machine or an earlier choice rules out
    "requirements",  # identifier `subject`: `needs` cannot all hold
]


@dataclasses.dataclass(frozen=True)
class Clash:
    """One reason no stack fits (fixer.resolver), as data: fixer.render.conflicts says it in words."""

    kind: ClashKind
    subject: str = ""  # a framework ("torch"), a cuDNN major ("9"), a package name
    needs: Tuple[Need, ...] = ()  # the requirements that clash
    held: Tuple[Need, ...] = ()  # what the user holds in place that also constrains it
    refusals: Tuple[Refusal, ...] = ()  # why the candidates are ruled out


@dataclasses.dataclass(frozen=True)
class WayOut:
    """A nearest way out: drop one thing that was asked (or one framework) and the stack then fits."""

    drop: Literal["keep", "version", "cuda", "cudnn-from", "framework"]
    name: str = ""  # the --keep NAME, the framework of --torch/... or the one dropped
    value: str = ""  # the version, CUDA or cuDNN source that was asked
    changes: Tuple[
        Pin, ...
    ] = ()  # what the stack would then change (empty: nothing needs to change)


@dataclasses.dataclass(frozen=True)
class PlanOptions:
    """How the plan's commands are to be run: these change the literal argv of each step."""

    installer: Literal["auto", "pip", "uv", "conda"] = "auto"
    find_links: Tuple[str, ...] = ()  # --find-links DIR (local wheelhouse)
    no_index: bool = False  # --no-index
    index_mirrors: Tuple[
        Tuple[str, str], ...
    ] = ()  # --index-mirror FROM=TO: rewrite index URL prefixes
    root: Optional[str] = None  # --root DIR: sandbox prefix for every file the tool writes
    restart: bool = False  # --restart: restart the notebook runtime at the end


@dataclasses.dataclass(frozen=True)
class PipOptions:
    """The options of a pip/uv step as data: what its argv spells (fixer.planner.installers.pip_argv
    builds the argv from these). Apply, rollback and the simulation read these, never the argv."""

    index_url: Optional[str] = None  # as the command uses it (--index-mirror applied); None: PyPI
    extra_index_urls: Tuple[str, ...] = ()  # idem
    find_links: Tuple[str, ...] = ()
    no_index: bool = False
    no_deps: bool = False
    reinstall: bool = False  # pip --force-reinstall, uv --reinstall-package NAME
    break_system_packages: bool = False
    requirement_files: Tuple[str, ...] = ()  # -r FILE (the lock's hash-checked requirements)
    require_hashes: bool = False


@dataclasses.dataclass(frozen=True)
class Step:
    """One step of a plan: the exact command (or the file an env-fix writes) and what it touches."""

    kind: StepKind
    summary: str  # one line for people
    argv: Tuple[str, ...] = ()  # the exact command; empty for in-process env fixes
    pip: Optional[PipOptions] = None  # pip-install / pip-uninstall: the argv's options as data
    packages: Tuple[str, ...] = ()  # requirement strings it touches
    download_bytes: Optional[int] = (
        None  # known bytes of what it downloads, dependencies included (fixer.planner.simulate)
    )
    download_unknown: Tuple[
        str, ...
    ] = ()  # what it downloads whose size is not known: "nvidia-cublas==13.0.2.9"
    files: Tuple[str, ...] = ()  # files it writes
    content: Optional[str] = None  # for env-fix: what it writes


@dataclasses.dataclass(frozen=True)
class Plan:
    """The steps that make the machine's stack the chosen one, and what their simulation still shows."""

    steps: Tuple[Step, ...] = ()
    stack: Stack = Stack()
    python: str = ""  # target interpreter
    restart_required: bool = False
    findings: Tuple[Finding, ...] = ()  # what the plan fixes
    notes: Tuple[str, ...] = ()
    installer: str = "pip"  # "pip", "uv" or "conda": what the plan was made for (installers.choose)
    # The plan simulated on the Environment model (fixer.planner.simulate) and diagnosed again:
    after: Tuple[Finding, ...] = ()  # what the result would still show
    manual: Tuple[Finding, ...] = ()  # errors/warnings no step fixes: "cannot fix automatically"
    drift: Tuple[str, ...] = ()  # where the result would not be the stack the plan chose

    @property
    def is_fix(self) -> bool:
        """The simulated result is healthy and is the stack the plan chose."""
        return not self.manual and not self.drift

    @property
    def nothing_to_do(self) -> bool:
        return not any(s.kind not in ("verify",) for s in self.steps)

    @property
    def download(self) -> Tuple[int, Tuple[str, ...]]:
        """(known bytes, what else comes down at a size nobody recorded) over all steps."""
        return (
            sum(s.download_bytes or 0 for s in self.steps),
            tuple(u for s in self.steps for u in s.download_unknown),
        )


#: How a download of a step's dependencies is labelled in Step.download_unknown
#: (fixer.planner.simulate writes it; fixer.render.plan counts those apart).
DEPENDENCIES_OF = "dependencies of "


@dataclasses.dataclass(frozen=True)
class PlannedMachine:
    """A plan together with the machine and the settings it was made for (fixer.pipeline)."""

    plan: Plan
    env: Environment
    intent: Intent
    options: PlanOptions
    where: str  # "this machine", "bundled environment 'x'", a file
    recipe_dirs: Tuple[str, ...] = ()
    recipe_files: int = 0


# ---------------------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """What verify found for one framework: the status, the conv cases, the cuDNN it mapped, the times."""

    framework: str
    status: CheckStatus
    summary: str = ""
    findings: Tuple[Finding, ...] = ()
    cudnn_loaded: Optional[str] = None  # version actually mapped
    cudnn_built: Optional[str] = None
    mapped: Tuple[str, ...] = ()  # cuDNN files mapped into the child
    cases: Tuple[
        Dict[str, Any], ...
    ] = ()  # one per conv case: shape, dtype, max error, tolerance, ok
    first_seconds: Optional[float] = None
    steady_seconds: Optional[float] = None
    seconds: Optional[float] = None  # whole child, import included
    output: str = ""  # tail of the child's output when it failed
    version: Optional[str] = None  # framework version the child imported
    device: Optional[str] = None  # GPU the child ran on, "NVIDIA H200"
    compute_capability: Optional[str] = None  # of that GPU, "9.0"
    import_seconds: Optional[float] = (
        None  # framework import alone (verify's own cost = seconds - this)
    )
    signal: Optional[str] = None  # "SIGSEGV" when the child was killed by a signal
    errors: Tuple[str, ...] = ()  # error messages the child caught, "stage: Type: message"
    # Where the child's wall time went, in seconds: startup (interpreter start, before the child
    # script runs), import, gpu_init, first_conv (algorithm search / XLA compile), checks (every
    # other case, references, library checks), exit (after the last record). Absent when unknown.
    phases: Dict[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class ColabImage:
    """One Colab GPU runtime image as recorded by googlecolab/backend-info."""

    date: str  # "2026-08-19"
    commit: str  # "a724079"
    release: Optional[str] = None  # "2026.07" when the README names it
    python: Optional[str] = None
    torch: Optional[str] = None  # "2.11.0+cu130"
    tensorflow: Optional[str] = None
    jax: Optional[str] = None
    pip_cudnn: Optional[str] = None  # "nvidia-cudnn-cu12==9.10.2.21"
    apt_cudnn: Optional[str] = None  # "libcudnn9-cuda-12=9.8.0.87-1"
    cuda: Optional[str] = None  # apt CUDA toolkit/libraries version
    source: str = ""
    note: str = ""  # e.g. how long this image state lasted (recipes)


@dataclasses.dataclass(frozen=True)
class DownloadSize:
    """Bytes of the file pip downloads for distribution==version on Linux x86_64 (the index's
    PEP 691 `size`); prices plan steps and the resolver's "download the fewest bytes"."""

    distribution: str  # canonical name: "nvidia-cudnn-cu13"
    version: str  # "9.19.0.56"
    bytes: int
    file: str = ""  # the wheel it was read from
    source: str = ""
    note: str = ""


@dataclasses.dataclass(frozen=True)
class DependencySet:
    """What installing one package brings along, read from the package's own metadata or
    recipe (recipes/dependencies.toml): the one home of "which dependencies an install pulls in"
    for pip, apt and conda alike (fixer.planner.simulate installs and prices them)."""

    manager: str  # "pip", "conda" or "apt"
    package: str  # "jax[cuda12]", "jax-cuda12-pjrt", "cudnn" (extras as installed)
    versions: str  # PEP 440 specifier of the versions it holds for: ">=0.4.30,<0.6.1"
    # dependencies the model installs: "NAME=={version}" (the same version as `package`) or a bare
    # "NAME" (the version the framework build's companions pin: jax[cuda12]'s jaxlib and plugin)
    brings: Tuple[str, ...] = ()
    others: Tuple[
        str, ...
    ] = ()  # further dependencies by name, at versions the recipes do not hold
    complete: bool = False  # brings + others (+ the build's `requires`) is the whole list
    source: str = ""
    note: str = ""


@dataclasses.dataclass(frozen=True)
class Recipes:
    """Every fact about releases the resolver and diagnosis use. Built by fixer.recipebook.load()
    from recipes/*.toml, or directly in tests. Pure queries, no I/O."""

    builds: Tuple[Build, ...] = ()
    cudnn: Tuple[CudnnRelease, ...] = ()
    driver_floors: Tuple[CudaDriverFloor, ...] = ()
    gpus: Tuple[GpuModel, ...] = ()
    colab_images: Tuple[ColabImage, ...] = ()
    downloads: Tuple[DownloadSize, ...] = ()
    dependencies: Tuple[DependencySet, ...] = ()
    files: Tuple[str, ...] = ()  # the files they came from

    def dependencies_of(self, manager: str, package: str, version: str) -> Optional[DependencySet]:
        """What installing `package` ("jax[cuda12]", "cudnn") at `version` brings, when a recorded
        source says; None when the recipes do not know."""
        from packaging.specifiers import InvalidSpecifier, SpecifierSet
        from packaging.version import InvalidVersion, Version

        try:
            v = Version(version)
        except InvalidVersion:
            return None
        want = package.lower()
        for d in self.dependencies:
            if d.manager != manager or d.package.lower() != want:
                continue
            try:
                if SpecifierSet(d.versions).contains(v, prereleases=True):
                    return d
            except InvalidSpecifier:
                continue
        return None

    def download_size(self, distribution: str, version: str) -> Optional[int]:
        """Bytes pip downloads for distribution==version, when the recipes know it: its
        [[download]] record, else the size a build row gives for its main wheel (a cuDNN
        release's, for its pip wheel). The one home
        of "how big is this wheel" (the plan prices its steps with it, fixer.planner.simulate)."""
        name = canonical_name(distribution)
        for d in self.downloads:
            if d.distribution == name and d.version == version:
                return d.bytes
        for b in self.builds:
            if b.size_bytes and b.packages and split_requirement(b.packages[0]) == (name, version):
                return b.size_bytes
        for r in self.cudnn:
            if r.size_bytes and r.pip.get(name) == version:
                return r.size_bytes
        return None

    def builds_for(self, framework: str, version: Optional[str] = None) -> Tuple[Build, ...]:
        """Builds of a framework, newest version first; `version` filters on the public version
        (a prefix like "2.5" matches 2.5.x)."""
        out = [b for b in self.builds if b.framework == framework]
        if version:
            out = [b for b in out if b.version == version or b.version.startswith(version + ".")]
        return tuple(sorted(out, key=lambda b: version_key(b.version), reverse=True))

    def min_driver(self, cuda: str) -> Optional[str]:
        """Lowest Linux driver that runs code built with CUDA `cuda` ("12.6"): the family floor
        of minor-version compatibility and the toolkit's own (GA) row, whichever is lower (CUDA
        11.0 shipped with 450.51.05, below the 11.x family's 450.80.02)."""
        major = cuda.split(".")[0]
        rows = [f.min_driver for f in self.driver_floors if f.cuda in (major, cuda)]
        return min(rows, key=version_key) if rows else None

    def cudnn_release(self, version: str) -> Optional[CudnnRelease]:
        """The cuDNN release `version` ("9.19.0" or "9.19.0.56"), matched on major.minor.patch."""
        want = version_key(version)[:3]
        for r in self.cudnn:
            if version_key(r.version)[:3] == want:
                return r
        return None

    def gpu_by_pci(self, device_id: str) -> Optional[GpuModel]:
        want = device_id.lower()
        if len(want) > 6 and want.endswith("10de"):  # nvidia-smi's 0x233510DE form
            want = want[:-4]
        for g in self.gpus:
            if want in (p.lower() for p in g.pci_device_ids):
                return g
        return None

    def gpu_by_name(self, name: str) -> Optional[GpuModel]:
        norm = name.lower().replace("nvidia", "").strip()
        for g in self.gpus:
            if g.name.lower().replace("nvidia", "").strip() == norm:
                return g
        return None


# ---------------------------------------------------------------------------------------
# apply and rollback: their JSON's version, how a command ended, and the hooks they report
# progress to (what they return is fixer.applier.results')
# ---------------------------------------------------------------------------------------

#: Version of the JSON that `apply --json` and `rollback --json` write.
APPLY_SCHEMA = 1


@dataclasses.dataclass(frozen=True)
class CommandResult:
    """How one command of a step ended (fixer.applier.runner runs it)."""

    rc: int
    output: str = ""  # the tail of stdout+stderr
    seconds: float = 0.0
    timed_out: bool = False


class Reporter:
    """The progress hooks of apply and rollback: a base class with no-op hooks; subclass and
    override what you need (fixer.applier.reporter logs, fixer.render.apply draws)."""

    def starting(self, plan: Plan) -> None:
        """`plan` is about to run (its download total: `plan.download`)."""

    def phase(self, text: str) -> None:
        """A stage of the transaction: journaling, backing up, rolling back, verifying."""

    def step_started(self, index: int, total: int, step: Step) -> None:
        """Step `index` (1-based) of `total` is about to run."""

    def step_output(self, index: int, line: str) -> None:
        """One line printed by the step's command."""

    def step_finished(self, index: int, step: Step, result: CommandResult) -> None:
        """The step ended (rc 0 or not)."""

    def note(self, text: str) -> None:
        """Something a person should read (a skipped action, a restart notice)."""

    def checking(self, frameworks: Sequence[str]) -> None:
        """The check after apply runs these frameworks' GPU checks now; () when they ended."""

    def watching(self, index: int, watch: Any) -> None:
        """Step `index`'s command runs now; `watch.snapshot(time.monotonic())` says where it
        stands (fixer.applier.progress.InstallWatch: bytes, rate, time left, silence) until the
        step finishes."""
