"""The domain-free solver on ten-line providers over plain tuples (resolvelib's test style)."""

from __future__ import annotations

import itertools
from typing import Dict, List, Optional, Sequence, Tuple

import pytest
from hypothesis import given, settings, strategies as st

from fixer import model as m
from fixer.planner.steps import bundled_environments, load_environment
from fixer.resolver import BaseReporter, NoSolution, Requirement, Solver
from fixer.resolver.provider import BadIntent, StackProvider
from tests.helpers.examples import examples

# index: name -> [(version, cost, {dep_name: allowed_versions})], best first
Index = Dict[str, List[Tuple[int, int, Dict[str, Tuple[int, ...]]]]]


class TupleProvider:
    def __init__(self, index: Index) -> None:
        self.index = index
        # one object per candidate, as a real provider keeps them (the solver's memos are per object)
        self.candidates = {n: [(n,) + c for c in cands] for n, cands in index.items()}

    def identify(self, thing):  # pragma: no cover - part of the shape
        return thing[0] if isinstance(thing, tuple) else thing.identifier

    def get_preference(self, identifier, requirements):
        return (len(self.index[identifier]), identifier)

    def find_matches(self, identifier, requirements):
        return [c for c in self.candidates[identifier] if all(r.accepts(c) for r in requirements)]

    def is_satisfied_by(self, requirement, candidate):
        return requirement.accepts(candidate)

    def get_dependencies(self, candidate):
        name, version, _cost, deps = candidate
        return [
            Requirement(d, lambda c, ok=ok: c[1] in ok, f"{d} in {ok}", f"{name} {version}")
            for d, ok in deps.items()
        ]

    def cost(self, identifier, candidate, pinned):
        return (candidate[2],)


def req(name: str, *versions: int) -> Requirement:
    return Requirement(
        name, lambda c: not versions or c[1] in versions, f"{name} {versions}", "root"
    )


def solve(index: Index, roots: Sequence[Requirement], **kw) -> Dict[str, int]:
    result = Solver(TupleProvider(index), **kw).resolve(roots)
    return {k: v[1] for k, v in result.mapping.items()}


def test_first_fit_when_it_is_cheapest():
    index = {"a": [(2, 0, {"b": (1, 2)}), (1, 1, {})], "b": [(2, 0, {}), (1, 1, {})]}
    assert solve(index, [req("a")]) == {"a": 2, "b": 2}


def test_backtracks_past_a_conflict():
    # a2 needs b1, c needs b2: only a1 (no b) fits with c
    index = {
        "a": [(2, 0, {"b": (1,)}), (1, 5, {})],
        "b": [(2, 0, {}), (1, 0, {})],
        "c": [(1, 0, {"b": (2,)})],
    }
    assert solve(index, [req("a"), req("c")]) == {"a": 1, "c": 1, "b": 2}


def test_branch_and_bound_finds_the_cheapest_not_the_first():
    # the first candidate of a drags in an expensive b; the second is cheaper overall
    index = {"a": [(2, 0, {"b": (9,)}), (1, 1, {"b": (1,)})], "b": [(9, 10, {}), (1, 0, {})]}
    assert solve(index, [req("a")]) == {"a": 1, "b": 1}


def test_no_solution_names_the_clash():
    index = {"a": [(1, 0, {"b": (1,)})], "c": [(1, 0, {"b": (2,)})], "b": [(1, 0, {}), (2, 0, {})]}
    with pytest.raises(NoSolution) as err:
        solve(index, [req("a"), req("c")])
    texts = {r.text for c in err.value.conflicts for r in c.requirements}
    assert any("b" in t for t in texts)


def test_root_without_candidates_fails_at_once():
    with pytest.raises(NoSolution) as err:
        solve({"a": [(1, 0, {})]}, [req("a", 7)])
    assert err.value.conflicts[0].identifier == "a"


def test_reporter_sees_pins_and_rejections():
    seen: List[str] = []

    class Rec(BaseReporter):
        def pinning(self, identifier, candidate):
            seen.append(f"pin {identifier}{candidate[1]}")

        def rejecting_candidate(self, conflict):
            seen.append(f"reject {conflict.identifier}")

    index = {"a": [(2, 0, {"b": (1,)}), (1, 0, {})], "b": [(2, 0, {})]}
    Solver(TupleProvider(index), Rec()).resolve([req("a")])
    assert seen[0] == "reject b" and "pin a1" in seen


def test_node_budget_returns_best_so_far_marked_incomplete():
    index = {n: [(v, v + 1, {}) for v in range(5)] for n in "abcdef"}  # no stack costs nothing
    result = Solver(TupleProvider(index), max_nodes=8).resolve([req(n) for n in "abcdef"])
    assert not result.complete and len(result.mapping) == 6


# -- completeness and optimality over generated problems ------------------------------------

NAMES = "abcd"


@st.composite
def problems(draw) -> Tuple[Index, Dict[str, Tuple[int, ...]]]:
    """A small index (each candidate with a cost and dependencies on other names) and the roots:
    name -> the versions a root allows (empty: any)."""
    versions = st.lists(st.integers(1, 3), min_size=1, max_size=3, unique=True)
    index: Index = {}
    for name in NAMES:
        index[name] = [
            (
                v,
                draw(st.integers(0, 3)),
                draw(
                    st.dictionaries(
                        st.sampled_from([n for n in NAMES if n != name]),
                        st.lists(st.integers(1, 3), min_size=1, max_size=2, unique=True).map(tuple),
                        max_size=3,
                    )
                ),
            )
            for v in draw(versions)
        ]
    roots = draw(
        st.dictionaries(
            st.sampled_from(NAMES),
            st.lists(st.integers(1, 3), max_size=2, unique=True).map(tuple),
            min_size=1,
            max_size=4,
        )
    )
    return index, roots


def cheapest(index: Index, roots: Dict[str, Tuple[int, ...]]) -> Optional[int]:
    """The least total cost of an assignment that meets the roots and every chosen candidate's
    dependencies, by trying every assignment (each name unassigned or one of its candidates)."""
    best: Optional[int] = None
    options = [[None] + index[n] for n in NAMES]
    for combo in itertools.product(*options):
        chosen = {n: c for n, c in zip(NAMES, combo) if c is not None}
        if not all(n in chosen and (not ok or chosen[n][0] in ok) for n, ok in roots.items()):
            continue
        if all(
            d in chosen and chosen[d][0] in ok for c in chosen.values() for d, ok in c[2].items()
        ):
            total = sum(c[1] for c in chosen.values())
            best = total if best is None else min(best, total)
    return best


@settings(max_examples=examples(200), deadline=None)
@given(problems())
def test_the_solver_finds_a_stack_exactly_when_one_exists_and_the_cheapest(problem) -> None:
    """Complete and optimal: backjumping and the refused-candidate memo skip only branches that
    hold no stack (fixer.resolver.solver._search)."""
    index, roots = problem
    expected = cheapest(index, roots)
    provider = TupleProvider(index)
    try:
        result = Solver(provider).resolve([req(n, *ok) for n, ok in roots.items()])
    except NoSolution:
        assert expected is None
        return
    assert result.complete and expected is not None and result.cost == (expected,)
    for name, cand in result.mapping.items():
        for d, ok in cand[3].items():
            assert d in result.mapping and result.mapping[d][1] in ok


def test_a_stack_that_costs_nothing_ends_the_search():
    # every first candidate is free: once the six are pinned nothing can beat the stack
    index = {n: [(v, 0 if v == 4 else 1, {}) for v in (4, 3, 2, 1)] for n in "abcdef"}
    solver = Solver(TupleProvider(index))
    result = solver.resolve([req(n) for n in "abcdef"])
    assert result.cost == (0,) and result.complete and solver._nodes == 6


@pytest.mark.parametrize(
    "intent",
    [m.Intent(), m.Intent(cudnn_from="apt"), m.Intent(keep=("nvidia-cudnn-cu12", "tensorflow"))],
    ids=["default", "cudnn-from-apt", "keep"],
)
def test_the_stack_provider_never_costs_below_zero(intent, real_recipes, monkeypatch):
    """The solver stops at a stack of cost zero (Provider.cost's contract: never negative)."""
    seen: List[Tuple[int, ...]] = []
    original = StackProvider.cost

    def cost(self, identifier, candidate, pinned):
        seen.append(original(self, identifier, candidate, pinned))
        return seen[-1]

    monkeypatch.setattr(StackProvider, "cost", cost)
    for name in bundled_environments():
        env = load_environment(name)[0]
        try:
            provider = StackProvider(env, intent, real_recipes)
            Solver(provider).resolve(provider.roots())
        except (BadIntent, NoSolution):
            pass  # a --keep of what this machine lacks; no stack
    assert seen and all(x >= 0 for c in seen for x in c), [c for c in seen if min(c) < 0][:3]
