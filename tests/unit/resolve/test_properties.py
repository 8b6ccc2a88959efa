"""Property tests (hypothesis): every stack the resolver returns satisfies every rule (checked
by tests/unit/resolve/checker.py, written independently), and no satisfiable input is called
unsatisfiable (compared with a brute-force search over small random recipe sets)."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.errors import Unsatisfiable, UsageError
from fixer.pipeline import resolve

from tests.unit.resolve.checker import brute_force, from_stack, violations
from tests.helpers.envs import FLOORS, load, make_env, pip_copy
from tests.helpers.examples import examples

CUDAS = ("11.8", "12.4", "12.8", "13.0")
CUDNNS = ("8.9.0", "9.1.0", "9.3.0", "9.10.2", "9.19.0")
CCS = ("6.0", "7.0", "7.5", "8.0", "9.0")
RELEASES = {
    "8.9.7": m.CudnnRelease(
        "8.9.7",
        (11, 12),
        "5.0",
        "9.0",
        {"nvidia-cudnn-cu12": "8.9.7.29"},
        {"libcudnn8": "8.9.7.29-1+cuda12.2"},
    ),
    "9.1.0": m.CudnnRelease("9.1.0", (11, 12), "5.0", None, {"nvidia-cudnn-cu12": "9.1.0.70"}),
    "9.3.0": m.CudnnRelease(
        "9.3.0",
        (12,),
        None,
        None,
        {"nvidia-cudnn-cu12": "9.3.0.75"},
        {"libcudnn9-cuda-12": "9.3.0.75-1"},
    ),
    "9.10.2": m.CudnnRelease("9.10.2", (12,), "5.0", None, {"nvidia-cudnn-cu12": "9.10.2.21"}),
    "9.19.0": m.CudnnRelease(
        "9.19.0",
        (12, 13),
        "7.5",
        None,
        {"nvidia-cudnn-cu12": "9.19.0.56", "nvidia-cudnn-cu13": "9.19.0.56"},
    ),
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
        out.append(
            m.Build(
                framework,
                version,
                variant,
                cuda,
                cudnn,
                python,
                ccs,
                ptx,
                packages=(f"{framework}=={version}+{variant}",),
            )
        )
    return out


@st.composite
def problems(draw):
    torch = draw(builds("torch", draw(st.integers(0, 3))))
    tf = draw(builds("tensorflow", draw(st.integers(0, 2))))
    rels = tuple(
        RELEASES[k]
        for k in sorted(draw(st.sets(st.sampled_from(sorted(RELEASES)), min_size=2, max_size=5)))
    )
    recipes = m.Recipes(builds=tuple(torch + tf), cudnn=rels, driver_floors=FLOORS)
    gpu = draw(st.sampled_from(CCS + ("7.5", "8.0", "9.0", None)))
    driver = draw(st.sampled_from(("470.82.01", "535.104.05", "580.82.07", "580.82.07")))
    python = draw(st.sampled_from(("3.11.9", "3.12.3")))
    frameworks, dists, libs, loads = [], {}, [], []
    if torch and draw(st.booleans()):
        b = draw(st.sampled_from(torch))
        frameworks.append(
            m.FrameworkBuild(
                "torch",
                "torch",
                f"{b.version}+{b.variant}",
                variant=b.variant,
                cuda=b.cuda,
                cudnn=b.cudnn,
                compute_capabilities=b.compute_capabilities,
                ptx=b.ptx,
            )
        )
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
    env = make_env(
        gpu_cc=gpu,
        driver=driver,
        python=python,
        dists=dists,
        frameworks=frameworks,
        libraries=libs,
        loads=loads,
    )
    return env, intent, recipes


def _torch_cu118_on_pip_copy(copy_version, torch_cudnn, builds, intent):
    """torch 2.0.0+cu118 (built with cuDNN `torch_cudnn`) loading the pip cuDNN wheel `copy_version`, on a
    Tesla T4-class GPU (SM 6.0) under driver 535; `builds`: (framework, version, variant, cuda, cudnn)."""
    recipes = m.Recipes(
        builds=tuple(
            m.Build(f, v, var, cuda, cudnn, "", ("6.0", "7.0"), None, packages=(f"{f}=={v}+{var}",))
            for f, v, var, cuda, cudnn in builds
        ),
        cudnn=(RELEASES["8.9.7"], RELEASES["9.1.0"]),
        driver_floors=FLOORS,
    )
    copy = pip_copy(copy_version)
    fb = m.FrameworkBuild(
        "torch",
        "torch",
        "2.0.0+cu118",
        variant="cu118",
        cuda="11.8",
        cudnn=torch_cudnn,
        compute_capabilities=("6.0", "7.0"),
    )
    env = make_env(
        gpu_cc="6.0",
        driver="535.104.05",
        python="3.11.9",
        dists={"torch": "2.0.0+cu118", "nvidia-cudnn-cu12": copy_version},
        frameworks=[fb],
        libraries=[copy],
        loads=[load("torch", copy, major=copy.major)],
    )
    return env, intent, recipes


def _kept_copy_whose_user_leaves():
    """Found by this test: torch 2.0.0+cu118 loads pip cuDNN 9.1.0.70 and moves to a cuDNN 8 build while a
    new TensorFlow needs cuDNN 9, with --cudnn-from apt. The pip copy may stay against --cudnn-from only while
    the frameworks that load it keep a build of its major; for TensorFlow it is a new copy (rules: --cudnn-from
    names where a new copy comes from)."""
    return _torch_cu118_on_pip_copy(
        "9.1.0.70",
        "9.1.0",
        [
            ("torch", "2.0.0", "cu118", "11.8", "9.1.0"),
            ("torch", "2.1.0", "cu124", "12.4", "8.9.0"),
            ("tensorflow", "2.10.0", "cu124", "12.4", "9.1.0"),
        ],
        m.Intent(frameworks=("torch", "tensorflow"), cudnn_from="apt"),
    )


def _asked_version_leaves_the_kept_major():
    """Found by this test (CI, 2026-11-26): torch 2.0.0+cu118 loads pip cuDNN 8.9.7 with --cudnn-from apt,
    and the user asks for torch 2.1.0, whose only build needs cuDNN 9. The pip copy is kept only while torch
    keeps a cuDNN 8 build, so the user's ask holds it: explaining that clash must weigh the ask against
    torch's real builds (it probed with a package candidate and raised AttributeError)."""
    return _torch_cu118_on_pip_copy(
        "8.9.7.29",
        "8.9.0",
        [
            ("torch", "2.0.0", "cu118", "11.8", "8.9.0"),
            ("torch", "2.1.0", "cu118", "11.8", "9.1.0"),
            ("tensorflow", "2.10.0", "cu118", "11.8", "8.9.0"),
            ("tensorflow", "2.11.0", "cu124", "12.4", "8.9.0"),
        ],
        m.Intent(frameworks=("torch", "tensorflow"), versions={"torch": "2.1.0"}, cudnn_from="apt"),
    )


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
@example(_kept_copy_whose_user_leaves())
@example(_asked_version_leaves_the_kept_major())
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
