"""The fleet report (fixer.cluster.summarize) as a terminal table or markdown (the CLI writes
`--json` itself, through render.json_payload). No logic."""

from __future__ import annotations

import sys
from typing import Any, Dict, List, Literal, Tuple
from fixer.render import out, print_table


def _verdict(n: Dict[str, Any]) -> str:
    if n["healthy"]:
        return "healthy"
    return ", ".join(n["findings"] + (["drift"] if n["drift"] else [])) or f"exit {n['exit_code']}"


def markdown(value: Dict[str, Any]) -> str:
    out: List[str] = [
        f"### colab-cudnn-fix fleet: {value['checked']} of {value['node_count']} GPU node(s) checked"
        + (f", lock {value['lock']}" if value.get("lock") else ""),
        "",
    ]
    out += ["| node | address | verdict | stack |", "|---|---|---|---|"]
    for n in value["nodes"]:
        out.append(f"| {n['node']} | {n['address'] or '-'} | {_verdict(n)} | {n['stack']} |")
    for f in value["failed"]:
        out.append(f"| {f['node']} | - | no answer: {f['error']} | - |")
    if value["by_finding"]:
        out += ["", "#### Nodes by finding", ""]
        for fid, g in value["by_finding"].items():
            out.append(
                f"- **{g['severity']}** `{fid}` on {len(g['nodes'])} node(s): {', '.join(g['nodes'])}"
            )
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


#: The terminal table's columns; node names, addresses and stacks (which hold cuDNN paths) are
#: never broken, even at a space: a table too narrow for them becomes a list (render.print_table).
HEADERS = ("node", "address", "verdict", "stack")
WHOLE = ("node", "address", "stack")


def rows(value: Dict[str, Any]) -> List[Tuple[Any, ...]]:
    """The terminal table's cells, in HEADERS order: each node checked, then each that did not answer."""
    from rich.text import Text

    out: List[Tuple[Any, ...]] = [
        (
            n["node"],
            n["address"] or "-",
            Text(_verdict(n), style="green" if n["healthy"] else "bold red"),
            n["stack"],
        )
        for n in value["nodes"]
    ]
    out += [
        (f["node"], "-", Text(f"no answer: {f['error']}", style="bold red"), "-")
        for f in value["failed"]
    ]
    return out


def render(value: Dict[str, Any], fmt: Literal["markdown", "table"]) -> None:
    """`fleet` output: "markdown" or the terminal table (`--json` is written by the CLI)."""
    if fmt == "markdown":
        sys.stdout.write(markdown(value))
        return
    from rich.text import Text

    con = out()
    con.print(
        Text("colab-cudnn-fix fleet", style="bold").append(
            f"  {value['checked']} of {value['node_count']} GPU node(s) checked"
            + (f", lock {value['lock']}" if value.get("lock") else "")
        ),
        soft_wrap=True,
    )
    print_table(con, HEADERS, rows(value), boxed=False, whole=WHOLE)
    for fid, g in value["by_finding"].items():
        con.print(
            Text(
                f"{g['severity']} ",
                style={"error": "bold red", "warning": "yellow"}.get(g["severity"], "cyan"),
            )
            .append(fid, style="bold")
            .append(f" on {len(g['nodes'])} node(s): {', '.join(g['nodes'])}"),
            soft_wrap=True,
        )
    if value.get("lock"):
        for line, nodes in value["by_drift"].items():
            # the line says "drift from lock: ..." itself (fixer/lockfile/drift.py titles)
            con.print(
                Text(line, style="bold red").append(f": {', '.join(nodes)}"),
                soft_wrap=True,
            )
        if not value["by_drift"]:
            con.print("[green]No node has drifted from the lock.[/]")
    con.print(
        f"{len(value['stacks'])} distinct stack(s)"
        + (": every node runs the same stack" if len(value["stacks"]) == 1 else "")
    )
