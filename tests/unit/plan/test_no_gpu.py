"""No GPU visible (fixer.diagnosis.nogpu): doctor, plan and apply say what to do for this kind of machine
and exit 3 when something installed needs a GPU; 0 when nothing does."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.cli import main
from fixer.diagnosis.findings import diagnose
from fixer.diagnosis.nogpu import COLAB_HINT, no_gpu
from fixer.planner.steps import load_environment
from fixer.recipebook import load
from tests.helpers.examples import examples

CPU_ENV = "colab-2026-08-cpu"


def _run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out + out.err


def test_plan_on_a_colab_cpu_runtime_with_cuda_builds_exits_3_with_the_runtime_hint(capsys):
    code, text = _run(capsys, "plan", "--environment", CPU_ENV)
    assert code == 3
    assert "Runtime → Change runtime type → a GPU" in text and "Traceback" not in text
    code, text = _run(capsys, "plan", "--environment", CPU_ENV, "--json")
    data = json.loads(text)
    assert (
        code == 3
        and data["no_gpu"] is True
        and data["exit_code"] == 3
        and COLAB_HINT in data["hint"]
    )
    assert data["plan"]["steps"] == []


def test_apply_on_a_colab_cpu_runtime_changes_nothing_and_exits_3(capsys, tmp_path):
    code, text = _run(
        capsys, "apply", "--dry-run", "--environment", CPU_ENV, "--root", str(tmp_path)
    )
    assert code == 3 and "Runtime → Change runtime type" in text
    code, text = _run(capsys, "apply", "--dry-run", "--environment", CPU_ENV)
    assert code == 3 and "Runtime → Change runtime type" in text
    for sandbox in ([], ["--root", str(tmp_path)]):  # another machine's plan never runs here
        code, text = _run(capsys, "apply", "--environment", CPU_ENV, *sandbox)
        assert code == 2 and "--dry-run" in text
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a journal


def test_doctor_finding_carries_the_hint_as_its_fix():
    env, _, _ = load_environment(CPU_ENV)
    (f,) = [f for f in diagnose(env, load()) if f.id == "gpu-missing"]
    assert f.severity == "error" and COLAB_HINT in f.fix
    verdict = no_gpu(env, [f])
    assert verdict is not None and verdict.exit_code == 3


@settings(max_examples=examples(60), deadline=None)
@given(
    kind=st.sampled_from(["colab", "kaggle", "linux", "docker"]),
    accelerator=st.sampled_from([None, "cpu", "tpu"]),
    keep_frameworks=st.booleans(),
    hidden=st.booleans(),
)
def test_exit_code_and_hint_follow_the_rule(kind, accelerator, keep_frameworks, hidden):
    # The rule, from DESIGN's conventions: no GPU + a GPU framework installed -> 3; nothing
    # needs a GPU -> 0; the hint names what to do on this kind of machine.
    base, _, _ = load_environment(CPU_ENV)
    environ = dict(base.env)
    if hidden:
        environ["CUDA_VISIBLE_DEVICES"] = ""
    env = dataclasses.replace(
        base,
        runtime=dataclasses.replace(base.runtime, kind=kind, accelerator=accelerator),
        frameworks=base.frameworks if keep_frameworks else (),
        env=environ,
        probes=base.probes
        + (
            (
                type(base.probes[0])(
                    "CUDA_VISIBLE_DEVICES", False, "CUDA_VISIBLE_DEVICES='' hides every GPU"
                ),
            )
            if hidden and base.probes
            else ()
        ),
    )
    verdict = no_gpu(env, diagnose(env, load()))
    assert verdict is not None
    hiding = hidden and bool(base.probes)  # CUDA_VISIBLE_DEVICES hides a GPU: always a problem
    needs = (keep_frameworks and any(f.is_cuda_build for f in base.frameworks)) or hiding
    assert verdict.exit_code == (3 if needs else 0)
    if hiding:
        assert "CUDA_VISIBLE_DEVICES" in verdict.hint
    elif needs and kind == "colab":
        assert COLAB_HINT in verdict.hint
    if needs and kind == "linux" and not hiding:
        assert "Runtime" not in verdict.hint
