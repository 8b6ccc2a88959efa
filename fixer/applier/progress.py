"""What an installer's output says about its progress, as values; fixer.render.progress draws them.

A step's installer prints lines; `InstallWatch` reads them (`line(text, now)`) and says where
the step stands at any moment (`snapshot(now)`): the package it is on, what it does with it,
the bytes downloaded so far against the bytes expected, the rate over the last seconds, the
time left, and how long the installer has said nothing. Time is passed in, never read here,
so the same lines at the same times give the same answer.

The lines it understands, each from its installer's source:

- pip >= 24.1 with `--progress-bar=raw` (PIP_PROGRESS_BAR=raw, `installer_env`) prints
  "Progress N of M" while it downloads a file: N bytes of M, M 0 when the server sent no
  length (pip src/pip/_internal/cli/progress_bars.py `_raw_progress_bar`, added in pip 24.1 by
  pypa/pip#12586; rate-limited to one line each 0.25 s). pip shows it only for files over
  512 KiB or of unknown length (src/pip/_internal/network/download.py `_log_download`).
- pip announces each file: "Downloading <url or file> (<size>)", "Using cached ...",
  "Resuming download ... (<done>/<size>)" (download.py `_log_download`), sizes by
  src/pip/_internal/utils/misc.py `format_size` ("8.0 MB", "112 bytes", "1.1 kB").
  "Collecting <req>" while it resolves, "Installing collected packages: a, b" before it
  unpacks them, "Successfully installed ..." at the end (src/pip/_internal/commands/install.py).
- uv (0.4 and later, output not a terminal: crates/uv/src/commands/reporters.rs) prints
  "Downloading <name> (<size>)" when a large download starts and " Downloaded <name>" when it
  ends, sizes in binary units ("7.6MiB"), then "Prepared N packages", "Installed N packages".
  uv says nothing between those two lines: the rate and the time left are not known then.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

#: How far back the rate looks (seconds): long enough to smooth pip's 0.25 s reports, short
#: enough to follow a download that speeds up or stalls.
RATE_WINDOW = 5.0

#: After this many seconds without a line the installer counts as silent (the display says
#: "still installing X (42 s, no output)").
SILENT_AFTER = 5.0

_UNITS = {
    "b": 1,
    "byte": 1,
    "bytes": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = r"(\d+(?:\.\d+)?)\s?([KMGT]?i?B|[kMGT]B|bytes?)"
_RAW = re.compile(r"^Progress (\d+) of (\d+)\s*$")
_FILE = re.compile(
    r"^\s*(Downloading|Using cached|Resuming download)\s+(\S+)"
    r"(?:\s+\((?:" + _SIZE + r"/)?" + _SIZE + r"\))?\s*$"
)
_UV_DONE = re.compile(r"^\s*Downloaded\s+(\S+)\s*$")
_COLLECTING = re.compile(r"^\s*Collecting\s+(\S+)")
_INSTALLING = re.compile(r"^\s*Installing collected packages:\s*(.+)$")
_UV_PREPARED = re.compile(r"^\s*(Resolved|Prepared|Installed|Uninstalled|Audited)\s+\d+\s+package")
_FINISHED = re.compile(r"^\s*Successfully (installed|uninstalled)\b")


def parse_size(number: str, unit: str) -> Optional[int]:
    """Bytes of "8.0" "MB" (pip's decimal units) or "7.6" "MiB" (uv's binary ones)."""
    factor = _UNITS.get(unit.lower())
    if factor is None:
        return None
    return int(float(number) * factor)


def distribution_of(what: str) -> str:
    """The distribution a download line names: a wheel or sdist file name (pip prints the file,
    or its URL at -v) gives its name part; uv prints the name itself."""
    base = what.rstrip("/").rsplit("/", 1)[-1].split("#", 1)[0]
    if base.endswith(".metadata"):
        base = base[: -len(".metadata")]
    for ext in (".whl", ".tar.gz", ".zip", ".tar.bz2"):
        if base.endswith(ext):
            return base[: -len(ext)].split("-", 1)[0].replace("_", "-").lower()
    return base


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """Where an install step stands. Bytes count downloads only (installing moves no bytes
    over the network); `expected` is None when no size is known at all."""

    action: str  # "starting", "resolving", "downloading", "installing", "finishing"
    package: str  # the package it is on ("" before it names one)
    elapsed: float  # seconds since the step started
    silent: float  # seconds since its last line
    done: int  # bytes downloaded in this step so far
    expected: Optional[int]  # bytes this step is expected to download (plan's and announced)
    file_done: int  # bytes of the current file
    file_total: Optional[int]  # its size, when announced
    rate: Optional[float]  # bytes per second over the last RATE_WINDOW seconds
    eta: Optional[float]  # seconds left for `expected` at `rate`
    unknown: Tuple[str, ...] = ()  # what the step downloads at a size nobody knows
    counted: bool = True  # the installer reports bytes as they come (pip raw); uv does not
    download_seconds: Optional[float] = None  # from its first byte report to its last

    @property
    def is_silent(self) -> bool:
        return self.silent >= SILENT_AFTER


@dataclasses.dataclass
class _File:
    name: str
    total: Optional[int]
    done: int = 0


class InstallWatch:
    """Reads one step's installer output (see the module's doc) and answers `snapshot(now)`."""

    def __init__(
        self,
        now: float,
        *,
        expected: Optional[int] = None,
        unknown: Sequence[str] = (),
        packages: Sequence[str] = (),
    ) -> None:
        self.started = now
        self.last_line = now
        self.plan_bytes = expected or None
        self.unknown = tuple(unknown)
        self.action = "starting"
        self.package = _first_name(packages)
        self.finished_bytes = 0  # bytes of the files already complete
        self.current: Optional[_File] = None
        self.counted = False
        self._samples: List[Tuple[float, int]] = [(now, 0)]
        self._first_byte: Optional[float] = None  # when the first byte report came
        self._last_byte: Optional[float] = None  # and the last

    # -- reading -----------------------------------------------------------------------

    def line(self, text: str, now: float) -> None:
        """One line the installer printed at `now`."""
        self.last_line = max(self.last_line, now)
        text = text.rstrip("\r\n")
        raw = _RAW.match(text)
        if raw:
            self._progress(int(raw.group(1)), int(raw.group(2)), now)
            return
        for handler in (self._file, self._uv_done, self._phase):
            if handler(text, now):
                return

    def _progress(self, done: int, total: int, now: float) -> None:
        if not self.counted:  # the rate counts from the first byte report, not the step's start
            self._samples = [(now, self.done)]
            self.counted = True
            self._first_byte = now
        self._last_byte = now
        if self.current is None:
            self.current = _File(self.package, total or None)
        self.action = "downloading"
        self.current.done = max(self.current.done, done)
        if total:  # exact: the "Downloading" line's size was rounded (format_size)
            self.current.total = total
        self._sample(now)

    def _file(self, text: str, now: float) -> bool:
        m = _FILE.match(text)
        if not m:
            return False
        verb, what = m.group(1), m.group(2)
        if what.endswith(".metadata"):
            return True  # pip's PEP 658 metadata fetch: no package download yet
        self._close_file(now)
        size = parse_size(m.group(5), m.group(6)) if m.group(5) else None
        self.package = distribution_of(what)
        self.action = "downloading"
        if verb == "Using cached":  # from pip's cache: nothing comes over the network
            return True
        start = parse_size(m.group(3), m.group(4)) if m.group(3) else 0
        self.current = _File(self.package, size, start or 0)
        return True

    def _uv_done(self, text: str, now: float) -> bool:
        m = _UV_DONE.match(text)
        if not m:
            return False
        if self.current is not None and self.current.total is not None:
            self.current.done = self.current.total
        self._close_file(now)
        return True

    def _phase(self, text: str, now: float) -> bool:
        installing = _INSTALLING.match(text)
        if installing:
            self._close_file(now)
            self.action = "installing"
            self.package = _first_name(installing.group(1).split(","), last=True)
            return True
        collecting = _COLLECTING.match(text)
        if collecting:
            self.action = "resolving"
            self.package = _first_name([collecting.group(1)])
            return True
        if _FINISHED.match(text):
            self._close_file(now)
            self.action = "finishing"
            return True
        uv = _UV_PREPARED.match(text)
        if uv:
            self._close_file(now)
            self.action = "installing" if uv.group(1) == "Prepared" else "finishing"
            return True
        return False

    def _close_file(self, now: float) -> None:
        if self.current is not None:
            self.finished_bytes += self.current.done
            self.current = None
            self._sample(now)

    def _sample(self, now: float) -> None:
        self._samples.append((now, self.done))
        # keep one sample older than the window: the rate's base
        while len(self._samples) > 2 and self._samples[1][0] <= now - RATE_WINDOW:
            self._samples.pop(0)

    # -- answering -----------------------------------------------------------------------

    @property
    def done(self) -> int:
        return self.finished_bytes + (self.current.done if self.current else 0)

    def expected(self) -> Optional[int]:
        """The plan's bytes for the step, or what the installer announced when that is more
        (the plan knows no size for a dependency; the index does)."""
        announced = self.done + (
            max(0, (self.current.total or 0) - self.current.done) if self.current else 0
        )
        best = max(self.plan_bytes or 0, announced)
        return best or None

    def rate(self, now: float) -> Optional[float]:
        """Bytes per second over the last RATE_WINDOW seconds up to `now` (a stall lowers it);
        None until the installer counts bytes (pip raw)."""
        if not self.counted:
            return None
        base = self._samples[0]
        for sample in self._samples:
            if sample[0] > now - RATE_WINDOW:
                break
            base = sample
        span = now - base[0]
        if span <= 0:
            return None
        return max(0.0, (self.done - base[1]) / span)

    def snapshot(self, now: float) -> Snapshot:
        expected = self.expected()
        rate = self.rate(now)
        eta = None
        if expected is not None and rate and self.action == "downloading":
            eta = max(0, expected - self.done) / rate
        return Snapshot(
            action=self.action,
            package=self.package,
            elapsed=max(0.0, now - self.started),
            silent=max(0.0, now - self.last_line),
            done=self.done,
            expected=expected,
            file_done=self.current.done if self.current else 0,
            file_total=self.current.total if self.current else None,
            rate=rate,
            eta=eta,
            unknown=self.unknown,
            counted=self.counted,
            download_seconds=(
                self._last_byte - self._first_byte
                if self._first_byte is not None and self._last_byte is not None
                else None
            ),
        )


def _first_name(requirements: Sequence[str], last: bool = False) -> str:
    """The distribution name of the first (or last) requirement string: "torch==2.11.0" -> torch."""
    names = [re.split(r"[\s<>=!~;\[@(]", r.strip(), maxsplit=1)[0] for r in requirements]
    names = [n for n in names if n]
    if not names:
        return ""
    return (names[-1] if last else names[0]).lower()


# ---------------------------------------------------------------------------------------
# asking pip for its byte counts
# ---------------------------------------------------------------------------------------

#: The first pip with `--progress-bar=raw` (pypa/pip#12586, released in 24.1).
PIP_RAW_PROGRESS = (24, 1)


def is_pip_install(argv: Sequence[str]) -> bool:
    """`<python> -m pip install ...` (fixer.planner.installers.pip_argv's pip form)."""
    return list(argv[1:4]) == ["-m", "pip", "install"]


def raw_progress_supported(pip_version: Optional[str]) -> bool:
    """pip at `pip_version` knows `--progress-bar=raw` (an older one exits 3 on the setting)."""
    if not pip_version:
        return False
    parts = re.match(r"^(\d+)\.(\d+)", pip_version)
    if parts is None:
        return False
    return (int(parts.group(1)), int(parts.group(2))) >= PIP_RAW_PROGRESS


def installer_env(
    argv: Sequence[str], pip_version: Optional[str], base: Optional[Mapping[str, str]] = None
) -> Optional[Dict[str, str]]:
    """The environment a step's command runs in so that it reports its bytes: for a pip install
    whose pip knows it, PIP_PROGRESS_BAR=raw (pip reads any option from PIP_<OPTION>; the
    command line stays the plan's). None (the caller's own environment) otherwise, and when the
    user chose a progress bar of their own."""
    environ = os.environ if base is None else base
    if not is_pip_install(argv) or "PIP_PROGRESS_BAR" in environ:
        return None
    if not raw_progress_supported(pip_version):
        return None
    return {**environ, "PIP_PROGRESS_BAR": "raw"}


def pip_version_in(before: Optional[Mapping[str, object]]) -> Optional[str]:
    """pip's version in a target snapshot (fixer.applier.snapshot.snapshot_to_dict), if any."""
    dists = before.get("dists") if before else None
    for d in dists if isinstance(dists, list) else ():
        if isinstance(d, dict) and d.get("name") == "pip" and isinstance(d.get("version"), str):
            return str(d["version"])
    return None
