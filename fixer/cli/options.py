"""Every command-line option, declared once: its flags, value, choices, default and help.

A command names the options it takes (`json: bool = option("json")`); typer builds the parser
from what `option()` returns, and `help_text()` renders `--help` from this same table (choices,
defaults, exit codes, the COLAB_CUDNN_FIX_* overrides), so help cannot drift from the parser.
A test checks that every option of every command comes from here.

Commands register through `command(app, name)`, which attaches the plain help renderer below
and the command's exit codes (EXIT_CODES). New commands add their row to EXIT_CODES and take
their options from OPTIONS (add a row when an option is new).
"""

from __future__ import annotations

import shutil
import textwrap
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

import typer
from typer.core import TyperCommand, TyperGroup


from fixer.cli.output import OUTPUT_FAILED
from fixer.cli.table import (
    DETECTING_COMMANDS,
    EXIT_CODES,
    GENERAL_EXIT_CODES,
    OPTIONS,
    OptionSpec,
    environment_overrides,
)

F = TypeVar("F", bound=Callable[..., Any])


def _check_choice(key: str, spec: OptionSpec) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if value is None:
            return () if spec.kind == "multi" else None
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if v not in spec.choices:
                raise typer.BadParameter(f"{v!r} is not one of: {', '.join(spec.choices)}")
        return value

    return check


def option(key: str, **extra: Any) -> Any:
    """The typer option for OPTIONS[key] (use it as the parameter's default); `extra` passes
    parser-only settings (an eager callback) through."""
    spec = OPTIONS[key]
    metavar = spec.metavar or ("|".join(spec.choices) if spec.choices else None)
    kwargs: Dict[str, Any] = {"help": spec.help}
    if metavar is not None and spec.kind != "flag":
        kwargs["metavar"] = metavar
    if spec.choices:
        kwargs["callback"] = _check_choice(key, spec)
    # a flag has one spelling ("--json", never "--json/--no-json"): typer gives a bool option
    # with explicit names no "--no-" twin
    default = False if spec.kind == "flag" else spec.default
    kwargs.update(extra)
    return typer.Option(default, *spec.flags, **kwargs)


def spec_for(flags: Sequence[str], help: Optional[str]) -> Optional[OptionSpec]:
    """The table row a parser option was built from (same flags and help), or None."""
    for spec in OPTIONS.values():
        if set(spec.flags) == set(flags) and spec.help == help:
            return spec
    return None


# -- help rendering ---------------------------------------------------------------------------


def help_width() -> int:
    """Help wraps prose at the terminal's width (COLUMNS when piped), at most 100 columns."""
    cols = shutil.get_terminal_size((100, 24)).columns
    return max(40, min(cols, 100))


def _wrap(text: str, width: int, indent: str, first: str = "") -> List[str]:
    """Wrap at spaces only: a command, path, flag or name is never cut or split at a hyphen."""
    w = textwrap.TextWrapper(
        width=width,
        initial_indent=first or indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return w.wrap(text) or [first.rstrip()]


def _option_lines(param: Any, width: int, command: str = "") -> List[str]:
    flags = list(param.opts) + list(getattr(param, "secondary_opts", []) or [])
    spec = spec_for(flags, getattr(param, "help", None))
    head = ", ".join(sorted(flags, key=lambda f: (f.startswith("--"), f)))
    if spec is None:  # typer's own (--help, completion) or a command's argument
        text = getattr(param, "help", None) or ""
        metavar = None
    else:
        text = spec.help_for(command)
        metavar = None if spec.kind == "flag" else (spec.metavar or "|".join(spec.choices))
        if spec.choices and spec.metavar:
            text += f" Choices: {', '.join(spec.choices)}."
        if spec.default not in (None, False):
            text += f" Default: {spec.default}."
        if spec.kind == "multi":
            text = text if "repeatable" in text else text + " Repeatable."
    if metavar:
        head += f" {metavar}"
    lines = [f"  {head}"]
    lines += _wrap(text, width, " " * 6) if text else []
    return lines


def _section(title: str, rows: Sequence[Tuple[str, str]], width: int) -> List[str]:
    lines = ["", f"{title}:"]
    for key, text in rows:
        lines += (
            _wrap(text, width, " " * 8, first=f"  {key:<5} ")
            if len(key) <= 5
            else [f"  {key}"] + _wrap(text, width, " " * 6)
        )
    return lines


def help_text(command: Any, ctx: Any, name: str) -> str:
    width = help_width()
    lines = [f"Usage: {ctx.command_path} {' '.join(command.collect_usage_pieces(ctx))}", ""]
    doc = (command.help or "").strip()
    for para in doc.split("\n\n"):
        lines += _wrap(" ".join(para.split()), width, "  ") + [""]
    args = [p for p in command.get_params(ctx) if getattr(p, "param_type_name", "") == "argument"]
    opts = [p for p in command.get_params(ctx) if getattr(p, "param_type_name", "") == "option"]
    if args:
        lines.append("Arguments:")
        for a in args:
            lines.append(f"  {a.metavar or (a.name or '').upper()}")
            lines += _wrap(getattr(a, "help", "") or "", width, " " * 6)
        lines.append("")
    lines.append("Options:")
    for p in opts:
        lines += _option_lines(p, width, name)
    lines += _section("Exit codes", [(str(c), t) for c, t in exit_codes(name)], width)
    if name in DETECTING_COMMANDS:
        lines += _overrides(width)
    return "\n".join(lines).rstrip() + "\n"


def exit_codes(name: str) -> Tuple[Tuple[int, str], ...]:
    """A command's exit codes as its help lists them: its own, then the one every command shares
    when its output cannot be written (fixer.cli.output)."""
    own = EXIT_CODES.get(name)
    if own is None:
        return GENERAL_EXIT_CODES
    shared = dict(GENERAL_EXIT_CODES)
    return tuple(sorted(own + ((OUTPUT_FAILED, shared[OUTPUT_FAILED]),), key=lambda r: r[0]))


def _overrides(width: int) -> List[str]:
    lines = [""] + _wrap(
        "Environment overrides (offline use; detection reads them instead of probing):", width, ""
    )
    for var, text in environment_overrides():
        lines += [f"  {var}"] + _wrap(text, width, " " * 6)
    return lines


class Command(TyperCommand):
    """A command whose help comes from the options table, with plain text (no boxes) that never
    cuts a word."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        formatter.write(help_text(self, ctx, _command_name(ctx)))


class Group(TyperGroup):
    def format_help(self, ctx: Any, formatter: Any) -> None:
        width = help_width()
        name = _command_name(ctx)
        lines = [f"Usage: {ctx.command_path} [OPTIONS] COMMAND [ARGS]...", ""]
        lines += _wrap(" ".join((self.help or "").split()), width, "  ") + ["", "Commands:"]
        for sub in self.list_commands(ctx):
            cmd = self.get_command(ctx, sub)
            if cmd is None or getattr(cmd, "hidden", False):
                continue
            short = " ".join((cmd.help or "").strip().split("\n\n")[0].split())
            lines += [f"  {sub}"] + _wrap(short, width, " " * 6)
        lines += ["", "Options:"]
        for p in self.get_params(ctx):
            lines += _option_lines(p, width)
        if not name:
            lines += _section(
                "Exit codes (each command lists its own)",
                [(str(c), t) for c, t in GENERAL_EXIT_CODES],
                width,
            )
            lines += _overrides(width)
        formatter.write("\n".join(lines).rstrip() + "\n")


def _command_name(ctx: Any) -> str:
    """'doctor', 'recipes show' or '' for the top level."""
    parts = []
    while ctx is not None and ctx.parent is not None:
        parts.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(reversed(parts))


CONTEXT = {"help_option_names": ["-h", "--help"]}


def command(app: Any, name: str) -> Callable[[F], F]:
    """Register a command on `app` with the table's help renderer; `-h` works like `--help`."""
    return app.command(name, cls=Command, context_settings=dict(CONTEXT))  # type: ignore[no-any-return]
