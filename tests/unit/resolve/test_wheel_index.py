"""The wheel-index rule: of a release's CUDA variants (cu126, cu128, ...;
jax[cuda12]/[cuda13]) install the highest whose CUDA is no newer than the driver's and whose
kernels run on the GPU; only when none does, one that runs by minor-version compatibility (same
CUDA major, driver at least that major's minimum, SASS for the GPU since the older driver cannot
JIT newer PTX), the lowest such, and the plan says so.

Checked over generated (driver, variants, GPU) against a brute-force statement of the rule
written here from NVIDIA's documents, both for rules.pick_cuda_variant and for what the
resolver installs."""

from __future__ import annotations

import dataclasses

from typing import List, Optional, Sequence, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.errors import Unsatisfiable
from fixer.recipebook import load
from fixer.pipeline import resolve
from fixer.rules import driver_cuda, pick_cuda_variant

from tests.helpers.envs import make_env
from tests.helpers.examples import examples

REAL = load()
FLOORS = REAL.driver_floors
#: NVIDIA's CUDA Compatibility guide, Table 1: minor-version compatibility minimum per major.
MVC_MIN = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580,)}
#: (CUDA, Linux GA driver) from the CUDA toolkit release notes (recipes/nvidia.toml toolkit rows).
TOOLKITS = sorted(
    ((f.cuda, f.min_driver) for f in FLOORS if f.cuda.count(".") == 1),
    key=lambda t: tuple(int(x) for x in t[0].split(".")),
)
CUDAS = [c for c, _ in TOOLKITS if int(c.split(".")[0]) >= 11]
CCS = ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"]


def _v(text: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in text.split("."))


def _sass_runs(cc: str, sass: Sequence[str]) -> bool:
    """SASS for X.Y runs on X.Z, Z >= Y (CUDA C Programming Guide, binary compatibility)."""
    c = _v(cc)
    return any(_v(s)[0] == c[0] and _v(s)[1] <= c[1] for s in sass)


def _ptx_runs(cc: str, ptx: Optional[str]) -> bool:
    """PTX for P is JIT-compiled for anything >= P."""
    return ptx is not None and _v(ptx) <= _v(cc)


def brute_force(
    variants: Sequence[Tuple[str, Tuple[str, ...], Optional[str]]],
    driver: str,
    drv_cuda: str,
    ccs: Sequence[str],
) -> Optional[Tuple[str, str]]:
    """Every variant classified, then the best by the stated preference."""
    native: List[str] = []
    mvc: List[str] = []
    for cuda, sass, ptx in variants:
        listed = bool(sass) or ptx is not None
        if _v(cuda)[:2] <= _v(drv_cuda)[:2]:
            if all(not listed or _sass_runs(cc, sass) or _ptx_runs(cc, ptx) for cc in ccs):
                native.append(cuda)
        elif (
            _v(cuda)[0] == _v(drv_cuda)[0]
            and _v(cuda)[0] in MVC_MIN
            and _v(driver) >= MVC_MIN[_v(cuda)[0]]
        ):
            if all(not listed or _sass_runs(cc, sass) for cc in ccs):
                mvc.append(cuda)
    if native:
        return sorted(native, key=_v)[-1], "native"
    if mvc:
        return sorted(mvc, key=_v)[0], "minor-version"
    return None


@st.composite
def machines(draw):
    """A driver (a toolkit's GA driver, or a later one of the same branch), its CUDA, GPUs."""
    i = draw(st.integers(0, len(TOOLKITS) - 1))
    cuda, ga = TOOLKITS[i]
    later = TOOLKITS[i + 1][1] if i + 1 < len(TOOLKITS) else None
    same_branch = [ga] + [f"{_v(ga)[0]}.{_v(ga)[1] + k}.01" for k in (1, 2, 3)]
    driver = draw(st.sampled_from([d for d in same_branch if later is None or _v(d) < _v(later)]))
    ccs = sorted(draw(st.sets(st.sampled_from(CCS), min_size=1, max_size=2)), key=_v)
    return driver, cuda, ccs


@st.composite
def variant_sets(draw):
    cudas = sorted(draw(st.sets(st.sampled_from(CUDAS), min_size=1, max_size=5)), key=_v)
    out = []
    for c in cudas:
        sass = tuple(
            sorted(draw(st.sets(st.sampled_from(CCS[:-1]), min_size=0, max_size=5)), key=_v)
        )
        ptx = draw(st.sampled_from((None,) + tuple(CCS)))
        out.append((c, sass, ptx))
    return out


@settings(max_examples=examples(200), deadline=None)
@given(machine=machines(), variants=variant_sets())
def test_the_rule_is_its_brute_force_statement(machine, variants):
    driver, cuda, ccs = machine
    assert driver_cuda(driver, None, FLOORS) == cuda
    assert pick_cuda_variant(variants, driver, cuda, ccs, FLOORS) == brute_force(
        variants, driver, cuda, ccs
    )


def _torch(cuda: str, sass: Tuple[str, ...], ptx: Optional[str]) -> m.Build:
    variant = "cu" + cuda.replace(".", "")
    return m.Build(
        "torch",
        "2.9.0",
        variant,
        cuda,
        "9.10.2",
        python="",
        compute_capabilities=sass,
        ptx=ptx,
        packages=(f"torch==2.9.0+{variant}",),
        index_url=f"https://download.pytorch.org/whl/{variant}",
    )


CUDNN = m.CudnnRelease(
    "9.10.2",
    (11, 12, 13),
    None,
    None,
    {
        "nvidia-cudnn-cu11": "9.10.2.21",
        "nvidia-cudnn-cu12": "9.10.2.21",
        "nvidia-cudnn-cu13": "9.10.2.21",
    },
)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machine=machines(), variants=variant_sets())
def test_the_resolver_installs_the_rules_variant(machine, variants):
    """A machine without the framework, one release with generated variants: resolve installs the
    brute-force pick, says so when it runs by minor-version compatibility, and finds no stack when
    no variant runs here."""
    driver, cuda, ccs = machine
    recipes = m.Recipes(
        builds=tuple(_torch(*v) for v in variants), cudnn=(CUDNN,), driver_floors=FLOORS
    )
    env = dataclasses.replace(
        make_env(frameworks=(), dists={}),
        driver=m.Driver(version=driver, cuda_version=cuda),
        gpus=tuple(m.Gpu(i, f"gpu{i}", compute_capability=c) for i, c in enumerate(ccs)),
    )
    want = brute_force(variants, driver, cuda, ccs)
    try:
        stack = resolve(env, m.Intent(frameworks=("torch",)), recipes)
    except Unsatisfiable:
        assert want is None
        return
    assert want is not None
    (choice,) = stack.choices
    assert choice.build.cuda == want[0]
    assert bool(choice.minor_version) == (want[1] == "minor-version")
    if choice.minor_version:
        for part in (f"CUDA {cuda}", f"CUDA {want[0]}", "minor-version compatibility", "PTX"):
            assert part in choice.minor_version
        assert choice.minor_version in stack.notes


def test_driver_525_gets_cu126_not_cu129_and_the_plan_says_why():
    """The issue's case: torch 2.8.0 (cu126, cu128, cu129) on driver 525.60.13 (CUDA 12.0) and a
    T4. No variant is within CUDA 12.0, so minor-version compatibility: the lowest, cu126, with
    the limits named in the plan's text and JSON."""
    from fixer.pipeline import simulated
    from fixer.planner.steps import make_plan

    env = dataclasses.replace(
        make_env(frameworks=(), dists={}, gpu_cc="7.5"),
        driver=m.Driver(version="525.60.13", cuda_version="12.0"),
    )
    stack = resolve(env, m.Intent(frameworks=("torch",), versions={"torch": "2.8.0"}), REAL)
    (choice,) = stack.choices
    assert choice.build.variant == "cu126"
    assert "CUDA 12.0" in choice.minor_version and "CUDA 12.6" in choice.minor_version
    plan = simulated(env, make_plan(env, stack), REAL)
    assert any("minor-version compatibility" in n for n in plan.notes)


def test_a_newer_driver_gets_the_highest_variant_within_its_cuda():
    """Driver 570.26 (CUDA 12.8): torch 2.8.0's cu128, not cu129 (12.9 > 12.8), no note."""
    env = dataclasses.replace(
        make_env(frameworks=(), dists={}, gpu_cc="8.0"),
        driver=m.Driver(version="570.26", cuda_version="12.8"),
    )
    (choice,) = resolve(
        env, m.Intent(frameworks=("torch",), versions={"torch": "2.8.0"}), REAL
    ).choices
    assert choice.build.variant == "cu128" and not choice.minor_version
