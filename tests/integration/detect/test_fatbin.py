"""The build's real GPU targets: fatbin containers in `.nv_fatbin` and torch's compiled arch list.

Real inputs: fatbins made by nvcc 13.0 (tests/data/fatbin/README.md says how), embedded with the
assembler's `.incbin` into shared objects the C compiler builds here, so no nvcc is needed.
Generated inputs: containers written with the documented layout, checked over many shapes
(entry header sizes 64/80/112, compressed flags, padding between containers, damage).
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
from pathlib import Path
from typing import List, Sequence, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer.detection import fatbin
from fixer.detection.fatbin import (
    ArchTargets,
    build_targets,
    parse_fatbin,
    read_arch_flags,
    read_fatbin_targets,
)
from tests.helpers.examples import examples
from tests.helpers.stublibs import build_stub, cc
from tests.helpers.paths import DATA as TEST_DATA

DATA = TEST_DATA / "fatbin"
REAL = {
    "sm75_sm90_ptx120.fatbin": (("sm_75", "sm_90"), ("compute_120",)),
    "compressed_sm80_sm86_ptx86.fatbin": (("sm_80", "sm_86"), ("compute_86",)),
    "zstd_sm100_sm120_ptx120.fatbin": (("sm_100", "sm_120"), ("compute_120",)),
    "sm90a_sm100f_sm90.fatbin": (("sm_90", "sm_90a", "sm_100f"), ()),
}

needs_cc = pytest.mark.skipif(cc() is None, reason="needs a C compiler to build the shared objects")


def incbin(files: Sequence[Path], section: str = ".nv_fatbin") -> str:
    """C source that puts `files` back to back (8-byte aligned, as the linker lays out the
    containers of several objects) into `section` of the shared object."""
    body = "".join(f'.p2align 3\\n.incbin \\"{f}\\"\\n' for f in files)
    return f'__asm__(".section {section},\\"a\\"\\n{body}.previous\\n");\n'


@needs_cc
@pytest.mark.parametrize("name", sorted(REAL))
def test_real_nvcc_fatbins(tmp_path: Path, name: str) -> None:
    lib = build_stub(tmp_path / "libk.so", extra_source=incbin([DATA / name]))
    got = read_fatbin_targets(str(lib), use_cache=False)
    assert got is not None and got.error is None
    assert (got.sass, got.ptx) == REAL[name]
    assert got.containers == 1


@needs_cc
def test_many_containers_one_union(tmp_path: Path) -> None:
    """Objects linked together: several containers, each walked; the union is the build's list."""
    files = [DATA / n for n in sorted(REAL)] * 3
    lib = build_stub(tmp_path / "libmany.so", extra_source=incbin(files))
    got = read_fatbin_targets(str(lib), use_cache=False)
    assert got is not None and got.error is None and got.containers == len(files)
    sass = {t for s, _ in REAL.values() for t in s}
    ptx = {t for _, p in REAL.values() for t in p}
    assert set(got.sass) == sass and set(got.ptx) == ptx
    assert got.compressed >= 3  # the compressed entries were read without decompressing
    assert got.compute_capabilities() == ("7.5", "8.0", "8.6", "9.0", "10.0", "12.0")
    assert got.highest_ptx() == "12.0"


@needs_cc
def test_no_section_no_file_not_elf(tmp_path: Path) -> None:
    plain = build_stub(tmp_path / "libplain.so")
    assert read_fatbin_targets(str(plain), use_cache=False) is None
    assert read_fatbin_targets(str(tmp_path / "absent.so")) is None
    junk = tmp_path / "junk.so"
    junk.write_bytes(b"not an elf at all" * 10)
    got = read_fatbin_targets(str(junk), use_cache=False)
    assert got is not None and not got.sass and "not an ELF" in (got.error or "")


# ----------------------------------------------------------------------------- generated layouts

Entry = Tuple[int, int, int, int, int]  # kind, arch, header size, payload size, flags


def write_container(entries: Sequence[Entry]) -> bytes:
    body = bytearray()
    for kind, arch, hsize, payload, flags in entries:
        head = bytearray(hsize)
        struct.pack_into("<HHIQ", head, 0, kind, 0x0101, hsize, payload)
        struct.pack_into("<I", head, 16, payload)
        struct.pack_into("<HH", head, 24, 8, 1)
        struct.pack_into("<I", head, 28, arch)
        struct.pack_into("<Q", head, 40, flags)
        body += head + bytes([0xAB]) * payload
    return struct.pack("<IHHQ", fatbin.FATBIN_MAGIC, 1, 16, len(body)) + bytes(body)


ARCHS = [50, 52, 60, 61, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 110, 120, 121]
FLAGS = [0x11, 0x8011, 0x1008011, 0x100011, 0x200011]
entry_st = st.tuples(
    st.sampled_from([1, 2]),
    st.sampled_from(ARCHS),
    st.sampled_from([64, 80, 112]),
    st.integers(0, 40).map(lambda n: n * 8),
    st.sampled_from(FLAGS),
)
containers_st = st.lists(st.lists(entry_st, min_size=0, max_size=6), min_size=1, max_size=5)


def expected(containers: Sequence[Sequence[Entry]]) -> Tuple[set, set]:
    sass, ptx = set(), set()
    for c in containers:
        for kind, arch, _h, _p, flags in c:
            suffix = "a" if flags & 0x100000 else "f" if flags & 0x200000 else ""
            (sass if kind == 2 else ptx).add(f"{'sm' if kind == 2 else 'compute'}_{arch}{suffix}")
    return sass, ptx


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    containers=containers_st,
    pads=st.lists(st.sampled_from([0, 8, 16]), min_size=5, max_size=5),
    lead=st.integers(0, 64),
)
def test_generated_sections_read_exactly(
    tmp_path: Path, containers: List[List[Entry]], pads: List[int], lead: int
) -> None:
    blob = b"".join(write_container(c) + b"\0" * pad for c, pad in zip(containers, pads))
    f = tmp_path / "section.bin"
    f.write_bytes(b"\xee" * lead + blob + b"\xee" * 32)
    fd = os.open(f, os.O_RDONLY)
    try:
        sass, ptx, n, entries, compressed, error = parse_fatbin(fd, lead, len(blob))
    finally:
        os.close(fd)
    assert error is None
    assert (set(sass), set(ptx)) == expected(containers)
    assert n == len(containers) and entries == sum(len(c) for c in containers)
    assert compressed == sum(1 for c in containers for e in c if e[4] & 0x8000)
    assert list(sass) == sorted(sass, key=fatbin._arch_key)


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    containers=containers_st,
    cut=st.integers(0, 4000),
    flip=st.integers(0, 4000),
    byte=st.integers(0, 255),
)
def test_damaged_sections_never_raise(
    tmp_path: Path, containers: List[List[Entry]], cut: int, flip: int, byte: int
) -> None:
    """Cut short and/or with a byte changed: an answer or a stated error, never an exception; cut
    short only, never an architecture that was not in the section."""
    blob = bytearray(b"".join(write_container(c) for c in containers))
    flipped = flip < len(blob) and blob[flip] != byte
    if flip < len(blob):
        blob[flip] = byte
    f = tmp_path / "damaged.bin"
    f.write_bytes(bytes(blob[: max(0, len(blob) - cut)]))
    fd = os.open(f, os.O_RDONLY)
    try:
        sass, ptx, *_rest, error = parse_fatbin(fd, 0, len(blob))
    finally:
        os.close(fd)
    assert all(re.match(r"^sm_\d+[af]?$", t) for t in sass) and all(
        re.match(r"^compute_\d+[af]?$", t) for t in ptx
    )
    if cut and blob:
        assert error is not None
    if not flipped:
        want_sass, want_ptx = expected(containers)
        assert set(sass) <= want_sass and set(ptx) <= want_ptx


# ----------------------------------------------------------------------------- cache


@needs_cc
def test_cache_keyed_by_size_and_mtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    lib = build_stub(tmp_path / "libc.so", extra_source=incbin([DATA / "sm75_sm90_ptx120.fatbin"]))
    first = read_fatbin_targets(str(lib))
    assert first is not None and first.sass == ("sm_75", "sm_90")
    opened: List[str] = []
    real_open = os.open
    monkeypatch.setattr(
        fatbin.os, "open", lambda p, *a, **k: (opened.append(str(p)), real_open(p, *a, **k))[1]
    )
    again = read_fatbin_targets(str(lib))
    assert again == first and opened == []  # answered from the cache: the library was not opened
    # Another build in the same place (size and mtime change): read again, new answer.
    other = build_stub(
        tmp_path / "libother.so", extra_source=incbin([DATA / "compressed_sm80_sm86_ptx86.fatbin"])
    )
    os.replace(other, lib)
    third = read_fatbin_targets(str(lib))
    assert (
        third is not None
        and third.sass == ("sm_80", "sm_86")
        and [p for p in opened if p == str(lib)] == [str(lib)]
    )


# ----------------------------------------------------------------------------- torch's compiled list

TORCH_MODULE_CPP = r"""
#define C10_STRINGIZE_IMPL(x) #x
#define C10_STRINGIZE(x) C10_STRINGIZE_IMPL(x)
const char* THCPModule_getArchFlags_stub(void) {
  static const char* flags = C10_STRINGIZE(CUDA_ARCH_FLAGS);
  return flags;
}
const char* unrelated_message(void) { return "no kernel image is available for execution on the device"; }
const char* near_miss(void) { return "sm_80 is the default"; }
"""


def torch_python(path: Path, flags: str) -> Path:
    """A libtorch_python.so whose arch list is compiled the way torch/csrc/cuda/Module.cpp does it."""
    import shutil
    import subprocess

    src = path.with_suffix(".c")
    src.write_text(TORCH_MODULE_CPP)
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            shutil.which("cc") or "gcc",
            "-shared",
            "-fPIC",
            "-O2",
            f"-DCUDA_ARCH_FLAGS={flags}",
            "-o",
            str(path),
            str(src),
        ],
        check=True,
    )
    return path


@needs_cc
@pytest.mark.parametrize(
    "flags", ["sm_75 sm_80 sm_86 sm_90 sm_100 sm_120 compute_120", "sm_90a", "sm_80 compute_80"]
)
def test_torch_compiled_arch_list(tmp_path: Path, flags: str) -> None:
    lib = torch_python(tmp_path / "libtorch_python.so", flags)
    got = read_arch_flags(str(lib), use_cache=False)
    assert got is not None and got.arch_list() == tuple(
        flags.split()
    )  # torch.cuda.get_arch_list() = flags.split()


@needs_cc
def test_build_targets_prefers_torch_list_then_fatbin(tmp_path: Path) -> None:
    site = tmp_path / "site"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    cuda = build_stub(
        lib / "libtorch_cuda.so", extra_source=incbin([DATA / "sm75_sm90_ptx120.fatbin"])
    )
    got = build_targets("torch", str(site), str(cuda))
    assert (
        got is not None
        and got.source == "fatbin"
        and got.arch_list() == ("sm_75", "sm_90", "compute_120")
    )
    torch_python(lib / "libtorch_python.so", "sm_75 sm_80 sm_90 compute_90")
    got = build_targets("torch", str(site), str(cuda))
    assert (
        got is not None
        and got.source == "arch-flags"
        and got.arch_list() == ("sm_75", "sm_80", "sm_90", "compute_90")
    )


def test_arch_targets_conversions() -> None:
    t = ArchTargets(
        file="x",
        source="fatbin",
        sass=("sm_75", "sm_90a", "sm_100f", "sm_120"),
        ptx=("compute_80", "compute_120"),
    )
    assert t.compute_capabilities() == ("7.5", "9.0", "10.0", "12.0")
    assert t.highest_ptx() == "12.0"
    assert dataclasses.replace(t, ptx=()).highest_ptx() is None


# ----------------------------------------------------------------------------- detect + diagnose


@needs_cc
def test_detected_list_wins_over_the_recipes_row(tmp_path: Path) -> None:
    """The recipes say torch 2.11.0+cu130 ships sm_90; the build on disk says it does not: the
    H200 (9.0) is reported unsupported, with the file the list was read from."""
    from fixer.diagnosis.findings import diagnose
    from tests.helpers.fakemachine import SITE, FakeMachine, small_recipes

    m = FakeMachine(tmp_path / "machine").h200(jax=False)
    torch_python(m.p(SITE) / "torch" / "lib" / "libtorch_python.so", "sm_100 sm_120 compute_120")
    env = m.detect()
    torch = env.framework("torch")
    assert torch is not None and torch.arch_list == ("sm_100", "sm_120", "compute_120")
    assert torch.arch_source == f"{SITE}/torch/lib/libtorch_python.so (arch-flags)"
    assert torch.compute_capabilities == ("10.0", "12.0") and torch.ptx == "12.0"
    found = [f for f in diagnose(env, small_recipes()) if f.id == "gpu-arch-unsupported"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "sm_100 sm_120 compute_120 (read from" in found[0].evidence[0]

    # A build whose SASS includes 8.0 and PTX 9.0: the H200 runs its PTX (JIT): no finding.
    torch_python(m.p(SITE) / "torch" / "lib" / "libtorch_python.so", "sm_80 compute_90")
    env = m.detect()
    assert not [f for f in diagnose(env, small_recipes()) if f.id == "gpu-arch-unsupported"]


@given(
    cc_=st.sampled_from(["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "10.3", "12.0", "12.1"]),
    tokens=st.lists(
        st.builds(
            lambda k, a, s: f"{k}_{a}{s}",
            st.sampled_from(["sm", "compute"]),
            st.sampled_from(ARCHS),
            st.sampled_from(["", "", "a", "f"]),
        ),
        max_size=6,
    ),
)
def test_runs_on_rule(cc_: str, tokens: List[str]) -> None:
    """One target at a time decides (the list runs iff one target does), and each target follows the
    CUDA compatibility rules: SASS same major and minor <= GPU's, PTX any older-or-equal arch,
    `a` targets exactly their arch."""
    from fixer.rules import runs_on as _runs_on, runs_on_arch_list

    assert runs_on_arch_list(cc_, tokens) == any(runs_on_arch_list(cc_, [t]) for t in tokens)
    major, minor = (int(x) for x in cc_.split("."))
    for t in tokens:
        kind, rest = t.split("_")
        suffix = rest[-1] if rest[-1] in "af" else ""
        n = int(rest.rstrip("af"))
        a_major, a_minor = divmod(n, 10)
        if suffix == "a":
            want = (a_major, a_minor) == (major, minor)
        elif kind == "sm" or suffix == "f":
            want = a_major == major and a_minor <= minor
        else:
            want = (a_major, a_minor) <= (major, minor)
        assert runs_on_arch_list(cc_, [t]) == want, t
        if not suffix:
            sass = [f"{a_major}.{a_minor}"] if kind == "sm" else []
            ptx = f"{a_major}.{a_minor}" if kind == "compute" else None
            assert _runs_on(cc_, sass, ptx) == want
