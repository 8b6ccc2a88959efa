"""A wheel's RECORD is untrusted data (any user who can write the venv can write it): whatever
its rows hold (absolute paths, `..` that leaves the site directory, NUL, sizes of thousands
of digits, bad hashes, missing columns, any text), detection never raises, and never claims,
lists, opens or hashes a file outside the wheel's site directory: a library planted outside,
whose size and sha256 a hostile row gives exactly, is never read. Apply's and rollback's
reading of the same RECORD (fixer.applier.filetree.record_paths) refuses such rows
(fsgate.PathRefused) or names only files inside the environment."""

from __future__ import annotations

import base64
import csv
import io
import hashlib
import os
from typing import Any, List, Tuple

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from fixer.applier.filetree import record_paths
from fixer.detection import libraries
from fixer.detection.fs import MachineFS
from fixer.model import Distribution, ProbeNote, PythonEnv
from fixer.system import fsgate
from tests.helpers import audit
from tests.helpers.examples import examples
from tests.helpers.hostile import OPTION_LIKE, PATHS, TEXTS

PREFIX = "/venv"
SITE = "/venv/lib/python3.12/site-packages"
INFO = "nvidia_cudnn_cu13-9.19.0.56.dist-info"
LIB = b"\x7fELF" + b"planted library bytes" * 64
SHA = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(LIB).digest()).rstrip(b"=").decode()
OUTSIDE = "/outside/lib/libcudnn.so.9"
#: Rows that name the planted file, spelt every way a row can leave the site directory.
ESCAPES = (
    OUTSIDE,
    "../../../../../outside/lib/libcudnn.so.9",
    "nvidia/cudnn/lib/../../../../../../../../outside/lib/libcudnn.so.9",
    "../../../bin/../../outside/lib/libcudnn.so.9",
    "//outside/lib/libcudnn.so.9",
    "~/../../outside/lib/libcudnn.so.9",
    "nvidia/cudnn/lib/libcudnn.so.9\x00/../../../../../../../outside/lib/libcudnn.so.9",
)


def _rows() -> st.SearchStrategy[str]:
    field = st.one_of(st.sampled_from(OPTION_LIKE + PATHS + TEXTS + ESCAPES), st.text(max_size=30))
    size = st.one_of(
        st.just(str(len(LIB))), st.sampled_from(("9" * 5000, "-1", "1e9", "", " 7")), field
    )
    digest = st.one_of(st.just(SHA), st.sampled_from(("sha256=", "md5=x", "sha256=!!")), field)
    return st.one_of(
        st.builds(lambda p, h, s: f"{p},{h},{s}", st.sampled_from(ESCAPES), digest, size),
        st.builds(lambda p, h, s: f"{p},{h},{s}", field, digest, size),
        st.builds(lambda p: f"{p},{SHA}", st.sampled_from(ESCAPES)),  # a missing column
        st.text(max_size=60),
    )


def _machine(tmp: str, rows: List[str]) -> Tuple[MachineFS, PythonEnv]:
    def put(path: str, data: bytes) -> None:
        host = os.path.join(tmp, path.lstrip("/"))
        os.makedirs(os.path.dirname(host), exist_ok=True)
        with open(host, "wb") as fh:
            fh.write(data)

    put(OUTSIDE, LIB)
    put(f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9", LIB)
    good = f"nvidia/cudnn/lib/libcudnn.so.9,{SHA},{len(LIB)}"
    put(f"{SITE}/{INFO}/RECORD", "\n".join([good, *rows]).encode())
    dist = Distribution("nvidia-cudnn-cu13", "9.19.0.56", location=SITE)
    python = PythonEnv(
        executable=f"{PREFIX}/bin/python",
        version="3.12.3",
        prefix=PREFIX,
        site_packages=(SITE,),
        distributions=(dist,),
    )
    return MachineFS(tmp), python


class _Reads:
    """Every open and directory listing of a path under `/outside` (a sys.audit hook)."""

    where = ""
    seen: List[Tuple[str, str]] = []

    @classmethod
    def hook(cls, event: str, args: Tuple[Any, ...]) -> None:
        if cls.where and event in ("open", "os.listdir", "os.scandir") and args:
            if isinstance(args[0], (str, bytes)) and cls.where in os.fsdecode(args[0]):
                cls.seen.append((event, os.fsdecode(args[0])))


audit.watch(("open", "os.listdir", "os.scandir"), _Reads.hook)


def _inside(path: str) -> bool:
    return path.startswith(SITE + "/")


@settings(
    max_examples=examples(500),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(rows=st.lists(_rows(), max_size=6))
@example(rows=["-oDPkg::Pre-Invoke::=touch /tmp/pwned,/outside/lib/libcudnn.so.9,,"])  # 4 columns
def test_detection_reads_nothing_a_hostile_record_row_names_outside_the_site(tmp_path, rows):
    tmp = str(tmp_path / f"m{abs(hash(tuple(rows)))}")
    fs, python = _machine(tmp, rows)
    notes: List[ProbeNote] = []
    _Reads.where, _Reads.seen = os.path.join(tmp, "outside"), []
    try:
        copies, owners = libraries.scan(python, {}, fs, [], [], notes, hashes=True)
    finally:
        _Reads.where = ""
    assert _Reads.seen == []
    assert all(_inside(p) for p in owners.pip), sorted(owners.pip)
    assert all(_inside(d + "/") for d in owners.pip_expected), sorted(owners.pip_expected)
    assert all(_inside(c.directory + "/") for c in copies), [c.directory for c in copies]
    assert f"{SITE}/nvidia/cudnn/lib/libcudnn.so.9" in owners.pip  # the good row still counts


@settings(
    max_examples=examples(500),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(rows=st.lists(_rows(), max_size=6))
def test_apply_and_rollback_refuse_a_record_row_that_escapes(tmp_path, rows):
    tmp = str(tmp_path / f"m{abs(hash(tuple(rows)))}")
    _machine(tmp, rows)
    site = os.path.join(tmp, SITE.lstrip("/"))
    prefix = os.path.join(tmp, PREFIX.lstrip("/"))
    try:
        paths = record_paths(os.path.join(site, INFO), prefixes=(prefix,))
    except fsgate.PathRefused:
        return
    assert all(p.startswith(prefix + os.sep) for p in paths), paths
    assert os.path.join(tmp, OUTSIDE.lstrip("/")) not in paths


@settings(max_examples=examples(300))
@given(
    st.lists(
        st.one_of(st.sampled_from(ESCAPES + OPTION_LIKE + PATHS), st.text(max_size=40)), max_size=8
    )
)
def test_record_rows_read_the_csv_as_pip_does(fields):
    """fsgate.record_rows (the one reader of RECORD rows) gives the first column pip's csv.reader
    gives for every row csv can read, never raises (NUL, stray quotes, line breaks), and pads a
    short row."""
    text = "\n".join(fields)
    rows = fsgate.record_rows(text)
    assert all(len(r) == 3 for r in rows)
    plain = [f for f in fields if not set(f) & set('"\0\r\n')]
    if plain == fields:
        assert [r[0] for r in rows] == [
            row[0] for row in csv.reader(io.StringIO(text, newline="")) if row
        ]
