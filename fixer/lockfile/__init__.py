"""Lock files: the resolved stack, written down so that another machine gets exactly it.

    lock = make_lock(env, stack, options=PlanOptions(...))      # closure: hashes read from the indexes
    write_lock(lock, "stack.lock.toml")                         # format: atomic
    lock = read_lock("stack.lock.toml")                         # format: UsageError naming file and key
    problems = incompatibilities(lock, env)                     # why this machine cannot use it
    plan = plan_from_lock(lock, python=..., options=...)        # what `apply --lock` runs
    findings = check_drift("stack.lock.toml", env)              # `doctor --lock` (fixer.diagnosis.lock_drift)

The file format lives in format.py, the dependency closure and hashes in closure.py, and the
drift findings in fixer.diagnosis (lock_drift), with the other findings.
"""
from __future__ import annotations

import hashlib
import os
from typing import Dict, List, Mapping, Optional, Tuple

from packaging.version import InvalidVersion, Version

from .. import installers
from .._versions import major_minor, same_version
from ..errors import UsageError
from ..model import Environment, Finding, Plan, PlanOptions, Step
from ..rules import runs_on
from .closure import PYPI, apt_pins, build_index, dependency_closure, local_hashes, local_requires, make_lock
from .format import (LOCK_VERSION, AptPin, Lock, LockedPackage, LockRequires, MachineFacts, dumps, lock_from_dict,
                     read_lock, write_lock)

__all__ = ["LOCK_VERSION", "AptPin", "Lock", "LockedPackage", "LockRequires", "MachineFacts", "PYPI", "apt_pins",
           "build_index", "check_compatible", "dependency_closure", "check_drift", "dumps", "incompatibilities", "local_hashes",
           "local_requires", "lock_from_dict", "make_lock", "plan_from_lock", "read_lock", "write_lock"]


def incompatibilities(lock: Lock, env: Environment) -> List[Tuple[str, str]]:
    """(finding id, reason) for each way this machine cannot run the locked stack."""
    out: List[Tuple[str, str]] = []
    req = lock.requires
    py = env.python
    if req.python and py and ".".join(py.version.split(".")[:2]) != req.python:
        out.append(("pip-conflict", f"the lock was made for Python {req.python}; the target is Python {py.version}"))
    if req.arch and env.runtime.arch and req.arch != env.runtime.arch:
        out.append(("pip-conflict", f"the lock was made for {req.arch}; this machine is {env.runtime.arch}"))
    if req.cuda:
        if not env.gpus:
            out.append(("gpu-missing", f"the lock needs an NVIDIA GPU with a driver for CUDA {req.cuda}; "
                                       "this machine shows none"))
        elif not env.driver.cuda_version:
            out.append(("driver-missing", f"the lock needs a driver for CUDA {req.cuda}; no working driver found"))
        elif major_minor(env.driver.cuda_version) < major_minor(req.cuda):
            out.append(("driver-too-old", f"the lock needs CUDA {req.cuda}; driver {env.driver.version} supports "
                                          f"CUDA {env.driver.cuda_version} (the lock was made for driver "
                                          f"{lock.machine.driver or '?'})"))
    if req.compute_capabilities or req.ptx:
        for g in env.gpus:
            cc = g.compute_capability
            if not cc:
                continue
            if runs_on(cc, req.compute_capabilities, req.ptx):
                continue
            out.append(("gpu-arch-unsupported",
                        f"{g.name} (compute capability {cc}) is not among the locked builds' targets "
                        f"({', '.join(req.compute_capabilities) or '-'}"
                        + (f", PTX {req.ptx}" if req.ptx else "") + ")"))
    return out


def check_compatible(lock: Lock, env: Environment, path: str = "lock") -> None:
    """Raise UsageError (exit 2) saying why when the lock does not fit this machine."""
    problems = incompatibilities(lock, env)
    if problems:
        raise UsageError(f"{path} does not fit this machine: " + "; ".join(r for _, r in problems),
                         hint="make a new lock on (or for) this machine with `colab-cudnn-fix lock`")


def plan_from_lock(lock: Lock, *, python: str, options: PlanOptions, installer: str = "pip",
                   installed: Optional[Mapping[str, str]] = None, apt_installed: Optional[Mapping[str, str]] = None,
                   home: Optional[str] = None) -> Plan:
    """The steps that make `python` match the lock; none when it already does (apply twice =
    nothing to do). `installed`: name -> version now (default: read from the target)."""
    from .._paths import state_dir
    from ..applier import envfix
    from ..applier.sources import find_uv
    from ..envfix import env_fix_steps

    if installed is None:
        from ..applier.snapshot import read_target

        installed = read_target(python).versions()
    steps: List[Step] = []
    removes = [n for n in lock.remove if n in installed]
    uv = find_uv() or "uv"
    if removes:
        steps.append(Step(kind="pip-uninstall", summary="remove " + ", ".join(removes) + " (the lock removes them)",
                          argv=installers.pip_uninstall(python, removes, installer=installer, uv=uv),
                          packages=tuple(removes)))
    needed = [p for p in lock.packages if not same_version(installed.get(p.name), p.version)]
    if needed:
        text = "".join(f"{p.name}=={p.version} " + " ".join(f"--hash={h}" for h in p.hashes) + "\n" for p in needed)
        digest = hashlib.sha256(text.encode()).hexdigest()[:12]
        req_file = str(state_dir(options.root) / "lock" / f"requirements-{digest}.txt")
        indexes = [installers.rewrite_index(u, options.index_mirrors) or u for u in lock.indexes]
        argv = installers.pip_install(
            python, ["--require-hashes", "-r", req_file], index_url=indexes[0] if indexes else None,
            extra_index_urls=indexes[1:], find_links=options.find_links, no_index=options.no_index or not indexes,
            installer=installer, no_deps=True, uv=uv)
        steps.append(Step(kind="pip-install",
                          summary="install " + ", ".join(f"{p.name}=={p.version}" for p in needed)
                                  + " with hashes enforced (from the lock)",
                          argv=argv, packages=tuple(f"{p.name}=={p.version}" for p in needed),
                          files=(req_file,), content=text))
    if lock.apt:
        apt_now = dict(apt_installed or {})
        changing = {a.package: a.version for a in lock.apt if apt_now.get(a.package) != a.version}
        if changing:
            steps.append(Step(kind="apt-install", summary="install " + ", ".join(f"{k}={v}" for k, v in changing.items()),
                              argv=installers.apt_install(changing),
                              packages=tuple(f"{k}={v}" for k, v in changing.items())))
            held = [k for k in changing if any(a.package == k and a.hold for a in lock.apt)]
            if held:
                steps.append(Step(kind="apt-hold", summary="hold " + ", ".join(held),
                                  argv=installers.apt_hold(held), packages=tuple(held)))
    for step in env_fix_steps(lock.env_fixes, home=home):
        target = envfix.target_path(step.files[0], options.root)
        if target.is_file() and step.content is not None and target.read_text(encoding="utf-8") == step.content:
            continue
        steps.append(step)
    return Plan(steps=tuple(steps), python=python, installer=installer,
                notes=(f"from lock made {lock.created} by {lock.tool}",))



def check_drift(lock_path: str, env: Environment) -> Tuple[Finding, ...]:
    """What differs between the machine and the lock file (`doctor --lock FILE`)."""
    from ..diagnosis import lock_drift

    return lock_drift(read_lock(lock_path), env, lock_path)
