"""Shared state raced: another user (a thread here) keeps swapping a directory the tool writes
into for a symlink to a place outside, and back, while the tool writes, appends, creates and
removes through the gate (fixer.system.fsgate: every component opened by fd with O_NOFOLLOW,
new files O_EXCL, renames inside the opened directory). Invariant: whatever the interleaving,
nothing outside is ever created, changed or removed; each operation either lands inside or
fails with PathRefused / OSError (a time-of-check-to-time-of-use swap can only make it fail)."""

from __future__ import annotations

import hashlib
import os
import threading
import time
from pathlib import Path

import pytest

from fixer.system import fsgate

ROUNDS = 400


def _tree_digest(top: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(top)):
        dirnames.sort()
        h.update(dirpath.encode())
        for f in sorted(filenames):
            p = os.path.join(dirpath, f)
            h.update(p.encode() + open(p, "rb").read())
    return h.hexdigest()


class Swapper(threading.Thread):
    """Renames `spot` (a real directory) away and puts a symlink to `outside` in its place, and
    back, until stopped; each state lasts a moment, so that the tool meets all of them."""

    def __init__(self, spot: Path, outside: Path) -> None:
        super().__init__(daemon=True)
        self.spot, self.outside = spot, outside
        self.stop = threading.Event()
        self.swaps = 0

    def run(self) -> None:
        aside = self.spot.with_name(self.spot.name + ".real")
        link = self.spot.with_name(self.spot.name + ".link")
        while not self.stop.is_set():
            try:
                os.rename(self.spot, aside)
                os.symlink(self.outside, link)
                os.rename(link, self.spot)
                self.swaps += 1
                time.sleep(0.0002)  # the link stays a moment, and so does the real folder below
                os.rename(self.spot, link)
                os.unlink(link)
                os.rename(aside, self.spot)
                time.sleep(0.0002)
            except OSError:
                pass  # the tool's own operation got in between: try again


OPERATIONS = {
    "write_bytes": lambda d, i: fsgate.write_bytes(d / f"f{i % 7}", b"data %d" % i, durable=False),
    "append_text": lambda d, i: fsgate.append_text(d / "log", f"line {i}\n"),
    "create_new": lambda d, i: os.close(fsgate.create_new(d / f"n{i}")),
    "make_dirs": lambda d, i: fsgate.make_dirs(d / f"sub{i % 5}" / "deeper"),
    "remove": lambda d, i: fsgate.remove(d / f"f{i % 7}"),
}


@pytest.mark.parametrize("op", sorted(OPERATIONS))
def test_a_directory_swapped_for_a_symlink_mid_operation_never_leads_outside(tmp_path, op):
    root = tmp_path / "state"
    spot = root / "journal" / "spot"
    spot.mkdir(parents=True)
    outside = tmp_path / "victim"
    outside.mkdir()
    for i in range(7):
        (outside / f"f{i}").write_bytes(b"the victim's own file")
    (outside / "log").write_text("the victim's log\n")
    before = _tree_digest(outside)
    swapper = Swapper(spot, outside)
    landed = refused = 0
    with fsgate.allowed([root]):
        swapper.start()
        try:
            deadline = time.monotonic() + 10
            while not swapper.swaps and time.monotonic() < deadline:
                time.sleep(0.001)  # the race is on before the first operation
            for i in range(ROUNDS):
                try:
                    OPERATIONS[op](spot, i)
                    landed += 1
                except (fsgate.PathRefused, OSError):
                    refused += 1
        finally:
            swapper.stop.set()
            swapper.join(10)
    assert swapper.swaps > 0, "the race never happened"
    assert _tree_digest(outside) == before, "something outside changed"
    assert sorted(os.listdir(outside)) == sorted([f"f{i}" for i in range(7)] + ["log"])
    assert landed + refused == ROUNDS and landed > 0
