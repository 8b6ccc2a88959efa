"""The child's conv code run for real on the CPU (`--device cpu`: the "GPU" side is the CPU),
with real torch / JAX / TensorFlow interpreters named in FIXER_VERIFY_TEST_PYTHONS (colon-separated).
Skipped when unset: the project's own environment has no framework (CI installs none)."""

from __future__ import annotations

import os
import subprocess

import pytest

from fixer.verifier.checks import CHILD, classify, parse_records

PYTHONS = [p for p in os.environ.get("FIXER_VERIFY_TEST_PYTHONS", "").split(":") if p]


def _has(py: str, module: str) -> bool:
    return (
        subprocess.run([py, "-c", f"import {module}"], capture_output=True, timeout=120).returncode
        == 0
    )


@pytest.mark.skipif(
    not PYTHONS,
    reason="set FIXER_VERIFY_TEST_PYTHONS to interpreters with torch, jax or tensorflow",
)
@pytest.mark.parametrize("framework", ["torch", "jax", "tensorflow"])
def test_conv_cases_against_the_reference_on_cpu(framework):
    pys = [p for p in PYTHONS if _has(p, framework)]
    if not pys:
        pytest.skip(f"no interpreter with {framework}")
    proc = subprocess.run(
        [pys[0], str(CHILD), framework, "--device", "cpu", "--cc", "8.0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    r = classify(
        framework,
        parse_records(proc.stdout),
        stdout=proc.stdout,
        stderr=proc.stderr,
        returncode=proc.returncode,
    )
    # torch, TF: 3 fp32 shapes + fp16/bf16 on 2 shapes; JAX: 2 fp32 shapes + bf16 (plan_cases says why)
    assert len(r.cases) == (3 if framework == "jax" else 7), r
    assert {c["dtype"] for c in r.cases} == (
        {"float32", "bfloat16"} if framework == "jax" else {"float32", "float16", "bfloat16"}
    )
    assert all(c["ok"] for c in r.cases), r.cases
    assert r.status == "passed"


@pytest.mark.parametrize(
    "framework,cc,expect",
    [
        ("torch", (9, 0), [("float32", 3), ("float16", 2), ("bfloat16", 2)]),
        ("tensorflow", (8, 0), [("float32", 3), ("float16", 2), ("bfloat16", 2)]),
        ("torch", (7, 5), [("float32", 3), ("float16", 2)]),  # T4: no bfloat16
        (
            "jax",
            (9, 0),
            [("float32", 2), ("bfloat16", 1)],
        ),  # the one reduced precision JAX trains in
        ("jax", (7, 5), [("float32", 2), ("float16", 1)]),  # T4: float16 instead
        ("jax", (6, 0), [("float32", 2)]),  # P100: no tensor cores
        ("torch", None, [("float32", 3)]),
    ],
)
def test_plan_cases(framework, cc, expect):
    from collections import Counter

    from fixer.children import verify as child

    plan = child.plan_cases(framework, cc)
    assert sorted(Counter(d for d, _, _ in plan).items()) == sorted(expect)
    assert all(layout == ("NCHW" if d == "float32" else "NHWC") for d, layout, _ in plan)
    shapes = {c[0] for _, _, c in plan}
    assert shapes == (
        {c[0] for c in child.CASES[:2]} if framework == "jax" else {c[0] for c in child.CASES}
    )
