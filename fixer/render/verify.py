"""Terminal output of `verify`: one block per framework (status, versions, timings, findings)
and a table of its conv cases. No logic beyond formatting."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from rich.table import Table

from ..model import CheckResult
from . import out

_STYLE = {"passed": "bold green", "failed": "bold red", "crashed": "bold red", "timeout": "bold red",
          "skipped": "yellow"}


def _s(v: Optional[float], unit: str = "s", digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f} {unit}"


def _err(v: Any) -> str:
    return "inf" if v is None else f"{v:.2e}"


def render_verify(results: Sequence[CheckResult]) -> None:
    console = out()
    if not results:
        console.print("[yellow]No framework to verify[/] (none of torch, tensorflow, jax, cupy is installed in the target).")
        return
    for r in results:
        style = _STYLE.get(r.status, "bold")
        head = f"[{style}]{r.status.upper()}[/] [bold]{r.framework}[/]"
        if r.version:
            head += f" {r.version}"
        if r.device:
            head += f" on {r.device}" + (f" (cc {r.compute_capability})" if r.compute_capability else "")
        console.print(head)
        console.print(f"  {r.summary}")
        cudnn = f"  cuDNN loaded {r.cudnn_loaded or '-'}, built with {r.cudnn_built or '-'}"
        console.print(cudnn)
        own = (r.seconds - r.import_seconds) if (r.seconds is not None and r.import_seconds is not None) else None
        console.print(f"  time: import {_s(r.import_seconds)}, first conv {_s(r.first_seconds, digits=3)}, "
                      f"steady {_s(None if r.steady_seconds is None else r.steady_seconds * 1000, 'ms', 3)}, "
                      f"check {_s(own)} beyond import, child {_s(r.seconds)}")
        if r.phases:
            console.print("  [dim]phases: " + ", ".join(f"{k.replace('_', ' ')} {v:.2f} s" for k, v in r.phases.items()) + "[/]")
        for p in r.mapped:
            console.print(f"  [dim]mapped[/] {p}", highlight=False)
        if r.cases:
            t = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
            for col in ("case", "dtype", "layout", "max error", "tolerance", "ok", "first ms", "steady ms"):
                t.add_column(col)
            for c in r.cases:
                t.add_row(str(c.get("case")), str(c.get("dtype")), str(c.get("layout")), _err(c.get("max_error")),
                          f"{c.get('tolerance')}", "[green]yes[/]" if c.get("ok") else "[red]NO[/]",
                          f"{c.get('first_ms')}", f"{c.get('steady_ms')}")
            console.print(t)
        for f in r.findings:
            console.print(f"  [bold red]{f.id}[/]: {f.title}")
            for e in f.evidence[:8]:
                console.print(f"    [dim]{e}[/]", highlight=False)
            if f.fix:
                console.print(f"    [cyan]fix:[/] {f.fix}")
        for e in r.errors[:5]:
            console.print(f"  [red]error[/] {e[:400]}", highlight=False)
        if r.status != "passed" and r.output:
            tail = "\n".join(r.output.strip().splitlines()[-12:])
            console.print("  [dim]output tail:[/]")
            console.print(tail, markup=False, highlight=False)
        console.print()
    bad = [r.framework for r in results if r.status != "passed"]
    if bad:
        console.print(f"[bold red]verify failed[/] for {', '.join(bad)}")
    else:
        console.print("[bold green]verify passed[/] for " + ", ".join(r.framework for r in results))
