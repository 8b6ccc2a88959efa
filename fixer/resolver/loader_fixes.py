"""Loader fixes: which environment changes make every framework map the chosen cuDNN (and
its own CUDA libraries), reasoned over the loader's search order as detect walked it.
The fixes are EnvFix values; fixer.planner.envfix turns them into the files a plan writes.
"""

from __future__ import annotations

import os.path as op
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Set, Tuple

from fixer.model import EnvFix, Environment, LoadResolution
from fixer.rules import (
    conda_lib_dir,
    cudnn_preloads,
    foreign_cudnn_preloads,
    lent_cudnn_sublibraries,
    older_cuda_libraries,
    same_dir,
)

if TYPE_CHECKING:
    from fixer.resolver.provider import CudnnCandidate, Ident, StackProvider


def env_fixes(
    env: Environment, provider: StackProvider, mapping: Mapping[Ident, Any]
) -> List[EnvFix]:
    """Loader fixes so that every framework maps the chosen cuDNN: drop an LD_LIBRARY_PATH
    entry that puts another copy first; in a notebook (the kernel's environment cannot change
    after start) preload the chosen copy by absolute path; add an ld.so.conf entry when a
    consumer only searches the default paths and the chosen copy is not on them."""
    fixes: List[EnvFix] = []
    notebook = env.runtime.kind in ("colab", "kaggle") or env.runtime.in_notebook_kernel
    chosen = [cand for ident, cand in mapping.items() if ident.kind == "cudnn"]
    for c in chosen:
        fixes += _consumer_fixes(env, provider, c, notebook)
    # --framework limits the fixes to the loads of those frameworks; without it, every load
    wanted = set(provider.frameworks) if provider.intent.frameworks else None
    fixes += cuda_lib_fixes(env, notebook, wanted)
    for c in chosen:
        fixes += _stray_preload_fixes(env, c)
    fixes += _foreign_fixes(env, notebook, wanted)
    uniq: Dict[Tuple[str, str], EnvFix] = {}
    for fx in fixes:
        uniq.setdefault((fx.kind, fx.value), fx)
    return list(uniq.values())


def _consumer_fixes(
    env: Environment, provider: StackProvider, c: CudnnCandidate, notebook: bool
) -> List[EnvFix]:
    """For each framework that would map another copy of this major than the chosen one: drop
    the LD_LIBRARY_PATH or LD_PRELOAD entry that leads it there, or point the loader at the
    chosen copy; in a notebook also preload the chosen copy in new kernels."""
    fixes: List[EnvFix] = []
    target = c.directory or default_dir(env, c)
    if not target:
        return fixes
    for ld in provider._consumers(c.major):
        if ld.directory == target:
            continue
        if ld.via == "LD_LIBRARY_PATH" and ld.directory:
            fixes.append(
                EnvFix(
                    "ld-library-path-drop",
                    ld.directory,
                    why=f"LD_LIBRARY_PATH puts {ld.directory} (cuDNN {ld.version or '?'}) ahead of "
                    f"{target} for {ld.consumer}",
                )
            )
        elif ld.via in ("LD_PRELOAD",) and ld.path:
            fixes.append(
                EnvFix(
                    "ld-preload-drop",
                    ld.path,
                    why=f"LD_PRELOAD forces {ld.path} into {ld.consumer}: drop it",
                )
            )
        elif c.source != "apt" and ld.search and not reaches(ld, target):
            fixes.append(
                EnvFix(
                    "ld-so-conf", target, why=f"{ld.consumer} does not look in {target} by itself"
                )
            )
        if notebook and (ld.via in ("LD_LIBRARY_PATH", "LD_PRELOAD") or c.source == "conda"):
            fixes.append(
                EnvFix(
                    "ipython-preload",
                    f"{target}/libcudnn.so.{c.major}",
                    why=f"the notebook kernel keeps its LD_LIBRARY_PATH: preload "
                    f"{target}/libcudnn.so.{c.major} before {ld.consumer} is imported",
                )
            )
    return fixes


def _stray_preload_fixes(env: Environment, c: CudnnCandidate) -> List[EnvFix]:
    """A cuDNN library LD_PRELOAD forces in from another copy than the chosen one mixes with it
    in every process, whether or not a framework loads cuDNN yet (a CPU torch about to become a
    CUDA one)."""
    target = c.directory or default_dir(env, c)
    return [
        EnvFix(
            "ld-preload-drop",
            p,
            why=f"LD_PRELOAD forces {p} in, another cuDNN than the chosen {target}: drop it",
        )
        for p in cudnn_preloads(env, c.major)
        if target and same_dir(op.dirname(p)) != same_dir(target)
    ]


def _foreign_fixes(
    env: Environment, notebook: bool, wanted: Optional[Set[str]] = None
) -> List[EnvFix]:
    """cuDNN sub-libraries of another copy that LD_PRELOAD forces in, or LD_LIBRARY_PATH lends,
    to frameworks that load another cuDNN copy (of those `wanted`, when given)."""
    fixes: List[EnvFix] = []
    for path, _copy, mixes in foreign_cudnn_preloads(env):
        mixes = [ld for ld in mixes if wanted is None or ld.consumer in wanted]
        if not mixes:
            continue
        fixes.append(
            EnvFix(
                "ld-preload-drop",
                path,
                why=f"LD_PRELOAD forces {path} into {', '.join(sorted({ld.consumer for ld in mixes}))}, "
                f"which load another cuDNN copy: drop it",
            )
        )
    for lender, subs, mixes in lent_cudnn_sublibraries(env):
        mixes = [ld for ld in mixes if wanted is None or ld.consumer in wanted]
        if not mixes:
            continue
        fixes.append(
            EnvFix(
                "ld-library-path-drop",
                lender.directory,
                why=f"LD_LIBRARY_PATH lends {', '.join(subs)} from {lender.directory} to "
                f"{', '.join(sorted({ld.consumer for ld in mixes}))}, which load another cuDNN copy",
            )
        )
        if notebook:
            fixes += [
                EnvFix(
                    "ipython-preload",
                    ld.path,
                    why=f"the notebook kernel keeps its LD_LIBRARY_PATH: preload {ld.path} "
                    f"before {ld.consumer} is imported",
                )
                for ld in mixes
                if ld.path
            ]
    return fixes


def cuda_lib_fixes(
    env: Environment, notebook: bool, wanted: Optional[Set[str]] = None
) -> List[EnvFix]:
    """A CUDA library older than the framework's build that wins over the framework's own copy
    (diagnosis: cuda-lib-mismatch) through LD_LIBRARY_PATH or LD_PRELOAD: drop that entry; in a
    notebook also preload the framework's own copy by path in new kernels."""
    fixes: List[EnvFix] = []
    for ld in older_cuda_libraries(env):
        if not ld.intended or (wanted is not None and ld.consumer not in wanted):
            continue
        fw = env.framework(ld.consumer)
        why = f"{ld.path} ({ld.library} {ld.version}) is older than the CUDA {fw.cuda if fw else '?'} {ld.consumer} was built with"
        if ld.via == "LD_LIBRARY_PATH" and ld.directory:
            fixes.append(
                EnvFix("ld-library-path-drop", ld.directory, why=f"LD_LIBRARY_PATH: {why}")
            )
        elif ld.via == "LD_PRELOAD" and ld.path:
            fixes.append(EnvFix("ld-preload-drop", ld.path, why=f"LD_PRELOAD: {why}"))
        else:
            continue
        if notebook:
            fixes.append(
                EnvFix(
                    "ipython-preload",
                    ld.intended,
                    why=f"the notebook kernel keeps its LD_LIBRARY_PATH: preload {ld.intended} "
                    f"before {ld.consumer} is imported",
                )
            )
    return fixes


def searched_dirs(ld: LoadResolution) -> List[str]:
    """The directories a consumer's search order visits (LoadResolution.search, as detect
    recorded it), and the directory of the copy it points at itself."""
    out = [s.directory for s in ld.search]
    if ld.intended:
        out.append(op.dirname(ld.intended))
    return [op.normpath(d) for d in out]


def reaches(ld: LoadResolution, target: str) -> bool:
    t = op.normpath(target)
    return any(d == t for d in searched_dirs(ld))


def default_dir(env: Environment, c: CudnnCandidate) -> Optional[str]:
    if c.source == "pip":
        sp = env.python.site_packages[0] if env.python and env.python.site_packages else None
        return f"{sp}/nvidia/cudnn/lib" if sp else None
    if c.source == "apt":
        return "/usr/lib/x86_64-linux-gnu"
    if c.source == "conda":
        return conda_lib_dir(env)
    return None
