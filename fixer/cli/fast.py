"""The hot path: `doctor --json` and `plan --json` without typer.

Importing typer (with click and, in recent releases, pydantic) cost more than the rest of
`doctor --json` on the GPU machine. These two commands are what scripts, notebooks and the
fleet check call in a loop, so their plain JSON form is parsed here, with the one options
table (fixer.cli.table), and calls the same library function and renderer as the full CLI
(fixer/cli/doctor.py, plan.py). Anything this parser does not take exactly as it is (help, a
positional word, an unknown, repeated or malformed option, a bad choice, an empty value) is
left to the full CLI, which gives the canonical answer and the canonical usage error.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

#: The options each fast command takes: exactly the typer command's parameters (a test checks it).
FAST_COMMANDS: Dict[str, Tuple[str, ...]] = {
    "doctor": ("json", "deep", "python", "lock", "recipes", "environment"),
    "plan": (
        "json",
        "python",
        "environment",
        "recipes",
        "framework",
        "torch",
        "tensorflow",
        "jax",
        "cuda",
        "cudnn_from",
        "keep",
        "installer",
        "find_links",
        "no_index",
        "index_mirror",
    ),
}


def detects_here(argv: Sequence[str]) -> bool:
    """Whether `argv` looks like a `doctor --json` that detects this machine (no --environment,
    no help), judged on the words alone, before anything is imported: the GPU probe is started
    then (fixer.detection.gpu_probe.start_early). A wrong guess costs one probe that is stopped unused."""
    return (
        bool(argv)
        and argv[0] == "doctor"
        and "--json" in argv
        and not any(a in ("-h", "--help") or a.split("=", 1)[0] == "--environment" for a in argv)
    )


def parse(argv: Sequence[str]) -> Optional[Tuple[str, Dict[str, Any]]]:
    """(command, keyword arguments) for a fast `doctor|plan ... --json` argv, else None."""
    if not argv or argv[0] not in FAST_COMMANDS:
        return None
    from fixer.cli.table import OPTIONS

    command, rest = argv[0], list(argv[1:])
    by_flag = {flag: key for key in FAST_COMMANDS[command] for flag in OPTIONS[key].flags}
    values: Dict[str, Any] = {}
    while rest:
        flag, eq, value = rest.pop(0).partition("=")
        key = by_flag.get(flag)
        if key is None:
            return None
        spec = OPTIONS[key]
        if spec.kind == "flag":
            if eq or key in values:
                return None
            values[key] = True
            continue
        if not eq:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        if not value or spec.type is not str or (spec.choices and value not in spec.choices):
            return None
        if spec.kind == "multi":
            values.setdefault(key, []).append(value)
        elif key in values:
            return None
        else:
            values[key] = value
    if not values.pop("json", False):
        return None
    return command, values


def run(argv: Sequence[str]) -> Optional[int]:
    """The exit code of a fast command, or None when the full CLI must answer."""
    parsed = parse(argv)
    if parsed is None:
        return None
    command, kwargs = parsed
    from fixer import render
    from fixer.errors import FixerError

    render.set_command(command)
    try:
        if command == "doctor":
            from fixer.api import doctor
            from fixer.render.doctor import print_doctor_json

            result = doctor(**kwargs)
            print_doctor_json(result.environment, result.findings, result.healthy, result.exit_code)
        else:
            from fixer.api import plan

            presult = plan(**kwargs)
            render.write_json(presult.to_dict())
            return presult.exit_code
    except FixerError as exc:
        render.error(exc, as_json=True, command=command)
        return exc.exit_code
    return result.exit_code


def warnings() -> List[str]:
    """Broken plugins met on the way, as the full CLI reports them after a command."""
    from fixer.system.plugins import problems

    return list(problems())
