"""The fleet report (fixer.fleet.summarize) as a terminal table, markdown or JSON. No logic."""
from __future__ import annotations

import json
import sys
from typing import Any, Dict, List


def _verdict(n: Dict[str, Any]) -> str:
    if n["healthy"]:
        return "healthy"
    return ", ".join(n["findings"] + (["drift"] if n["drift"] else [])) or f"exit {n['exit_code']}"


def markdown(value: Dict[str, Any]) -> str:
    out: List[str] = [f"### colab-cudnn-fix fleet: {value['checked']} of {value['node_count']} GPU node(s) checked"
                      + (f", lock {value['lock']}" if value.get("lock") else ""), ""]
    out += ["| node | address | verdict | stack |", "|---|---|---|---|"]
    for n in value["nodes"]:
        out.append(f"| {n['node']} | {n['address'] or '-'} | {_verdict(n)} | {n['stack']} |")
    for f in value["failed"]:
        out.append(f"| {f['node']} | - | no answer: {f['error']} | - |")
    if value["by_finding"]:
        out += ["", "#### Nodes by finding", ""]
        for fid, g in value["by_finding"].items():
            out.append(f"- **{g['severity']}** `{fid}` on {len(g['nodes'])} node(s): {', '.join(g['nodes'])}")
            for t in g["titles"][:3]:
                out.append(f"  - {t}")
    if value.get("lock"):
        out += ["", "#### Drift from the lock", ""]
        if not value["by_drift"]:
            out.append("No node has drifted.")
        for line, nodes in value["by_drift"].items():
            out.append(f"- {line}: {', '.join(nodes)}")
        if value["nodes_without_drift"]:
            out.append(f"- as locked: {', '.join(value['nodes_without_drift'])}")
    out += ["", "#### Stacks", ""]
    for s in value["stacks"]:
        out.append(f"- {len(s['nodes'])} node(s): {s['stack']}  ({', '.join(s['nodes'])})")
    return "\n".join(out) + "\n"


def render(value: Dict[str, Any], fmt: str) -> None:
    """`fleet` output: "json", "markdown" or the terminal table."""
    if fmt == "json":
        sys.stdout.write(json.dumps(value, indent=2) + "\n")
        return
    if fmt == "markdown":
        sys.stdout.write(markdown(value))
        return
    from rich.table import Table
    from rich.text import Text

    from . import out

    con = out()
    con.print(f"[bold]colab-cudnn-fix fleet[/]  {value['checked']} of {value['node_count']} GPU node(s) checked"
              + (f", lock {value['lock']}" if value.get("lock") else ""))
    t = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
    for col in ("node", "address", "verdict", "stack"):
        t.add_column(col, overflow="fold")
    for n in value["nodes"]:
        t.add_row(n["node"], n["address"] or "-", Text(_verdict(n), style="green" if n["healthy"] else "bold red"),
                  n["stack"])
    for f in value["failed"]:
        t.add_row(f["node"], "-", Text(f"no answer: {f['error']}", style="bold red"), "-")
    con.print(t)
    for fid, g in value["by_finding"].items():
        con.print(Text(f"{g['severity']} ", style={"error": "bold red", "warning": "yellow"}.get(g["severity"], "cyan"))
                  .append(fid, style="bold").append(f" on {len(g['nodes'])} node(s): {', '.join(g['nodes'])}"))
    if value.get("lock"):
        for line, nodes in value["by_drift"].items():
            con.print(Text("drift ", style="bold red").append(f"{line}: {', '.join(nodes)}"))
        if not value["by_drift"]:
            con.print("[green]No node has drifted from the lock.[/]")
    con.print(f"{len(value['stacks'])} distinct stack(s)" + (": every node runs the same stack" if len(value["stacks"]) == 1 else ""))
