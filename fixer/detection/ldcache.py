"""/etc/ld.so.cache: the soname -> path table the loader consults after LD_LIBRARY_PATH/RUNPATH.

The binary format is glibc's (elf/cache.c, sysdeps/generic/dl-cache.h): the new format starts
with "glibc-ld.so.cache" + "1.1", then nlibs, len_strings, flags, extension_offset, 3 unused
words (48 bytes), then nlibs entries of {int32 flags; uint32 key, value; uint32 osversion;
uint64 hwcap} (24 bytes). key/value are offsets of the soname and the path, counted from
the start of the new-format header. Old caches put an "ld.so-1.7.0" table first; we skip to
the new header when present. Only if the binary parse fails do we read `ldconfig -p`.
"""

from __future__ import annotations

import re
import struct
from typing import Dict, List, Optional, Tuple
from fixer.system.proc import run

NEW_MAGIC = b"glibc-ld.so.cache1.1"
OLD_MAGIC = b"ld.so-1.7.0"
FLAG_ELF_LIBC6 = 0x0003
FLAG_TYPE_MASK = 0x00FF
FLAG_REQUIRED_MASK = 0xFF00
FLAG_X8664_LIB64 = 0x0300
FLAG_AARCH64_LIB64 = 0x0A00

#: entries are (soname, path, flags) in cache order (the order the loader searches).
Entry = Tuple[str, str, int]


class CacheFormatError(ValueError):
    pass


def parse_ld_so_cache(data: bytes) -> List[Entry]:
    """Entries of a binary ld.so.cache. Raises CacheFormatError on anything else."""
    start = 0
    if data.startswith(OLD_MAGIC):
        start = data.find(NEW_MAGIC)
        if start < 0:
            raise CacheFormatError("old-format ld.so.cache without a new-format part")
    elif not data.startswith(NEW_MAGIC):
        raise CacheFormatError("not an ld.so.cache (bad magic)")
    header = data[start : start + 48]
    if len(header) < 48:
        raise CacheFormatError("ld.so.cache header cut short")
    nlibs, len_strings = struct.unpack_from("<II", header, 20)
    table = start + 48
    if table + nlibs * 24 > len(data):
        raise CacheFormatError(f"ld.so.cache claims {nlibs} entries but is {len(data)} bytes")

    def string(off: int) -> str:
        pos = start + off
        if not 0 <= pos < len(data):
            raise CacheFormatError("ld.so.cache string offset outside the file")
        stop = data.find(b"\0", pos)
        return data[pos : stop if stop >= 0 else len(data)].decode("utf-8", "replace")

    out: List[Entry] = []
    for i in range(nlibs):
        flags, key, value, _osv, _hwcap = struct.unpack_from("<iIIIQ", data, table + i * 24)
        out.append((string(key), string(value), flags))
    return out


_LDCONFIG_LINE = re.compile(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$")


def parse_ldconfig_p(text: str) -> List[Entry]:
    """`ldconfig -p` output ("\tlibcudnn.so.9 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudnn.so.9")."""
    out: List[Entry] = []
    for line in text.splitlines():
        m = _LDCONFIG_LINE.match(line)
        if not m:
            continue
        tags = m.group(2)
        flags = FLAG_ELF_LIBC6
        if "x86-64" in tags:
            flags |= FLAG_X8664_LIB64
        elif "AArch64" in tags:
            flags |= FLAG_AARCH64_LIB64
        out.append((m.group(1), m.group(3), flags))
    return out


def arch_matches(flags: int, machine: str = "x86_64") -> bool:
    """Whether an entry is usable by a 64-bit process of `machine` (the loader skips the others)."""
    if flags & FLAG_TYPE_MASK != FLAG_ELF_LIBC6:
        return False
    req = flags & FLAG_REQUIRED_MASK
    if machine == "x86_64":
        return req == FLAG_X8664_LIB64
    if machine == "aarch64":
        return req in (FLAG_AARCH64_LIB64, 0)
    return True


class LdCache:
    """The parsed cache: first matching entry per soname, as the loader picks it."""

    def __init__(self, entries: List[Entry], source: str, machine: str = "x86_64") -> None:
        self.entries = entries
        self.source = source
        self._first: Dict[str, str] = {}
        for soname, path, flags in entries:
            if arch_matches(flags, machine) and soname not in self._first:
                self._first[soname] = path

    def lookup(self, soname: str) -> Optional[str]:
        return self._first.get(soname)

    def all_for(self, soname: str) -> List[str]:
        return [p for s, p, _f in self.entries if s == soname]

    def directories(self) -> List[str]:
        seen: Dict[str, None] = {}
        for _s, path, _f in self.entries:
            seen.setdefault(path.rsplit("/", 1)[0] or "/", None)
        return list(seen)


def load_ld_cache(
    path: str, *, allow_ldconfig: bool = True, machine: str = "x86_64", timeout: float = 5.0
) -> Tuple[Optional[LdCache], str]:
    """Read the cache at `path`; fall back to `ldconfig -p` (only for the real /etc/ld.so.cache).
    Returns (cache or None, a note for the probe log)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    try:
        return LdCache(parse_ld_so_cache(data), "binary", machine), f"{path}: binary format"
    except CacheFormatError as exc:
        note = f"{path}: {exc}"
    if not allow_ldconfig:
        return None, note

    proc = run(["ldconfig", "-p"], timeout=timeout)
    if proc.error is not None or proc.timed_out:
        return (
            None,
            f"{note}; ldconfig -p failed: {proc.error or f'no answer within {timeout:g} s'}",
        )
    entries = parse_ldconfig_p(proc.text)
    return LdCache(entries, "ldconfig -p", machine), f"{note}; read `ldconfig -p` instead"
