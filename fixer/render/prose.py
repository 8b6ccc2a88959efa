"""Prose that fits the console: wrapped between words at the console's width (80 in a narrow
terminal, 100 in Colab's output area), while whatever a person copies stays whole on one line.

The rule (one home; every renderer's prose goes through `say`):
- a line breaks only at a space, never inside a word: a path, a version, a package pin or a URL
  is one word, so it is never cut (a word longer than the width stands alone and overflows);
- a span in backticks (`colab-cudnn-fix plan`) is one unit, spaces and all;
- a path whose folders hold spaces ("/content/drive/My Drive/models/x.so") is one unit up to
  its last "/"-word (its last component, when it holds a space, can still be broken);
- a command written in the prose (a program the tool's own steps and fixes run, followed by an
  option or one of its subcommands: "pip install --force-reinstall 'x==1'"; the program may be
  given by its path: "/usr/local/bin/uv pip install ...") is one unit, up to
  the end of its clause (a word's final ". ", "; ", ", ", " and ", " then ", a closing
  parenthesis or backtick).
  The programs are those of fixer/planner/installers.py's argv (pip, python -m pip, uv, apt-get,
  apt-mark, conda/mamba), the loader fixes (ldconfig, export) and the commands the findings
  and recipes name (colab-cudnn-fix, nvidia-smi). A word that only names a program ("pip
  metadata", "conda and") starts no command.
A line therefore exceeds the width only where one unit alone does (`over_width` checks it).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, List, Optional, Tuple, Union

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

#: program -> what may follow it for the words to be a command (an option always may).
_SUBCOMMANDS = {
    "pip": "install uninstall show list check download wheel freeze",
    "pip3": "install uninstall show list check download wheel freeze",
    "python": "",
    "python3": "",
    "uv": "pip venv",
    "apt-get": "install update remove purge",
    "apt-mark": "hold unhold showhold",
    "apt-cache": "policy show madison",
    "conda": "install create remove list",
    "mamba": "install create remove list",
    "colab-cudnn-fix": "doctor plan apply verify explain lock rollback report debug recipes fleet",
    "nvidia-smi": "*",
    "ldconfig": "*",
    "export": "*",
}
_PROGRAM = "|".join(re.escape(p) for p in sorted(_SUBCOMMANDS, key=len, reverse=True))
_COMMAND = re.compile(
    r"(?<!\S)(?:[^\s`'\"]*/)?(?P<prog>" + _PROGRAM + r") (?P<next>\S+)"
    r"(?P<rest>.*?)(?=(?<=\S)\.(?:\s|$)|; |, | and | then |\)|`|$)"
)
_BACKTICKS = re.compile(r"`[^`]*`\S*")
#: a path whose folder names hold a space ("/content/drive/My Drive/x.so"): it goes on past a
#: space while the next word goes on with a "/" (a last component with a space can still break)
_PATH = re.compile(r"(?<!\S)~?/\S*(?: [^\s/]+/\S*)+")
_WORD = re.compile(r"\S+")


def _is_command(prog: str, nxt: str) -> bool:
    allowed = _SUBCOMMANDS[prog]
    return allowed == "*" or nxt.startswith("-") or nxt in allowed.split()


def units(plain: str) -> List[Tuple[int, int]]:
    """The (start, end) offsets of the units of `plain`, in order: words, backtick spans and
    commands (the module's rule); a line may break only between two of them."""
    whole: List[Tuple[int, int]] = [m.span() for m in _BACKTICKS.finditer(plain)]
    whole += [m.span() for m in _PATH.finditer(plain)]
    m = _COMMAND.search(plain)
    while m:
        if _is_command(m.group("prog"), m.group("next")):
            whole.append(m.span())
            m = _COMMAND.search(plain, m.end())
        else:  # only a program's name ("uv or pip install x"): a command may start inside
            m = _COMMAND.search(plain, m.end("prog"))
    whole.sort()
    merged: List[Tuple[int, int]] = []
    for s, e in whole:
        if merged and s < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(e, merged[-1][1]))
        else:
            merged.append((s, e))
    out: List[Tuple[int, int]] = []
    pos = 0
    for s, e in merged + [(len(plain), len(plain))]:
        out += [(pos + w.start(), pos + w.end()) for w in _WORD.finditer(plain[pos:s])]
        if e > s:
            # a unit takes the rest of the word it ends in ("`x`." or "'y'.")
            tail = _WORD.match(plain, e)
            e = tail.end() if tail and tail.start() == e else e
            out.append((s, e))
        pos = max(pos, e)
    return [u for u in out if u[1] > u[0]]


def breaks(plain: str, width: int, hang: int = 0) -> List[Tuple[int, int]]:
    """The (start, end) of each line of `plain` wrapped at `width` cells by the rule; lines after
    the first are `hang` cells narrower (their indent)."""
    from rich.cells import cell_len

    lines: List[Tuple[int, int]] = []
    start: Optional[int] = None
    end = 0
    for s, e in units(plain):
        room = width - (hang if lines else 0)
        if start is not None and cell_len(plain[start:e]) > room:
            lines.append((start, end))
            start = None
        if start is None:
            start = s if lines else 0  # the first line counts its own leading spaces
        end = e
    if start is not None:
        lines.append((start, end))
    return lines or [(0, 0)]


def wrap(text: Union[str, "Text"], width: int, indent: str = "") -> List["Text"]:
    """`text` (its styles kept) as lines of at most `width` cells by the rule; every line after
    the first begins with `indent` (the first keeps its own leading spaces)."""
    from rich.text import Text

    t = text if isinstance(text, Text) else Text(text)
    lines = breaks(t.plain, width, hang=len(indent))
    # the first line keeps the text's own leading spaces
    return [t[0:e] if i == 0 else Text(indent) + t[s:e] for i, (s, e) in enumerate(lines)]


def say(
    console: "Console",
    text: Union[str, "Text"],
    indent: str = "  ",
    style: Optional[str] = None,
) -> None:
    """Print `text` as prose on `console`, wrapped at its width by the rule (`wrap`); continued
    lines begin with `indent` beyond the text's own leading spaces."""
    from rich.text import Text

    t = text if isinstance(text, Text) else Text(text)
    if style:
        t.stylize(style)
    plain = t.plain
    lead = " " * (len(plain) - len(plain.lstrip(" ")))
    for line in wrap(t, console.width, lead + indent):
        console.print(line, soft_wrap=True)


def over_width(line: str, width: int) -> bool:
    """True when `line` is wider than `width` although the rule would have broken it (a line
    over the width is right only when it is one unit after its indent)."""
    from rich.cells import cell_len

    if cell_len(line) <= width:
        return False
    return len(breaks(line.rstrip(), width, hang=0)) > 1
