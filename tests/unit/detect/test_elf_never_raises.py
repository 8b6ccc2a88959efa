"""read_elf's promise, "never raises for a bad file", over generated files: random bytes, and
valid ELF headers whose counts, offsets and sizes are generated (the fields a truncated or
hostile file gets wrong)."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.detection.elf import read_elf
from tests.helpers.examples import examples

U16 = st.integers(0, 0xFFFF)
U64 = st.integers(0, 2**64 - 1)


def _header64(e_type: int, phoff: int, shoff: int, phentsize: int, phnum: int, shnum: int) -> bytes:
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    return ident + struct.pack(
        "<HHIQQQIHHHHHH", e_type, 62, 1, 0, phoff, shoff, 0, 64, phentsize, phnum, 64, shnum, 0
    )


@settings(max_examples=examples(300), deadline=None)
@given(data=st.binary(max_size=512))
def test_random_bytes_give_an_answer(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("elf") / "lib.so"
    path.write_bytes(data)
    info = read_elf(str(path))
    assert info.valid or info.error


@settings(max_examples=examples(300), deadline=None)
@given(
    e_type=st.sampled_from([2, 3, 3, 3]),
    phoff=st.one_of(st.just(64), U64),
    shoff=st.one_of(st.just(0), U64),
    phentsize=st.one_of(st.just(56), U16),
    phnum=U16,
    shnum=U16,
    tail=st.binary(max_size=1024),
)
def test_generated_headers_give_an_answer(
    tmp_path_factory, e_type, phoff, shoff, phentsize, phnum, shnum, tail
):
    path = tmp_path_factory.mktemp("elf") / "lib.so"
    path.write_bytes(_header64(e_type, phoff, shoff, phentsize, phnum, shnum) + tail)
    info = read_elf(str(path))
    assert info.valid or info.error
