"""All terminal output: rich tables and JSON. No logic lives here.

Colour follows NO_COLOR / FORCE_COLOR and TTY detection (rich does both). Area renderers
live in submodules (render.doctor, render.plan, ...); the helpers below are shared.
"""

from __future__ import annotations

import contextlib
import contextvars
import re
import sys
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Iterator,
    List,
    Optional,
    Sequence,
    Tuple,
    Union,
)

from fixer.errors import FixerError, Unsatisfiable
from fixer.model import to_dict

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

# rich is imported on first use: `doctor --json` and `plan --json` never need it.
_out: Optional["Console"] = None
_err: Optional["Console"] = None
_recording: Optional["Console"] = None


@contextlib.contextmanager
def recording(console: "Console") -> Iterator["Console"]:
    """Send what the renderers print to `console` (a recording one, for a notebook's display)."""
    global _recording
    before, _recording = _recording, console
    try:
        yield console
    finally:
        _recording = before


def styled(*parts: Union[str, Tuple[str, str]]) -> "Text":
    """One line from pieces, each plain text or (text, style). Nothing in it is read as rich
    markup or emoji codes, so text from the machine or the user (a log line, a path holding
    "[/x]", "\\[" or ":cd:") prints exactly as it is. rich's markup escape does not promise that:
    it leaves "\\[" (printed as "[") and emoji codes alone. Every renderer prints such text
    through this, or as a Text, or with markup=False."""
    from rich.text import Text

    return Text.assemble(*parts)


def new_console(**options: Any) -> "Console":
    """Every Console the renderers print to: no highlighting and no emoji codes (":cd:" in a
    path stays ":cd:"), whatever else `options` set (a file, recording, a width).

    Never Jupyter-aware (force_jupyter=False): inside a kernel, rich's Jupyter mode sends every
    print as a display output of its own (a plan became 36 output blocks before its table). The
    text goes to the file instead (the kernel's stdout: one stream output), and a result's HTML
    is shown once, by its `_repr_html_` (record)."""
    from rich.console import Console

    options.setdefault("force_jupyter", False)
    return Console(highlight=False, emoji=False, **options)


#: The width of a notebook's rendering (Colab's output area holds about 100 columns).
NOTEBOOK_WIDTH = 100


def record(show: Callable[[], None], width: int = NOTEBOOK_WIDTH) -> "Console":
    """What `show` prints, recorded at `width` on a console that displays nothing itself (its
    file is a StringIO, and it is never Jupyter-aware): a result's `_repr_html_` and `__rich__`
    export it, so that a notebook cell shows the result exactly once."""
    import io

    console = new_console(
        record=True,
        width=width,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        soft_wrap=True,  # as out(): no line is ever broken rich-side
    )
    with recording(console):
        show()
    return console


#: A recording as an HTML fragment for a notebook's output area: a <pre> only (rich's default
#: is a whole page whose <style> sets the page's body colours), laid out as rich's own Jupyter
#: display does (rich/jupyter.py JUPYTER_HTML_FORMAT), except that a line longer than the area
#: wraps at a space instead of scrolling sideways (white-space: pre-wrap; CSS Text Module Level
#: 3, section 3), never inside a word (word-break: normal, against JupyterLab's
#: `.jp-OutputArea-output pre {word-break: break-all}`; and _keep_words_whole). A wrap is the
#: browser's layout only: the text holds no newline there, so a command copied from it is whole.
#: A word wider than the area alone scrolls (overflow-x). Checked in Chromium's layout:
#: scripts/notebook_screenshot.py, tests/integration/notebook/test_layout.py.
_HTML_FORMAT = (
    '<pre style="white-space:pre-wrap;word-break:normal;overflow-x:auto;line-height:normal;'
    "font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace\">{code}</pre>\n"
)

#: Inside a word, Unicode line breaking (UAX #14, Unicode 15.1) still lets a browser wrap after
#: some characters: of ASCII's, after "-" (class HY, LB21), "/" (SY, LB13 forbids a break only
#: before it), "|" (BA), "}" (CL), "!" and "?" (EX); and around many non-ASCII ones (dashes,
#: ideographs, spaces of other widths). Between letters, digits and the other ASCII marks it never
#: does (LB23-LB30: "=", "+", ".", ":", "(", ")", quotes...). So a word holding one of those
#: characters is marked to stay on one line (white-space: nowrap); a line still wraps between
#: words, whose spaces lie outside these spans.
_TAG_OR_TEXT = re.compile(r"(<[^>]*>)|([^<]+)")
_BREAKABLE_WORD = re.compile(r"[^\s<]*(?:[-/|}!?]|[^\x00-\x7f\s])[^\s<]*")
_WHOLE = '<span style="white-space:nowrap">{}</span>'


def _keep_words_whole(code: str) -> str:
    """`code` (rich's HTML of a recording: text and <span> tags) with every word that a browser
    could break inside wrapped in a nowrap span; tags and the text's characters unchanged."""

    def text(piece: str) -> str:
        return _BREAKABLE_WORD.sub(lambda m: _WHOLE.format(m.group(0)), piece)

    return _TAG_OR_TEXT.sub(lambda m: m.group(1) or text(m.group(2)), code)


def recorded_html(console: "Console") -> str:
    """What `console` recorded (record()), as the HTML fragment a notebook shows."""
    code = str(console.export_html(inline_styles=True, code_format="{code}"))
    return _HTML_FORMAT.format(code=_keep_words_whole(code))


def out() -> "Console":
    global _out
    if _recording is not None:
        return _recording
    if _out is None or _out.file is not sys.stdout:
        # soft_wrap: no line is ever broken here (the terminal or the notebook folds a long line
        # for the eye, and a copy gives it back whole: a path or a command cut in two can't be
        # pasted); only tables are laid out to the width, by print_table.
        _out = new_console(file=sys.stdout, soft_wrap=True)
    return _out


def err() -> "Console":
    global _err
    if _err is None or _err.file is not sys.stderr:
        _err = new_console(file=sys.stderr)
    return _err


#: The command whose output is being written (set once per CLI call by the error boundary).
_COMMAND: "contextvars.ContextVar[str]" = contextvars.ContextVar("fixer_command", default="")


def set_command(name: str) -> None:
    _COMMAND.set(name)


def _apply_shape(body: Dict[str, Any]) -> Dict[str, Any]:
    """apply --json has one shape whatever happened (fixer/schemas/apply.json): `outcome` says
    which ("no-gpu", "nothing-to-do", "restart-needed", "dry-run", "applied"), and every key is always there."""
    if "error" in body:
        return body
    plan = body.get("plan")
    if body.get("outcome"):
        outcome = body["outcome"]
    elif body.get("no_gpu"):
        outcome = "no-gpu"
    elif "result" in body:
        outcome = "applied"
    elif "changed" in body:
        outcome = "nothing-to-do"
    else:
        outcome = "dry-run"
    plan_nothing = bool(isinstance(plan, dict) and plan.get("nothing_to_do"))
    out: Dict[str, Any] = {
        "schema": body.get("schema", 1),
        "command": "apply",
        "outcome": outcome,
        "changed": bool(body.get("changed", False)),
        "nothing_to_do": bool(body.get("nothing_to_do", plan_nothing)),
        "no_gpu": bool(body.get("no_gpu", False)),
        "plan": plan,
        "message": body.get("message"),
        "findings": body.get("findings", []),
        "result": body.get("result"),
        "verify": body.get("verify", []),
        "verified_by": body.get("verified_by", ""),
        "findings_after": body.get("findings_after", []),
        "restart": body.get("restart"),
        "exit_code": body.get("exit_code"),
        "hint": body.get("hint"),
        "refusal": body.get("refusal"),
    }
    if isinstance(plan, dict) and "nothing_to_do" not in plan:
        out["plan"] = dict(plan, nothing_to_do=out["nothing_to_do"])
    for k, v in body.items():
        out.setdefault(k, v)
    return out


#: Per command, the function that gives its payload its one documented shape.
_SHAPES = {"apply": _apply_shape}


def json_payload(value: Any, command: Optional[str] = None) -> Dict[str, Any]:
    """The `--json` object of `command` (default: the one running): `schema` and `command`
    first, then the command's own keys, in its one shape (fixer/schemas/COMMAND.json)."""
    body = to_dict(value)
    if not isinstance(body, dict):
        body = {"value": body}
    name = _COMMAND.get() if command is None else command
    out: Dict[str, Any] = {
        "schema": body.pop("schema", 1),
        "command": body.pop("command", name) or name,
    }
    out.update(body)
    shape = _SHAPES.get(out["command"])
    return shape(out) if shape else out


def json_text(value: Any) -> str:
    """Every `--json` output's text: two spaces per level, ASCII only (json.dumps)."""
    import json

    return json.dumps(value, indent=2)


def write_json(payload: Dict[str, Any]) -> None:
    """An already-shaped payload (a result's to_dict()) as indented JSON on stdout."""
    sys.stdout.write(json_text(payload) + "\n")
    sys.stdout.flush()


def print_json(value: Any) -> None:
    """A command's payload as indented JSON on stdout (no colour, no wrapping): json_payload."""
    write_json(json_payload(value))


def error(exc: FixerError, as_json: bool = False, command: str = "") -> None:
    """A library error: one red line on stderr (plus its hint), or a JSON object on stdout
    (fixer/schemas/error.json: the same shape for every command)."""
    if as_json:
        print_json(error_payload(exc, command))
        return
    # soft_wrap: never break a line rich-side; a path or version cut in two can't be copied.
    console = err()
    console.print(
        styled(("error:", "bold red"), f" {exc.message}"), highlight=False, soft_wrap=True
    )
    for attr, label in (("clashes", "clash"), ("ways_out", "way out")):
        for line in getattr(exc, attr, ()) or ():
            console.print(
                styled("  ", (f"{label}:", "yellow"), f" {line}"), highlight=False, soft_wrap=True
            )
    if exc.hint:
        console.print(styled(("hint:", "cyan"), f" {exc.hint}"), highlight=False, soft_wrap=True)


def warning(line: str) -> None:
    """One warning line on stderr (plain text: it must stay readable in logs and `!` cells)."""
    sys.stderr.write(f"warning: {line}\n")
    sys.stderr.flush()


def table_widths(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    width: int,
    *,
    boxed: bool = True,
    whole: Sequence[str] = (),
) -> Optional[List[int]]:
    """The content width of each column when `rows` fit as a table `width` cells wide, else None.

    The rule (one home; every table goes through it): a cell of a column named in `whole`
    (commands, paths, node names: text that must stay copyable even where it holds a space) is
    never broken, so the column is as wide as its longest cell line; any other cell may wrap
    between words but never inside one, so its column is at least as wide as its longest word.
    Headers always wrap between words. What is left over goes to the columns that would wrap."""
    from rich.cells import cell_len
    from rich.text import Text

    def lines(cell: Any) -> List[str]:
        return (cell.plain if isinstance(cell, Text) else str(cell)).splitlines() or [""]

    need: List[int] = []
    want: List[int] = []
    for i, h in enumerate(headers):
        cells = [line for r in rows for line in lines(r[i])]
        words = [cell_len(w) for w in h.split()] + [cell_len(w) for c in cells for w in c.split()]
        full = [cell_len(c.rstrip()) for c in cells]
        need.append(max(full if h in whole else words, default=1) or 1)
        want.append(max(full + [cell_len(h)], default=1) or 1)
    need = [max(n, max([cell_len(w) for w in h.split()], default=1)) for n, h in zip(need, headers)]
    overhead = (3 * len(headers) + 1) if boxed else 2 * (len(headers) - 1)
    room = width - overhead - sum(need)
    if room < 0:
        return None
    widths = list(need)
    while room > 0:  # widen the most wrapped column, one cell at a time
        short = [(want[i] - widths[i], i) for i in range(len(widths)) if widths[i] < want[i]]
        if not short:
            break
        widths[max(short)[1]] += 1
        room -= 1
    return widths


def print_table(
    console: "Console",
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    title: Optional[str] = None,
    boxed: bool = True,
    styles: Optional[Dict[str, str]] = None,
    whole: Sequence[str] = (),
) -> None:
    """`rows` as a table when every cell fits at the console's width by `table_widths`' rule;
    otherwise as a list (the first cell, then "header: value" lines, never wrapped) so that no
    version, path or command is ever cut or split. A cell is plain text or a rich Text;
    `styles` maps a header to "right" (right-justified); `whole` names the columns whose cells
    are never broken, even at a space."""
    from rich.table import Table
    from rich.text import Text

    def text(cell: Any) -> Text:
        return cell if isinstance(cell, Text) else Text(str(cell))

    widths = table_widths(headers, rows, console.width, boxed=boxed, whole=whole)
    if widths is not None:
        if boxed:
            table = Table(title=title, show_lines=False, header_style="bold")
        else:
            table = Table(
                title=title,
                show_lines=False,
                header_style="bold",
                box=None,
                show_edge=False,
                pad_edge=False,
            )
        for h, w in zip(headers, widths):
            # a whole column is as wide as its longest cell, so its cells never wrap; its header
            # still may, between words
            table.add_column(
                h,
                overflow="fold",
                width=w,
                justify="right" if (styles or {}).get(h) == "right" else "left",
            )
        for r in rows:
            table.add_row(*(text(c) for c in r))
        console.print(table)
        return
    if title:
        console.print(Text(title, style="bold"), soft_wrap=True)
    for r in rows:
        first = text(r[0]).plain.strip() or "-"
        console.print(Text(first, style="bold"), soft_wrap=True)
        for h, c in zip(headers[1:], r[1:]):
            if text(c).plain.strip():
                console.print(Text(f"  {h}: ") + text(c), soft_wrap=True)


def error_payload(exc: FixerError, command: str) -> Dict[str, Any]:
    """The `--json` form of an error, the same for every command (fixer/schemas/error.json)."""
    body: Dict[str, Any] = {
        "type": type(exc).__name__,
        "message": exc.message,
        "exit_code": exc.exit_code,
    }
    for extra in ("clashes", "ways_out", "argv", "output", "path", "line"):
        value = getattr(exc, extra, None)
        if value:
            body[extra] = list(value) if isinstance(value, tuple) else value
    if isinstance(exc, Unsatisfiable):
        body["conflicts"] = to_dict(list(exc.conflicts))
        body["relaxations"] = to_dict(list(exc.relaxations))
    if exc.hint:
        body["hint"] = exc.hint
    return {"schema": 1, "command": command, "exit_code": exc.exit_code, "error": body}
