"""Progress while a step's installer runs: bytes, rate, time left, and a heartbeat when it is silent.

Draws what fixer.applier.progress.InstallWatch says (a Snapshot); no logic beyond formatting
and choosing where to draw:

- a terminal: one rich Live line under the step's own lines, redrawn 4 times a second and
  gone when the step ends (a line saying what came down stays);
- a notebook kernel: ONE display output, updated in place (IPython's display_id and
  `update_display_data`, which Jupyter, JupyterLab, Colab and nbclient all honour), never a
  new output per update; a ticker thread redraws it each second so the heartbeat counts;
- anything else (a CI log, a pipe): a plain line when a download starts, at each quarter of
  it, and every HEARTBEAT_EVERY seconds while the installer is silent.
"""

from __future__ import annotations

import atexit
import dataclasses
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Sequence

from fixer.render import NOTEBOOK_WIDTH, new_console, styled
from fixer.render import recorded_html

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from fixer.applier.progress import InstallWatch, Snapshot

#: How often a plain log says "still ..." while the installer prints nothing (seconds).
HEARTBEAT_EVERY = 30.0
#: How often the notebook display and the plain log's timer look (seconds).
TICK = 1.0


def size(n: Optional[float]) -> str:
    """ "500.1 MB", "8.0 kB", "112 B": decimal units, as pip prints sizes."""
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def duration(seconds: Optional[float]) -> str:
    """ "42 s", "3 min 05 s", "1 h 02 min"."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {(s % 3600) // 60:02d} min"


def _what(snap: "Snapshot") -> str:
    return snap.package or "packages"


def progress_text(snap: "Snapshot") -> "Text":
    """One line: what the installer does now, and how far it is."""
    if snap.is_silent:
        verb = "downloading" if snap.action == "downloading" else "installing"
        return styled(
            ("still ", "dim"),
            f"{verb} {_what(snap)} ",
            (f"({duration(snap.silent)}, no output)", "yellow"),
            (f"  {duration(snap.elapsed)} in all", "dim"),
        )
    if snap.action == "downloading" and snap.counted:
        return _bytes_line(snap)
    if snap.action == "downloading":
        expected = f" ({size(snap.expected)} expected)" if snap.expected else ""
        return styled(
            f"downloading {_what(snap)}{expected}", (f"  {duration(snap.elapsed)}", "dim")
        )
    return styled(f"{snap.action} {_what(snap)}".strip(), (f"  {duration(snap.elapsed)}", "dim"))


def _bytes_line(snap: "Snapshot") -> "Text":
    """ "downloading torch: 1.2 GB of 2.9 GB, 41.0 MB/s, 41 s left  [#######.............]": the
    numbers first, so a narrow terminal that crops the line loses the bar, not them."""
    of = f" of {size(snap.expected)}" if snap.expected else ""
    more = f" + {len(snap.unknown)} of unknown size" if snap.unknown else ""
    rate = f", {size(snap.rate)}/s" if snap.rate else ""
    eta = f", {duration(snap.eta)} left" if snap.eta is not None else ""
    return styled(
        f"downloading {_what(snap)}: {size(snap.done)}{of}{more}",
        (rate, "dim"),
        (eta, "bold"),
        "  ",
        (f"[{bar(snap.done, snap.expected)}]", "cyan"),
    )


def bar(done: int, total: Optional[int], width: int = 20) -> str:
    """A text bar (the same in a terminal, a log and a notebook's HTML)."""
    if not total:
        return "-" * width
    filled = min(width, int(width * done / total))
    return "#" * filled + "." * (width - filled)


def summary_text(snap: "Snapshot") -> Optional["Text"]:
    """What stays once the step ends: how much came down, in how long, how fast (the time of the
    byte reports when the installer counted them; else the whole step's). None: nothing counted."""
    if not snap.done:
        return None
    took = snap.download_seconds if snap.download_seconds else snap.elapsed
    rate = f" ({size(snap.done / took)}/s)" if took > 0 else ""
    return styled((f"      downloaded {size(snap.done)} in {duration(took)}{rate}", "dim"))


# ---------------------------------------------------------------------------------------
# what is drawn while something runs
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class Source:
    """A running thing as a display sees it: its line now, what stays when it ends, what makes a
    plain log print a new line (`key` changes) and how long it has said nothing (`silent`: 0
    until that counts as silence, fixer.applier.progress.SILENT_AFTER)."""

    text: Callable[[], "Text"]
    final: Callable[[], Optional["Text"]]
    key: Callable[[], Any] = lambda: None
    silent: Callable[[], float] = lambda: 0.0


def install_source(watch: "InstallWatch", clock: Callable[[], float] = time.monotonic) -> Source:
    """A step's installer (fixer.applier.progress.InstallWatch) as a display sees it."""

    def key() -> Any:
        snap = watch.snapshot(clock())
        if snap.action != "downloading" or not snap.counted:
            return None
        quarter = int(4 * snap.done / snap.expected) if snap.expected else 0
        return (snap.package, min(quarter, 4))

    def silent() -> float:
        snap = watch.snapshot(clock())
        return snap.silent if snap.is_silent else 0.0

    return Source(
        text=lambda: progress_text(watch.snapshot(clock())),
        final=lambda: summary_text(watch.snapshot(clock())),
        key=key,
        silent=silent,
    )


def checking_text(frameworks: Sequence[str], seconds: float) -> "Text":
    """ "checking torch, jax, cupy on the GPU (12 s)": said while verify's children run."""
    names = ", ".join(frameworks) if frameworks else "the installed frameworks"
    return styled(
        ("checking ", "dim"), (names, "bold"), (f" on the GPU ({duration(seconds)})", "dim")
    )


def checked_text(frameworks: Sequence[str], seconds: float) -> "Text":
    """ "checked torch, jax, cupy on the GPU in 5 s": what stays once the checks ended."""
    names = ", ".join(frameworks) if frameworks else "the installed frameworks"
    return styled((f"checked {names} on the GPU in {duration(seconds)}", "dim"))


def checking_display(board: "Board") -> Callable[[Sequence[str]], None]:
    """The `checking` callback of fixer.api.verify on `board`: frameworks named, the live line
    starts; () it ends."""

    def checking(frameworks: Sequence[str]) -> None:
        if frameworks:
            board.begin(checking_source(frameworks))
        else:
            board.end()

    return checking


def checking_source(
    frameworks: Sequence[str], clock: Callable[[], float] = time.monotonic
) -> Source:
    """verify's checks while they run (the children print nothing on the way: each second of
    the wait counts as silence, so a plain log repeats the line every HEARTBEAT_EVERY s)."""
    started = clock()
    return Source(
        text=lambda: checking_text(frameworks, clock() - started),
        final=lambda: checked_text(frameworks, clock() - started),
        key=lambda: tuple(frameworks),
        silent=lambda: clock() - started,
    )


# ---------------------------------------------------------------------------------------
# where it is drawn
# ---------------------------------------------------------------------------------------


class _Ticker:
    """Calls `tick` every `every` seconds on a daemon thread until stopped."""

    def __init__(self, tick: Callable[[], None], every: float = TICK) -> None:
        self._tick, self._every = tick, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fixer-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            try:
                self._tick()
            except Exception:  # noqa: BLE001 - a display that fails must never stop an apply
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2 * self._every)


class Board:
    """Where a command's lines go while it runs, with at most one live line under them:
    `say(line)`, `begin(source)` ... `changed()` ... `end()`, and `close()` when done."""

    def say(self, text: "Text") -> None:
        raise NotImplementedError

    def begin(self, source: Source) -> None:
        """A live line starts (an installer runs, checks run)."""

    def changed(self) -> None:
        """The running thing had news (an installer line)."""

    def end(self) -> None:
        """The live line ends; what its source keeps is said."""

    def close(self) -> None:
        """Nothing more will be drawn."""


class ConsoleBoard(Board):
    """A terminal (rich Live, redrawn 4 times a second, gone at the end) or, when the console is
    no terminal, plain lines: one when `key` changes and one each HEARTBEAT_EVERY s of silence."""

    def __init__(self, console: "Console") -> None:
        self.console = console
        self._source: Optional[Source] = None
        self._live: Any = None
        self._ticker: Optional[_Ticker] = None
        self._lock = threading.Lock()
        self._said: Any = None
        self._beat = 0.0
        self._exit_hook = False

    def say(self, text: "Text") -> None:
        self.console.print(text, highlight=False, soft_wrap=True)

    def begin(self, source: Source) -> None:
        self.end()
        self._source = source
        if self.console.is_terminal:
            from rich.live import Live

            self._live = Live(
                get_renderable=lambda: _indented(source.text()),
                console=self.console,
                refresh_per_second=4,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._live.start()
            if not self._exit_hook:  # never leave the terminal's cursor hidden (Live hides it)
                atexit.register(self.close)
                self._exit_hook = True
            return
        self._said, self._beat = source.key(), 0.0
        if self._said is not None:  # what it is about is known from the start: say it now
            self.say(_indented(source.text()))
        self._ticker = _Ticker(self._tick)
        self._ticker.start()

    def changed(self) -> None:
        source = self._source
        if self._live is not None:  # now, not at the next tick: a line printed above the live
            self._live.refresh()  # one redraws what Live rendered last
            return
        if source is None:
            return
        key = source.key()
        with self._lock:
            if key != self._said:
                self._said = key
                self.say(_indented(source.text()))

    def _tick(self) -> None:
        source = self._source
        if source is None:
            return
        silent = source.silent()
        with self._lock:
            if not silent:
                self._beat = 0.0
            elif silent - self._beat >= HEARTBEAT_EVERY:
                self._beat = silent
                self.say(_indented(source.text()))

    def end(self) -> None:
        source, self._source = self._source, None
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        if self._live is not None:
            self._live.stop()
            self._live = None
        if source is not None:
            last = source.final()
            if last is not None:
                self.say(last)

    def close(self) -> None:
        self.end()


class NotebookBoard(Board):
    """ONE output in the running cell: every line said and the live line under them, redrawn in
    place (IPython's display_id: `update_display_data`, which Jupyter, JupyterLab, Colab and
    nbclient honour) on news (at most 4 times a second) and each TICK while a line is live."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.lines: List["Text"] = []
        self._source: Optional[Source] = None
        self._handle: Any = None
        self._lock = threading.Lock()
        self._last = 0.0
        self._ticker: Optional[_Ticker] = None

    def _draw(self) -> None:
        with self._lock:
            source = self._source
            shown = list(self.lines) + ([_indented(source.text())] if source else [])
            self._last = self.clock()
            view = NotebookLines(shown)
            if self._handle is None:
                from IPython.display import display

                self._handle = display(view, display_id=True)  # type: ignore[no-untyped-call]
            else:
                self._handle.update(view)

    def say(self, text: "Text") -> None:
        self.lines.append(text)
        self._draw()

    def begin(self, source: Source) -> None:
        self.end()
        self._source = source
        self._draw()
        self._ticker = _Ticker(self._draw)
        self._ticker.start()

    def changed(self) -> None:
        if self.clock() - self._last >= 0.25:
            self._draw()

    def end(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        source, self._source = self._source, None
        if source is not None:
            last = source.final()
            if last is not None:
                self.lines.append(last)
            self._draw()

    def close(self) -> None:
        self.end()


def _indented(text: "Text") -> "Text":
    line = text.copy()
    line.pad_left(6)
    return line


class NotebookLines:
    """Lines as a notebook shows them: HTML (rich's colours, a <pre>) and plain text."""

    def __init__(self, lines: Sequence["Text"]) -> None:
        self.lines = tuple(lines)

    def _recorded(self) -> "Console":
        import io

        console = new_console(
            record=True,
            width=NOTEBOOK_WIDTH,
            file=io.StringIO(),
            force_terminal=True,
            color_system="truecolor",
        )
        for line in self.lines:
            console.print(line, highlight=False, soft_wrap=True)
        return console

    def _repr_html_(self) -> str:
        return recorded_html(self._recorded())

    def __repr__(self) -> str:
        return "\n".join(line.plain for line in self.lines)
