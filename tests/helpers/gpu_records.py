"""verify's results as recorded on the GPU machine, read back into CheckResult values.

tests/data/gpu_machine/recorded/verify_2026-11-26.txt is what scripts/device/verify.sh printed on
an H200 for each scenario (healthy, pip cuDNN hidden, engines_precompiled missing, no GPU
visible, mixed copies): per framework the status, finding ids and titles, cuDNN loaded and
built, timings, case count (with "WRONG:" where numbers were wrong), summary, mapped
directories and errors, then the `ls -la` of the pip cuDNN directory (the mapped file names).
recorded/verify_jit_2026-11-26b.txt holds torch's per-case rows (case, dtype, layout, first ms, ok,
max error) from the same machine: a torch result's cases are a recorded block with as many
cases and the same outcome. Where nothing was recorded per case (JAX, CuPy), the cases are the
child's own plan for the recorded GPU (fixer.children.verify.plan_cases), and the numbers that
were not recorded are left None.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Tuple

from fixer.model import CheckResult, Finding

DATA = Path(__file__).resolve().parents[1] / "data" / "gpu_machine"
#: copies of docs/measurements/runs-2026-11-26/verify.txt and runs-2026-11-26b/verify_jit.txt
#: (the measurement logs live in docs/measurements; the test reads only these fixtures)
VERIFY = DATA / "recorded" / "verify_2026-11-26.txt"
JIT = DATA / "recorded" / "verify_jit_2026-11-26b.txt"

_RESULT = re.compile(
    r"^   (?P<fw>\S+)\s+(?P<status>passed|failed|crashed|timeout|skipped)\s+findings=(?P<ids>\S+) "
    r"loaded=(?P<loaded>\S+) built=(?P<built>\S+) import=(?P<imp>\S+)s child=(?P<child>\S+)s verify-own=\S+ "
    r"first=(?P<first>\S+)s steady=(?P<steady>\S+)ms cases=(?P<n>\d+)(?: WRONG: (?P<wrong>.*))?$"
)
_CASE = re.compile(
    r"^\s+(?P<case>\S+)\s+(?P<dtype>float32|float16|bfloat16)\s+(?P<layout>NCHW|NHWC)\s+"
    r"first=\s*(?P<first>[\d.]+)ms ok=(?P<ok>True|False) err=(?P<err>\S+)"
)
_SCENARIO = re.compile(r"^## (?P<name>\S+)\s+\(expect: .*\)\s+exit=\d+")


def _num(text: str) -> Any:
    return None if text in ("None", "-") else float(text)


def torch_case_blocks() -> List[List[Dict[str, Any]]]:
    """Each run's case rows in verify_jit.txt, as the child's case records."""
    from fixer.children.verify import TOLERANCE

    blocks: List[List[Dict[str, Any]]] = []
    for line in JIT.read_text().splitlines():
        m = _CASE.match(line)
        if not m:
            if blocks and blocks[-1]:
                blocks.append([])
            continue
        if not blocks:
            blocks.append([])
        blocks[-1].append(
            {
                "case": m["case"],
                "dtype": m["dtype"],
                "layout": m["layout"],
                "max_error": float(m["err"]),
                "tolerance": TOLERANCE[m["dtype"]],
                "ok": m["ok"] == "True",
                "first_ms": float(m["first"]),
                "steady_ms": None,
            }
        )
    return [b for b in blocks if b]


def _cases(
    fw: str, n: int, passed: bool, cc: Tuple[int, int], steady_ms: Any
) -> Tuple[Dict[str, Any], ...]:
    from fixer.children import verify as child

    if n == 0:
        return ()
    if fw == "torch":
        for block in torch_case_blocks():
            if len(block) == n and all(c["ok"] for c in block) == passed:
                return tuple(
                    dict(c, steady_ms=steady_ms if i == 0 else None) for i, c in enumerate(block)
                )
    if fw == "cupy":
        plan = [("float32", "-", ("gemm-256",))]
    else:
        plan = child.plan_cases(fw, cc)
    return tuple(
        {
            "case": case[0],
            "dtype": dtype,
            "layout": layout,
            "max_error": None,
            "tolerance": child.TOLERANCE[dtype],
            "ok": passed,
            "first_ms": None,
            "steady_ms": steady_ms if i == 0 else None,
        }
        for i, (dtype, layout, case) in enumerate(plan[:n])
    )


def verify_runs() -> List[Tuple[str, List[CheckResult]]]:
    """(scenario, its results) for every scenario recorded in verify.txt, in order."""
    lines = VERIFY.read_text().splitlines()
    device, _driver, cc_text = (x.strip() for x in lines[1].split(","))
    cc = tuple(int(x) for x in cc_text.split("."))
    libs = [
        line.split()[-1]
        for line in lines
        if line.startswith("-") and re.search(r"\slibcudnn[a-z_]*\.so\.\d+$", line)
    ]
    runs: List[Tuple[str, List[Dict[str, Any]]]] = []
    for line in lines:
        s = _SCENARIO.match(line)
        if s:
            runs.append((s["name"], []))
            continue
        m = _RESULT.match(line)
        if m and runs:
            runs[-1][1].append({"m": m, "summary": "", "dirs": [], "errors": [], "titles": {}})
            continue
        if not (runs and runs[-1][1] and line.startswith(" " * 14)):
            continue
        cur, body = runs[-1][1][-1], line.strip()
        key, _, rest = body.partition(": ")
        if key == "summary":
            cur["summary"] = rest
        elif key == "mapped cuDNN dirs":
            cur["dirs"] = [] if rest == "-" else rest.split(", ")
        elif key == "error":
            cur["errors"].append(rest)
        else:
            cur["titles"][key] = rest
    out: List[Tuple[str, List[CheckResult]]] = []
    for name, recs in runs:
        results = []
        for rec in recs:
            m = rec["m"]
            ids = [] if m["ids"] == "-" else m["ids"].split(",")
            steady = _num(m["steady"])
            results.append(
                CheckResult(
                    framework=m["fw"],
                    status=m["status"],
                    summary=rec["summary"],
                    findings=tuple(
                        Finding(
                            id=i,
                            severity="error",
                            title=rec["titles"].get(i, i),
                            frameworks=(m["fw"],),
                        )
                        for i in ids
                    ),
                    cudnn_loaded=None if m["loaded"] == "None" else m["loaded"],
                    cudnn_built=None if m["built"] == "None" else m["built"],
                    mapped=tuple(f"{d}/{lib}" for d in rec["dirs"] for lib in libs),
                    cases=_cases(m["fw"], int(m["n"]), not m["wrong"], cc, steady),  # type: ignore[arg-type]
                    first_seconds=_num(m["first"]),
                    steady_seconds=None if steady is None else steady / 1000,
                    seconds=_num(m["child"]),
                    import_seconds=_num(m["imp"]),
                    device=device,
                    compute_capability=cc_text,
                    errors=tuple(rec["errors"]),
                )
            )
        out.append((name, results))
    return out
