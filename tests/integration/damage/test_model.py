"""Generated damage, model layer: every kind of damage alone and in pairs (Hypothesis chooses),
done to healthy fake machines (compiled stub libraries, dist-info, dpkg, ld.so.cache), then real
detection, diagnosis, resolution, planning and the plan's simulation.

The invariant: doctor flags the damage; the plan either fixes it (its simulated result
is healthy and is the stack it chose) or refuses, naming under "cannot fix automatically" what the
user must do. Only the hardware (a driver or a GPU too old for every build) may be refused; any
damage to files, packages or the loader must be repaired."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import List, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.diagnosis.findings import diagnose
from fixer.errors import Unsatisfiable
from fixer.model import Intent
from fixer.pipeline import plan_machine
from fixer.recipebook import load
from tests.helpers.examples import examples

from tests.integration.damage.kinds import FILE_KINDS, KINDS, TARGETS, Base, Damage, needs
from tests.integration.damage.machines import damaged, detect

RECIPES = load(())
HARDWARE = {"driver-too-old", "gpu-too-old"}
GPUS_TOO_OLD = ("Tesla P100-PCIE-16GB:6.0", "Tesla K80:3.7")
#: the model layer's counts, for the report (pytest -s prints them)
COUNTS = {"cases": 0, "fixed": 0, "refused": 0}


def damage_strategy() -> st.SearchStrategy[Damage]:
    def make(kind: str) -> st.SearchStrategy[Damage]:
        if kind in FILE_KINDS or kind == "ld-preload":
            return st.sampled_from(TARGETS).map(lambda t: Damage(kind, t))
        if kind == "gpu-too-old":
            return st.sampled_from(GPUS_TOO_OLD).map(lambda g: Damage(kind, g))
        return st.just(Damage(kind))

    return st.sampled_from(KINDS).flatmap(make)


def base_for(damages: Sequence[Damage], cuda: int, runpath: bool, apt: bool) -> Base:
    need = needs(damages)
    return Base(
        cuda=int(need.get("cuda", cuda)),
        runpath=bool(need.get("runpath", runpath)),  # type: ignore[call-overload]
        apt=bool(need.get("apt", apt)),
    )


def check_case(base: Base, damages: Sequence[Damage]) -> str:
    """One case through doctor and plan; returns "fixed" or "refused"."""
    with tempfile.TemporaryDirectory(prefix="damage-") as tmp:
        m, ov = damaged(Path(tmp), base, damages)
        # a file of its recorded size differs only by its hash: doctor --deep (and apply) see it
        env = detect(m, ov, hashes=any(d.kind == "replaced-same-size" for d in damages))
    labels = [d.label for d in damages]
    findings = diagnose(env, RECIPES)
    flagged = [f for f in findings if f.severity in ("error", "warning")]
    assert flagged, f"doctor found nothing wrong after {labels} on {base}"
    hardware = HARDWARE & {d.kind for d in damages}
    try:
        plan = plan_machine(env, findings, Intent(), RECIPES)
    except Unsatisfiable as exc:
        assert hardware, (
            f"{labels} on {base}: no stack fits ({exc.clashes}), but only the hardware may be refused"
        )
        assert exc.clashes and exc.ways_out
        return "refused"
    if plan.is_fix:
        assert not plan.nothing_to_do, f"{labels}: doctor has errors but the plan has nothing to do"
        return "fixed"
    assert not plan.drift, f"{labels} on {base}: the plan's result is not its stack: {plan.drift}"
    assert hardware, (
        f"{labels} on {base}: cannot fix automatically {[(f.id, f.title) for f in plan.manual]}; "
        f"steps {[s.summary for s in plan.steps]}"
    )
    assert all(f.fix for f in plan.manual), "each refusal says what the user must do"
    return "refused"


def _record(result: str) -> None:
    COUNTS["cases"] += 1
    COUNTS[result] += 1


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_alone(kind: str) -> None:
    """Every kind once, on the GPU machine's own layout (or the base it needs)."""
    target = GPUS_TOO_OLD[0] if kind == "gpu-too-old" else "libcudnn_cnn.so.9"
    damages = [Damage(kind, target)]
    _record(check_case(base_for(damages, 13, False, True), damages))


@settings(
    max_examples=examples(40),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    damages=st.lists(damage_strategy(), min_size=1, max_size=2, unique_by=lambda d: d.kind),
    cuda=st.sampled_from([13, 12]),
    runpath=st.booleans(),
    apt=st.booleans(),
)
def test_damage_alone_and_in_pairs(
    damages: List[Damage], cuda: int, runpath: bool, apt: bool
) -> None:
    _record(check_case(base_for(damages, cuda, runpath, apt), damages))


@pytest.mark.parametrize("kind", ["sublib-other-release", "symlink-other-copy"])
@pytest.mark.parametrize("target", TARGETS)
def test_evidence_leads_with_the_odd_file(kind: str, target: str) -> None:
    """Evidence leads with the odd one out: the file of the other release comes first, in the
    title and as the first line of evidence."""
    with tempfile.TemporaryDirectory(prefix="damage-") as tmp:
        m, ov = damaged(Path(tmp), Base(13, apt=True), [Damage(kind, target)])
        env = detect(m, ov)
    mixed = [f for f in diagnose(env, RECIPES) if f.id == "cudnn-mixed"]
    assert mixed, [f.id for f in diagnose(env, RECIPES)]
    assert mixed[0].evidence[0].startswith(f"{target}: cuDNN 9.14.0"), mixed[0].evidence
    assert f"{target} is 9.14.0" in mixed[0].title and mixed[0].title.endswith("the rest 9.19.0")


def test_report_counts() -> None:
    """Runs last in this module: how many generated cases the model layer checked."""
    print(
        f"\nmodel-layer damage cases: {COUNTS['cases']} ({COUNTS['fixed']} fixed, {COUNTS['refused']} refused)"
    )
    assert COUNTS["cases"] >= len(KINDS)
