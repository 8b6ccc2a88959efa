"""Just enough of ELF to follow the dynamic loader: SONAME, NEEDED, RPATH, RUNPATH.

Parsed with `struct` from the file's own program headers (PT_DYNAMIC and the PT_LOAD
segments that map DT_STRTAB), so a 245 MB libcudnn_engines_precompiled.so.9 costs a few
small reads. A file that is not an ELF shared object, or is cut short, comes back with
`valid=False` and the reason: the loader refuses such a file ("invalid ELF header",
"file too short"), and a refused file in the search path stops the search.
"""

from __future__ import annotations

import dataclasses
import os
import struct
from typing import BinaryIO, List, Optional, Tuple

PT_LOAD = 1
PT_DYNAMIC = 2
DT_NULL = 0
DT_NEEDED = 1
DT_STRTAB = 5
DT_STRSZ = 10
DT_SONAME = 14
DT_RPATH = 15
DT_RUNPATH = 29
ET_DYN = 3
EM_X86_64 = 62
EM_AARCH64 = 183


@dataclasses.dataclass(frozen=True)
class ElfInfo:
    """What one shared library file's ELF headers say: validity, soname, DT_NEEDED, RPATH/RUNPATH."""

    path: str
    valid: bool
    error: Optional[str] = None  # why the loader would refuse it
    elf_class: int = 0  # 1: 32-bit, 2: 64-bit
    machine: int = 0
    soname: Optional[str] = None
    needed: Tuple[str, ...] = ()
    rpath: Tuple[str, ...] = ()  # DT_RPATH entries, unexpanded ("$ORIGIN/../lib")
    runpath: Tuple[str, ...] = ()  # DT_RUNPATH entries, unexpanded
    size: int = 0

    def search_rpath(self) -> Tuple[str, ...]:
        """DT_RPATH counts only when the object has no DT_RUNPATH (ld.so(8))."""
        return () if self.runpath else self.rpath


def _invalid(path: str, why: str, size: int = 0) -> ElfInfo:
    return ElfInfo(path=path, valid=False, error=why, size=size)


def read_elf(path: str) -> ElfInfo:
    """The dynamic-section facts of the ELF file at `path`; never raises for a bad file."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            return _parse(fh, path, size)
    except OSError as exc:
        return _invalid(path, f"cannot read: {exc.strerror or exc}")
    except (struct.error, ValueError, IndexError) as exc:
        return _invalid(path, f"malformed ELF ({exc})")


class _Bad(Exception):
    """The file is not a usable ELF shared object: the reason, as ElfInfo.error says it."""


#: The ELF header fields read (e_ident aside), as struct formats for ELFCLASS32 and ELFCLASS64.
_EHDR = {False: ("HHIIIIIHHHHHH", 52), True: ("HHIQQQIHHHHHH", 64)}


def _parse(fh: BinaryIO, path: str, size: int) -> ElfInfo:
    try:
        return _parse_valid(fh, path, size)
    except _Bad as bad:
        return _invalid(path, str(bad), size)


def _parse_valid(fh: BinaryIO, path: str, size: int) -> ElfInfo:
    ident = fh.read(64)
    cls, end, fields = _header(ident)
    is64 = cls == 2
    e_type, e_machine, _v, _entry, e_phoff, e_shoff = fields[:6]
    e_phentsize, e_phnum, e_shentsize, e_shnum = fields[8:12]
    if e_type != ET_DYN:
        raise _Bad("not a shared object")
    ph_end = e_phoff + e_phnum * e_phentsize
    if e_phnum == 0 or ph_end > size:
        raise _Bad("file too short")
    fh.seek(e_phoff)
    loads, dynamic, highest = _segments(
        fh.read(e_phnum * e_phentsize), e_phnum, e_phentsize, is64, end
    )
    highest = max(highest, ph_end)
    if e_shoff and e_shnum:
        highest = max(highest, e_shoff + e_shnum * e_shentsize)
    if highest > size:
        raise _Bad(f"file too short (truncated: {size} of {highest} bytes)")
    if dynamic is None:
        return ElfInfo(path=path, valid=True, elf_class=cls, machine=e_machine, size=size)
    fh.seek(dynamic[0])
    tags = _dynamic_tags(fh.read(dynamic[1]), is64, end)
    strings = _string_table(fh, tags, loads, size)
    return _named(path, cls, e_machine, size, tags, strings)


def _header(ident: bytes) -> Tuple[int, str, Tuple[int, ...]]:
    """(ELF class, struct byte order, the header fields after e_ident) of a file's first bytes."""
    if len(ident) < 16:
        raise _Bad("file too short")
    if ident[:4] != b"\x7fELF":
        raise _Bad("invalid ELF header")
    cls, data = ident[4], ident[5]
    if cls not in (1, 2) or data not in (1, 2):
        raise _Bad("invalid ELF class or byte order")
    end = "<" if data == 1 else ">"
    fmt, length = _EHDR[cls == 2]
    if len(ident) < length:
        raise _Bad("file too short")
    return cls, end, struct.unpack(end + fmt, ident[16:length])


def _segments(
    phdata: bytes, count: int, entsize: int, is64: bool, end: str
) -> Tuple[List[Tuple[int, int, int]], Optional[Tuple[int, int]], int]:
    """The program headers: PT_LOAD segments (vaddr, offset, filesz), PT_DYNAMIC (offset,
    filesz), and the highest file offset the segments reach."""
    loads: List[Tuple[int, int, int]] = []
    dynamic: Optional[Tuple[int, int]] = None
    highest = 0
    for i in range(count):
        raw = phdata[i * entsize : (i + 1) * entsize]
        if is64:
            p_type, _pf, p_offset, p_vaddr, _pa, p_filesz, _memsz, _align = struct.unpack(
                end + "IIQQQQQQ", raw[:56]
            )
        else:
            p_type, p_offset, p_vaddr, _pa, p_filesz, _memsz, _pf, _align = struct.unpack(
                end + "IIIIIIII", raw[:32]
            )
        if p_type == PT_LOAD:
            loads.append((p_vaddr, p_offset, p_filesz))
            highest = max(highest, p_offset + p_filesz)
        elif p_type == PT_DYNAMIC:
            dynamic = (p_offset, p_filesz)
    return loads, dynamic, highest


def _dynamic_tags(dyn: bytes, is64: bool, end: str) -> List[Tuple[int, int]]:
    entsize = 16 if is64 else 8
    fmt = end + ("qQ" if is64 else "iI")
    tags: List[Tuple[int, int]] = []
    for off in range(0, len(dyn) - entsize + 1, entsize):
        tag, val = struct.unpack(fmt, dyn[off : off + entsize])
        if tag == DT_NULL:
            break
        tags.append((tag, val))
    return tags


def _string_table(
    fh: BinaryIO, tags: List[Tuple[int, int]], loads: List[Tuple[int, int, int]], size: int
) -> bytes:
    strtab = next((v for t, v in tags if t == DT_STRTAB), None)
    strsz = next((v for t, v in tags if t == DT_STRSZ), 0)
    if strtab is None:
        return b""
    offset = _vaddr_to_offset(strtab, loads)
    if offset is None or offset + strsz > size:
        raise _Bad("malformed ELF (string table outside the file)")
    fh.seek(offset)
    return fh.read(strsz)


def _named(
    path: str, cls: int, machine: int, size: int, tags: List[Tuple[int, int]], strings: bytes
) -> ElfInfo:
    """The ElfInfo of a valid object: its SONAME, NEEDED, RPATH and RUNPATH entries."""

    def s(idx: int) -> str:
        stop = strings.find(b"\0", idx)
        return strings[idx : stop if stop >= 0 else len(strings)].decode("utf-8", "replace")

    soname = None
    needed: List[str] = []
    rpath: List[str] = []
    runpath: List[str] = []
    for tag, val in tags:
        if tag == DT_NEEDED:
            needed.append(s(val))
        elif tag == DT_SONAME:
            soname = s(val)
        elif tag == DT_RPATH:
            rpath += [p for p in s(val).split(":") if p]
        elif tag == DT_RUNPATH:
            runpath += [p for p in s(val).split(":") if p]
    return ElfInfo(
        path=path,
        valid=True,
        elf_class=cls,
        machine=machine,
        soname=soname,
        needed=tuple(needed),
        rpath=tuple(rpath),
        runpath=tuple(runpath),
        size=size,
    )


def _vaddr_to_offset(vaddr: int, loads: List[Tuple[int, int, int]]) -> Optional[int]:
    for seg_vaddr, seg_off, seg_filesz in loads:
        if seg_vaddr <= vaddr < seg_vaddr + seg_filesz:
            return vaddr - seg_vaddr + seg_off
    return None


def expand_origin(entry: str, object_path: str) -> str:
    """$ORIGIN / ${ORIGIN} -> the directory of the object (as loaded, symlinks kept, like ld.so);
    $LIB -> lib64-style multiarch is not used by the wheels we meet, so it is left as "lib"."""
    origin = os.path.dirname(object_path)
    out = entry.replace("${ORIGIN}", origin).replace("$ORIGIN", origin)
    out = out.replace("${LIB}", "lib").replace("$LIB", "lib")
    return os.path.normpath(out)
