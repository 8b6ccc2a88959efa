"""Terminal output of `verify`: one block per framework (status, versions, timings, findings)
and a table of its conv cases. No logic beyond formatting.

Text from the machine (summaries, paths, error messages) is printed as plain text, never as
markup. Prose wraps at the console's width between words, and a path or a command in it stays
whole on one line (render.prose); a mapped path and the child's own output lines are printed as
they are. The case table goes through render.print_table (a list when the console is too
narrow for it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from fixer.model import CheckResult
from fixer.render import out, print_table
from fixer.render.prose import say

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

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


def _line(*parts: Any) -> "Text":
    """One line from (text, style) pairs or plain strings."""
    from rich.text import Text

    t = Text()
    for p in parts:
        if isinstance(p, tuple):
            t.append(p[0], style=p[1])
        else:
            t.append(p)
    return t


def render_verify(results: Sequence[CheckResult]) -> None:
    """One block per framework, then the verdict."""
    console = out()
    if not results:
        say(
            console,
            _line(
                ("No framework to verify", "yellow"),
                " (none of torch, tensorflow, jax, cupy is installed in the target).",
            ),
        )
        return
    for r in results:
        _block(console, r)
        console.print()
    bad = [r.framework for r in results if r.status != "passed"]
    if bad:
        say(console, _line(("verify failed", "bold red"), f" for {', '.join(bad)}"))
    else:
        passed = " for " + ", ".join(r.framework for r in results)
        say(console, _line(("verify passed", "bold green"), passed))


def checking(framework: str) -> None:
    """Said while verify checks `framework` (its child process is running)."""
    console = out()
    say(console, _line(("checking ", "dim"), (framework, "bold"), ("...", "dim")))


def _block(console: "Console", r: CheckResult) -> None:
    """One framework's result: head, summary, versions, timings, cases, findings, errors."""
    head = [(r.status.upper(), _STYLE.get(r.status, "bold")), " ", (r.framework, "bold")]
    if r.version:
        head.append(f" {r.version}")
    if r.device:
        cc = f" (cc {r.compute_capability})" if r.compute_capability else ""
        head.append(f" on {r.device}{cc}")
    say(console, _line(*head))
    say(console, f"  {r.summary}")
    say(console, f"  cuDNN loaded {r.cudnn_loaded or '-'}, built with {r.cudnn_built or '-'}")
    _timings(console, r)
    for p in r.mapped:  # one path a line, whole
        console.print(_line(("  mapped ", "dim"), p), soft_wrap=True)
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
        say(console, _line(("  " + f.id, "bold red"), f": {f.title}"), indent="    ")
        for e in f.evidence[:8]:
            say(console, f"    {e}", style="dim")
        if f.fix:  # wrapped between words; a command in it stays whole (render.prose)
            say(console, _line(("    fix: ", "cyan"), f.fix))
    for e in r.errors[:5]:
        say(console, _line(("  error ", "red"), clip(e)))
    if r.status != "passed" and r.output:
        console.print(_line(("  output tail:", "dim")), soft_wrap=True)
        for t in r.output.strip().splitlines()[-12:]:  # the child's own lines, as they were
            console.print(_line(t), soft_wrap=True)


def _timings(console: "Console", r: CheckResult) -> None:
    own = (
        (r.seconds - r.import_seconds)
        if (r.seconds is not None and r.import_seconds is not None)
        else None
    )
    steady = None if r.steady_seconds is None else r.steady_seconds * 1000
    say(
        console,
        f"  time: import {_s(r.import_seconds)}, first conv {_s(r.first_seconds, digits=3)}, "
        f"steady {_s(steady, 'ms', 3)}, check {_s(own)} beyond import, child {_s(r.seconds)}",
    )
    if r.phases:
        phases = ", ".join(f"{k.replace('_', ' ')} {v:.2f} s" for k, v in r.phases.items())
        say(console, f"  phases: {phases}", style="dim")
