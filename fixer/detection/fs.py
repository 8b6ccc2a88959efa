"""The machine's file tree seen through `root` (tests lay out a fake machine under a temp dir).

Paths in the Environment are machine paths ("/usr/lib/x86_64-linux-gnu/libcudnn.so.9"); only
the reads go through the root prefix. Directory listings and ELF headers are cached, because
the same directories are seen as library copies and again as loader search steps.
"""

from __future__ import annotations

import base64
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, Iterable, List, Optional

from fixer.detection.elf import ElfInfo, read_elf

#: Threads that hash RECORD files at once (MachineFS.hash_all). On the GPU machine apply's
#: detection took 1.20 s on one thread, 0.56 s on 4 and 0.60 s on 8
#: (docs/measurements/runs-2026-11-27b/detect_hash_threads.txt).
HASH_THREADS = 4


class MachineFS:
    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root or "/")
        self._ls: Dict[str, Optional[List[str]]] = {}
        self._elf: Dict[str, ElfInfo] = {}
        self._hashes: Dict[str, Optional[str]] = {}

    def R(self, path: str) -> str:
        """Machine path -> host path."""
        if self.root == "/":
            return path
        return os.path.join(self.root, path.lstrip("/"))

    def unR(self, host_path: str) -> str:
        if self.root == "/" or not host_path:
            return host_path
        rel = os.path.relpath(host_path, self.root)
        return "/" if rel == "." else "/" + rel if not rel.startswith("..") else host_path

    def real(self, path: str) -> str:
        """Symlinks resolved, as a machine path (a link pointing outside root stays outside)."""
        return self.unR(os.path.realpath(self.R(path)))

    def exists(self, path: str) -> bool:
        return os.path.exists(self.R(path))

    def isdir(self, path: str) -> bool:
        return os.path.isdir(self.R(path))

    def listdir(self, path: str) -> Optional[List[str]]:
        """Sorted names, or None when the directory is absent or unreadable."""
        if path not in self._ls:
            try:
                self._ls[path] = sorted(os.listdir(self.R(path)))
            except OSError:
                self._ls[path] = None
        return self._ls[path]

    def listdir_error(self, path: str) -> Optional[str]:
        try:
            os.listdir(self.R(path))
        except PermissionError:
            return "permission denied"
        except OSError as exc:
            return exc.strerror or str(exc)
        return None

    def read_text(self, path: str, limit: int = 4 << 20) -> Optional[str]:
        try:
            with open(self.R(path), encoding="utf-8", errors="replace") as fh:
                return fh.read(limit)
        except OSError:
            return None

    def elf(self, path: str) -> ElfInfo:
        """ELF facts of a machine path (the ElfInfo's path is the machine path)."""
        real = self.real(path)
        if real not in self._elf:
            info = read_elf(self.R(real))
            self._elf[real] = ElfInfo(**{**info.__dict__, "path": real})
        return self._elf[real]

    def size(self, path: str) -> Optional[int]:
        try:
            return os.path.getsize(self.R(path))
        except OSError:
            return None

    def record_hash(self, path: str) -> Optional[str]:
        """The file's sha256 in a wheel RECORD's spelling ("sha256=" + urlsafe base64 without
        padding, PEP 376 / the binary distribution format), or None when it cannot be read. Opened
        with O_NOFOLLOW: a symlink is no file of the record's. Read once per detection (this
        MachineFS): hash_all may have read it already."""
        if path not in self._hashes:
            self._hashes[path] = self._sha256(path)
        return self._hashes[path]

    def hash_all(self, paths: Iterable[str]) -> None:
        """record_hash of every path, read on HASH_THREADS threads, largest first: hashlib
        releases the GIL while it hashes a buffer (docs.python.org/3/library/hashlib.html: "the
        Python GIL is released ... for data larger than 2047 bytes"), and a CUDA stack's wheels
        hold several GB of libraries (apply hashes them before and after)."""
        todo = sorted(
            (p for p in set(paths) if p not in self._hashes),
            key=lambda p: -(self.size(p) or 0),
        )
        if len(todo) < 2:
            return
        with ThreadPoolExecutor(
            min(HASH_THREADS, len(todo)), thread_name_prefix="fixer-hash"
        ) as ex:
            for path, digest in zip(todo, ex.map(self._sha256, todo)):
                self._hashes[path] = digest

    def _sha256(self, path: str) -> Optional[str]:
        h = hashlib.sha256()
        try:
            fd = os.open(self.R(path), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    h.update(chunk)
        except OSError:
            return None
        return "sha256=" + base64.urlsafe_b64encode(h.digest()).rstrip(b"=").decode("ascii")
