"""MachineFS.hash_all hashes on threads what record_hash would hash one by one: the same RECORD
digests for any contents, None for a symlink (O_NOFOLLOW) or a missing file, each file read once."""

from __future__ import annotations

import base64
import hashlib
import os
import tempfile

from hypothesis import given, settings, strategies as st

from fixer.detection.fs import MachineFS
from tests.helpers.examples import examples


def _record(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.binary(max_size=3 << 12), min_size=0, max_size=6))
def test_hash_all_gives_what_record_hash_gives_one_by_one(contents):
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, data in enumerate(contents):
            p = os.path.join(d, f"libx{i}.so.1")
            with open(p, "wb") as fh:
                fh.write(data)
            paths.append(p)
        os.symlink(paths[0] if paths else "/nonexistent", os.path.join(d, "link.so.1"))
        extra = [os.path.join(d, "link.so.1"), os.path.join(d, "missing.so.1")]
        fs = MachineFS()
        fs.hash_all(paths + extra)
        for p, data in zip(paths, contents):
            assert fs.record_hash(p) == _record(data) == MachineFS().record_hash(p)
        assert fs.record_hash(extra[0]) is None and fs.record_hash(extra[1]) is None
        for p in paths:  # read once: a later change of the file is not seen by this detection
            with open(p, "ab") as fh:
                fh.write(b"x")
        assert [fs.record_hash(p) for p in paths] == [_record(c) for c in contents]
