"""resolve(Environment, Intent, Recipes) -> Stack: the constraint solve.

Two halves, kept apart the way resolvelib keeps them apart: `solver` (domain-free: identifiers,
requirements, candidates, a Provider protocol, conflicts as data) and `provider` (the domain:
machine facts, framework builds, cuDNN copies, all judged by fixer.rules). `stack` turns a
solution into a Stack and a failure into data (NoStack: model.Clash, model.WayOut; the words
are fixer.render.conflicts'); `loader_fixes` decides the environment changes
that make every framework load the chosen copy.
"""

from __future__ import annotations

from fixer.resolver.provider import (
    BadIntent,
    BuildCandidate,
    CudnnCandidate,
    Fact,
    Ident,
    StackProvider,
)
from fixer.resolver.solver import (
    BaseReporter,
    Conflict,
    NoSolution,
    Provider,
    Requirement,
    Result,
    Solver,
)
from fixer.resolver.stack import NoStack, resolve

__all__ = [
    "BadIntent",
    "BaseReporter",
    "BuildCandidate",
    "Conflict",
    "CudnnCandidate",
    "Fact",
    "Ident",
    "NoSolution",
    "NoStack",
    "Provider",
    "Requirement",
    "Result",
    "Solver",
    "StackProvider",
    "resolve",
]
