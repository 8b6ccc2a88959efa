"""`doctor --lock FILE`: what differs between the machine and a lock file, as findings."""

from __future__ import annotations

import os
from typing import Dict, List, Tuple

from fixer.lockfile.format import Lock
from fixer.model import Environment, Finding
from fixer.rules import runs_on
from fixer.system.versions import major_minor, same_version


def lock_drift(lock: Lock, env: Environment, lock_path: str) -> Tuple[Finding, ...]:
    """Findings for what differs between the machine and a lock file (`doctor --lock FILE`):
    the ways the machine cannot run the locked stack, then each package, removal and apt pin
    that is not as locked."""
    findings: List[Finding] = []
    for fid, reason in incompatibilities(lock, env):
        findings.append(
            Finding(
                id=fid,  # type: ignore[arg-type]
                severity="error",
                title=f"lock {os.path.basename(lock_path)}: {reason}",
                evidence=(lock_path,),
                fix="make a new lock for this machine",
            )
        )
    for p in lock.packages:
        dist = env.distribution(p.name)
        if dist is None:
            findings.append(
                Finding(
                    id="pip-conflict",
                    severity="error",
                    title=f"drift from lock: {p.name} {p.version} is not installed",
                    evidence=(lock_path,),
                    fix=f"colab-cudnn-fix apply --lock {lock_path}",
                )
            )
        elif not same_version(dist.version, p.version):
            findings.append(
                Finding(
                    id="pip-conflict",
                    severity="error",
                    title=f"drift from lock: {p.name} is {dist.version}, the lock has {p.version}",
                    evidence=(lock_path, dist.location),
                    fix=f"colab-cudnn-fix apply --lock {lock_path}",
                )
            )
    for name in lock.remove:
        if env.distribution(name) is not None:
            findings.append(
                Finding(
                    id="pip-conflict",
                    severity="warning",
                    title=f"drift from lock: {name} is installed, the lock removes it",
                    evidence=(lock_path,),
                    fix=f"colab-cudnn-fix apply --lock {lock_path}",
                )
            )
    apt_seen: Dict[str, str] = {}
    for lib in env.libraries:
        if lib.origin == "apt" and lib.package and lib.package.version:
            apt_seen[lib.package.name] = lib.package.version
    for pin in lock.apt:
        name, ver = pin.package, pin.version
        if name in apt_seen and apt_seen[name] != ver:
            findings.append(
                Finding(
                    id="pip-conflict",
                    severity="warning",
                    title=f"drift from lock: apt {name} is {apt_seen[name]}, the lock has {ver}",
                    evidence=(lock_path,),
                    fix=f"colab-cudnn-fix apply --lock {lock_path}",
                )
            )
    return tuple(findings)


def incompatibilities(lock: Lock, env: Environment) -> List[Tuple[str, str]]:
    """(finding id, reason) for each way this machine cannot run the locked stack."""
    out: List[Tuple[str, str]] = []
    req = lock.requires
    py = env.python
    if req.python and py and ".".join(py.version.split(".")[:2]) != req.python:
        out.append(
            (
                "pip-conflict",
                f"the lock was made for Python {req.python}; the target is Python {py.version}",
            )
        )
    if req.arch and env.runtime.arch and req.arch != env.runtime.arch:
        out.append(
            (
                "pip-conflict",
                f"the lock was made for {req.arch}; this machine is {env.runtime.arch}",
            )
        )
    if req.cuda:
        if not env.gpus:
            out.append(
                (
                    "gpu-missing",
                    f"the lock needs an NVIDIA GPU with a driver for CUDA {req.cuda}; "
                    "this machine shows none",
                )
            )
        elif not env.driver.cuda_version:
            out.append(
                (
                    "driver-missing",
                    f"the lock needs a driver for CUDA {req.cuda}; no working driver found",
                )
            )
        elif major_minor(env.driver.cuda_version) < major_minor(req.cuda):
            out.append(
                (
                    "driver-too-old",
                    f"the lock needs CUDA {req.cuda}; driver {env.driver.version} supports "
                    f"CUDA {env.driver.cuda_version} (the lock was made for driver "
                    f"{lock.machine.driver or '?'})",
                )
            )
    if req.compute_capabilities or req.ptx:
        for g in env.gpus:
            cc = g.compute_capability
            if not cc:
                continue
            if runs_on(cc, req.compute_capabilities, req.ptx):
                continue
            out.append(
                (
                    "gpu-arch-unsupported",
                    f"{g.name} (compute capability {cc}) is not among the locked builds' targets "
                    f"({', '.join(req.compute_capabilities) or '-'}"
                    + (f", PTX {req.ptx}" if req.ptx else "")
                    + ")",
                )
            )
    return out
