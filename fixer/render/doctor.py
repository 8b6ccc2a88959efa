"""`doctor` output: the stack in one table, then the findings with their fixes. No logic here
beyond choosing words and colours; the JSON form is `doctor_json`."""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Sequence

from fixer.model import ENVIRONMENT_SCHEMA, Environment, Finding, LoadResolution, to_dict

SEV_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
SEV_MARK = {"error": "✗", "warning": "!", "info": "i"}


def doctor_json(
    env: Environment, findings: Sequence[Finding], healthy: bool, exit_code: int
) -> Dict[str, Any]:
    """The documented `doctor --json` object (fixer/schemas/doctor.json)."""
    return {
        "schema": ENVIRONMENT_SCHEMA,
        "command": "doctor",
        "environment": to_dict(env),
        "findings": to_dict(list(findings)),
        "healthy": healthy,
        "exit_code": exit_code,
    }


def print_doctor_json(
    env: Environment, findings: Sequence[Finding], healthy: bool, exit_code: int
) -> None:
    """Plain json, no rich import: `doctor --json` is on the fast path."""
    from fixer.render import write_json

    write_json(doctor_json(env, findings, healthy, exit_code))


def _short(path: Optional[str], env: Environment) -> str:
    if not path:
        return "-"
    for sp in env.python.site_packages if env.python else ():
        if path.startswith(sp + "/"):
            return "site-packages/" + path[len(sp) + 1 :]
    return path


def _gpu_line(env: Environment) -> str:
    if not env.gpus:
        return "none visible"
    parts = []
    for g in env.gpus:
        bits = [g.name]
        extra = []
        if g.compute_capability:
            extra.append(f"cc {g.compute_capability}")
        if g.memory_mib:
            extra.append(f"{g.memory_mib // 1024} GiB")
        if extra:
            bits.append(f"({', '.join(extra)})")
        parts.append(" ".join(bits))
    return "; ".join(parts)


def _driver_line(env: Environment) -> str:
    d = env.driver
    if d.version is None:
        return d.error or "not found"
    s = f"{d.version} -> CUDA {d.cuda_version or '?'}"
    if d.error:
        s += f"  ({d.error})"
    return s


def _load_for(env: Environment, consumer: str, library: str = "cudnn") -> Optional[LoadResolution]:
    return next((r for r in env.loads if r.consumer == consumer and r.library == library), None)


def render_doctor(
    env: Environment,
    findings: Sequence[Finding],
    healthy: bool,
    exit_code: int,
    nothing_to_fix: bool = False,
) -> None:
    from rich.text import Text

    from fixer.render import out, print_table

    con = out()
    rt = env.runtime
    py = env.python
    head = f"[bold]colab-cudnn-fix doctor[/]  {rt.kind}"
    if rt.accelerator:
        head += f" ({rt.accelerator})"
    if rt.os_name:
        head += f", {rt.os_name}"
    if py:
        head += f", Python {py.version} ({py.executable})"
    con.print(head)
    con.print(f"  GPU     {_gpu_line(env)}", markup=False)
    con.print(f"  driver  {_driver_line(env)}", markup=False)

    fws = env.frameworks
    if fws:
        rows = []
        bad_fw = {fw for f in findings if f.severity != "info" for fw in f.frameworks}
        where_lines = []
        for fw in fws:
            res = _load_for(env, fw.framework)
            build = fw.version + (
                f" ({fw.variant})" if fw.variant and fw.variant not in fw.version else ""
            )
            built = fw.cudnn or "-"
            if fw.framework == "jax" and fw.cudnn:
                built = f">= {fw.cudnn}"
            if res is None:
                loaded = "-"
            elif res.path is None:
                loaded = "not found"
            else:
                loaded = res.version or "?"
                where_lines.append(
                    f"  {fw.framework} loads {_short(res.path, env)} (via {res.via})"
                )
            if not fw.is_cuda_build:
                mark = Text("cpu", style="yellow") if env.gpus else Text("-")
            else:
                mark = (
                    Text("✗", style="bold red")
                    if fw.framework in bad_fw
                    else Text("✓", style="green")
                )
            rows.append((mark, Text(fw.framework), Text(build), Text(built), Text(loaded)))
        print_table(con, ("", "framework", "build", "cuDNN built", "loads"), rows, boxed=False)
        for line in where_lines:
            con.print(line, markup=False, style="dim", soft_wrap=True)
    elif py:
        con.print("  no GPU framework installed in this interpreter", style="dim")

    for v in env.runtime_views:  # doctor --deep: what the import showed
        if v.error:
            con.print(
                f"  deep: {v.framework} "
                + ("imported, then failed" if v.imported else "failed to import")
                + f": {v.error.strip().splitlines()[0][:200] if v.error.strip() else v.error}",
                markup=False,
                style="red",
                overflow="fold",
            )
        else:
            devices = f"{len(v.devices)} GPU(s)" if v.devices else "no GPU seen"
            con.print(
                f"  deep: {v.framework} {v.version or ''} imported"
                + (f" in {v.seconds:.1f} s" if v.seconds is not None else "")
                + (f", cuDNN {v.cudnn_runtime}" if v.cudnn_runtime else "")
                + f", {devices}",
                markup=False,
                style="dim",
            )

    loaded_dirs = {os.path.normpath(r.directory) for r in env.loads if r.directory}
    others = [
        c
        for c in env.libraries
        if c.library == "cudnn" and os.path.normpath(c.directory) not in loaded_dirs
    ]
    for c in others:
        state = "incomplete" if c.missing else "mixed versions" if c.mixed else "not loaded"
        pkg = f" ({c.package})" if c.package else ""
        con.print(
            f"  other cuDNN {c.version or '?'}  {c.origin}  {_short(c.directory, env)}{pkg}  [{state}]",
            markup=False,
            style="dim",
            soft_wrap=True,
        )

    con.print()
    if nothing_to_fix:
        con.print("[green]Nothing to fix:[/] no GPU here and nothing installed that needs one.")
        return
    shown = [f for f in findings]
    if not shown:
        con.print("[bold green]Healthy:[/] every framework loads a cuDNN it accepts.")
        return
    for f in shown:
        style = SEV_STYLE[f.severity]
        con.print(
            Text(f"{SEV_MARK[f.severity]} {f.severity} ", style=style)
            .append(f"{f.id}", style="bold")
            .append(f": {f.title}")
        )
        for e in f.evidence[:6]:
            con.print(f"    {e}", markup=False, style="dim", soft_wrap=True)
        if f.fix:  # never wrapped: a fix is often a command to copy
            con.print(Text("    fix: ", style="bold").append(f.fix), soft_wrap=True)
    con.print()
    if healthy:
        con.print("[green]Healthy[/] (notes above are informational).")
    else:
        n_err = sum(1 for f in findings if f.severity == "error")
        n_warn = sum(1 for f in findings if f.severity == "warning")
        con.print(
            f"[bold red]{n_err} error(s)[/], [yellow]{n_warn} warning(s)[/].  "
            "`colab-cudnn-fix plan` shows the changes that fix them."
        )
