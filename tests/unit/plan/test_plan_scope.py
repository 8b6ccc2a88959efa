"""What a plan says and what it touches, over generated machines with torch
(pip cuDNN) and TensorFlow (apt cuDNN) installed side by side, either or both broken:

- the summary names exactly what the steps install: every "install/reinstall X V" line of
  fixer.render.plan.cudnn_lines is a package a step installs, and every cuDNN package a step
  installs has such a line (per major, with the frameworks that map it);
- `--framework F` touches only F's closure: every pin that changes, every apt and conda package,
  is F's own build (its packages, requirements, companions) or the cuDNN of a major F's chosen
  build needs; and the plan's simulated check answers for F only.
"""

from __future__ import annotations

import re
from typing import List, Set, Tuple

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.errors import Unsatisfiable, UsageError
from fixer.pipeline import resolve
from fixer.planner.steps import make_plan
from fixer.render.plan import cudnn_lines
from fixer.system.versions import split_requirement, version_key

from tests.helpers.envs import (
    APT_DIR,
    apt_copy,
    cudnn,
    load,
    make_env,
    pip_copy,
    small_recipes,
    tf_build,
    torch_build,
)
from tests.helpers.examples import examples

PIP = {"8.9.7": "8.9.7.29", "9.1.0": "9.1.0.70", "9.3.0": "9.3.0.75"}
APT8 = ("8.9.0.131", "8.9.6.50", "8.9.7.29")


def _releases() -> List[m.CudnnRelease]:
    out = [cudnn("9.1.0", (12,), pip={"nvidia-cudnn-cu12": PIP["9.1.0"]})]
    out.append(
        cudnn(
            "9.3.0",
            (12,),
            pip={"nvidia-cudnn-cu12": PIP["9.3.0"]},
            apt={"libcudnn9-cuda-12": "9.3.0.75-1"},
        )
    )
    for v in APT8:
        pip = {"nvidia-cudnn-cu12": v} if v == "8.9.7.29" else {}
        out.append(cudnn(v.rsplit(".", 1)[0], (12,), pip=pip, apt={"libcudnn8": f"{v}-1+cuda12.2"}))
    return out


@st.composite
def machines(draw):
    torch_cudnn = draw(st.sampled_from(("9.1.0", "9.3.0")))
    tf_cudnn = draw(st.sampled_from(("8.6.0", "8.9.0", "8.9.7")))
    torch_b = torch_build("2.4.0", "cu124", "12.4", torch_cudnn, pin=PIP[torch_cudnn])
    tf_b = tf_build("2.15.0", "12.2", tf_cudnn)
    pip_have = draw(st.sampled_from(("9.1.0.70", "9.3.0.75")))
    apt_have = draw(st.sampled_from(APT8))
    pcopy = pip_copy(pip_have)
    acopy = apt_copy("libcudnn8", f"{apt_have}-1+cuda12.2")
    fw = [
        m.FrameworkBuild(
            "torch", "torch", "2.4.0+cu124", variant="cu124", cuda="12.4", cudnn=torch_cudnn
        ),
        m.FrameworkBuild(
            "tensorflow", "tensorflow", "2.15.0", variant="and-cuda", cuda="12.2", cudnn=tf_cudnn
        ),
    ]
    env = make_env(
        dists={"torch": "2.4.0+cu124", "tensorflow": "2.15.0", "nvidia-cudnn-cu12": pip_have},
        frameworks=fw,
        libraries=[pcopy, acopy],
        loads=[
            load("torch", pcopy, major=9),
            load(
                "tensorflow", acopy, major=8, via="ld.so.cache", search=(("ld.so.cache", APT_DIR),)
            ),
        ],
    )
    asked = draw(st.sampled_from(((), ("torch",), ("tensorflow",))))
    cudnn_from = draw(st.sampled_from((None, "apt", "pip")))
    intent = m.Intent(frameworks=asked, cudnn_from=cudnn_from)
    return env, intent, small_recipes([torch_b, tf_b], _releases())


def _installed_by_steps(plan: m.Plan) -> Set[Tuple[str, str]]:
    out: Set[Tuple[str, str]] = set()
    for s in plan.steps:
        for text in s.packages:
            if s.kind == "pip-install":
                name, ver = split_requirement(text)
            elif s.kind == "apt-install":
                name, _, ver = text.partition("=")
            elif s.kind == "conda-install":
                name, ver = split_requirement(text)
            else:
                continue
            if ver and re.match(r"^(nvidia-cudnn-|libcudnn|cudnn$)", name):
                out.add((name, ver))
    return out


def _plan(env, intent, recipes):
    try:
        stack = resolve(env, intent, recipes)
    except (Unsatisfiable, UsageError):
        return None
    return make_plan(env, stack)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machines())
def test_the_summary_names_exactly_what_the_steps_install(machine):
    plan = _plan(*machine)
    if plan is None:
        return
    said: Set[Tuple[str, str]] = set()
    for line in cudnn_lines(plan):
        m_ = re.search(r": (install|reinstall|keep) (\S+) (\S+) from (\w+)$", line)
        assert m_ or ": keep the " in line, line
        if m_ and m_.group(1) != "keep":
            said.add((m_.group(2), m_.group(3)))
    assert said == _installed_by_steps(plan)


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(machines())
def test_framework_touches_only_its_closure(machine):
    env, intent, recipes = machine
    if not intent.frameworks:
        return
    plan = _plan(env, intent, recipes)
    if plan is None:
        return
    (f,) = intent.frameworks
    stack = plan.stack
    assert [c.framework for c in stack.choices] == [f]
    build = stack.choices[0].build
    own = {split_requirement(r)[0] for r in build.packages + build.requires + build.companions}
    own.add(f)
    major = str(version_key(build.cudnn)[0]) if build.cudnn else None
    cudnn_pkgs = {c.package.name for k, c in stack.cudnn_copies.items() if k == major and c.package}
    for p in stack.pins:
        if p.action == "keep":
            continue
        if p.name in own or p.name in cudnn_pkgs:
            continue
        # a pip cuDNN wheel of F's major that must go for F's copy to load
        assert p.action == "remove" and p.name.startswith("nvidia-cudnn-"), p
        assert major is not None and version_key(p.installed or "")[:1] == (int(major),), p
    assert set(stack.apt) <= cudnn_pkgs and set(stack.conda) <= cudnn_pkgs
    assert set(stack.cudnn_copies) <= ({major} if major else set())
    for fx in stack.env_fixes:
        assert "tensorflow" not in fx.why or f == "tensorflow", fx
