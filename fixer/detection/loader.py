"""Which file the dynamic loader hands a consumer for a soname, walked in glibc's real order.

ld.so(8): a soname already in the process wins (LD_PRELOAD puts it there first; so do the
frameworks that dlopen wheel libraries by absolute path: JAX's plugin always, torch only
when its first load of libtorch_global_deps.so fails). Then the loading object's DT_RPATH
(only if it has no DT_RUNPATH), LD_LIBRARY_PATH, its DT_RUNPATH, /etc/ld.so.cache, and the
default directories. A file that is found but is not a loadable ELF stops the search with an
error ("invalid ELF header"); a file of the other ELF class is skipped.

cuDNN's sub-libraries are then taken from the directory of the libcudnn.so.N that won
(observed on the GPU machine: with libcudnn_engines_precompiled missing from the pip copy,
the process still mapped only pip files), so a copy's completeness is what matters.
"""

from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Sequence, Set, Tuple

from fixer.system.paths import split_ld_preload
from fixer.model import LibFile, LibraryCopy, LoadResolution, SearchDir
from fixer.detection.elf import ElfInfo, expand_origin
from fixer.detection.fs import MachineFS
from fixer.detection.ldcache import LdCache

DEFAULT_SEARCH = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib", "/usr/lib")
FATAL = (
    "invalid ELF header",
    "file too short",
    "not a shared object",
    "malformed ELF",
    "cannot read",
)


class Resolver:
    def __init__(
        self,
        fs: MachineFS,
        env: Mapping[str, str],
        cache: Optional[LdCache],
        copies: Sequence[LibraryCopy],
    ) -> None:
        self.fs = fs
        self.env = env
        self.cache = cache
        self.by_dir: Dict[Tuple[str, str], LibraryCopy] = {}
        for c in copies:
            self.by_dir[(fs.real(c.directory), c.library)] = c
            self.by_dir.setdefault((c.directory, c.library), c)

    def version_of(self, path: str, library: str) -> Optional[str]:
        real = self.fs.real(path)
        c = self.by_dir.get((os.path.dirname(real), library)) or self.by_dir.get(
            (os.path.dirname(path), library)
        )
        if c is None:
            return None
        base = os.path.basename(path)
        f: Optional[LibFile] = next(
            (x for x in c.files if x.name == base or x.soname == base), None
        )
        if f is not None and f.version and library == "cudnn" and base.startswith("libcudnn.so"):
            return f.version
        return c.version if c.version else (f.version if f else None)

    def resolve(
        self,
        consumer: str,
        library: str,
        soname: str,
        obj: Optional[ElfInfo],
        preload: Sequence[str] = (),
    ) -> LoadResolution:
        candidates: List[Tuple[str, str]] = []  # (via, machine path) in search order
        steps: List[str] = []  # the walk in words, for people
        search: List[SearchDir] = []  # the same walk as data, for the later stages
        pre = split_ld_preload(self.env.get("LD_PRELOAD", ""))
        hit = [
            p
            for p in pre
            if os.path.basename(p) == soname
            or (p.startswith("/") and self.fs.elf(p).soname == soname)
        ]
        steps.append(f"LD_PRELOAD: {' '.join(hit) if hit else '-'}")
        candidates += [("LD_PRELOAD", p) for p in hit]
        search += [
            SearchDir("LD_PRELOAD", os.path.normpath(os.path.dirname(p)))
            for p in hit
            if p.startswith("/")
        ]
        if preload:
            steps.append(f"{consumer} preloads by path: {', '.join(preload)}")
            candidates += [("preload", p) for p in preload]
            search += [SearchDir("preload", os.path.normpath(os.path.dirname(p))) for p in preload]
        own_dirs: List[str] = []
        if obj is not None and obj.valid:
            for e in obj.search_rpath():
                d = expand_origin(e, obj.path)
                candidates.append(("DT_RPATH", os.path.join(d, soname)))
                search.append(SearchDir("DT_RPATH", os.path.normpath(d)))
                own_dirs.append(d)
            if obj.search_rpath():
                steps.append(f"DT_RPATH of {obj.path}: {':'.join(obj.rpath)}")
            elif obj.rpath:
                steps.append(f"DT_RPATH of {obj.path} ignored: it has DT_RUNPATH")
        ldp = [d for d in self.env.get("LD_LIBRARY_PATH", "").split(":") if d]
        steps.append(f"LD_LIBRARY_PATH: {':'.join(ldp) if ldp else '-'}")
        candidates += [("LD_LIBRARY_PATH", os.path.join(d, soname)) for d in ldp]
        search += [SearchDir("LD_LIBRARY_PATH", os.path.normpath(d)) for d in ldp]
        if obj is not None and obj.valid and obj.runpath:
            steps.append(f"DT_RUNPATH of {obj.path}: {':'.join(obj.runpath)}")
            for e in obj.runpath:
                d = expand_origin(e, obj.path)
                candidates.append(("DT_RUNPATH", os.path.join(d, soname)))
                search.append(SearchDir("DT_RUNPATH", os.path.normpath(d)))
                own_dirs.append(d)
        if self.cache is not None:
            hitc = self.cache.lookup(soname)
            steps.append(f"ld.so.cache: {hitc or '-'}")
            if hitc:
                candidates.append(("ld.so.cache", hitc))
                search.append(SearchDir("ld.so.cache", os.path.normpath(os.path.dirname(hitc))))
        else:
            steps.append("ld.so.cache: unreadable")
        candidates += [("default", os.path.join(d, soname)) for d in DEFAULT_SEARCH]

        winner: Optional[Tuple[str, str]] = None
        error: Optional[str] = None
        losers: List[str] = []
        seen: Set[str] = set()
        for via, path in candidates:
            path = os.path.normpath(path)
            if not self.fs.exists(path):
                continue
            real = self.fs.real(path)
            info = self.fs.elf(path)
            if info.valid and info.elf_class != 2:
                continue  # other ELF class: the loader skips it
            if not info.valid and via == "preload":
                continue  # ctypes raised; the framework goes on
            if winner is None:
                winner = (via, path)
                if not info.valid and any(info.error and info.error.startswith(f) for f in FATAL):
                    error = f"{info.error}: {path}"
                seen.add(real)
            elif real not in seen:
                seen.add(real)
                losers.append(f"{path} ({via})")
        intended = None
        if winner is not None and winner[0] in ("LD_PRELOAD", "LD_LIBRARY_PATH"):
            own = next(
                (
                    p
                    for v, p in candidates
                    if v in ("preload", "DT_RPATH", "DT_RUNPATH")
                    and self.fs.exists(p)
                    and self.fs.real(p) != self.fs.real(winner[1])
                ),
                None,
            )
            intended = os.path.normpath(own) if own else None
        if winner is None:
            return LoadResolution(
                consumer=consumer,
                library=library,
                soname=soname,
                path=None,
                steps=tuple(steps),
                error=f"{soname}: not found in any searched place",
                search=tuple(search),
                ld_preload=tuple(hit),
            )
        via, path = winner
        # name the directory as the library scan did (/lib/x86_64-linux-gnu and /usr/lib/... are one)
        known = self.by_dir.get((os.path.dirname(self.fs.real(path)), library))
        directory = known.directory if known is not None else os.path.dirname(path)
        return LoadResolution(
            consumer=consumer,
            library=library,
            soname=soname,
            path=path,
            directory=directory,
            version=None if error else self.version_of(path, library),
            via=via,
            steps=tuple(steps),
            shadowed=tuple(losers),
            intended=intended,
            error=error,
            search=tuple(search),
            ld_preload=tuple(hit),
        )
