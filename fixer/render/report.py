"""The report value (fixer.reporting.report.build_report) as markdown or as HTML. No logic beyond words
and layout; no rich import (the report stays on the fast path).

One renderer: `report` prints `markdown()`, `report --html` prints `html()`, and the Python
API's results show `html()` in a notebook (their `_repr_html_`).
"""

from __future__ import annotations

import html as _html
import sys
from typing import Any, Dict, List, Literal, Optional, Sequence
from fixer.render.doctor import healthy_text

SEV_MARK = {"error": "✗", "warning": "!", "info": "i"}
SEV_COLOR = {"error": "#c62828", "warning": "#ef6c00", "info": "#1565c0"}


def _md_cell(value: Any) -> str:
    text = "-" if value in (None, "", []) else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def _gpu_text(g: Dict[str, Any]) -> str:
    extra = []
    if g.get("compute_capability"):
        extra.append(f"compute capability {g['compute_capability']}")
    if g.get("memory_mib"):
        extra.append(f"{g['memory_mib'] // 1024} GiB")
    return str(g["name"]) + (f" ({', '.join(extra)})" if extra else "")


def _driver_text(d: Dict[str, Any]) -> str:
    if not d.get("version"):
        return d.get("error") or "not found"
    return f"{d['version']} (CUDA {d.get('cuda') or '?'})" + (
        f", {d['error']}" if d.get("error") else ""
    )


def _build_text(fw: Dict[str, Any]) -> str:
    if fw.get("cuda_build") is False:
        return "CPU-only build"
    bits = [
        f"CUDA {fw['cuda']}" if fw.get("cuda") else None,
        f"cuDNN {fw['cudnn_built']}" if fw.get("cudnn_built") else None,
    ]
    return ", ".join(b for b in bits if b) or "-"


def _loads_text(fw: Dict[str, Any]) -> str:
    res = fw.get("cudnn_loads")
    if not res:
        return "-"
    if not res.get("path"):
        return "nothing (" + (res.get("error") or "not found") + ")"
    return f"{res.get('version') or '?'} from {res['path']}"


def _summary(value: Dict[str, Any]) -> str:
    findings = value.get("findings") or []
    n_err = sum(1 for f in findings if f["severity"] == "error")
    n_warn = sum(1 for f in findings if f["severity"] == "warning")
    if value.get("healthy"):
        return healthy_text(len(value.get("frameworks") or [])) + (
            " (Notes below are informational.)" if findings else ""
        )
    return f"{n_err} error(s), {n_warn} warning(s)."


def _machine_rows(value: Dict[str, Any]) -> List[List[str]]:
    rt = value.get("runtime") or {}
    py = value.get("python")
    where = rt.get("kind", "?") + (f" ({rt['accelerator']})" if rt.get("accelerator") else "")
    if rt.get("image"):
        where += f", image {rt['image']}"
    rows = [
        ["runtime", where],
        [
            "OS",
            " ".join(
                x
                for x in (
                    rt.get("os"),
                    rt.get("arch"),
                    f"glibc {rt['glibc']}" if rt.get("glibc") else None,
                )
                if x
            ),
        ],
    ]
    if py:
        rows.append(["Python", f"{py['version']} ({py['executable']})"])
    rows.append(["GPU", "; ".join(_gpu_text(g) for g in value.get("gpus") or []) or "none visible"])
    rows.append(["driver", _driver_text(value.get("driver") or {})])
    return rows


def made_by(value: Dict[str, Any]) -> str:
    """Which tool recorded the machine: "v0.1.0" for a version of this tool (PEP 440 versions
    begin with a digit), else its name: a bundled environment file says "recorded by
    make_environments" (scripts/make_environments.py writes that as its tool_version)."""
    made = str(value.get("tool_version") or "")
    if not made:
        return "version unknown"
    return f"v{made}" if made[0].isdigit() else f"recorded by {made}"


def _md_row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(_md_cell(x) for x in cells) + " |"


def _md_frameworks(fws: List[Dict[str, Any]]) -> List[str]:
    out = [
        "",
        "#### Frameworks",
        "",
        "| framework | version | built with | GPU targets | cuDNN that loads | why |",
        "|---|---|---|---|---|---|",
    ]
    for fw in fws:
        targets = fw.get("kernels") or ""
        if targets and fw.get("kernels_from"):
            targets += f" (read from {fw['kernels_from']})"
        why = (fw.get("cudnn_loads") or {}).get("why")
        out.append(
            _md_row(
                (
                    fw["framework"],
                    f"{fw['distribution']} {fw['version']}",
                    _build_text(fw),
                    targets or None,
                    _loads_text(fw),
                    why,
                )
            )
        )
    return out


def _copy_state(c: Dict[str, Any]) -> str:
    if c.get("missing"):
        return "missing " + ", ".join(c["missing"])
    return "mixed versions" if c.get("mixed") else "complete"


def _md_copies(copies: List[Dict[str, Any]]) -> List[str]:
    out = [
        "",
        "#### cuDNN copies on disk",
        "",
        "| version | from | directory | state |",
        "|---|---|---|---|",
    ]
    for c in copies:
        origin = c["origin"] + (f" ({_package(c['package'])})" if c.get("package") else "")
        out.append(_md_row((c.get("version"), origin, c["directory"], _copy_state(c))))
    return out


def _md_findings(findings: List[Dict[str, Any]]) -> List[str]:
    out = ["", "#### Findings", ""]
    if not findings:
        out.append("None.")
    for f in findings:
        out.append(f"- **{f['severity']}** `{f['id']}`: {f['title']}")
        for e in f.get("evidence") or []:
            out.append(f"  - {e}")
        if f.get("fix"):
            out.append(f"  - fix: {f['fix']}")
    return out


def markdown(value: Dict[str, Any]) -> str:
    """The report as GitHub-flavoured markdown (paste it into an issue)."""
    out: List[str] = [
        f"### colab-cudnn-fix report ({made_by(value)})",
        "",
        _summary(value),
        "",
    ]
    out += ["| | |", "|---|---|"]
    out += [f"| {k} | {_md_cell(v)} |" for k, v in _machine_rows(value)]
    if value.get("frameworks"):
        out += _md_frameworks(value["frameworks"])
    if value.get("cudnn_copies"):
        out += _md_copies(value["cudnn_copies"])
    out += _md_findings(value.get("findings") or [])
    env = value.get("environment_variables") or {}
    if env:
        out += (
            ["", "#### Environment variables", "", "```"]
            + [f"{k}={v}" for k, v in env.items()]
            + ["```"]
        )
    redacted = (
        "; home directory shown as ~, user names as &lt;user&gt;" if value.get("redacted") else ""
    )
    out += [
        "",
        f"<sub>Made by `colab-cudnn-fix report`{redacted}. No framework was imported.</sub>",
        "",
    ]
    return "\n".join(out)


_CSS = (
    ".ccf{font-family:system-ui,-apple-system,Segoe UI,sans-serif;font-size:13px;line-height:1.4}"
    ".ccf table{border-collapse:collapse;margin:4px 0 10px}"
    ".ccf td,.ccf th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
    ".ccf th{background:#f5f5f5}.ccf code{font-size:12px}.ccf .ok{color:#2e7d32;font-weight:600}"
    ".ccf .bad{color:#c62828;font-weight:600}.ccf ul{margin:2px 0 6px 18px;padding:0}.ccf .dim{color:#666}"
)


def _e(value: Any) -> str:
    return _html.escape("-" if value in (None, "", []) else str(value))


def _table(head: Optional[Sequence[str]], rows: Sequence[Sequence[Any]]) -> str:
    parts = ["<table>"]
    if head:
        parts.append("<tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>")
    for r in rows:
        parts.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in r) + "</tr>")
    parts.append("</table>")
    return "".join(parts)


def html(value: Dict[str, Any], title: str = "colab-cudnn-fix report") -> str:
    """The report as one self-contained HTML fragment (inline style, no script): a notebook cell's
    output, or a file a browser opens."""
    verdict_class = "ok" if value.get("healthy") else "bad"
    out = [
        f'<div class="ccf"><style>{_CSS}</style>',
        f"<h3>{_e(title)} <span class='dim'>{_e(made_by(value))}</span></h3>",
        f"<p class='{verdict_class}'>{_e(_summary(value))}</p>",
        _table(None, _machine_rows(value)),
    ]
    fws = value.get("frameworks") or []
    if fws:
        rows = []
        for fw in fws:
            targets = fw.get("kernels") or None
            if targets and fw.get("kernels_from"):
                targets += f" (read from {fw['kernels_from']})"
            rows.append(
                [
                    fw["framework"],
                    f"{fw['distribution']} {fw['version']}",
                    _build_text(fw),
                    targets,
                    _loads_text(fw),
                    (fw.get("cudnn_loads") or {}).get("why"),
                ]
            )
        out += [
            "<h4>Frameworks</h4>",
            _table(
                ["framework", "version", "built with", "GPU targets", "cuDNN that loads", "why"],
                rows,
            ),
        ]
    copies = value.get("cudnn_copies") or []
    if copies:
        rows = [
            [
                c.get("version"),
                c["origin"] + (f" ({_package(c['package'])})" if c.get("package") else ""),
                c["directory"],
                ("missing " + ", ".join(c["missing"]))
                if c.get("missing")
                else "mixed versions"
                if c.get("mixed")
                else "complete",
            ]
            for c in copies
        ]
        out += [
            "<h4>cuDNN copies on disk</h4>",
            _table(["version", "from", "directory", "state"], rows),
        ]
    out.append("<h4>Findings</h4>")
    findings = value.get("findings") or []
    if not findings:
        out.append("<p>None.</p>")
    for f in findings:
        color = SEV_COLOR.get(f["severity"], "#333")
        items = "".join(f"<li class='dim'>{_e(e)}</li>" for e in f.get("evidence") or [])
        if f.get("fix"):
            items += f"<li><b>fix:</b> {_e(f['fix'])}</li>"
        out.append(
            f"<p style='margin:6px 0 2px'><span style='color:{color};font-weight:600'>"
            f"{_e(SEV_MARK.get(f['severity'], ''))} {_e(f['severity'])}</span> <code>{_e(f['id'])}</code>: "
            f"{_e(f['title'])}</p><ul>{items}</ul>"
        )
    env = value.get("environment_variables") or {}
    if env:
        out += [
            "<h4>Environment variables</h4>",
            _table(["variable", "value"], [[k, v] for k, v in env.items()]),
        ]
    if value.get("redacted"):
        out.append("<p class='dim'>Home directory shown as ~, user names as &lt;user&gt;.</p>")
    out.append("</div>")
    return "".join(out)


def print_report(value: Dict[str, Any], fmt: Literal["markdown", "html"]) -> None:
    """`report` output on stdout: "markdown" or "html" (`--json` is written by the CLI)."""
    if fmt == "html":
        text = (
            "<!doctype html><html><head><meta charset='utf-8'><title>colab-cudnn-fix report</title></head><body>"
            + html(value)
            + "</body></html>\n"
        )
    else:
        text = markdown(value)
    sys.stdout.write(text)
    sys.stdout.flush()


def _package(p: Dict[str, Any]) -> str:
    """A library copy's package as the report's JSON holds it ({"name", "version"}), in words."""
    return f"{p['name']} {p['version']}" if p.get("version") else str(p["name"])
