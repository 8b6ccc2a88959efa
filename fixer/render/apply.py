"""Output of `apply` and `rollback`: progress lines while steps run, then what changed.

Works without a TTY (a Colab `!` cell, a CI log): plain lines, no cursor movement; colour
only where rich detects a terminal (and never with NO_COLOR). With --json, progress goes to
stderr and stdout carries one JSON document.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, Optional, Sequence

from rich.console import Console

from fixer.model import (
    APPLY_SCHEMA,
    CheckResult,
    CommandResult,
    Finding,
    Plan,
    Reporter,
    Step,
    to_dict,
)
from fixer.render import err, out, print_json, styled
from fixer.render.plan import download_text

if TYPE_CHECKING:  # apply's results are a stage's values: named for type checking only
    from fixer.applier.results import ApplyResult, RollbackResult
from fixer.render.progress import (
    Board,
    ConsoleBoard,
    NotebookBoard,
    checking_display,
    install_source,
)

#: Installer output lines worth showing while a step runs (downloads, what gets installed).
_PROGRESS = re.compile(
    r"^\s*(Collecting|Downloading|Downloaded|Installing|Successfully|Uninstalling|"
    r"Attempting|Found existing|Using cached|Processing|Resolved|Prepared|Installed|"
    r"Uninstalled| [+-] |ERROR|error|WARNING|E: |Setting up|Unpacking|Get:)"
)


class ConsoleReporter(Reporter):
    """Step lines with a counter; the installer's download/install lines dimmed beneath, and a
    live progress line while a step's command runs (fixer.render.progress: bytes, rate, time
    left, a heartbeat when the command is silent). `board`: where it all goes (default: the
    console; a NotebookBoard in a notebook kernel: one output, updated in place)."""

    def __init__(
        self,
        console: Optional[Console] = None,
        verbose: bool = False,
        board: Optional[Board] = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console or out()
        self.verbose = verbose
        self.board = board or ConsoleBoard(self.console)
        self.clock = clock

    def starting(self, plan: Plan) -> None:
        known, unknown = plan.download
        text = download_text(known, unknown)
        if text:
            self.board.say(styled(("to download", "bold"), f" (dependencies included): {text}"))

    def phase(self, text: str) -> None:
        # a phase comes between steps; "rolling back" also after a step that never finished
        # (Ctrl-C, a kill): its live line ends here, not with the process
        self.board.end()
        self.board.say(styled((text, "dim")))

    def step_started(self, index: int, total: int, step: Step) -> None:
        self.board.say(styled((f"[{index}/{total}]", "bold"), f" {step.summary}"))
        if step.argv:
            self.board.say(styled((f"      $ {' '.join(step.argv)}", "dim")))

    def watching(self, index: int, watch: Any) -> None:
        self.board.begin(install_source(watch, self.clock))

    def step_output(self, index: int, line: str) -> None:
        self.board.changed()
        if self.verbose or _PROGRESS.search(line):
            self.board.say(styled((f"      {line}", "dim")))

    def step_finished(self, index: int, step: Step, result: CommandResult) -> None:
        self.board.end()
        if result.rc == 0:
            self.board.say(styled("      ", ("ok", "green"), f" ({result.seconds:.1f} s)"))
        else:
            self.board.say(styled("      ", ("failed", "red"), f" (exit {result.rc})"))
            for line in result.output.strip().splitlines()[-15:]:
                self.board.say(styled(f"      {line}"))

    def note(self, text: str) -> None:
        self.board.say(styled(("note:", "yellow"), f" {text}"))

    def checking(self, frameworks: Sequence[str]) -> None:
        checking_display(self.board)(frameworks)


def reporter_for(as_json: bool, verbose: bool = False) -> ConsoleReporter:
    return ConsoleReporter(err() if as_json else out(), verbose=verbose)


def notebook_reporter(verbose: bool = False) -> ConsoleReporter:
    """apply's progress in a notebook kernel: ONE output, updated in place (NotebookBoard)."""
    return ConsoleReporter(verbose=verbose, board=NotebookBoard())


def nothing_to_do_json(
    plan: Plan,
    findings: Sequence[Finding] = (),
    *,
    outcome: str = "nothing-to-do",
    nothing_to_do: bool = True,
    restart: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """The machine needed no change: "nothing-to-do", or "restart-needed" when the process apply
    ran in maps another copy (then `restart` says so and `nothing_to_do` is false)."""
    return {
        "schema": APPLY_SCHEMA,
        "outcome": outcome,
        "changed": False,
        "nothing_to_do": nothing_to_do,
        "plan": to_dict(plan),
        "findings": to_dict(tuple(findings)),
        "restart": restart,
    }


def applied_json(
    result: ApplyResult,
    *,
    plan: Plan,
    checks: Sequence[CheckResult] = (),
    findings_after: Sequence[Finding] = (),
    verified_by: str = "",
    restart: Optional[Dict[str, Any]],
    nothing_to_do: bool,
) -> Dict[str, Any]:
    """`nothing_to_do` and `restart` come from fixer.api.ApplyResult (one rule: nothing changed on
    the machine or in the process apply ran in, and then no verdict)."""
    return {
        "schema": APPLY_SCHEMA,
        "outcome": "applied",
        "changed": result.changed,
        "nothing_to_do": nothing_to_do,
        "plan": to_dict(plan),
        "result": to_dict(result),
        "verify": to_dict(tuple(checks)),
        "verified_by": verified_by,
        "findings_after": to_dict(tuple(findings_after)),
        "restart": restart,
    }


def rollback_json(result: RollbackResult) -> Dict[str, Any]:
    return {"schema": APPLY_SCHEMA, "rollback": to_dict(result)}


def show_lock_written(lock: Any, path: str) -> None:
    console = out()
    console.print(
        f"wrote {path}: {len(lock.packages)} package(s) with hashes"
        + (f", {len(lock.apt)} apt pin(s)" if lock.apt else "")
        + (f", {len(lock.env_fixes)} loader fix(es)" if lock.env_fixes else ""),
        highlight=False,
        markup=False,
    )
    for p in lock.packages:
        console.print(
            f"  {p.name}=={p.version}  ({len(p.hashes)} hash{'es' if len(p.hashes) != 1 else ''})",
            highlight=False,
            markup=False,
        )
    console.print(
        f"reproduce with: colab-cudnn-fix apply --lock {path}",
        style="dim",
        highlight=False,
        markup=False,
    )


def show_nothing_to_do(restart: Optional[Dict[str, Any]] = None) -> None:
    """The machine needed no change (`restart`: but the process apply ran in must restart)."""
    if restart:
        out().print(
            "The machine needs no change, but this process needs a restart:", highlight=False
        )
        out().print(styled((restart["message"], "yellow")), highlight=False)
        return
    out().print("[green]Nothing to do:[/] the environment already matches the plan.", markup=True)


def show_manual(blocking: Sequence[Finding], drift: Sequence[str] = ()) -> None:
    """The "cannot fix automatically" block, shared by plan and apply."""
    console = out()
    if blocking:
        console.print(
            "[bold]cannot fix automatically[/] (what you must do):", markup=True, highlight=False
        )
        for f in blocking:
            console.print(styled("  ", (f.id, "red"), f": {f.title}"), highlight=False)
            if f.fix:
                console.print(f"      {f.fix}", markup=False, highlight=False)
    for d in drift:
        console.print(styled("  ", ("plan clash", "red"), f": {d}"), highlight=False)


def show_applied(
    result: ApplyResult,
    *,
    checks: Sequence[CheckResult] = (),
    findings_after: Sequence[Finding] = (),
    verified_by: str = "",
    restart: Dict[str, Any],
) -> None:
    console = out()
    console.print()
    _show_changes(result)
    for n in result.notes:
        console.print(styled(("note:", "yellow"), f" {n}"), highlight=False)
    for check in checks:
        colour = {"passed": "green", "skipped": "dim"}.get(check.status, "red")
        console.print(
            styled(f"verify {check.framework}: ", (check.status, colour), f" {check.summary}"),
            highlight=False,
        )
    errors = [f for f in findings_after if f.severity == "error"]
    if verified_by and errors:
        console.print(
            styled(("still wrong after apply", "red"), f" ({verified_by}):"), highlight=False
        )
        for finding in errors:
            console.print(f"  {finding.id}: {finding.title}", highlight=False, markup=False)
    elif verified_by:
        console.print(styled(("healthy", "green"), f" ({verified_by})"), highlight=False)
    if restart.get("message"):
        colour = "green" if restart.get("verdict") == "fixed in this kernel" else "yellow"
        console.print(styled((restart["message"], colour)), highlight=False)
    console.print(
        styled(
            (
                f"journal {result.journal}; log {result.log}; undo with `colab-cudnn-fix rollback`",
                "dim",
            )
        ),
        highlight=False,
    )


def _show_changes(result: ApplyResult) -> None:
    """What apply changed: distributions, files written, files repaired in place."""
    console = out()
    if result.distributions:
        console.print("[bold]changed[/]", markup=True)
        for c in result.distributions:
            console.print(
                f"  {c.name}: {c.before or '(absent)'} -> {c.after or '(removed)'}",
                highlight=False,
                markup=False,
            )
    for f in result.files:
        console.print(f"  wrote {f}", highlight=False, markup=False)
    if result.repaired:
        console.print(
            f"[bold]repaired[/] {len(result.repaired)} file(s) whose distribution kept its version",
            markup=True,
        )
        for f in result.repaired[:20]:
            console.print(f"  rewrote {f}", highlight=False, markup=False)
        if len(result.repaired) > 20:
            console.print(f"  ... and {len(result.repaired) - 20} more", highlight=False)
    if not result.distributions and not result.files and not result.repaired:
        console.print("nothing changed (every step found its work already done)")


def show_rollback(result: RollbackResult, as_json: bool) -> None:
    if as_json:
        print_json(rollback_json(result))
        return
    console = out()
    if result.status == "nothing-to-do":
        for n in result.notes or ("nothing to roll back",):
            console.print(f"Nothing to roll back: {n}", markup=False, highlight=False)
        return
    for c in result.distributions:
        console.print(
            f"  {c.name}: {c.before or '(absent)'} -> {c.after or '(removed)'}",
            highlight=False,
            markup=False,
        )
    for f in result.files:
        console.print(f"  restored {f}", highlight=False, markup=False)
    if result.restored or result.removed:
        console.print(
            f"  {len(result.restored)} distribution file(s) written back, {len(result.removed)} added "
            "file(s) or installer leftover(s) removed",
            highlight=False,
        )
    for n in result.notes:
        console.print(styled(("note:", "yellow"), f" {n}"), highlight=False)
    # the verdicts below are RollbackResult's, which fixer.applier.transaction computed by checking
    # every version and the sha256 of every recorded file right after the restore
    if result.status == "rolled-back" and result.exact:
        console.print(
            f"[green]Rolled back:[/] the environment is exactly as before the last apply "
            f"({result.checked_files} recorded file(s) checked byte for byte).",
            markup=True,
        )
    elif result.status == "rolled-back":
        console.print(
            styled(
                ("Rolled back:", "green"),
                f" every version is as before and {result.checked_files} recorded "
                f"file(s) match byte for byte; reinstalled by version only (files not recorded): "
                f"{', '.join(result.unverified)}.",
            ),
            highlight=False,
        )
    else:
        console.print(
            "[red]Rollback incomplete:[/] these differ from before the apply:", markup=True
        )
        for r in result.remaining:
            console.print(f"  {r}", markup=False, highlight=False)
    console.print(styled((f"journal {result.journal}", "dim")), highlight=False)
