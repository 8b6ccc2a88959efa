"""Plans for the REAL environments `doctor --json` recorded on the GPU machine (H200, driver
580.159.04, torch 2.11.0+cu130 whose dist-info says 2.11.0, JAX 0.11.2), one per breakage of
scripts/device/doctor.sh. A synthesised environment once hid a bug here: torch/version.py's
local tag made the resolver reinstall a healthy torch."""

import json

import pytest

from fixer import model as m
from fixer.diagnosis.findings import diagnose
from fixer.planner.steps import make_plan
from fixer.recipebook import load
from fixer.resolver import resolve
from tests.helpers.paths import DATA

# the recorded doctor_cases_h200.jsonl in today's schema (scripts/make_environments.py writes it)
CASES = DATA / "gpu_machine" / "doctor_cases_h200.current.jsonl"
REPAIR = [("pip-install", ("nvidia-cudnn-cu13==9.19.0.56",)), ("verify", ())]


def _cases():
    for line in CASES.read_text().splitlines():
        case = json.loads(line)
        yield case["label"], m.from_dict(m.Environment, case["environment"])


@pytest.mark.parametrize(
    "label,env", list(_cases()), ids=lambda v: v[:24] if isinstance(v, str) else ""
)
def test_recorded_case_plans_the_minimal_repair(label, env):
    recipes = load()
    if not env.gpus:  # CUDA_VISIBLE_DEVICES= : nothing to repair
        assert any(f.id == "gpu-missing" for f in diagnose(env, recipes))
        return
    plan = make_plan(env, resolve(env, m.Intent(), recipes))
    steps = [(s.kind, s.packages) for s in plan.steps]
    if label.startswith(("healthy", "garbage")):
        assert plan.nothing_to_do, steps
    else:  # pip cuDNN hidden / sub-libraries missing: only the cuDNN wheel, never torch
        assert steps == REPAIR
        assert not any(
            p.split("==")[0] in ("torch", "jax", "jaxlib") for s in plan.steps for p in s.packages
        )
