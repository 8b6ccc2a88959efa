"""How `plan` (and `apply --dry-run`) look: the resolved settings first, then a table of
steps, then the literal commands. `--json` prints {"schema": 1, "plan": ...}. No logic."""

from __future__ import annotations

import shlex
from typing import Any, Dict, List, Optional, Sequence, Tuple


from fixer.model import DEPENDENCIES_OF, Plan, PlannedMachine, Step, to_dict
from fixer.render.prose import say
from fixer.render import out, print_json, print_table, styled
from fixer.system.versions import version_key

#: Version of `plan --json`.
PLAN_SCHEMA = 1


def plan_json(plan: Plan) -> Dict[str, Any]:
    body = to_dict(plan)
    body["nothing_to_do"] = plan.nothing_to_do
    known, unknown = plan.download
    # what the steps download, dependencies included (fixer.planner.simulate): bytes of what has a
    # recorded size, and the rest by name
    body["download"] = {
        "known_bytes": known,
        "unknown": list(unknown),
        "text": download_text(known, unknown),
    }
    # the plan simulated on the machine's model and diagnosed again (fixer.planner.simulate)
    body["simulation"] = {
        "healthy": plan.is_fix,
        "cannot_fix": body["manual"],
        "drift": body["drift"],
        "after": body["after"],
    }
    return {"schema": PLAN_SCHEMA, "plan": body}


def show_commands(plan: Plan) -> None:
    """A plan without the machine it was made for (from a lock file): its numbered commands."""
    console = out()
    for i, s in enumerate(plan.steps, 1):
        console.print(f"# {i}. {s.kind}: {s.summary}", style="dim", highlight=False, markup=False)
        console.print(command_text(s), highlight=False, markup=False, soft_wrap=True)


def _size(n: Optional[int]) -> str:
    if not n:
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n = n / 1000  # type: ignore[assignment]
    return str(n)


def download_text(known: Optional[int], unknown: Sequence[str]) -> str:
    """ "2.9 GB + 2 packages of unknown size", "1.1 GB", "3 packages of unknown size" ("" for nothing)."""
    deps = [u for u in unknown if u.startswith(DEPENDENCIES_OF)]
    pkgs = [u for u in unknown if not u.startswith(DEPENDENCIES_OF)]
    parts = [_size(known)] if known else []
    if pkgs:
        parts.append(f"{len(pkgs)} package{'s' if len(pkgs) != 1 else ''} of unknown size")
    if deps:
        parts.append(
            f"the dependencies of {len(deps)} install{'s' if len(deps) != 1 else ''} (not known)"
        )
    return " + ".join(parts)


def command_text(step: Step) -> str:
    """The step as a person would type it (env-fix steps: the file and its content)."""
    lines: List[str] = []
    if step.files and step.content is not None:
        for f in step.files:
            lines.append(f"# write {f}:")
            lines += [f"#   {line}" for line in step.content.rstrip("\n").split("\n")]
    if step.argv:
        lines.append(shlex.join(step.argv))
    if not lines:
        lines.append(f"# {step.summary}")
    return "\n".join(lines)


def _settings(view: PlannedMachine) -> List[Tuple[str, str, bool]]:
    """(name, value, is_default) for the settings the plan was made with."""
    env, it, opt = view.env, view.intent, view.options
    gpus = ", ".join(f"{g.name} ({g.compute_capability or '?'})" for g in env.gpus) or "none"
    py = env.python
    installed = [f"{f.framework} {f.version}" for f in env.frameworks]
    chosen = view.plan.installer
    return [
        ("machine", view.where, False),
        ("target python", f"{py.executable} (Python {py.version})" if py else "unknown", False),
        ("GPU", gpus, False),
        (
            "driver",
            f"{env.driver.version or 'unknown'} (CUDA {env.driver.cuda_version or '?'})",
            False,
        ),
        ("installed", ", ".join(installed) or "no GPU framework", False),
        ("--framework", ", ".join(it.frameworks) or "those installed", not it.frameworks),
        (
            "versions",
            ", ".join(f"--{k} {v}" for k, v in it.versions.items())
            or "keep what works, else newest",
            not it.versions,
        ),
        ("--cuda", it.cuda or "any the driver runs", it.cuda is None),
        ("--cudnn-from", it.cudnn_from or "pip, else apt", it.cudnn_from is None),
        ("--keep", ", ".join(it.keep) or "nothing pinned", not it.keep),
        ("--installer", f"{opt.installer} -> {chosen}", opt.installer == "auto"),
        (
            "index",
            "--no-index"
            if opt.no_index
            else (", ".join(f"{a} -> {b}" for a, b in opt.index_mirrors) or "as each build says"),
            not opt.no_index and not opt.index_mirrors,
        ),
        (
            "recipes",
            "shipped"
            + (" + " + ", ".join(view.recipe_dirs) if view.recipe_dirs else "")
            + (f" ({view.recipe_files} files)" if view.recipe_files else ""),
            not view.recipe_dirs,
        ),
    ]


def cudnn_lines(plan: Plan) -> List[str]:
    """What the plan does about each cuDNN major, in the words of its steps: the package, the
    version and where it comes from, and the frameworks that map it (the chosen builds whose
    cuDNN is of that major). tests/unit/plan/test_plan_scope.py checks every line against the
    steps."""
    stack = plan.stack
    if not stack.cudnn_copies:
        return [f"cuDNN: {stack.cudnn} from {stack.cudnn_from}"] if stack.cudnn else []
    out: List[str] = []
    for major in sorted(stack.cudnn_copies, key=lambda k: -int(k)):
        copy = stack.cudnn_copies[major]
        users = [
            c.framework
            for c in stack.choices
            if c.build.cudnn and version_key(c.build.cudnn)[:1] == (int(major),)
        ]
        head = f"cuDNN {major}" + (f" for {', '.join(users)}" if users else "")
        if copy.package is None:
            out.append(f"{head}: keep the {copy.source} copy in {copy.directory}")
            continue
        name, version = copy.package.name, copy.package.version
        pin = next((p for p in stack.pins if p.name == name and p.action != "remove"), None)
        if pin is None or pin.action == "keep":
            verb = "keep"
        elif pin.installed == pin.version:
            verb = "reinstall"
        else:
            verb = "install"
        out.append(f"{head}: {verb} {name} {version} from {copy.source}")
    return out


def show(
    view: PlannedMachine,
    as_json: bool = False,
    *,
    refusal: Optional[str] = None,
    decided: bool = False,
) -> None:
    """The plan as `plan` shows it. `decided`: apply's refusal decision was made for it
    (fixer.pipeline.apply_refusal; `refusal` its message, None when apply runs it), and the
    closing words say that decision; otherwise they say whether the plan is a fix."""
    plan = view.plan
    if as_json:
        print_json(plan_json(plan))
        return
    console = out()
    for name, value, default in _settings(view):
        say(console, styled((f"{name:>14}: {value}", "dim" if default else "")))
    console.print()
    errors = [f for f in plan.findings if f.severity == "error"]
    for f in errors:
        say(console, styled(("found:", "red"), f" {f.id}: {f.title}"))
    _show_choices(plan)
    if plan.nothing_to_do:
        _show_nothing(view)
        return
    _show_steps(plan)
    if plan.restart_required:
        console.print(
            "[yellow]The notebook runtime must restart after these steps.[/]", markup=True
        )
    if decided:
        show_refusal(plan, refusal)
    elif not plan.is_fix:
        console.print()
        _manual(plan)
    _notes(plan)


def show_refusal(plan: Plan, refusal: Optional[str]) -> None:
    """apply's decision about `plan` (fixer.pipeline.apply_refusal): nothing when it runs it,
    else why it will refuse it, with what the user must do."""
    # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
    from fixer.render.apply import show_manual

    if refusal is None:
        return
    out().print()
    say(out(), styled(("apply will refuse this plan:", "red"), f" {refusal}"))
    show_manual(plan.manual, plan.drift)


def _show_choices(plan: Plan) -> None:
    console = out()
    for c in plan.stack.choices:
        verb = {"keep": "keep", "install": "install", "change": "change to"}[c.action]
        text = (
            f"{verb} {c.build.version}"
            + (f" ({c.build.variant})" if c.build.variant and "+" not in c.build.version else "")
            + (f" - {c.reason}" if c.action != "keep" else "")
        )
        say(
            console,
            styled(
                (c.framework, "bold"),
                f": {text}",
                (
                    " (minor-version compatibility: see the note)" if c.minor_version else "",
                    "yellow",
                ),
            ),
        )
    for line in cudnn_lines(plan):
        head, _, rest = line.partition(": ")
        say(console, styled((head, "bold"), f": {rest}"))


def _show_nothing(view: PlannedMachine) -> None:
    plan = view.plan
    console = out()
    console.print()
    if not plan.is_fix:
        _manual(plan)
    elif plan.stack.choices:
        say(
            console,
            styled(
                ("Nothing to do:", "green"),
                " every framework fits this machine and loads the cuDNN it needs.",
            ),
        )
    elif view.env.frameworks:
        say(
            console,
            styled(
                ("Nothing to do", "green"),
                " on this machine for "
                + ", ".join(f"{f.framework} {f.version}" for f in view.env.frameworks)
                + ".",
            ),
        )
    else:
        say(
            console,
            styled(
                ("Nothing to do:", "green"),
                " no GPU framework is installed (--framework NAME plans one).",
            ),
        )
    _notes(plan)


def _show_steps(plan: Plan) -> None:
    from rich.text import Text

    console = out()
    print_table(
        console,
        ("#", "step", "what and why", "download"),
        [
            (
                str(i),
                s.kind,
                Text(s.summary),
                (download_text(s.download_bytes, s.download_unknown) or "0 B")
                if s.kind in ("pip-install", "apt-install", "conda-install")
                else "",
            )
            for i, s in enumerate(plan.steps, 1)
        ],
        title="plan",
        styles={"#": "right", "download": "right"},
    )
    known, unknown = plan.download
    if known or unknown:
        say(
            console,
            styled(
                ("download", "bold"), f" (dependencies included): {download_text(known, unknown)}"
            ),
        )
        for u in unknown:  # one per line: a "dependencies of" item names several packages
            say(console, styled((f"  unknown: {u}", "dim")), indent="    ")
    console.print("[bold]commands[/] (apply runs these; nothing has been changed):", markup=True)
    for i, s in enumerate(plan.steps, 1):
        console.print(f"# {i}. {s.kind}", style="dim", highlight=False)
        console.print(command_text(s), highlight=False, markup=False, soft_wrap=True)


def _manual(plan: Plan) -> None:
    # start-up: fixer.render.apply +65% on doctor --json (python -X importtime)
    from fixer.render.apply import show_manual

    say(
        out(),
        styled(
            ("This plan does not make the machine healthy", "red"),
            " (simulated on the machine's model and diagnosed again); apply will refuse it.",
        ),
    )
    show_manual(plan.manual, plan.drift)


def _notes(plan: Plan) -> None:
    console = out()
    if plan.notes:
        console.print()
        for n in plan.notes:
            say(console, styled(("note:", "dim"), f" {n}"), indent="  ")


def no_gpu_json(verdict: Any, plan: Optional[Plan] = None, command: str = "plan") -> Dict[str, Any]:
    """The JSON of a no-GPU verdict (fixer.diagnosis.nogpu.NoGpu) for plan and apply."""
    body: Dict[str, Any] = {
        "schema": PLAN_SCHEMA,
        "no_gpu": True,
        "exit_code": verdict.exit_code,
        "message": verdict.message,
        "hint": verdict.hint,
    }
    if command == "plan" and plan is not None:
        body["plan"] = plan_json(plan)["plan"]
    else:
        body.update(changed=False, nothing_to_do=True)
    return body


def show_no_gpu(
    verdict: Any, as_json: bool, plan: Optional[Plan] = None, command: str = "plan"
) -> None:
    """No GPU visible (fixer.diagnosis.nogpu.NoGpu): what is missing and what to do, in text and JSON."""
    if as_json:
        print_json(no_gpu_json(verdict, plan, command))
        return
    console = out()
    say(console, verdict.message)
    say(console, f"what to do: {verdict.hint}")
