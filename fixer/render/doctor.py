"""`doctor` output: the stack in one table, then the findings with their fixes. No logic here
beyond choosing words and colours; the JSON form is `doctor_json`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Dict, Optional, Sequence, Set, Tuple

from fixer.model import ENVIRONMENT_SCHEMA, Environment, Finding, LoadResolution, to_dict
from fixer.render.prose import say
from fixer.render import write_json
from fixer.render import out
from fixer.render import print_table

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

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
    """`doctor --json`: plain json, no rich import."""
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


def healthy_text(frameworks: int) -> str:
    """The healthy verdict's words (doctor and report), true for exactly what was checked: with
    no GPU framework installed nothing loads cuDNN, so no framework is said to load one."""
    if frameworks:
        return "Healthy: every framework loads a cuDNN it accepts."
    return "Healthy: nothing wrong found; no GPU framework is installed, so nothing loads cuDNN."


def render_doctor(
    env: Environment,
    findings: Sequence[Finding],
    healthy: bool,
    exit_code: int,
    nothing_to_fix: bool = False,
    lock: Optional[str] = None,
) -> None:
    """doctor's terminal output: the head, the frameworks, what --deep saw, the other cuDNN
    copies, then the findings and the verdict; with `lock` (doctor --lock), whether the machine
    drifted from it."""
    con = out()
    _head(con, env)
    _frameworks(con, env, findings)
    _deep(con, env)
    _other_copies(con, env)
    con.print()
    _findings(con, env, findings, healthy, nothing_to_fix)
    if lock and not any(f.evidence[:1] == (lock,) for f in findings):
        # every drift finding names the lock file first (fixer/lockfile/drift.py lock_drift)
        say(con, f"no drift from {lock}", style="green")


def _head(con: "Console", env: Environment) -> None:
    from rich.text import Text

    rt = env.runtime
    py = env.python
    head = Text("colab-cudnn-fix doctor", style="bold") + Text(f"  {rt.kind}")
    if rt.accelerator:
        head += f" ({rt.accelerator})"
    if rt.os_name:
        head += f", {rt.os_name}"
    if py:
        head += f", Python {py.version} ({py.executable})"
    say(con, head, indent="  ")
    say(con, f"  GPU     {_gpu_line(env)}", indent="        ")
    say(con, f"  driver  {_driver_line(env)}", indent="        ")


def _framework_row(env: Environment, fw: Any, bad_fw: Set[str]) -> Tuple["Text", ...]:
    from rich.text import Text

    res = _load_for(env, fw.framework)
    build = fw.version + (f" ({fw.variant})" if fw.variant and fw.variant not in fw.version else "")
    built = fw.cudnn or "-"
    if fw.framework == "jax" and fw.cudnn:
        built = f">= {fw.cudnn}"
    if res is None:
        loaded = "-"
    elif res.path is None:
        loaded = "not found"
    else:
        loaded = res.version or "?"
    if not fw.is_cuda_build:
        mark = Text("cpu", style="yellow") if env.gpus else Text("-")
    else:
        mark = Text("✗", style="bold red") if fw.framework in bad_fw else Text("✓", style="green")
    return (mark, Text(fw.framework), Text(build), Text(built), Text(loaded))


def _frameworks(con: "Console", env: Environment, findings: Sequence[Finding]) -> None:
    if not env.frameworks:
        if env.python:
            con.print("  no GPU framework installed in this interpreter", style="dim")
        return
    bad_fw = {fw for f in findings if f.severity != "info" for fw in f.frameworks}
    rows = [_framework_row(env, fw, bad_fw) for fw in env.frameworks]
    print_table(con, ("", "framework", "build", "cuDNN built", "loads"), rows, boxed=False)
    for fw in env.frameworks:
        res = _load_for(env, fw.framework)
        if res is not None and res.path is not None:
            line = f"  {fw.framework} loads {_short(res.path, env)} (via {res.via})"
            say(con, line, indent="    ", style="dim")


def _deep(con: "Console", env: Environment) -> None:
    """doctor --deep: what the import showed."""
    for v in env.runtime_views:
        if v.error:
            first = v.error.strip().splitlines()[0][:200] if v.error.strip() else v.error
            did = "imported, then failed" if v.imported else "failed to import"
            say(con, f"  deep: {v.framework} {did}: {first}", indent="    ", style="red")
        else:
            devices = f"{len(v.devices)} GPU(s)" if v.devices else "no GPU seen"
            say(
                con,
                f"  deep: {v.framework} {v.version or ''} imported"
                + (f" in {v.seconds:.1f} s" if v.seconds is not None else "")
                + (f", cuDNN {v.cudnn_runtime}" if v.cudnn_runtime else "")
                + f", {devices}",
                indent="    ",
                style="dim",
            )


def _other_copies(con: "Console", env: Environment) -> None:
    """The cuDNN copies on disk that no framework loads."""
    loaded_dirs = {os.path.normpath(r.directory) for r in env.loads if r.directory}
    for c in env.libraries:
        if c.library != "cudnn" or os.path.normpath(c.directory) in loaded_dirs:
            continue
        state = "incomplete" if c.missing else "mixed versions" if c.mixed else "not loaded"
        pkg = f" ({c.package})" if c.package else ""
        where = f"{c.origin}  {_short(c.directory, env)}{pkg}"
        line = f"  other cuDNN {c.version or '?'}  {where}  [{state}]"
        say(con, line, indent="    ", style="dim")


def _findings(
    con: "Console",
    env: Environment,
    findings: Sequence[Finding],
    healthy: bool,
    nothing_to_fix: bool,
) -> None:
    from rich.text import Text

    if nothing_to_fix:
        con.print("[green]Nothing to fix:[/] no GPU here and nothing installed that needs one.")
        return
    if not findings:
        verdict, rest = healthy_text(len(env.frameworks)).split(":", 1)
        say(con, Text(verdict + ":", style="bold green") + Text(rest), indent="  ")
        return
    for f in findings:
        style = SEV_STYLE[f.severity]
        say(
            con,
            Text(f"{SEV_MARK[f.severity]} {f.severity} ", style=style)
            .append(f"{f.id}", style="bold")
            .append(f": {f.title}"),
            indent="    ",
        )
        for e in f.evidence[:6]:
            say(con, f"    {e}", indent="  ", style="dim")
        if f.fix:  # wrapped between words; a command in it stays whole (render.prose)
            say(con, Text("    fix: ", style="bold").append(f.fix), indent="  ")
    con.print()
    if healthy:
        con.print("[green]Healthy[/] (notes above are informational).")
        return
    n_err = sum(1 for f in findings if f.severity == "error")
    n_warn = sum(1 for f in findings if f.severity == "warning")
    say(
        con,
        Text(f"{n_err} error(s)", style="bold red")
        + Text(", ")
        + Text(f"{n_warn} warning(s)", style="yellow")
        + Text(".  `colab-cudnn-fix plan` shows the changes that fix them."),
        indent="",
    )
