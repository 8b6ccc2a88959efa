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
from fixer.model import LibFile, LibraryCopy, LoadResolution, SearchDir, SearchVia
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
        walk = self._walk(consumer, soname, obj, preload)
        winner, error, losers = self._first_loadable(walk.candidates)
        if winner is None:
            return LoadResolution(
                consumer=consumer,
                library=library,
                soname=soname,
                path=None,
                steps=tuple(walk.steps),
                error=f"{soname}: not found in any searched place",
                search=tuple(walk.search),
                ld_preload=tuple(walk.hit),
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
            steps=tuple(walk.steps),
            shadowed=tuple(losers),
            intended=self._intended(walk.candidates, winner),
            error=error,
            search=tuple(walk.search),
            ld_preload=tuple(walk.hit),
        )

    def _walk(
        self, consumer: str, soname: str, obj: Optional[ElfInfo], preload: Sequence[str]
    ) -> "_Walk":
        """glibc's search order for `soname` (ld.so(8)): LD_PRELOAD, what the consumer preloads
        by path, DT_RPATH (unless DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH, ld.so.cache, the
        default directories."""
        w = _Walk()
        w.hit = [
            p
            for p in split_ld_preload(self.env.get("LD_PRELOAD", ""))
            if os.path.basename(p) == soname
            or (p.startswith("/") and self.fs.elf(p).soname == soname)
        ]
        w.steps.append(f"LD_PRELOAD: {' '.join(w.hit) if w.hit else '-'}")
        for p in w.hit:
            w.add("LD_PRELOAD", p, os.path.dirname(p) if p.startswith("/") else None)
        if preload:
            w.steps.append(f"{consumer} preloads by path: {', '.join(preload)}")
            for p in preload:
                w.add("preload", p, os.path.dirname(p))
        valid = obj is not None and obj.valid
        if obj is not None and valid:
            for e in obj.search_rpath():
                d = expand_origin(e, obj.path)
                w.add("DT_RPATH", os.path.join(d, soname), d)
            if obj.search_rpath():
                w.steps.append(f"DT_RPATH of {obj.path}: {':'.join(obj.rpath)}")
            elif obj.rpath:
                w.steps.append(f"DT_RPATH of {obj.path} ignored: it has DT_RUNPATH")
        ldp = [d for d in self.env.get("LD_LIBRARY_PATH", "").split(":") if d]
        w.steps.append(f"LD_LIBRARY_PATH: {':'.join(ldp) if ldp else '-'}")
        for d in ldp:
            w.add("LD_LIBRARY_PATH", os.path.join(d, soname), d)
        if obj is not None and valid and obj.runpath:
            w.steps.append(f"DT_RUNPATH of {obj.path}: {':'.join(obj.runpath)}")
            for e in obj.runpath:
                d = expand_origin(e, obj.path)
                w.add("DT_RUNPATH", os.path.join(d, soname), d)
        self._walk_cache(w, soname)
        w.candidates += [("default", os.path.join(d, soname)) for d in DEFAULT_SEARCH]
        return w

    def _walk_cache(self, w: "_Walk", soname: str) -> None:
        if self.cache is None:
            w.steps.append("ld.so.cache: unreadable")
            return
        hitc = self.cache.lookup(soname)
        w.steps.append(f"ld.so.cache: {hitc or '-'}")
        if hitc:
            w.add("ld.so.cache", hitc, os.path.dirname(hitc))

    def _first_loadable(
        self, candidates: Sequence[Tuple[str, str]]
    ) -> Tuple[Optional[Tuple[str, str]], Optional[str], List[str]]:
        """(the candidate the loader takes, its fatal ELF error, the other files it passes over)."""
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
        return winner, error, losers

    def _intended(
        self, candidates: Sequence[Tuple[str, str]], winner: Tuple[str, str]
    ) -> Optional[str]:
        """When an environment variable won: the file the consumer's own search would have
        taken (a preload, its DT_RPATH or DT_RUNPATH)."""
        if winner[0] not in ("LD_PRELOAD", "LD_LIBRARY_PATH"):
            return None
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
        return os.path.normpath(own) if own else None


class _Walk:
    """The loader's search for one soname: the candidates in order (via, machine path), the walk
    in words (for people) and as data (for the later stages), and the LD_PRELOAD entries that name it."""

    def __init__(self) -> None:
        self.candidates: List[Tuple[str, str]] = []
        self.steps: List[str] = []
        self.search: List[SearchDir] = []
        self.hit: List[str] = []

    def add(self, via: SearchVia, path: str, directory: Optional[str]) -> None:
        self.candidates.append((via, path))
        if directory is not None:
            self.search.append(SearchDir(via, os.path.normpath(directory)))
