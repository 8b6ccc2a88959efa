"""Terminal output of `explain`: the ranked causes with confidence, evidence and fix, then the
plan that would apply the fix (when the machine was detected). No logic beyond formatting."""

from __future__ import annotations

from typing import Any, Sequence

from fixer.render import out, styled
from fixer.render.prose import say


def _sure(c: float) -> str:
    if c >= 0.85:
        return "very likely"
    if c >= 0.6:
        return "likely"
    if c >= 0.4:
        return "possible"
    return "unlikely"


def _header(console: Any, result: Any) -> None:
    if not result.recognised:
        say(
            console,
            styled(
                ("Not recognised:", "yellow"),
                " none of the known error patterns appears in this text.",
            ),
        )
        if result.findings:
            say(
                console,
                "The cause below is a guess (from the text's words, or from public reports with"
                " words like these); the check under it decides.",
            )
        say(
            console,
            "Run `colab-cudnn-fix doctor` to look at the machine, or `colab-cudnn-fix verify` to"
            " test it.",
        )
    if getattr(result, "benign", False):
        say(
            console,
            styled(
                ("Benign:", "green"),
                " the recognised lines are harmless; the cause of a failure lies in another message.",
            ),
        )
    elif getattr(result, "ambiguous", False):
        say(
            console,
            styled(
                ("Ambiguous:", "yellow"),
                " this text has more than one reading; the check under each one decides.",
            ),
        )


def _finding(console: Any, result: Any, i: int, f: Any) -> None:
    label = "cause" if i == 0 else ("or" if f.confidence >= 0.2 and f.id != "log-noise" else "also")
    style = "bold green" if f.id == "log-noise" else ("bold red" if i == 0 else "bold yellow")
    say(
        console,
        styled(
            (label, style),
            " ",
            (f.id, "bold"),
            f" ({_sure(f.confidence)}, {f.confidence:.2f}): {f.title}",
        ),
    )
    for e in f.evidence[:6]:
        say(console, styled("  ", (e, "dim")))
    check = result.check_for(f.id) if hasattr(result, "check_for") else ""
    if check:
        say(console, styled("  ", ("check:", "magenta"), f" {check}"))
    if f.fix:
        say(console, styled("  ", ("fix:", "cyan"), f" {f.fix}"))


def _plan(console: Any, plan: Any) -> None:
    steps = getattr(plan, "steps", ())
    console.print()
    if not steps or getattr(plan, "nothing_to_do", False):
        console.print("[green]Plan:[/] nothing to change on this machine.")
        return
    console.print("[bold]Plan that would apply the fix[/] (`colab-cudnn-fix apply` runs it):")
    for n, s in enumerate(steps, 1):
        cmd = " ".join(s.argv) if s.argv else ""
        say(console, f"  {n}. {s.summary}", indent="   ")
        if cmd:
            # a command: whole on its line, never wrapped
            console.print(styled("     ", (cmd, "dim")), highlight=False, soft_wrap=True)


def render_explain(result: Any, plan: Any, notes: Sequence[str], detected: bool) -> None:
    console = out()
    _header(console, result)
    for i, f in enumerate(result.findings):
        _finding(console, result, i, f)
    if plan is not None:
        _plan(console, plan)
    elif not detected and result.recognised:
        say(
            console,
            styled(
                (
                    "(machine not inspected: drop --no-detect to see the copies involved and the"
                    " plan)",
                    "dim",
                )
            ),
        )
    for note in notes:
        say(console, styled((f"note: {note}", "dim")))
