"""The values of resolve and plan (Intent ... Plan), part of fixer.model.

They are the public `fixer.model.Intent`, `fixer.model.Plan`, ...: fixer.model imports this
module on first use of one of them, so that `doctor`, which never plans, does not pay for
creating these classes at start-up (each frozen dataclass costs about a millisecond to create).
Import them from fixer.model, never from here.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, Literal, Optional, Tuple

from .model import Build, Finding, Package, StepKind

__all__ = ["Intent", "Choice", "Pin", "EnvFix", "CudnnChoice", "Stack", "Need", "Refusal", "ClashKind", "Clash", "WayOut", "PlanOptions", "PipOptions", "Step", "Plan"]


@dataclasses.dataclass(frozen=True)
class Intent:
    """What the user asked for. Empty: keep what is installed and make it work."""

    frameworks: Tuple[str, ...] = ()        # --framework (default: those installed)
    versions: Dict[str, str] = dataclasses.field(default_factory=dict)  # --torch 2.5.1 -> {"torch": "2.5.1"}
    cuda: Optional[str] = None              # --cuda 12.6
    cudnn_from: Optional[Literal["pip", "apt", "conda"]] = None
    keep: Tuple[str, ...] = ()              # --keep NAME: never change these distributions


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

    name: str                               # "nvidia-cudnn-cu13"
    version: str                            # "9.19.0.56"
    index_url: Optional[str] = None
    action: Literal["keep", "install", "upgrade", "downgrade", "remove"] = "keep"
    installed: Optional[str] = None         # version installed now
    why: str = ""                           # which constraint brought it in
    size_bytes: Optional[int] = None
    hashes: Tuple[str, ...] = ()            # "sha256:<hex>" of every file of this version (a lock's): installed
    #                                         with --require-hashes --no-deps
    manager: str = "pip"                    # who installs it: "pip" (also uv), "apt" or "conda"


@dataclasses.dataclass(frozen=True)
class EnvFix:
    """A change to how libraries are found: not a package."""

    kind: Literal["ld-library-path-drop", "ld-library-path-add", "ld-so-conf", "ipython-preload", "ld-preload-drop", "env-file"]
    value: str                              # the directory / path concerned: a directory for the LD_LIBRARY_PATH and
    #                                         ld-so-conf kinds, the intended libcudnn.so.N for ipython-preload,
    #                                         the forced library for ld-preload-drop, the env file's path for env-file
    why: str = ""


@dataclasses.dataclass(frozen=True)
class CudnnChoice:
    """The copy of one cuDNN major every framework of the stack maps."""

    source: str                             # "pip", "apt", "conda", or the origin of a copy on disk
    package: Optional[Package] = None       # nvidia-cudnn-cu12 9.3.0.75, libcudnn8 8.9.7.29-1+cuda12.2, cudnn 9.3.0.75
    directory: Optional[str] = None         # where the copy is, for a copy on disk

    def __str__(self) -> str:
        return str(self.package) if self.package else (self.directory or self.source)


@dataclasses.dataclass(frozen=True)
class Stack:
    """The stack the machine should run: the builds chosen, the pins, the cuDNN copy and the loader fixes."""

    choices: Tuple[Choice, ...] = ()
    pins: Tuple[Pin, ...] = ()
    cudnn: Optional[str] = None             # the cuDNN version the stack runs on, "9.19.0"
    cudnn_from: Optional[str] = None        # "pip", "apt", "conda"
    env_fixes: Tuple[EnvFix, ...] = ()
    apt: Dict[str, str] = dataclasses.field(default_factory=dict)  # package -> exact version
    notes: Tuple[str, ...] = ()             # why, in words
    conda: Dict[str, str] = dataclasses.field(default_factory=dict)  # conda-forge package -> exact version (--cudnn-from conda)
    cudnn_runtime: Dict[str, str] = dataclasses.field(default_factory=dict)  # cuDNN major -> the version every framework maps: {"9": "9.3.0.75"}
    cudnn_copies: Dict[str, CudnnChoice] = dataclasses.field(default_factory=dict)  # cuDNN major -> the copy every framework maps


# Why no stack fits, as data (fixer.resolver finds it; fixer.render.conflicts says it in words).


@dataclasses.dataclass(frozen=True)
class Need:
    """One requirement in a clash: who asks and what, as the resolver's provider states it."""

    parent: str                             # a candidate's label, "this machine", "--keep torch"
    text: str                               # the constraint: "needs driver >= 580.65.06", "is 9.1.0.70"
    asked: bool = False                     # it comes from what the user asked (--keep, --torch, ...)


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A candidate ruled out by one requirement of its own: `who` `text`, but `against`."""

    who: str                                # "torch 2.11.0+cu130"
    text: str                               # "needs driver >= 580.65.06"
    against: str                            # a machine fact ("driver 570.86.15") or a candidate already chosen
    chosen: bool = False                    # `against` is a candidate already chosen, not a machine fact
    hardware: bool = False                  # `against` is the driver or the GPU


ClashKind = Literal[
    "no-build",         # no build of framework `subject` fits the machine (and `needs`, what was asked): `refusals`
    "no-copy",          # cuDNN major `subject`: no copy satisfies every one of `needs` (and `held`)
    "blocked",          # cuDNN major `subject`: the copies that satisfy `needs` are blocked: `refusals`, `held`
    "no-build-is",      # framework `subject`: no build meets `needs` (what was asked, what the machine has)
    "no-single-copy",   # cuDNN major `subject`: `needs` ask different copies
    "refused",          # `refusals` (one): a candidate the machine or an earlier choice rules out
    "requirements",     # identifier `subject`: `needs` cannot all hold
]


@dataclasses.dataclass(frozen=True)
class Clash:
    """One reason no stack fits (fixer.resolver), as data: fixer.render.conflicts says it in words."""

    kind: ClashKind
    subject: str = ""                       # a framework ("torch"), a cuDNN major ("9"), a package name
    needs: Tuple[Need, ...] = ()            # the requirements that clash
    held: Tuple[Need, ...] = ()             # what the user holds in place that also constrains it
    refusals: Tuple[Refusal, ...] = ()      # why the candidates are ruled out


@dataclasses.dataclass(frozen=True)
class WayOut:
    """A nearest way out: drop one thing that was asked (or one framework) and the stack then fits."""

    drop: Literal["keep", "version", "cuda", "cudnn-from", "framework"]
    name: str = ""                          # the --keep NAME, the framework of --torch/... or the one dropped
    value: str = ""                         # the version, CUDA or cuDNN source that was asked
    changes: Tuple[Pin, ...] = ()           # what the stack would then change (empty: nothing needs to change)


@dataclasses.dataclass(frozen=True)
class PlanOptions:
    """How the plan's commands are to be run: these change the literal argv of each step."""

    installer: Literal["auto", "pip", "uv", "conda"] = "auto"
    find_links: Tuple[str, ...] = ()        # --find-links DIR (local wheelhouse)
    no_index: bool = False                  # --no-index
    index_mirrors: Tuple[Tuple[str, str], ...] = ()  # --index-mirror FROM=TO: rewrite index URL prefixes
    root: Optional[str] = None              # --root DIR: sandbox prefix for every file the tool writes
    restart: bool = False                   # --restart: restart the notebook runtime at the end


@dataclasses.dataclass(frozen=True)
class PipOptions:
    """The options of a pip/uv step as data: what its argv spells (fixer.installers.pip_argv
    builds the argv from these). Apply, rollback and the simulation read these, never the argv."""

    index_url: Optional[str] = None         # as the command uses it (--index-mirror applied); None: PyPI
    extra_index_urls: Tuple[str, ...] = ()  # idem
    find_links: Tuple[str, ...] = ()
    no_index: bool = False
    no_deps: bool = False
    reinstall: bool = False                 # pip --force-reinstall, uv --reinstall
    break_system_packages: bool = False
    requirement_files: Tuple[str, ...] = ()  # -r FILE (the lock's hash-checked requirements)
    require_hashes: bool = False


@dataclasses.dataclass(frozen=True)
class Step:
    """One step of a plan: the exact command (or the file an env-fix writes) and what it touches."""

    kind: StepKind
    summary: str                            # one line for people
    argv: Tuple[str, ...] = ()              # the exact command; empty for in-process env fixes
    pip: Optional[PipOptions] = None        # pip-install / pip-uninstall: the argv's options as data
    packages: Tuple[str, ...] = ()          # requirement strings it touches
    download_bytes: Optional[int] = None    # known bytes of what it downloads, dependencies included (fixer.simulate)
    download_unknown: Tuple[str, ...] = ()  # what it downloads whose size is not known: "nvidia-cublas==13.0.2.9"
    files: Tuple[str, ...] = ()             # files it writes
    content: Optional[str] = None           # for env-fix: what it writes


@dataclasses.dataclass(frozen=True)
class Plan:
    """The steps that make the machine's stack the chosen one, and what their simulation still shows."""

    steps: Tuple[Step, ...] = ()
    stack: Stack = Stack()
    python: str = ""                        # target interpreter
    restart_required: bool = False
    findings: Tuple[Finding, ...] = ()      # what the plan fixes
    notes: Tuple[str, ...] = ()
    installer: str = "pip"                  # "pip", "uv" or "conda": what the plan was made for (installers.choose)
    # The plan simulated on the Environment model (fixer.simulate) and diagnosed again:
    after: Tuple[Finding, ...] = ()         # what the result would still show
    manual: Tuple[Finding, ...] = ()        # errors/warnings no step fixes: "cannot fix automatically"
    drift: Tuple[str, ...] = ()             # where the result would not be the stack the plan chose

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
        return (sum(s.download_bytes or 0 for s in self.steps),
                tuple(u for s in self.steps for u in s.download_unknown))
