"""`report`: the machine's GPU stack as one plain value meant for pasting into a bug report.

    value = build_report(env, findings, healthy=..., exit_code=..., redaction=Redaction.for_machine(os.environ))

fixer.render.report turns the value into markdown or HTML (one renderer for `report`,
`report --html` and the notebook rendering of the API's results). Pure: no I/O, no printing.
Redaction (environment variables from an allowlist, URL userinfo, private addresses, host
names, homes by path component) has one home, fixer.system.redact; `Redaction` and `redact`
are re-exported here for the CLI.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

from fixer.model import Environment, Finding, FrameworkBuild, LoadResolution, to_dict
from fixer.render.report import html
from fixer.system.redact import HOME_HOLDERS, Redaction, redact, reportable_env

#: Version of the `report --json` value. 2: a cuDNN copy's "package" is an object {"name", "version"}
#: (1 had one string "name version"). Nothing in the tool reads reports back; fixer/schemas/report.json
#: describes this version only.
REPORT_SCHEMA = 2


def _load(env: Environment, consumer: str, library: str = "cudnn") -> Optional[LoadResolution]:
    return next((x for x in env.loads if x.consumer == consumer and x.library == library), None)


def _why(res: LoadResolution) -> str:
    """Why this copy loads, in words: the loader step that found it, and what it beat."""
    if res.path is None:
        return res.error or "not found on any search path"
    words = {
        "preload": "the framework preloads it by path",
        "DT_RPATH": "the library's DT_RPATH",
        "DT_RUNPATH": "the library's DT_RUNPATH",
        "LD_LIBRARY_PATH": "LD_LIBRARY_PATH",
        "LD_PRELOAD": "LD_PRELOAD",
        "ld.so.cache": "ld.so.cache (ldconfig)",
        "default": "the default directories",
    }
    why = f"found through {words.get(res.via, res.via or 'the loader')}"
    if res.intended and os.path.normpath(os.path.dirname(res.intended)) != os.path.normpath(
        res.directory or ""
    ):
        why += f", ahead of the copy the framework points at ({res.intended})"
    if res.shadowed:
        why += f"; also present: {', '.join(res.shadowed[:3])}"
    return why


def _kernels(fw: FrameworkBuild) -> str:
    if fw.arch_list:
        return " ".join(fw.arch_list)
    if fw.compute_capabilities:
        return ", ".join(fw.compute_capabilities) + (f" +PTX {fw.ptx}" if fw.ptx else "")
    return ""


def _framework(env: Environment, fw: FrameworkBuild) -> Dict[str, Any]:
    res = _load(env, fw.framework)
    return {
        "framework": fw.framework,
        "distribution": fw.distribution,
        "version": fw.version,
        "variant": fw.variant,
        "cuda": fw.cuda,
        "cudnn_built": fw.cudnn,
        "cuda_build": fw.is_cuda_build,
        "kernels": _kernels(fw),
        "kernels_from": fw.arch_source or ("build_info" if fw.compute_capabilities else None),
        "cudnn_loads": None
        if res is None
        else {
            "version": res.version,
            "path": res.path,
            "via": res.via,
            "why": _why(res),
            "error": res.error,
        },
        "source": fw.source,
    }


def _copies(env: Environment) -> List[Dict[str, Any]]:
    return [
        {
            "library": c.library,
            "version": c.version,
            "origin": c.origin,
            "package": None
            if c.package is None
            else {"name": c.package.name, "version": c.package.version},
            "directory": c.directory,
            "missing": list(c.missing),
            "mixed": c.mixed,
        }
        for c in env.libraries
        if c.library == "cudnn"
    ]


def _machine(env: Environment) -> Dict[str, Any]:
    rt = env.runtime
    return {
        "runtime": {
            "kind": rt.kind,
            "accelerator": rt.accelerator,
            "image": rt.image,
            "os": rt.os_name,
            "arch": rt.arch,
            "glibc": rt.glibc,
        },
        "python": None
        if env.python is None
        else {
            "version": env.python.version,
            "executable": env.python.executable,
            "venv": env.python.is_venv,
        },
        "gpus": [
            {
                "name": g.name,
                "compute_capability": g.compute_capability,
                "memory_mib": g.memory_mib,
                "source": g.source,
            }
            for g in env.gpus
        ],
        "driver": {
            "version": env.driver.version,
            "cuda": env.driver.cuda_version,
            "error": env.driver.error,
        },
    }


def build_report(
    env: Environment,
    findings: Sequence[Finding],
    *,
    healthy: bool,
    exit_code: int,
    redaction: Optional[Redaction] = None,
) -> Dict[str, Any]:
    """The report as plain data (the `report --json` payload): what a maintainer needs to see.
    Its environment variables are only those of the allowlist (fixer.system.redact), with or
    without `redaction`."""
    value: Dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "tool_version": env.tool_version,
        "healthy": healthy,
        "exit_code": exit_code,
        **_machine(env),
        "frameworks": [_framework(env, fw) for fw in env.frameworks],
        "cudnn_copies": _copies(env),
        "findings": to_dict(list(findings)),
        "environment_variables": reportable_env(env.env),
        "redacted": redaction is not None,
    }
    return redact(value, redaction) if redaction is not None else value


__all__ = ["HOME_HOLDERS", "REPORT_SCHEMA", "Redaction", "build_report", "doctor_html", "redact"]


def doctor_html(env: Any, findings: Sequence[Any], healthy: bool, exit_code: int) -> str:
    """A doctor result as the report's HTML: what the Python API's results return from
    `_repr_html_`. Redacted as `report` is (fixer.system.redact), since a notebook's output is
    shared with the notebook."""
    return html(
        build_report(
            env,
            findings,
            healthy=healthy,
            exit_code=exit_code,
            redaction=Redaction.for_machine(os.environ),
        ),
        title="colab-cudnn-fix doctor",
    )
