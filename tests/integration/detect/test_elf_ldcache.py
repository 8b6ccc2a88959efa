"""ELF dynamic sections of real compiled libraries, and ld.so.cache files written by the real ldconfig."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from fixer.detection.elf import expand_origin, read_elf
from fixer.detection.ldcache import (
    CacheFormatError,
    LdCache,
    load_ld_cache,
    parse_ld_so_cache,
    parse_ldconfig_p,
)
from tests.helpers.fakemachine import FakeMachine, write_ld_cache
from tests.helpers.stublibs import build_stub


def test_rpath_runpath_needed_soname(tmp_path):
    dep = build_stub(tmp_path / "dep" / "libdep.so.1", soname="libdep.so.1")
    a = build_stub(tmp_path / "a" / "liba.so", needed=[dep], rpath=["$ORIGIN/../dep", "/x"])
    b = build_stub(tmp_path / "b" / "libb.so", needed=[dep], runpath=["$ORIGIN"])
    ia, ib = read_elf(str(a)), read_elf(str(b))
    assert ia.valid and ia.soname == "liba.so" and "libdep.so.1" in ia.needed
    assert (
        ia.rpath == ("$ORIGIN/../dep", "/x") and ia.runpath == () and ia.search_rpath() == ia.rpath
    )
    assert ib.runpath == ("$ORIGIN",) and ib.rpath == () and ib.search_rpath() == ()
    assert ia.elf_class == 2
    assert expand_origin("$ORIGIN/../dep", str(a)) == str(tmp_path / "dep")


def test_bad_files_are_flagged_not_raised(tmp_path):
    good = build_stub(tmp_path / "libgood.so.9", soname="libgood.so.9")
    garbage = tmp_path / "libgarbage.so.9"
    garbage.write_bytes(os.urandom(4096))
    truncated = tmp_path / "libtrunc.so.9"
    truncated.write_bytes(good.read_bytes()[:1200])
    empty = tmp_path / "libempty.so.9"
    empty.write_bytes(b"")
    assert read_elf(str(garbage)).error == "invalid ELF header"
    t = read_elf(str(truncated))
    assert not t.valid and "file too short" in t.error
    assert read_elf(str(empty)).error == "file too short"
    assert read_elf(str(tmp_path / "absent.so")).error.startswith("cannot read")
    assert read_elf(str(tmp_path)).valid is False


needs_ldconfig = pytest.mark.skipif(
    not shutil.which("ldconfig") or os.geteuid() != 0,
    reason="needs ldconfig run as root (-r chroot)",
)


@needs_ldconfig
def test_binary_cache_matches_ldconfig_p(tmp_path):
    m = FakeMachine(tmp_path / "m")
    m.apt_cudnn()
    assert m.ld_cache() == "ldconfig"
    data = m.p("/etc/ld.so.cache").read_bytes()
    entries = parse_ld_so_cache(data)
    text = subprocess.run(
        ["ldconfig", "-p", "-C", str(m.p("/etc/ld.so.cache"))], capture_output=True, text=True
    ).stdout
    assert [(s, p) for s, p, _ in entries] == [(s, p) for s, p, _ in parse_ldconfig_p(text)]
    cache = LdCache(entries, "binary")
    assert cache.lookup("libcudnn.so.9") == "/usr/lib/x86_64-linux-gnu/libcudnn.so.9"
    assert cache.lookup("libcudnn_cnn.so.9").endswith("libcudnn_cnn.so.9")


def test_python_writer_round_trip_and_bad_cache(tmp_path):
    write_ld_cache(
        tmp_path / "c",
        [("libcudnn.so.9", "/lib/x86_64-linux-gnu/libcudnn.so.9"), ("libz.so.1", "/lib/libz.so.1")],
    )
    cache, note = load_ld_cache(str(tmp_path / "c"), allow_ldconfig=False)
    assert (
        cache.lookup("libcudnn.so.9") == "/lib/x86_64-linux-gnu/libcudnn.so.9" and "binary" in note
    )
    (tmp_path / "bad").write_bytes(b"glibc-ld.so.cache1.1" + b"\xff" * 40)
    with pytest.raises(CacheFormatError):
        parse_ld_so_cache((tmp_path / "bad").read_bytes())
    cache, note = load_ld_cache(str(tmp_path / "bad"), allow_ldconfig=False)
    assert cache is None and "entries" in note
    cache, note = load_ld_cache(str(tmp_path / "absent"), allow_ldconfig=False)
    assert cache is None


def test_real_system_cache_parses():
    if not os.path.exists("/etc/ld.so.cache"):
        pytest.skip("no /etc/ld.so.cache here")
    cache, note = load_ld_cache("/etc/ld.so.cache")
    assert cache is not None and cache.lookup("libc.so.6")
