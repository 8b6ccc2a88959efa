"""Property tests (hypothesis): every stack the resolver returns satisfies every rule (checked
by tests/unit/resolve/checker.py, written independently), and no satisfiable input is called
unsatisfiable (compared with a brute-force search over small random recipe sets)."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.errors import Unsatisfiable, UsageError
from fixer.pipeline import resolve

from .checker import brute_force, from_stack, violations
from tests.helpers.envs import FLOORS, load, make_env, pip_copy

CUDAS = ("11.8", "12.4", "12.8", "13.0")
CUDNNS = ("8.9.0", "9.1.0", "9.3.0", "9.10.2", "9.19.0")
CCS = ("6.0", "7.0", "7.5", "8.0", "9.0")
RELEASES = {
    "8.9.7": m.CudnnRelease("8.9.7", (11, 12), "5.0", "9.0", {"nvidia-cudnn-cu12": "8.9.7.29"},
                            {"libcudnn8": "8.9.7.29-1+cuda12.2"}),
    "9.1.0": m.CudnnRelease("9.1.0", (11, 12), "5.0", None, {"nvidia-cudnn-cu12": "9.1.0.70"}),
    "9.3.0": m.CudnnRelease("9.3.0", (12,), None, None, {"nvidia-cudnn-cu12": "9.3.0.75"},
                            {"libcudnn9-cuda-12": "9.3.0.75-1"}),
    "9.10.2": m.CudnnRelease("9.10.2", (12,), "5.0", None, {"nvidia-cudnn-cu12": "9.10.2.21"}),
    "9.19.0": m.CudnnRelease("9.19.0", (12, 13), "7.5", None,
                             {"nvidia-cudnn-cu12": "9.19.0.56", "nvidia-cudnn-cu13": "9.19.0.56"}),
}


@st.composite
def builds(draw, framework: str, n: int):
    out = []
    for i in range(n):
        cuda = draw(st.sampled_from(CUDAS))
        cudnn = draw(st.sampled_from(CUDNNS if not cuda.startswith("13") else CUDNNS[3:]))
        ccs = tuple(sorted(draw(st.sets(st.sampled_from(CCS), min_size=2, max_size=5))))
        ptx = draw(st.sampled_from((None, "9.0", "7.0")))
        python = draw(st.sampled_from(("", ">=3.9", ">=3.12")))
        version = f"2.{i}.0" if framework == "torch" else f"2.1{i}.0"
        variant = "cu" + cuda.replace(".", "")
        out.append(m.Build(framework, version, variant, cuda, cudnn, python, ccs, ptx,
                           packages=(f"{framework}=={version}+{variant}",)))
    return out


@st.composite
def problems(draw):
    torch = draw(builds("torch", draw(st.integers(0, 3))))
    tf = draw(builds("tensorflow", draw(st.integers(0, 2))))
    rels = tuple(RELEASES[k] for k in sorted(draw(st.sets(st.sampled_from(sorted(RELEASES)), min_size=2, max_size=5))))
    recipes = m.Recipes(builds=tuple(torch + tf), cudnn=rels, driver_floors=FLOORS)
    gpu = draw(st.sampled_from(CCS + ("7.5", "8.0", "9.0", None)))
    driver = draw(st.sampled_from(("470.82.01", "535.104.05", "580.82.07", "580.82.07")))
    python = draw(st.sampled_from(("3.11.9", "3.12.3")))
    frameworks, dists, libs, loads = [], {}, [], []
    if torch and draw(st.booleans()):
        b = draw(st.sampled_from(torch))
        frameworks.append(m.FrameworkBuild("torch", "torch", f"{b.version}+{b.variant}", variant=b.variant,
                                           cuda=b.cuda, cudnn=b.cudnn, compute_capabilities=b.compute_capabilities,
                                           ptx=b.ptx))
        dists["torch"] = f"{b.version}+{b.variant}"
        rel = draw(st.sampled_from(sorted(RELEASES)))
        dist, ver = sorted(RELEASES[rel].pip.items())[-1]
        copy = pip_copy(ver, dist)
        libs.append(copy)
        dists[dist] = ver
        if int(b.cudnn.split(".")[0]) == copy.major:
            loads.append(load("torch", copy, major=copy.major))
    names = ["torch"] if torch else []
    names += ["tensorflow"] if tf else []
    asked = tuple(draw(st.sets(st.sampled_from(names), max_size=2))) if names else ()
    if not asked and not frameworks:
        asked = tuple(names[:1])
    versions = {}
    if asked and draw(st.booleans()):
        f = asked[0]
        versions[f] = draw(st.sampled_from([b.version for b in (torch if f == "torch" else tf)]))
    cudnn_from = draw(st.sampled_from((None, None, "pip", "apt", "conda")))
    intent = m.Intent(frameworks=asked, versions=versions, cudnn_from=cudnn_from)
    env = make_env(gpu_cc=gpu, driver=driver, python=python, dists=dists, frameworks=frameworks,
                   libraries=libs, loads=loads)
    return env, intent, recipes


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_stacks_obey_every_rule_and_nothing_satisfiable_is_refused(problem):
    env, intent, recipes = problem
    try:
        stack = resolve(env, intent, recipes)
    except UsageError:
        return
    except Unsatisfiable as exc:
        found = brute_force(env, intent, recipes)
        assert found is None, f"called unsatisfiable ({exc.clashes}) but this fits: {found}"
        assert exc.clashes, "an unsatisfiable answer must say what clashes"
        return
    choices, cudnn = from_stack(env, stack)
    assert violations(env, intent, recipes, choices, cudnn) == []
