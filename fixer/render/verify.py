"""Terminal output of `verify`: one block per framework (status, versions, timings, findings)
and a table of its conv cases. No logic beyond formatting.

Text from the machine (summaries, paths, error messages) is printed as plain text, never as
markup, and no line is wrapped (soft_wrap; the terminal or the notebook folds long lines for
the eye, a copy gives them back whole): a path or a command cut in two can't be copied. The case table goes through render.print_table (a list when the
console is too narrow for it)."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

from fixer.model import CheckResult
from fixer.render import out, print_table

_STYLE = {
    "passed": "bold green",
    "failed": "bold red",
    "crashed": "bold red",
    "timeout": "bold red",
    "skipped": "yellow",
}

#: The case table's columns; every cell is one token (a name, a number), never broken.
CASE_HEADERS = ("case", "dtype", "layout", "max error", "tolerance", "ok", "first ms", "steady ms")


def _s(v: Optional[float], unit: str = "s", digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f} {unit}"


def _err(v: Any, ok: bool) -> str:
    """The child writes an infinite error (NaN, a non-finite output) as None; unknown otherwise."""
    return f"{v:.2e}" if v is not None else "-" if ok else "inf"


def _v(v: Any) -> str:
    return "-" if v is None else f"{v}"


def clip(text: str, limit: int = 400) -> str:
    """The first line of `text`, cut at a space before `limit` characters when longer (never
    inside a word: a path or a version stays whole), saying how much was left out."""
    first = (text.strip().splitlines() or [""])[0]
    if len(first) <= limit:
        return first + (" (+ more lines)" if "\n" in text.strip() else "")
    cut = first.rfind(" ", 0, limit + 1)
    cut = cut if cut > 0 else first.find(" ", limit) if " " in first[limit:] else len(first)
    rest = len(text.strip()) - cut
    return first[:cut] + (f" (+{rest} characters)" if rest > 0 else "")


def case_rows(r: CheckResult) -> List[Tuple[Any, ...]]:
    """The cells of `r`'s case table, in CASE_HEADERS order."""
    from rich.text import Text

    return [
        (
            str(c.get("case")),
            str(c.get("dtype")),
            str(c.get("layout")),
            _err(c.get("max_error"), bool(c.get("ok"))),
            _v(c.get("tolerance")),
            Text("yes", style="green") if c.get("ok") else Text("NO", style="red"),
            _v(c.get("first_ms")),
            _v(c.get("steady_ms")),
        )
        for c in r.cases
    ]


def render_verify(results: Sequence[CheckResult]) -> None:
    from rich.text import Text

    console = out()

    def line(*parts: Any) -> None:
        """One line, never wrapped: (text, style) pairs or plain strings."""
        t = Text()
        for p in parts:
            if isinstance(p, tuple):
                t.append(p[0], style=p[1])
            else:
                t.append(p)
        console.print(t, soft_wrap=True)

    if not results:
        line(
            ("No framework to verify", "yellow"),
            " (none of torch, tensorflow, jax, cupy is installed in the target).",
        )
        return
    for r in results:
        head = [(r.status.upper(), _STYLE.get(r.status, "bold")), " ", (r.framework, "bold")]
        if r.version:
            head.append(f" {r.version}")
        if r.device:
            head.append(
                f" on {r.device}"
                + (f" (cc {r.compute_capability})" if r.compute_capability else "")
            )
        line(*head)
        line(f"  {r.summary}")
        line(f"  cuDNN loaded {r.cudnn_loaded or '-'}, built with {r.cudnn_built or '-'}")
        own = (
            (r.seconds - r.import_seconds)
            if (r.seconds is not None and r.import_seconds is not None)
            else None
        )
        line(
            f"  time: import {_s(r.import_seconds)}, first conv {_s(r.first_seconds, digits=3)}, "
            f"steady {_s(None if r.steady_seconds is None else r.steady_seconds * 1000, 'ms', 3)}, "
            f"check {_s(own)} beyond import, child {_s(r.seconds)}"
        )
        if r.phases:
            line(
                (
                    "  phases: "
                    + ", ".join(f"{k.replace('_', ' ')} {v:.2f} s" for k, v in r.phases.items()),
                    "dim",
                )
            )
        for p in r.mapped:
            line(("  mapped ", "dim"), p)
        if r.cases:
            print_table(
                console,
                CASE_HEADERS,
                case_rows(r),
                boxed=False,
                whole=CASE_HEADERS,
                styles={h: "right" for h in ("max error", "tolerance", "first ms", "steady ms")},
            )
        for f in r.findings:
            line(("  " + f.id, "bold red"), f": {f.title}")
            for e in f.evidence[:8]:
                line((f"    {e}", "dim"))
            if f.fix:  # often a command to copy
                line(("    fix: ", "cyan"), f.fix)
        for e in r.errors[:5]:
            line(("  error ", "red"), clip(e))
        if r.status != "passed" and r.output:
            line(("  output tail:", "dim"))
            for t in r.output.strip().splitlines()[-12:]:
                line(t)
        console.print()
    bad = [r.framework for r in results if r.status != "passed"]
    if bad:
        line(("verify failed", "bold red"), f" for {', '.join(bad)}")
    else:
        line(("verify passed", "bold green"), " for " + ", ".join(r.framework for r in results))
