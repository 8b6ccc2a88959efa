"""Real Jupyter kernels in tests (jupyter_client + ipykernel): an interpreter that sees this test
environment's packages, running a cell and reading its output, and the apply JSON schema check."""

from __future__ import annotations

import functools
import json
import os
import site
import time
from pathlib import Path
from typing import Any, Dict


def see_this_environment(site_packages: Path) -> None:
    """Let another interpreter (a test venv) import this environment's packages (fixer, ipykernel,
    ...) after its own, through a .pth in its `site_packages`."""
    parents = [p for p in site.getsitepackages() if os.path.isdir(p)]
    (site_packages / "_ccf_parent.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in parents) + "\n"
    )


def run_cell(client: Any, code: str, timeout: float = 180) -> str:
    """Execute `code` in the kernel; return its stdout; fail on an error."""
    msg_id = client.execute(code)
    out = []
    deadline = time.monotonic() + timeout
    while True:
        msg = client.get_iopub_msg(timeout=max(1.0, deadline - time.monotonic()))
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream" and content["name"] == "stdout":
            out.append(content["text"])
        elif kind == "error":
            raise AssertionError("kernel error: " + "\n".join(content["traceback"]))
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out)


def validate_apply(payload: Dict[str, Any]) -> None:
    """`payload` is valid against fixer/schemas/apply.json (with the schemas it refers to)."""
    _apply_validator().validate(payload)


@functools.lru_cache(maxsize=None)
def _apply_validator() -> Any:
    import jsonschema
    from referencing import Registry, Resource

    import fixer

    schemas = Path(fixer.__file__).parent / "schemas"
    docs = [json.loads(p.read_text()) for p in schemas.glob("*.json")]
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs)
    schema = json.loads((schemas / "apply.json").read_text())
    return jsonschema.validators.validator_for(schema)(schema, registry=registry)
