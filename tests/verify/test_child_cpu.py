"""The child's conv code run for real on the CPU (`--device cpu`: the "GPU" side is the CPU),
with real torch / JAX interpreters named in FIXER_VERIFY_TEST_PYTHONS (colon-separated).
Skipped when unset: the project's own environment has no framework (CI installs none)."""
from __future__ import annotations

import os
import subprocess

import pytest

from fixer.verify import CHILD, classify, parse_records

PYTHONS = [p for p in os.environ.get("FIXER_VERIFY_TEST_PYTHONS", "").split(":") if p]


def _has(py: str, module: str) -> bool:
    return subprocess.run([py, "-c", f"import {module}"], capture_output=True, timeout=120).returncode == 0


@pytest.mark.skipif(not PYTHONS, reason="set FIXER_VERIFY_TEST_PYTHONS to interpreters with torch and/or jax")
@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_conv_cases_against_the_reference_on_cpu(framework):
    pys = [p for p in PYTHONS if _has(p, framework)]
    if not pys:
        pytest.skip(f"no interpreter with {framework}")
    proc = subprocess.run([pys[0], str(CHILD), framework, "--device", "cpu", "--cc", "8.0"],
                          capture_output=True, text=True, timeout=300)
    r = classify(framework, parse_records(proc.stdout), stdout=proc.stdout, stderr=proc.stderr,
                 returncode=proc.returncode)
    # torch: 3 shapes x 3 dtypes; JAX: 3 fp32 shapes + fp16/bf16 on the 16-channel shape (compile time)
    assert len(r.cases) == (9 if framework == "torch" else 5), r
    assert {c["dtype"] for c in r.cases} == {"float32", "float16", "bfloat16"}
    assert all(c["ok"] for c in r.cases), r.cases
    assert r.status == "passed"
