"""Lock files: the resolved stack, written down so that another machine gets exactly it.

    lock = make_lock(env, stack, options=PlanOptions(...))      # closure: hashes read from the indexes
    write_lock(lock, "stack.lock.toml")                         # format: atomic
    lock = read_lock("stack.lock.toml")                         # format: UsageError naming file and key
    problems = incompatibilities(lock, env)                     # why this machine cannot use it
    stack = stack_from_lock(lock, env)                         # `apply --lock`: the one planner's input
    plan = make_plan(env, stack, options)                      # (fixer.planner.steps), as for every plan
    findings = check_drift("stack.lock.toml", env)              # `doctor --lock` (fixer.lockfile.drift)

The file format lives in format.py, the dependency closure and hashes in closure.py, and the
drift findings in fixer.lockfile.drift, with the other findings.
"""

from __future__ import annotations

import dataclasses
from typing import List, Optional, Tuple

from fixer.system.versions import canonical_name, same_version
from fixer.errors import UsageError
from fixer.model import Environment, Finding, Pin, Plan, Stack, Step
from fixer.lockfile.closure import (
    PYPI,
    apt_pins,
    build_index,
    dependency_closure,
    local_hashes,
    local_requires,
    make_lock,
)
from fixer.lockfile.drift import incompatibilities, lock_drift
from fixer.lockfile.format import (
    LOCK_VERSION,
    AptPin,
    Lock,
    LockedPackage,
    LockRequires,
    MachineFacts,
    dumps,
    lock_from_dict,
    read_lock,
    write_lock,
)
from fixer.applier import envfix

__all__ = [
    "LOCK_VERSION",
    "AptPin",
    "Lock",
    "LockedPackage",
    "LockRequires",
    "MachineFacts",
    "PYPI",
    "apt_pins",
    "build_index",
    "check_compatible",
    "dependency_closure",
    "check_drift",
    "dumps",
    "incompatibilities",
    "local_hashes",
    "local_requires",
    "lock_from_dict",
    "make_lock",
    "read_lock",
    "stack_from_lock",
    "without_written_fixes",
    "write_lock",
]


def check_compatible(lock: Lock, env: Environment, path: str = "lock") -> None:
    """Raise UsageError (exit 2) saying why when the lock does not fit this machine."""
    problems = incompatibilities(lock, env)
    if problems:
        raise UsageError(
            f"{path} does not fit this machine: " + "; ".join(r for _, r in problems),
            hint="make a new lock on (or for) this machine with `colab-cudnn-fix lock`",
        )


def stack_from_lock(lock: Lock, env: Environment) -> Stack:
    """The locked stack as the one planner's input (fixer.planner.steps.make_plan): each locked package a
    pin with its hashes (installed with --require-hashes --no-deps), the removals of what is
    installed, the apt pins that differ from the machine's, and the loader fixes. Against what
    `env` has now, so that a machine already at the lock gets nothing to do."""
    installed = {d.name: d.version for d in (env.python.distributions if env.python else ())}
    apt_now = {
        c.package.name: c.package.version
        for c in env.libraries
        if c.origin == "apt" and c.package is not None and c.package.version
    }
    why = f"the lock made {lock.created} by {lock.tool}"
    pins: List[Pin] = []
    for name in lock.remove:
        if name in installed:
            pins.append(
                Pin(
                    name,
                    installed[name],
                    action="remove",
                    installed=installed[name],
                    why=f"{why} removes it",
                )
            )
    for p in lock.packages:
        have = installed.get(canonical_name(p.name))
        pins.append(
            Pin(
                p.name,
                p.version,
                index_url=p.index,
                installed=have,
                hashes=p.hashes,
                why=why,
                action="keep" if same_version(have, p.version) else "install",
            )
        )
    apt = {a.package: a.version for a in lock.apt if apt_now.get(a.package) != a.version}
    pins += [
        Pin(k, v, action="install", installed=apt_now.get(k), why=why, manager="apt")
        for k, v in apt.items()
    ]
    return Stack(
        pins=tuple(pins),
        apt=apt,
        env_fixes=tuple(lock.env_fixes),
        cudnn=lock.cudnn,
        cudnn_from=lock.cudnn_from,
        notes=(f"from lock made {lock.created} by {lock.tool}",),
    )


def without_written_fixes(plan: Plan, root: Optional[str]) -> Plan:
    """`plan` less the env-fix steps whose file already holds exactly what they write (applying
    a lock twice: nothing to do)."""

    def written(step: Step) -> bool:
        if step.kind != "env-fix" or not step.files or step.content is None:
            return False
        target = envfix.target_path(step.files[0], root)
        return target.is_file() and target.read_text(encoding="utf-8") == step.content

    steps = tuple(s for s in plan.steps if not written(s))
    if all(s.kind == "verify" for s in steps):
        steps = ()
    return dataclasses.replace(plan, steps=steps)


def check_drift(lock_path: str, env: Environment) -> Tuple[Finding, ...]:
    """What differs between the machine and the lock file (`doctor --lock FILE`)."""
    return lock_drift(read_lock(lock_path), env, lock_path)
