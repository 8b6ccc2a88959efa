"""What a journal's steps may run when `apply --resume` picks them up: exactly the command the
planner's builders (fixer.planner.installers, the one place that builds installer command lines)
write for the step's own recorded inputs, and nothing else.

A journal is input (fixer.applier.journal): one written by another hand could hold any step. A
resumed step runs only when its argv equals the rebuild from what the step records as data (its
kind, packages, Step.pip, files) and from the apply's target interpreter and installer (the
journal's "python" and "installer"):

    pip-install     installers.pip_argv(target, packages, Step.pip, installer, uv)
                    (no requirements on the command line when Step.pip names a requirements
                    file: the lock's hashed install, fixer.planner.steps); each index URL by
                    grammar.index_url (https, file, or http to this machine), each
                    find-links place by grammar.find_link
    pip-uninstall   installers.pip_uninstall(target, packages, installer, --break-system-packages)
    apt-update      installers.apt_update()
    apt-install     installers.apt_install({name: version} of packages "name=version")
    apt-hold        installers.apt_hold(packages)
    conda-install   condacolab's step: installers.condacolab_install(target); otherwise
                    installers.conda_install(packages, conda=..., prefix=...)
    env-fix         () or the tool's ldconfig (fixer.applier.envfix.LDCONFIG), the latter only for a
                    step that writes an ld.so.conf.d file (fixer.planner.envfix._ld_so_conf_step)
    restart, cleanup  no command
    verify          ("colab-cudnn-fix", "verify", "--python", target) or none

Where conda differs: the planner takes the conda binary and its prefix from detection of the
machine at plan time (fixer.planner.conda.conda_binary, fixer.rules.conda_prefix), and on Colab
the condacolab prefix does not exist until the kernel restarted, so resume cannot ask detection
again for the same answer. The binary and prefix are therefore checked against the closed set of
answers the planner can give (`_conda_places`): condacolab's PREFIX (under --root when there is
one), the target's own prefix, and the conda that CONDA_EXE or PATH names (the probe's rule,
fixer/children/probe.py). The uv binary is the one detection finds now (`_uv_binary`: the
target's bin folder's, else PATH's, else plain `uv`). The channel is the builder's (conda-forge), never the journal's.

Under --root, apt steps are refused outright and a conda step runs only where the folders of
every path it names lie inside the sandbox (`root_refusal`, the rule apply asks too:
fixer.pipeline.apply_refusal). Anything else: UsageError (exit 2), one line naming the journal,
the step and what differs; nothing of the resume runs.
"""

from __future__ import annotations

import os
import shutil
from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from fixer.applier import envfix
from fixer.applier.prepare import unrooted
from fixer.errors import FixerError, UsageError
from fixer.model import Step, from_dict
from fixer.planner import installers
from fixer.planner.conda import CONDACOLAB_DIST
from fixer.rules import CONDACOLAB_PREFIX
from fixer.system import fsgate, grammar
from fixer.system.paths import under_root

Argv = Tuple[str, ...]

#: The binaries the planner may name for conda (fixer/children/probe.py: CONDA_EXE, then conda,
#: mamba, micromamba on PATH).
CONDA_NAMES = ("conda", "mamba", "micromamba")


def resume_steps(records: Sequence[Any], where: str) -> List[Step]:
    """The journal's resume steps as Steps; UsageError (exit 2, one line naming the field) when a
    record is not one."""
    steps = []
    for i, d in enumerate(records):
        try:
            steps.append(from_dict(Step, d, f"$.resume.steps[{i}]"))
        except (ValueError, TypeError) as exc:
            raise UsageError(f"journal {where}: {exc}; nothing was run") from None
    return steps


def resume_refusal(
    steps: Sequence[Step],
    *,
    start: int,
    python: str,
    installer: str,
    prefix: str,
    root: Optional[str],
    where: str,
    found: Optional[Sequence[str]] = None,
) -> Optional[FixerError]:
    """The refusal of a resume that would run `steps[start:]` on the interpreter `python`
    (its sys.prefix `prefix`) with the plan's `installer`, or None when every step is the
    planner's own. One line, exit 2. `found`: the uv and conda binaries detection finds for the
    target now (`found_binaries` when not given)."""
    refused = root_refusal(root, steps[start:], resume=True)
    if refused is not None:
        return refused
    for i, step in enumerate(steps[start:], start + 1):
        why = foreign(
            step, python=python, installer=installer, prefix=prefix, root=root, found=found
        )
        if why is not None:
            return UsageError(
                f"journal {where}: step {i} ({step.kind}): {why}; the planner never writes that "
                "command, so nothing was run",
                hint="`colab-cudnn-fix rollback` undoes the part already done",
            )
    return None


#: Steps that change the machine outside any prefix the tool can confine (the package manager's
#: own database and the conda installation): refused with --root.
SYSTEM_STEPS = ("apt-update", "apt-install", "apt-hold", "conda-install")


def root_refusal(
    root: Optional[str], steps: Sequence[Step], *, resume: bool = False
) -> Optional[FixerError]:
    """The one --root rule for a plan's steps (fixer.pipeline.apply_refusal asks it for the dry
    run and apply) and for a journal's remaining steps (`resume`, apply --resume): apt steps
    change the host's dpkg database wherever they run, so they are refused in both. Conda
    differs: a plan's conda steps are refused too (condacolab's install runs in the notebook
    kernel and conda installs into the machine's prefix), while a resumed journal reaches its
    conda step only after condacolab installed conda (a stage-level apply in the sandbox, as the
    condacolab tests do), so there a conda step runs when the folders of every absolute path it
    names lie inside the sandbox (fsgate.outside_root) and refused otherwise."""
    if root is None:
        return None
    system = sorted({s.kind for s in steps if s.kind in SYSTEM_STEPS})
    apt = [k for k in system if k.startswith("apt-")]
    if not resume and system:
        return UsageError(
            f"--root {root}: the plan has {', '.join(system)} steps, which change the machine "
            "outside the sandbox; --root confines only the tool's own files"
        )
    if apt:
        return UsageError(
            f"--root {root}: the journal's remaining steps include {apt[0]}, which changes "
            "the machine outside the sandbox; --root confines only the tool's own files"
        )
    for step in steps:
        if step.kind == "conda-install":
            # the folder of each path it names: a venv's python is a link out of its folder
            places = [
                ("the conda step's path", os.path.dirname(a)) for a in step.argv if a[:1] == "/"
            ]
            refused = fsgate.outside_root(root, places)
            if refused is not None:
                return refused
    return None


def foreign(
    step: Step,
    *,
    python: str,
    installer: str,
    prefix: str,
    root: Optional[str],
    found: Optional[Sequence[str]] = None,
) -> Optional[str]:
    """Why `step`'s argv is not what the planner's builders write for its recorded inputs, in
    words, or None when it is exactly that."""
    try:
        expected = expected_argv(
            step, python=python, installer=installer, prefix=prefix, root=root, found=found
        )
    except (FixerError, ValueError) as exc:
        message = exc.message if isinstance(exc, FixerError) else str(exc)
        return message.replace("; nothing was run", "")
    if isinstance(expected, str):
        return expected
    if tuple(step.argv) not in expected:
        return f"its command {_show(step.argv)} is not {_show(expected[0])}"
    return None


def expected_argv(
    step: Step,
    *,
    python: str,
    installer: str,
    prefix: str,
    root: Optional[str],
    found: Optional[Sequence[str]] = None,
) -> "Tuple[Argv, ...] | str":
    """The commands the planner writes for `step`'s recorded inputs (any of them is the
    planner's), or a reason why none can be."""
    tools = list(found_binaries(python) if found is None else found)
    kind = step.kind
    python = _same_interpreter(step, python)
    if kind in ("pip-install", "pip-uninstall"):
        return _pip_argv(step, python, installer_tool(installer), tools)
    if kind == "apt-update":
        return (installers.apt_update(),)
    if kind == "apt-install":
        return (installers.apt_install(_apt_versions(step.packages)),)
    if kind == "apt-hold":
        return (installers.apt_hold(list(step.packages)),)
    if kind == "conda-install":
        return _conda_argv(step, python, prefix, root, tools)
    if kind == "env-fix":
        return _env_fix_argv(step, root)
    if kind == "verify":
        return ((), ("colab-cudnn-fix", "verify", "--python", python))
    if kind in ("restart", "cleanup"):
        return ((),)
    return f"unknown step kind {kind!r:.40}"


def installer_tool(installer: str) -> str:
    return installers.pip_tool(installer)


def _same_interpreter(step: Step, python: str) -> str:
    """The interpreter word of the step's argv (`PY -m pip`, `uv pip ... --python PY`,
    condacolab's `PY -c`) when it names the same file as the target `python` (another spelling
    of the one path: `apply --resume --python` given differently), else `python`. Compared as
    paths, never through symlinks: a venv's python is a link to the base interpreter, which run
    by its own path is another environment."""
    argv = list(step.argv)
    named = None
    if argv[1:3] in (["-m", "pip"], ["-c", installers.condacolab_install("")[2]]):
        named = argv[0]
    elif "--python" in argv[:-1]:
        named = argv[argv.index("--python") + 1]
    if named is None or named == python:
        return python
    same = os.path.normpath(os.path.abspath(named)) == os.path.normpath(os.path.abspath(python))
    return named if same else python


def _pip_argv(step: Step, python: str, tool: str, found: Sequence[str]) -> "Tuple[Argv, ...] | str":
    opts = step.pip
    if opts is None:
        return "it records no pip options (Step.pip)"
    for url in (opts.index_url, *opts.extra_index_urls):
        if url is not None:
            grammar.index_url(url)
    for place in opts.find_links:
        grammar.find_link(place)
    uv = _uv_binary(found)
    if step.kind == "pip-install":
        reqs = () if opts.requirement_files else step.packages
        return (installers.pip_argv(python, reqs, opts, installer=tool, uv=uv),)
    return (
        installers.pip_uninstall(
            python,
            step.packages,
            installer=tool,
            break_system_packages=opts.break_system_packages,
            uv=uv,
        ),
    )


def _apt_versions(packages: Sequence[str]) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for spec in packages:
        name, eq, version = spec.partition("=")
        if not eq:
            raise ValueError(f"apt package {spec!r:.80} has no =VERSION")
        out[name] = version
    return out


def _conda_argv(
    step: Step, python: str, prefix: str, root: Optional[str], found: Sequence[str]
) -> "Tuple[Argv, ...] | str":
    if step.packages == (CONDACOLAB_DIST,):
        return (installers.condacolab_install(python),)
    binaries, prefixes = _conda_places(prefix, root, found)
    argv = list(step.argv)
    conda = argv[0] if argv else ""
    if conda not in binaries:
        return f"its conda {conda!r:.120} is none the planner names (its prefix's bin, CONDA_EXE, PATH)"
    named = argv[argv.index("-p") + 1] if "-p" in argv[:-1] else None
    if named is not None and named not in prefixes:
        return f"its prefix {named!r:.120} is neither the target's nor condacolab's"
    return (installers.conda_install(list(step.packages), conda=conda, prefix=named),)


def _conda_places(
    prefix: str, root: Optional[str], found: Sequence[str]
) -> Tuple[Set[str], Set[str]]:
    """The conda binaries and prefixes the planner can name for a target whose sys.prefix is
    `prefix` (fixer.planner.conda.conda_binary, fixer.rules.conda_prefix): the conda detection
    finds, or the one in either prefix's bin folder."""
    prefixes = {str(under_root(CONDACOLAB_PREFIX, root))}
    if prefix:
        prefixes.add(prefix)
    binaries = {os.path.join(p, "bin", n) for p in prefixes for n in CONDA_NAMES}
    binaries.update(f for f in found if os.path.basename(f) in CONDA_NAMES)
    return binaries, prefixes


def _uv_binary(found: Sequence[str]) -> str:
    """The uv binary the planner names: the first one detection finds, else "uv"
    (fixer.planner.steps._installer)."""
    uvs = [f for f in found if os.path.basename(f) == "uv"]
    return uvs[0] if uvs else "uv"


def found_binaries(python: str, environ: Optional[Mapping[str, str]] = None) -> List[str]:
    """The uv and conda binaries detection reports for the target `python`, by the probe's rule
    (fixer/children/probe.py `collect`: uv in the interpreter's bin folder, then on PATH;
    CONDA_EXE, then conda, mamba, micromamba on PATH), read here without starting it."""
    environ = os.environ if environ is None else environ
    path = environ.get("PATH", "")
    out = [
        shutil.which("uv", path=os.pathsep.join([os.path.dirname(python), path])),
        environ.get("CONDA_EXE"),
        *(shutil.which(n, path=path) for n in CONDA_NAMES),
    ]
    return [f for f in out if f]


def _env_fix_argv(step: Step, root: Optional[str]) -> Tuple[Argv, ...]:
    if envfix.needs_ldconfig([unrooted(p, root) for p in step.files]):
        return ((), tuple(envfix.LDCONFIG))
    return ((),)


def _show(argv: Sequence[str]) -> str:
    text = " ".join(argv)
    return repr(text if len(text) <= 160 else text[:157] + "...")


__all__ = ["expected_argv", "foreign", "resume_refusal", "resume_steps", "root_refusal"]
