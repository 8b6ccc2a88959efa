"""A domain-free backtracking solver: identifiers, requirements and candidates only.

It talks to the domain through a `Provider` with resolvelib's methods (get_preference,
find_matches, is_satisfied_by, get_dependencies) plus one more, `cost`, because our objective
is "change as little as possible", not "first fit". It is a depth-first branch and bound:
candidates are tried in the provider's order, each requirement is checked forward (an
identifier left with no candidate is a conflict at once), and once a full assignment is found,
branches that cannot beat it are cut.

Identifiers are whatever hashable values the provider uses (typed; never parsed here) and
candidates are opaque. A failure is data: `NoSolution.conflicts` lists the clashing
requirements, for the caller to put into words.
"""

from __future__ import annotations

import dataclasses
from typing import (
    Any,
    Callable,
    Dict,
    Generic,
    Hashable,
    Iterable,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Set,
    Tuple,
    TypeVar,
)

KT = TypeVar("KT", bound=Hashable)

Cost = Tuple[int, ...]


@dataclasses.dataclass(frozen=True, eq=False)
class Requirement(Generic[KT]):
    """A constraint on one identifier. `accepts` decides; `text` says it in words; `parent`
    names who asks (a candidate's label, "this machine", "--keep torch")."""

    identifier: KT
    # Called with one candidate. `...` because most are lambdas that bind loop values
    # through default arguments (`lambda c, want=want: ...`), which mypy cannot infer
    # against Callable[[Any], bool].
    accepts: Callable[..., bool]
    text: str
    parent: str = ""
    prefer: Tuple[str, ...] = ()  # exact versions the parent pins (ordering hint)
    intent: bool = False  # comes from what the user asked

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<{self.identifier}: {self.text} ({self.parent})>"


@dataclasses.dataclass(frozen=True)
class Conflict(Generic[KT]):
    """Why a branch failed: the requirements on `identifier` that no candidate meets, or a
    pinned `candidate` that a new requirement refuses."""

    identifier: KT
    requirements: Tuple[Requirement[KT], ...]
    candidate: Any = None


class BaseReporter(Generic[KT]):
    """Hooks the solver calls (resolvelib's BaseReporter shape). Subclass to trace or draw."""

    def starting(self) -> None: ...
    def pinning(self, identifier: KT, candidate: Any) -> None: ...
    def rejecting_candidate(self, conflict: Conflict[KT]) -> None: ...
    def backtracking(self, identifier: KT, candidate: Any) -> None: ...
    def found(self, cost: Cost) -> None: ...
    def ending(self, result: Optional["Result[KT]"]) -> None: ...


@dataclasses.dataclass(frozen=True)
class Result(Generic[KT]):
    mapping: Dict[KT, Any]  # identifier -> chosen candidate
    criteria: Dict[KT, Tuple[Requirement[KT], ...]]  # identifier -> requirements (why it is there)
    cost: Cost
    complete: bool = True  # False when the node budget cut the search


class NoSolution(Exception):
    """No assignment meets every requirement; `conflicts` are the clashes met on the way."""

    def __init__(self, conflicts: Sequence[Conflict[Any]]) -> None:
        super().__init__("no solution")
        self.conflicts = tuple(conflicts)


def _add(a: Cost, b: Cost) -> Cost:
    if not a:
        return b
    return tuple(x + y for x, y in zip(a, b))


class Provider(Protocol[KT]):
    """The domain's side (resolvelib's AbstractProvider shape, plus `cost`)."""

    def get_preference(self, identifier: KT, requirements: Sequence[Requirement[KT]]) -> Any:
        """Sort key: the open identifier with the smallest key is decided next."""

    def find_matches(
        self, identifier: KT, requirements: Sequence[Requirement[KT]]
    ) -> Sequence[Any]:
        """Candidates for `identifier` that meet every requirement, most preferred first. A
        function of its arguments alone: the solver asks it once per (identifier, requirements)."""

    def is_satisfied_by(self, requirement: Requirement[KT], candidate: Any) -> bool:
        """Whether a pinned candidate meets a requirement added later."""

    def get_dependencies(self, candidate: Any) -> Sequence[Requirement[KT]]:
        """What choosing `candidate` requires of other identifiers. A function of the candidate
        alone: the solver asks it once per candidate in a resolve."""

    def cost(self, identifier: KT, candidate: Any, pinned: Mapping[KT, Any]) -> Cost:
        """What choosing `candidate` costs, given what is pinned (compared as tuples, summed).
        Never negative, element by element: a stack of cost zero is the cheapest, and the
        search ends when it finds one."""


class Solver(Generic[KT]):
    """Depth-first branch and bound over a provider.

    Complete: if any assignment satisfies every requirement it is found (the search only cuts
    branches that conflict or cannot beat a stack already found). `max_nodes` bounds the
    optimisation: past it, once a stack has been found, the best so far is returned, marked
    incomplete; the budget never turns a satisfiable input into "no solution"."""

    def __init__(
        self,
        provider: Provider[KT],
        reporter: Optional[BaseReporter[KT]] = None,
        max_nodes: int = 50000,
    ) -> None:
        self.provider = provider
        self.reporter: BaseReporter[KT] = reporter or BaseReporter()
        self.max_nodes = max_nodes

    def resolve(self, roots: Iterable[Requirement[KT]]) -> Result[KT]:
        self.reporter.starting()
        criteria: Dict[KT, Tuple[Requirement[KT], ...]] = {}
        for r in roots:
            criteria[r.identifier] = criteria.get(r.identifier, ()) + (r,)
        self._best: Optional[Result[KT]] = None
        self._nodes = 0
        self._conflicts: List[Conflict[KT]] = []
        self._memo: Dict[Tuple[KT, Tuple[Requirement[KT], ...]], Sequence[Any]] = {}
        self._deps: Dict[
            int, Tuple[Any, Sequence[Requirement[KT]], Dict[KT, Tuple[Requirement[KT], ...]]]
        ] = {}
        # each dependency -> the identifiers whose candidates bring it (requirements hash by
        # identity: eq=False)
        self._introduced: Dict[Requirement[KT], Set[KT]] = {}
        # candidates the roots alone refuse (kept alive by self._deps: no id reuse)
        self._refused: Set[int] = set()
        for ident, reqs in criteria.items():
            if not self._matches(ident, reqs):
                self._conflict(Conflict(ident, reqs))
        if not self._conflicts:
            self._search({}, criteria, ())
        self.reporter.ending(self._best)
        if self._best is None:
            raise NoSolution(self._conflicts)
        return self._best

    def _matches(self, ident: KT, reqs: Tuple[Requirement[KT], ...]) -> Sequence[Any]:
        """provider.find_matches, asked once per (identifier, requirements): it is a function of
        them alone (the Provider contract). The key is the requirements in the order they were
        added (hashed by identity): the same set in another order is asked again."""
        key = (ident, reqs)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self.provider.find_matches(ident, reqs)
        return hit

    def _dependencies(
        self, ident: KT, candidate: Any
    ) -> Tuple[Sequence[Requirement[KT]], Dict[KT, Tuple[Requirement[KT], ...]]]:
        """provider.get_dependencies(candidate), and the same grouped by identifier (in order),
        asked once per candidate in a resolve. Each dependency is recorded as introduced by
        `ident` (the identifier whose pin brings it into the criteria: _blame)."""
        hit = self._deps.get(id(candidate))
        if hit is None:
            deps = self.provider.get_dependencies(candidate)
            groups: Dict[KT, Tuple[Requirement[KT], ...]] = {}
            for d in deps:
                groups[d.identifier] = groups.get(d.identifier, ()) + (d,)
                self._introduced.setdefault(d, set()).add(ident)
            hit = self._deps[id(candidate)] = (
                candidate,
                deps,
                groups,
            )  # keeps the candidate alive: no id reuse
        return hit[1], hit[2]

    def _blame(self, reqs: Iterable[Requirement[KT]]) -> Set[KT]:
        """The identifiers whose pins brought `reqs` into the criteria (none for a root)."""
        out: Set[KT] = set()
        for r in reqs:
            out.update(self._introduced.get(r, ()))
        return out

    def _conflict(self, c: Conflict[KT]) -> None:
        self.reporter.rejecting_candidate(c)
        if len(self._conflicts) < 500:
            self._conflicts.append(c)

    def _beaten(self, cost: Cost) -> bool:
        return self._best is not None and cost >= self._best.cost

    def _search(
        self, pinned: Dict[KT, Any], criteria: Dict[KT, Tuple[Requirement[KT], ...]], cost: Cost
    ) -> Optional[Set[KT]]:
        """Search below `pinned`. While no stack has been found, a branch that holds none
        returns the identifiers whose pins its failure rests on (its conflict set); a caller
        whose own identifier is not among them returns at once, skipping its other candidates:
        each would fail alike (conflict-directed backjumping, Prosser 1993, "Hybrid algorithms
        for the constraint satisfaction problem", Computational Intelligence 9(3)). Only
        branches that hold no stack are skipped, so the first stack found is the one the plain
        search finds; once one is found, the branch and bound runs as before and this returns
        None."""
        p = self.provider
        open_ids = [i for i in criteria if i not in pinned]
        if not open_ids:
            if not self._beaten(cost):
                self._best = Result(dict(pinned), dict(criteria), cost, complete=True)
                self.reporter.found(cost)
            return None
        ident = min(open_ids, key=lambda i: p.get_preference(i, criteria[i]))
        # the candidates tried here are those criteria[ident] allows: their introducers count
        blame = self._blame(criteria[ident])
        for candidate in self._matches(ident, criteria[ident]):
            if id(candidate) in self._refused:
                continue
            self._nodes += 1
            if self._nodes > self.max_nodes and self._best is not None:
                # enough: keep the best stack found (the budget never stops the search for a first one)
                self._best = dataclasses.replace(self._best, complete=False)
                return None
            below = self._branch(ident, candidate, pinned, criteria, cost)
            if self._best is not None and (
                self._nodes > self.max_nodes or not any(self._best.cost)
            ):
                return None  # the budget is spent, or the stack found costs nothing: none beats it
            if below is not None:
                if ident not in below:
                    return below  # backjump: no other candidate of `ident` changes that failure
                blame |= below
        if self._best is not None:
            return None
        blame.discard(ident)
        return blame

    def _branch(
        self,
        ident: KT,
        candidate: Any,
        pinned: Dict[KT, Any],
        criteria: Dict[KT, Tuple[Requirement[KT], ...]],
        cost: Cost,
    ) -> Optional[Set[KT]]:
        """Pin `candidate` for `ident` and search below it: the conflict set of the failure (as
        _search returns it), or None when a stack was found or the branch cannot beat one."""
        p = self.provider
        new_cost: Optional[Cost] = None
        if self._best is not None:
            new_cost = _add(cost, p.cost(ident, candidate, pinned))
            if self._beaten(new_cost):
                return None  # candidates come cheapest first, but cost may depend on pins: keep looking
        # (with no stack found yet nothing is beaten: the cost is asked only of a candidate
        # that passes the checks below, the same answer without costing every refused one)
        deps, groups = self._dependencies(ident, candidate)
        failed = self._forward_check(ident, deps, groups, pinned, criteria)
        if failed is not None:
            # what it rests on: the pin that refused, or what brought the open identifier's
            # earlier requirements (with this candidate's, they leave it nothing)
            on, before = failed
            why = {on} if on in pinned else self._blame(before)
            if not why:
                # the roots alone refuse it: it fails in every branch (a unary nogood)
                self._refused.add(id(candidate))
            return why | {ident}
        new_criteria = dict(criteria)
        for i, group in groups.items():
            new_criteria[i] = criteria.get(i, ()) + group
        if new_cost is None:
            new_cost = _add(cost, p.cost(ident, candidate, pinned))
        pinned[ident] = candidate
        self.reporter.pinning(ident, candidate)
        below = self._search(pinned, new_criteria, new_cost)
        del pinned[ident]
        self.reporter.backtracking(ident, candidate)
        return below

    def _forward_check(
        self,
        ident: KT,
        deps: Sequence[Requirement[KT]],
        groups: Mapping[KT, Tuple[Requirement[KT], ...]],
        pinned: Mapping[KT, Any],
        criteria: Mapping[KT, Tuple[Requirement[KT], ...]],
    ) -> Optional[Tuple[KT, Tuple[Requirement[KT], ...]]]:
        """Forward check, in the order of the dependencies, before the criteria are copied (most
        candidates fail here): a dependency on a pinned identifier must accept the pin, one on
        an open identifier must leave it a candidate, with every dependency the candidate puts
        on it. A failure is recorded as a conflict and returned as the identifier it is on and
        that identifier's requirements from before this candidate (none for a pinned one: the
        pin itself is what refused); None when the candidate passes."""
        for d in deps:
            i = d.identifier
            if i in pinned:
                if not self.provider.is_satisfied_by(d, pinned[i]):
                    self._conflict(Conflict(i, (d,), pinned[i]))
                    return i, ()
            elif i != ident:
                before = criteria.get(i, ())
                reqs = before + groups[i]
                if not self._matches(i, reqs):
                    self._conflict(Conflict(i, reqs))
                    return i, before
        return None


__all__ = [
    "BaseReporter",
    "Conflict",
    "Cost",
    "NoSolution",
    "Provider",
    "Requirement",
    "Result",
    "Solver",
]
