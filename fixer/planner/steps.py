"""make_plan(Environment, Stack) -> Plan: the ordered steps that turn this machine into the
stack, each with the exact command it will run. Pure: it reads nothing and runs nothing
(`plan` and `apply --dry-run` stop here; `apply` runs the steps). What each step downloads is
not priced here: the simulation knows what each install brings (fixer.pipeline.simulated).

Order, and why:
1. pip-uninstall   distributions that must go first (a second pip cuDNN wheel of the same
                   major writes the same files; leaving it would shadow the chosen copy)
2. pip-install     framework builds, one step per index (the PyTorch index for +cuXXX builds)
3. pip-install     the cuDNN wheel when it differs from what the frameworks pin (with
                   --no-deps, after them, so their == pin does not pull it back down)
4. apt-install     exact version strings, then apt-mark hold so `apt upgrade` cannot move them
5. conda-install   condacolab first on Colab when there is no conda yet
6. env-fix         loader fixes, each with the exact file content it writes; then the files that
                   set a dropped LD_PRELOAD / LD_LIBRARY_PATH entry, written without it
7. restart         when the running notebook kernel already mapped a library that changes
8. verify          colab-cudnn-fix verify on the target interpreter
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from fixer.planner import installers
from fixer.system.paths import under_root
from fixer.planner.envfix import env_fix_steps
from fixer.planner.envsource import Source, home_of, process_notes
from fixer.model import (
    Environment,
    Finding,
    Pin,
    PipOptions,
    Plan,
    PlanOptions,
    Stack,
    Step,
    StepKind,
)
from fixer.rules import modified_files
from fixer.system.versions import canonical_name, installer_skips, requirement_name, same_version
from fixer.system.paths import state_dir
from fixer.errors import UsageError
from fixer.model import ENVIRONMENT_SCHEMA, from_dict

#: Markers of each framework's native libraries in /proc/<kernel>/maps.
_KERNEL_MARKERS: Dict[str, Tuple[str, ...]] = {
    "torch": ("libtorch", "libc10"),
    "tensorflow": ("libtensorflow", "_pywrap_tensorflow"),
    "jax": ("jaxlib", "jax_cuda", "xla_extension", "jax_plugins"),
    "cupy": ("cupy",),
    "onnxruntime": ("onnxruntime",),
    "ctranslate2": ("ctranslate2",),
    "paddle": ("paddle",),
}


def _installer(env: Environment, options: PlanOptions) -> Tuple[str, str]:
    """(installers.choose's answer, uv binary)."""
    found = env.python.uv if env.python else None
    return installers.choose(options.installer, found), found or "uv"


def _req(p: Pin) -> str:
    return f"{p.name}=={p.version}"


class _Pip:
    """The pip/uv commands of one plan: one interpreter, installer, uv binary and source options
    (--find-links, --no-index, --index-mirror, --break-system-packages) for every pip step. Each
    step carries its options as data (Step.pip) next to the argv built from them."""

    def __init__(
        self, python: str, installer: str, uv: str, options: PlanOptions, bsp: bool
    ) -> None:
        self.python, self.installer, self.uv, self.options, self.bsp = (
            python,
            installer,
            uv,
            options,
            bsp,
        )

    def install(
        self,
        kind: StepKind,
        summary: str,
        reqs: Sequence[str],
        *,
        index_url: Optional[str] = None,
        no_deps: bool = False,
        reinstall: bool = False,
        **extra: Any,
    ) -> Step:
        opts = installers.pip_options(
            index_url=index_url,
            find_links=self.options.find_links,
            no_index=self.options.no_index,
            no_deps=no_deps,
            force_reinstall=reinstall,
            break_system_packages=self.bsp,
            mirrors=self.options.index_mirrors,
        )
        return Step(
            kind=kind,
            summary=summary,
            pip=opts,
            packages=tuple(reqs),
            argv=installers.pip_argv(self.python, reqs, opts, installer=self.installer, uv=self.uv),
            **extra,
        )

    def uninstall(self, summary: str, names: Sequence[str]) -> Step:
        return Step(
            kind="pip-uninstall",
            summary=summary,
            packages=tuple(names),
            pip=PipOptions(break_system_packages=self.bsp),
            argv=installers.pip_uninstall(
                self.python,
                names,
                installer=self.installer,
                break_system_packages=self.bsp,
                uv=self.uv,
            ),
        )


def make_plan(
    env: Environment,
    stack: Stack,
    options: PlanOptions = PlanOptions(),
    *,
    findings: Sequence[Finding] = (),
    sources: Sequence[Source] = (),
) -> Plan:
    """The steps from `env` to `stack`. A stack that changes nothing gives a Plan with no
    steps (`nothing_to_do`). `sources`: the files on this machine that set an entry a loader
    fix drops (fixer.planner.envsource.sources_for; none for a described machine)."""
    python = env.python.executable if env.python else "python3"
    chosen, uv = _installer(env, options)
    installer = installers.pip_tool(chosen)
    bsp = bool(env.python and env.python.externally_managed and not env.python.is_venv)
    pip = _Pip(python, installer, uv, options, bsp)
    notes: List[str] = list(stack.notes)
    changing = [p for p in stack.pins if p.action != "keep" and p.manager == "pip"]
    if options.installer == "conda":
        _refuse_pip_under_conda(changing, stack)
    steps, late_removes = _removal_steps(env, stack, pip, changing)
    steps += _install_steps(env, stack, pip, changing)
    if late_removes:
        steps.append(
            pip.uninstall(
                "remove "
                + ", ".join(f"{p.name} (brought back by the installs above)" for p in late_removes)
                + ": "
                + late_removes[0].why,
                [p.name for p in late_removes],
            )
        )
    steps += _apt_steps(stack)
    if stack.conda:
        steps.extend(_conda_steps(env, stack, options, python, pip))

    steps.extend(_reinstall_modified(env, stack, pip, steps))
    steps[:0] = _cleanup_leftovers(env)
    steps.extend(env_fix_steps(stack.env_fixes, home=home_of(env), root=options.root))
    steps += source_steps(sources, options.root)
    notes += process_notes(sources)
    restart = _restart_needed(env, stack)
    if restart and steps:
        steps.append(
            Step(
                kind="restart",
                summary="restart the runtime: the running kernel already loaded "
                + ", ".join(restart)
                + (" (apply --restart does it)" if not options.restart else ""),
            )
        )
    if steps:
        steps.append(
            Step(
                kind="verify",
                summary="check every framework with a GPU convolution in a child process",
                argv=("colab-cudnn-fix", "verify", "--python", python),
            )
        )
    return Plan(
        steps=tuple(steps),
        stack=stack,
        python=python,
        restart_required=bool(restart and steps),
        findings=tuple(findings),
        notes=tuple(dict.fromkeys(notes)),
        installer=chosen,
    )


def source_steps(sources: Sequence[Source], root: Optional[str]) -> List[Step]:
    """The files that set an LD_PRELOAD / LD_LIBRARY_PATH entry a loader fix drops (a kernel
    spec's env, /etc/environment, another /etc/profile.d script: fixer.planner.envsource.
    sources_for read them), each written without it."""
    return [
        Step(
            kind="env-fix",
            summary=f"write {s.path} ({', '.join(s.reaches)} read it): "
            + "; ".join(f"{v} without {e}" for v, e in s.drops),
            files=(str(under_root(s.path, root)) if root else s.path,),
            content=s.fixed,
        )
        for s in sources
        if s.fixed is not None
    ]


def _removal_steps(
    env: Environment, stack: Stack, pip: "_Pip", changing: Sequence[Pin]
) -> Tuple[List[Step], List[Pin]]:
    """The uninstall that goes first (and the cuDNN wheels to remove only after the installs)."""
    steps: List[Step] = []
    removes = [p for p in changing if p.action == "remove"]
    # A pip cuDNN wheel that goes because cuDNN now comes from apt or conda is removed after the
    # framework installs: their dependencies (an == pin on that wheel) would bring it back.
    late_removes = [
        p
        for p in removes
        if p.name.startswith("nvidia-cudnn-")
        and any(
            c.action != "keep" and any(_dist(r) == p.name for r in c.build.requires)
            for c in stack.choices
        )
    ]
    removes = [p for p in removes if p not in late_removes]
    # pip takes torch==2.5.1 as satisfied by 2.5.1+cpu: a build of the same version goes first
    swaps = [
        p
        for p in changing
        if p.action != "remove"
        and p.installed
        and p.installed != p.version
        and p.installed.split("+")[0] == p.version.split("+")[0]
    ]
    removes += [
        Pin(name, env_version, action="remove", installed=env_version, why=why)
        for name, env_version, why in _stale_parts(env, stack)
        if name not in {p.name for p in removes}
    ]
    if removes or swaps:
        what = [f"{p.name} {p.version}" for p in removes] + [
            f"{p.name} {p.installed}" for p in swaps
        ]
        why = (
            removes[0].why
            if removes
            else f"{swaps[0].name} {swaps[0].version} has the same version number"
        )
        steps.append(
            pip.uninstall(
                "remove " + ", ".join(what) + ": " + why, [p.name for p in removes + swaps]
            )
        )
    return steps, late_removes


def _install_steps(
    env: Environment, stack: Stack, pip: "_Pip", changing: Sequence[Pin]
) -> List[Step]:
    """Hashed pins together; the rest one step per index (a cuDNN pin equal to a changed
    framework's own == pin rides along with it); other cuDNN pins after, without dependencies,
    and so is every pin the installer would take as installed already (a forced reinstall:
    fixer.system.versions.installer_skips)."""
    steps: List[Step] = []
    named = _named_versions(env)
    # a pin uv takes as installed by its folder's name while METADATA says another version (one
    # at its installed version rides along in its group: the install brings its extras)
    skipped = [
        p
        for p in changing
        if p.action != "remove"
        and not p.hashes
        and p.name in named
        and not same_version(p.installed, p.version)
        and installer_skips(p.installed, named[p.name], p.version)
        and not p.name.startswith("nvidia-cudnn-")
    ]
    changing = [p for p in changing if p not in skipped]
    # pins with hashes (a lock's, fixer.lockfile.stack_from_lock) install together, each file's hash checked
    hashed = [p for p in changing if p.action != "remove" and p.hashes]
    if hashed:
        steps.append(_hashed_step(pip, hashed))
    framework_dists = {_dist(c.build.packages[0]) for c in stack.choices if c.build.packages}
    cudnn_pins = [
        p
        for p in changing
        if p.action != "remove" and p.name.startswith("nvidia-cudnn-") and not p.hashes
    ]
    groups: Dict[Optional[str], List[Pin]] = {}
    for p in changing:
        if p.action == "remove" or p in cudnn_pins or p.hashes:
            continue
        groups.setdefault(p.index_url, []).append(p)
    late_cudnn: List[Pin] = []
    for p in cudnn_pins:
        hosts = [
            c.build
            for c in stack.choices
            if c.action != "keep" and f"{p.name}=={p.version}" in c.build.requires
        ]
        if hosts and not installer_skips(p.installed, named.get(p.name), p.version):
            groups.setdefault(hosts[0].index_url, []).append(p)
        else:
            late_cudnn.append(p)
    # the requirement exactly as the build spells it: jax[cuda12]==0.6.2 keeps its CUDA extra
    spelled = {
        (_dist(r), r.split("==", 1)[1].strip() if "==" in r else ""): r
        for c in stack.choices
        if c.action != "keep"
        for r in c.build.packages
    }
    for index_url, pins in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or "")):
        main = [p for p in pins if p.name in framework_dists] or pins
        reqs = [spelled.get((p.name, p.version), _req(p)) for p in pins]
        steps.append(
            pip.install(
                "pip-install",
                "install "
                + ", ".join(reqs)
                + (f" from {index_url}" if index_url else " from PyPI")
                + ": "
                + main[0].why,
                reqs,
                index_url=index_url,
            )
        )
    # a cuDNN wheel from PyPI (the frameworks' own == pin names the same file there); a
    # skipped pin from the index the stack chose for it
    steps += [_alone(pip, p, named.get(p.name), None) for p in late_cudnn]
    steps += [_alone(pip, p, named.get(p.name), p.index_url) for p in skipped]
    return steps


def _alone(pip: "_Pip", p: Pin, named: Optional[str], index_url: Optional[str]) -> Step:
    """One pin installed by itself without dependencies, forced when the installer would take
    it as installed already (fixer.system.versions.installer_skips)."""
    reinstall = installer_skips(p.installed, named, p.version)
    return pip.install(
        "pip-install",
        ("reinstall " if reinstall else "install ")
        + _req(p)
        + " (no dependencies): "
        + _skip_reason(p, named)
        + p.why,
        [_req(p)],
        index_url=index_url,
        no_deps=True,
        reinstall=reinstall,
    )


def _named_versions(env: Environment) -> Dict[str, str]:
    """Distribution -> the version its dist-info folder's name gives, where METADATA says
    another (Distribution.named_version)."""
    if env.python is None:
        return {}
    return {d.name: d.named_version for d in env.python.distributions if d.named_version}


def _skip_reason(p: Pin, named: Optional[str]) -> str:
    if named is None or same_version(p.installed, p.version):
        return ""
    return (
        f"its dist-info folder is named for {named} while METADATA says {p.installed}, "
        "so the installer would take it as installed; "
    )


def _apt_steps(stack: Stack) -> List[Step]:
    if not stack.apt:
        return []
    apt_pkgs = dict(stack.apt)
    whys = [p.why for p in stack.pins if p.manager == "apt" and p.why]
    specs = ", ".join(f"{k} {v}" for k, v in apt_pkgs.items())
    return [
        Step(
            kind="apt-update",
            summary=f"refresh apt's package lists, only when `apt-cache policy` does not list {specs} "
            "(apply checks first)",
            argv=installers.apt_update(),
            packages=tuple(f"{k}={v}" for k, v in apt_pkgs.items()),
        ),
        Step(
            kind="apt-install",
            summary="install "
            + ", ".join(f"{k}={v}" for k, v in apt_pkgs.items())
            + " from the NVIDIA CUDA apt repository"
            + (f": {whys[0]}" if whys else ""),
            argv=installers.apt_install(apt_pkgs),
            packages=tuple(f"{k}={v}" for k, v in apt_pkgs.items()),
        ),
        Step(
            kind="apt-hold",
            summary="hold " + ", ".join(apt_pkgs) + " so that apt upgrade cannot replace them",
            argv=installers.apt_hold(list(apt_pkgs)),
            packages=tuple(apt_pkgs),
        ),
    ]


def _reinstall_modified(
    env: Environment, stack: Stack, pip: _Pip, steps: Sequence[Step]
) -> List[Step]:
    """A reinstall of the same version (pip --force-reinstall --no-deps, uv --reinstall-package
    --no-deps: fixer.planner.installers) for each wheel whose library files differ from its
    RECORD, or whose dist-info folder is named for another version than its METADATA (then of
    the version the name gives): the files-modified finding; none that a step before already
    installs or removes."""
    touched = {_dist(r) for st in steps for r in st.packages} | {
        p.name for p in stack.pins if p.action == "remove"
    }
    # a dist-info folder named for another version than its METADATA: the version it names
    named = _named_versions(env)
    reqs: List[str] = [f"{d}=={v}" for d, v in named.items() if d not in touched]
    for c in env.libraries:
        pkg = c.package
        if c.origin != "pip" or pkg is None or not pkg.version or not modified_files(c):
            continue
        name = canonical_name(pkg.name)
        if name in touched or name in named or pkg.requirement in reqs:
            continue
        reqs.append(pkg.requirement)
    if not reqs:
        return []
    return [
        pip.install(
            "pip-install",
            "reinstall "
            + ", ".join(reqs)
            + " (no dependencies): "
            + (
                "its dist-info folder is named for that version while METADATA says another; "
                if any(requirement_name(r) in named for r in reqs)
                else ""
            )
            + "files differ from the wheel's RECORD (files-modified)",
            reqs,
            no_deps=True,
            reinstall=True,
        )
    ]


def _cleanup_leftovers(env: Environment) -> List[Step]:
    """One step that removes what an interrupted pip run moved aside (the pip-leftovers finding):
    apply journals each entry before it goes, and rollback puts it back."""
    if not env.pip_leftovers:
        return []
    return [
        Step(
            kind="cleanup",
            summary="remove what an interrupted pip run moved aside: "
            + ", ".join(env.pip_leftovers),
            files=tuple(env.pip_leftovers),
        )
    ]


def _hashed_step(pip: _Pip, pins: Sequence[Pin]) -> Step:
    """One `--require-hashes --no-deps -r FILE` install of exact pins with their hashes: FILE
    (under the state directory, named by its content) is written by apply from Step.content.
    The indexes are the pins' own, in order; none (only --find-links) gives --no-index."""
    import hashlib

    text = "".join(
        f"{p.name}=={p.version} " + " ".join(f"--hash={h}" for h in p.hashes) + "\n" for p in pins
    )
    req_file = str(
        state_dir(pip.options.root)
        / "lock"
        / f"requirements-{hashlib.sha256(text.encode()).hexdigest()[:12]}.txt"
    )
    indexes = list(dict.fromkeys(p.index_url for p in pins if p.index_url))
    opts = installers.pip_options(
        index_url=indexes[0] if indexes else None,
        extra_index_urls=indexes[1:],
        find_links=pip.options.find_links,
        no_index=pip.options.no_index or not indexes,
        no_deps=True,
        break_system_packages=pip.bsp,
        mirrors=pip.options.index_mirrors,
        requirement_files=(req_file,),
        require_hashes=True,
    )
    reqs = tuple(_req(p) for p in pins)
    return Step(
        kind="pip-install",
        summary="install " + ", ".join(reqs) + " with hashes enforced: " + pins[0].why,
        argv=installers.pip_argv(pip.python, (), opts, installer=pip.installer, uv=pip.uv),
        pip=opts,
        packages=reqs,
        files=(req_file,),
        content=text,
    )


def _stale_parts(env: Environment, stack: Stack) -> List[Tuple[str, str, str]]:
    """Distributions of an installed framework build that the new build does not replace:
    JAX's jax-cuda13-plugin and jax-cuda13-pjrt when JAX moves to its cuda12 variant (JAX
    would find both plugins). (name, installed version, why)"""
    out: List[Tuple[str, str, str]] = []
    installed = {d.name: d.version for d in (env.python.distributions if env.python else ())}
    for c in stack.choices:
        fb = env.framework(c.framework)
        if c.action == "keep" or fb is None:
            continue
        new = {_dist(r) for r in c.build.packages}
        old = _dist(fb.distribution)
        if old in new or c.framework == old:
            continue
        family = old.rsplit("-", 1)[0] + "-"  # "jax-cuda13-"
        for name, version in sorted(installed.items()):
            if (name == old or name.startswith(family)) and name not in new:
                out.append(
                    (
                        name,
                        version,
                        f"part of {fb.framework} {fb.version} ({fb.variant or fb.distribution}), "
                        f"which {c.build.framework} {c.build.version} ({c.build.variant}) replaces",
                    )
                )
    return out


def _refuse_pip_under_conda(changing: Sequence[Pin], stack: Stack) -> None:
    """`--installer conda` installs through conda or not at all: the recipes hold pip builds
    only (PyTorch's +cuXXX index builds, TensorFlow's and JAX's wheels), so a stack that must
    install or remove a Python distribution is refused, saying which and what to do instead."""
    if not changing:
        return
    what = ", ".join(f"{p.name} {p.version}" for p in changing[:4])
    raise UsageError(
        f"--installer conda: this repair needs pip distributions ({what}), and the recipes name no "
        "conda-forge build of them, so conda cannot install this stack",
        hint="use --installer pip (or uv) for the frameworks; --cudnn-from conda takes only cuDNN from conda-forge",
    )


def _conda_steps(
    env: Environment, stack: Stack, options: PlanOptions, python: str, pip: _Pip
) -> List[Step]:
    """cuDNN from conda-forge into the conda prefix (fixer.planner.conda): on Colab without conda, first
    condacolab (pip-installed when missing; its install() runs in the notebook kernel and
    restarts it; apply resumes from the journal), then `conda install -p PREFIX`, one spec per
    cuDNN major the stack takes from conda."""
    # start-up: fixer.planner.conda 0.1% alone, all small ones +4% (doctor --json, importtime)
    from fixer.planner.conda import CONDACOLAB_DIST, conda_binary, conda_prefix, needs_condacolab

    steps: List[Step] = []
    prefix = conda_prefix(env)
    if needs_condacolab(env):
        have = env.distribution(CONDACOLAB_DIST) is not None
        if not have:
            steps.append(
                pip.install(
                    "pip-install",
                    f"install {CONDACOLAB_DIST} (it installs conda into the Colab runtime)",
                    [CONDACOLAB_DIST],
                )
            )
        steps.append(
            Step(
                kind="conda-install",
                summary=f"install conda into {prefix} with condacolab, in the notebook kernel (the kernel restarts; "
                "apply then resumes from its journal: `colab-cudnn-fix apply --resume` or fixer.apply(resume=True))",
                argv=installers.condacolab_install(python),
                packages=(CONDACOLAB_DIST,),
            )
        )
    specs = [f"{k}=={v}" for k, v in stack.conda.items()]
    whys = [p.why for p in stack.pins if p.manager == "conda" and p.why]
    steps.append(
        Step(
            kind="conda-install",
            summary="install "
            + ", ".join(specs)
            + f" from conda-forge into {prefix}"
            + (f": {whys[0]}" if whys else ""),
            argv=installers.conda_install(
                specs,
                conda=conda_binary(env, options.root),
                prefix=str(under_root(prefix, options.root)) if prefix else None,
            ),
            packages=tuple(specs),
        )
    )
    return steps


def _dist(req: str) -> str:
    return requirement_name(req)


def _restart_needed(env: Environment, stack: Stack) -> List[str]:
    """Frameworks (and cuDNN) that change although the notebook kernel already mapped them."""
    loaded = env.runtime.kernel_loaded
    if not loaded:
        return []
    out: List[str] = []
    for c in stack.choices:
        if c.action == "keep":
            continue
        if any(
            mark in path
            for path in loaded
            for mark in _KERNEL_MARKERS.get(c.framework, (c.framework,))
        ):
            out.append(c.framework)
    cudnn_changes = (
        any(p.action != "keep" and "cudnn" in p.name for p in stack.pins)
        or bool(stack.apt)
        or bool(stack.env_fixes)
    )
    if cudnn_changes and any("libcudnn" in path for path in loaded):
        out.append("cuDNN")
    return out


# ---------------------------------------------------------------------------------------
# environments described by files (`plan --environment FILE|NAME`)
# ---------------------------------------------------------------------------------------


def environments_dir() -> str:
    """Where the bundled example environments live (fixer/environments/*.json)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "environments")


def bundled_environments() -> List[str]:
    """Names of the bundled example environments."""
    d = environments_dir()
    if not os.path.isdir(d):
        return []
    return sorted(f[:-5] for f in os.listdir(d) if f.endswith(".json"))


def load_environment(spec: str) -> Tuple[Environment, Tuple[Finding, ...], str]:
    """(Environment, findings, where) from `doctor --json` output in the file `spec`, or from
    the bundled example called `spec`. Bad input raises UsageError naming the key path."""
    import json
    import reprlib

    path = spec
    where = spec
    if not os.path.exists(spec):
        name = spec[:-5] if spec.endswith(".json") else spec
        if os.sep not in spec and name in bundled_environments():
            path = os.path.join(environments_dir(), name + ".json")
            where = f"bundled environment {name!r}"
        else:
            names = ", ".join(bundled_environments())
            raise UsageError(
                f"--environment {spec}: no such file, and no bundled environment of that name "
                f"(bundled: {names})"
            )
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--environment {spec}: cannot read it: {exc}")
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--environment {spec}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        )
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, deep nesting
        raise UsageError(f"--environment {spec}: not JSON this tool reads ({str(exc)[:120]})")
    if not isinstance(data, dict) or "environment" not in data:
        raise UsageError(
            f"--environment {spec}: $: expected doctor --json output, an object with "
            '"schema" and "environment"'
        )
    schema = data.get("schema")
    if schema == 1:
        raise UsageError(
            f"--environment {spec}: $.schema: 1 is the doctor --json of an earlier colab-cudnn-fix "
            f"(a copy's package as one string, the loader's search only in words); this one reads "
            f"{ENVIRONMENT_SCHEMA}",
            hint="run `colab-cudnn-fix doctor --json` again on that machine",
        )
    if schema != ENVIRONMENT_SCHEMA:
        raise UsageError(
            f"--environment {spec}: $.schema: {reprlib.repr(schema)} is not a schema this tool "
            f"reads ({ENVIRONMENT_SCHEMA})"
        )
    try:
        env = from_dict(Environment, data["environment"], "$.environment")
        findings = tuple(
            from_dict(Finding, f, f"$.findings[{i}]")
            for i, f in enumerate(data.get("findings") or ())
        )
    except ValueError as exc:
        raise UsageError(f"--environment {spec}: {exc}")
    return env, findings, where


__all__ = ["bundled_environments", "load_environment", "make_plan"]
