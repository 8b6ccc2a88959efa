"""The GPU architectures a build really ships, read from its own shared libraries.

Two sources, both read without importing the framework and without reading whole files:

1. The CUDA fatbinary in the ELF section `.nv_fatbin` (the section name is
   FATBIN_DATA_SECTION_NAME in CUDA's include/fatbinary_section.h). The section holds one or
   more containers, one per translation unit that had device code, back to back:

       container header, 16 bytes:  u32 magic 0xBA55ED50, u16 version (1), u16 header size,
                                     u64 size of the entries that follow the header
       entry header (64 bytes; 80 for newer PTX, 112 for SM >= 100 ELF: its own size field):
           +0  u16 kind: 1 PTX, 2 ELF (SASS cubin)
           +4  u32 size of this entry header
           +8  u64 size of the payload that follows it (padded to 8 bytes)
           +28 u32 SM architecture: 75 for sm_75 / compute_75
           +40 u64 flags: 0x8000 compressed payload; 0x100000 arch-specific (sm_90a),
               0x200000 family-specific (sm_100f)
       next entry = entry + entry header size + payload size

   Layout from public reverse-engineering (n-eiling/cuda-fatbin-decompression fatbin-decompress.h,
   GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md), checked field by field against
   fatbins made by nvcc 13.0 (tests/data/fatbin/, with the commands that made them). The
   architecture is in the entry header, so compressed payloads (LZ4 or zstd) need no
   decompression. Containers may be separated by alignment padding. On a real NVIDIA library,
   libcurand.so.10 of the nvidia-curand-cu12 10.3.7.77 wheel (96 MB), it reads sm_50 sm_60 sm_70
   sm_75 sm_80 sm_86 sm_89 sm_90 compute_90 (11 containers, 98 entries) in under 1 ms.

2. The arch list torch compiles into libtorch_python.so: torch/csrc/cuda/Module.cpp returns
   `C10_STRINGIZE(CUDA_ARCH_FLAGS)` from `torch._C._cuda_getArchFlags()`, and
   `torch.cuda.get_arch_list()` is that string split on spaces ("sm_80 sm_90 compute_90":
   `sm_XX` is SASS, `compute_XX` is PTX, from TORCH_CUDA_ARCH_LIST at build time). The string
   sits in `.rodata` as a NUL-terminated literal made only of such tokens.

Results are cached on disk keyed by the file's path, size and mtime (libtorch_cuda.so is about
1 GB; its fatbin headers are a few thousand small reads the first time, one stat afterwards).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import struct
from typing import Any, Dict, List, Optional, Tuple
from fixer.system.paths import cache_dir
from fixer.system.paths import write_cache

FATBIN_SECTION = ".nv_fatbin"
FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2
FLAG_COMPRESSED = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000  # sm_90a
FLAG_FAMILY_SPECIFIC = 0x200000  # sm_100f
_CACHE_VERSION = 1
_PAGE = 4096

_ARCH_TOKEN = rb"(?:sm|compute)_\d{2,3}[af]?"
_ARCH_STRING = re.compile(rb"\x00(" + _ARCH_TOKEN + rb"(?: " + _ARCH_TOKEN + rb")*)\x00")


@dataclasses.dataclass(frozen=True)
class ArchTargets:
    """What one library ships: `sass` ("sm_75", "sm_90a") and `ptx` ("compute_120") tokens,
    in torch.cuda.get_arch_list()'s spelling, sorted by architecture."""

    file: str
    source: str  # "fatbin" or "arch-flags"
    sass: Tuple[str, ...] = ()
    ptx: Tuple[str, ...] = ()
    containers: int = 0  # fatbin containers walked
    entries: int = 0  # fatbin entries read
    compressed: int = 0  # entries whose payload is compressed
    error: Optional[str] = None  # why the list is partial or missing

    def arch_list(self) -> Tuple[str, ...]:
        """sass then ptx, as torch.cuda.get_arch_list() orders a default build."""
        return self.sass + self.ptx

    def compute_capabilities(self) -> Tuple[str, ...]:
        return tuple(dict.fromkeys(token_cc(t) for t in self.sass))

    def highest_ptx(self) -> Optional[str]:
        ccs = [token_cc(t) for t in self.ptx]
        return max(ccs, key=lambda c: tuple(int(x) for x in c.split("."))) if ccs else None


def token_cc(token: str) -> str:
    """ "sm_75" -> "7.5", "compute_120" -> "12.0", "sm_90a" -> "9.0"."""
    digits = re.sub(r"[^0-9]", "", token.split("_", 1)[1])
    return f"{digits[:-1]}.{digits[-1]}"


def _token(prefix: str, arch: int, flags: int) -> str:
    suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY_SPECIFIC else ""
    return f"{prefix}_{arch}{suffix}"


def _arch_key(token: str) -> Tuple[int, str]:
    digits = re.sub(r"[^0-9]", "", token.split("_", 1)[1])
    return int(digits or 0), token


# ----------------------------------------------------------------------------- ELF sections


def elf_sections(fd: int, size: int) -> Dict[str, Tuple[int, int]]:
    """{section name: (file offset, size)} from the section header table (ELF64 and ELF32,
    either byte order). Raises ValueError for a file that is not ELF or is cut short."""
    ident = os.pread(fd, 64, 0)
    if len(ident) < 52 or ident[:4] != b"\x7fELF":
        raise ValueError("not an ELF file")
    is64 = ident[4] == 2
    end = "<" if ident[5] == 1 else ">"
    if is64:
        (e_shoff,) = struct.unpack_from(end + "Q", ident, 40)
        e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(end + "HHH", ident, 58)
        shfmt, shlen = end + "IIQQQQIIQQ", 64
    else:
        (e_shoff,) = struct.unpack_from(end + "I", ident, 32)
        e_shentsize, e_shnum, e_shstrndx = struct.unpack_from(end + "HHH", ident, 46)
        shfmt, shlen = end + "IIIIIIIIII", 40
    if not e_shoff or e_shentsize < shlen:
        return {}

    def header(i: int) -> Tuple[int, ...]:
        raw = os.pread(fd, shlen, e_shoff + i * e_shentsize)
        if len(raw) < shlen:
            raise ValueError("section header table outside the file")
        return struct.unpack(shfmt, raw)

    first = header(0)
    if e_shnum == 0:  # SHN_LORESERVE or more sections: count in section 0
        e_shnum = first[5]
    if e_shstrndx == 0xFFFF:  # SHN_XINDEX: index in section 0's sh_link
        e_shstrndx = first[6]
    if e_shoff + e_shnum * e_shentsize > size:
        raise ValueError("section header table outside the file")
    table = os.pread(fd, e_shnum * e_shentsize, e_shoff)
    heads = [struct.unpack_from(shfmt, table, i * e_shentsize) for i in range(e_shnum)]
    if e_shstrndx >= len(heads):
        raise ValueError("no section name table")
    _n, _t, _f, _a, str_off, str_size = heads[e_shstrndx][:6]
    names = os.pread(fd, min(str_size, 1 << 20), str_off)
    out: Dict[str, Tuple[int, int]] = {}
    for h in heads:
        name_off, sh_type, _flags, _addr, offset, sec_size = h[:6]
        stop = names.find(b"\0", name_off)
        name = names[name_off : stop if stop >= 0 else None].decode("latin-1")
        if sh_type != 8:  # SHT_NOBITS has no bytes in the file
            out.setdefault(name, (offset, sec_size))
    return out


# ----------------------------------------------------------------------------- fatbin


class _Window:
    """pread with a one-page window: entry headers that sit close together cost one read."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.start = 0
        self.data = b""

    def read(self, offset: int, n: int) -> bytes:
        if not (self.start <= offset and offset + n <= self.start + len(self.data)):
            self.start = offset
            self.data = os.pread(self.fd, max(n, _PAGE), offset)
        return self.data[offset - self.start : offset - self.start + n]


def _entries(
    w: _Window, entry: int, end: int, sass: Dict[str, None], ptx: Dict[str, None]
) -> Tuple[int, int, Optional[str]]:
    """The entries of one fatbin container, [entry, end): their SASS and PTX targets go into
    `sass` and `ptx`; returns (entries, compressed entries, error or None)."""
    entries = compressed = 0
    while entry + 32 <= end:
        raw = w.read(entry, 48)
        if len(raw) < 48:
            return entries, compressed, f"file ends inside a fatbin entry at byte {entry}"
        kind, _u, ehsize, payload = struct.unpack_from("<HHIQ", raw, 0)
        (arch,) = struct.unpack_from("<I", raw, 28)
        (flags,) = struct.unpack_from("<Q", raw, 40)
        if ehsize < 32 or entry + ehsize + payload > end:
            return entries, compressed, f"malformed fatbin entry at byte {entry}"
        entries += 1
        if flags & FLAG_COMPRESSED:
            compressed += 1
        if kind == KIND_ELF:
            sass[_token("sm", arch, flags)] = None
        elif kind == KIND_PTX:
            ptx[_token("compute", arch, flags)] = None
        entry += ehsize + payload
    return entries, compressed, None


def parse_fatbin(
    fd: int, offset: int, size: int
) -> Tuple[List[str], List[str], int, int, int, Optional[str]]:
    """Walk the fatbin containers in [offset, offset + size): (sass tokens, ptx tokens,
    containers, entries, compressed entries, error or None)."""
    w = _Window(fd)
    sass: Dict[str, None] = {}
    ptx: Dict[str, None] = {}
    containers = entries = compressed = 0
    pos, stop = offset, offset + size
    error: Optional[str] = None
    file_size = os.fstat(fd).st_size
    cut = stop > file_size
    stop = min(stop, file_size)
    while pos + 16 <= stop:
        head = w.read(pos, 16)
        if len(head) < 16:
            error = f"file ends inside {FATBIN_SECTION} at byte {pos}"
            break
        magic, _version, hsize, fsize = struct.unpack("<IHHQ", head)
        if magic != FATBIN_MAGIC:
            if head == b"\0" * 16 or head[:8] == b"\0" * 8:  # alignment padding between containers
                pos += 8
                continue
            error = f"no fatbin header at byte {pos} of {FATBIN_SECTION} (magic {magic:#x})"
            break
        if hsize < 16 or pos + hsize + fsize > stop:
            error = f"fatbin container at byte {pos} runs past the end of {FATBIN_SECTION}"
            break
        containers += 1
        end = pos + hsize + fsize
        n, c, error = _entries(w, pos + hsize, end, sass, ptx)
        entries += n
        compressed += c
        if error:
            break
        pos = end
    if cut:
        error = (
            f"{FATBIN_SECTION} runs past the end of the file ({offset + size} > {file_size} bytes)"
            + (f"; {error}" if error else "")
        )
    return (
        sorted(sass, key=_arch_key),
        sorted(ptx, key=_arch_key),
        containers,
        entries,
        compressed,
        error,
    )


def _rodata_arch_string(fd: int, sections: Dict[str, Tuple[int, int]]) -> Optional[Tuple[str, ...]]:
    """The longest NUL-terminated literal in .rodata made only of sm_XX / compute_XX tokens."""
    where = sections.get(".rodata")
    if where is None:
        return None
    offset, size = where
    best: Optional[bytes] = None
    chunk = 1 << 22
    pos = offset
    while pos < offset + size:
        n = min(chunk + 256, offset + size - pos)
        # The byte before the chunk decides whether a literal starts at its first byte; the
        # section's first literal has none (the NUL before it is implied).
        data = (os.pread(fd, 1, pos - 1) if pos > offset else b"\0") + os.pread(fd, n, pos)
        for m in _ARCH_STRING.finditer(data):
            if best is None or len(m.group(1)) > len(best):
                best = m.group(1)
        pos += chunk
    if best is None:
        return None
    return tuple(best.decode("ascii").split())


# ----------------------------------------------------------------------------- cache + API


def _cache_path(path: str, kind: str) -> Any:
    digest = hashlib.sha256(f"{kind}\0{os.path.realpath(path)}".encode()).hexdigest()[:24]
    return cache_dir() / "arch" / f"{digest}.json"


def _cached(path: str, kind: str, st: os.stat_result) -> Optional[ArchTargets]:
    try:
        data = json.loads(_cache_path(path, kind).read_text())
        if (
            data.get("v") != _CACHE_VERSION
            or data.get("size") != st.st_size
            or data.get("mtime_ns") != st.st_mtime_ns
        ):
            return None
        r = data["result"]
        return ArchTargets(
            file=path,
            source=r["source"],
            sass=tuple(r["sass"]),
            ptx=tuple(r["ptx"]),
            containers=r["containers"],
            entries=r["entries"],
            compressed=r["compressed"],
            error=r["error"],
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(path: str, kind: str, st: os.stat_result, result: ArchTargets) -> None:
    body = {
        "v": _CACHE_VERSION,
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "result": {k: v for k, v in dataclasses.asdict(result).items() if k != "file"},
    }
    write_cache(_cache_path(path, kind), json.dumps(body).encode())


def read_fatbin_targets(path: str, use_cache: bool = True) -> Optional[ArchTargets]:
    """SASS and PTX targets of the `.nv_fatbin` section of the ELF file at `path`; None when
    the file cannot be read or has no such section. Never raises."""
    return _read(path, "fatbin", use_cache)


def read_arch_flags(path: str, use_cache: bool = True) -> Optional[ArchTargets]:
    """The arch list a torch build compiled into `path` (libtorch_python.so); None when absent."""
    return _read(path, "arch-flags", use_cache)


def _read(path: str, kind: str, use_cache: bool) -> Optional[ArchTargets]:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if use_cache:
        hit = _cached(path, kind, st)
        if hit is not None:
            return hit if (hit.sass or hit.ptx or hit.error) else None
    result = _read_uncached(path, kind, st.st_size)
    if use_cache:
        _store(path, kind, st, result or ArchTargets(file=path, source=kind))
    return result


def _read_uncached(path: str, kind: str, size: int) -> Optional[ArchTargets]:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        sections = elf_sections(fd, size)
        if kind == "arch-flags":
            tokens = _rodata_arch_string(fd, sections)
            if not tokens:
                return None
            return ArchTargets(
                file=path,
                source="arch-flags",
                sass=tuple(t for t in tokens if t.startswith("sm_")),
                ptx=tuple(t for t in tokens if t.startswith("compute_")),
            )
        where = sections.get(FATBIN_SECTION)
        if where is None:
            return None
        sass, ptx, containers, entries, compressed, error = parse_fatbin(fd, where[0], where[1])
        return ArchTargets(
            file=path,
            source="fatbin",
            sass=tuple(sass),
            ptx=tuple(ptx),
            containers=containers,
            entries=entries,
            compressed=compressed,
            error=error,
        )
    except (OSError, ValueError, struct.error) as exc:
        return ArchTargets(file=path, source=kind, error=f"cannot read {path}: {exc}")
    finally:
        os.close(fd)


def build_targets(
    framework: str, location: str, library_file: Optional[str], R: Any = None
) -> Optional[ArchTargets]:
    """The targets an installed framework ships, from the file that answers best:

    - torch: the arch list compiled into torch/lib/libtorch_python.so (exactly what
      torch.cuda.get_arch_list() returns), else the fatbin of libtorch_cuda.so;
    - jax: the fatbin of the CUDA plugin (jax_plugins/xla_cudaNN/xla_cuda_plugin.so) or of
      jaxlib's xla_extension;
    - anything else: the fatbin of its main native library.
    `R` maps a machine path to the file to open (the `--root` sandbox); None is identity."""

    def real(p: str) -> str:
        return str(R(p)) if R is not None else p

    candidates: List[Tuple[str, str]] = []
    if framework == "torch":
        candidates.append(
            ("arch-flags", os.path.join(location, "torch", "lib", "libtorch_python.so"))
        )
    if library_file:
        candidates.append(("fatbin", library_file))
    if framework == "jax":
        candidates.append(("fatbin", os.path.join(location, "jaxlib", "xla_extension.so")))
    for kind, p in candidates:
        got = _read(real(p), kind, True)
        if got is not None and (got.sass or got.ptx):
            return dataclasses.replace(got, file=p)
    return None


def describe(targets: Optional[ArchTargets]) -> str:
    if targets is None:
        return "unknown"
    return " ".join(targets.arch_list()) or "none"
