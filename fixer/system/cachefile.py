"""Reading a cache file the tool wrote earlier, as untrusted data.

A cache lives in the user's cache directory ($XDG_CACHE_HOME or ~/.cache). Under `sudo -E` or a
shared HOME that directory may belong to someone else, so a cache is read only when it is:

- a regular file, opened without following a symlink (O_NOFOLLOW; a link is refused);
- owned by the user reading it (the effective uid);
- not writable by group or others (mode & 0o022 == 0: fixer.system.paths.write_cache creates
  it 0600 through tempfile.mkstemp);
- at most `limit` bytes.

Anything else is "no cache" (None): the caller rebuilds the value from its sources. The content
is data (JSON, never pickle), and the caller validates it again as it would its source.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, Optional, Sequence, Union

#: The largest cache file read (the parsed recipes are about 1 MB of JSON).
LIMIT = 16 * 1024 * 1024


def digest(key: Any, code: Sequence[str]) -> str:
    """A cache file's name for `key`, as the files in `code` derive its value under this Python:
    each code file's mtime and size are part of it (a checkout edited in place keeps its version
    number), so an edited tool never reads a value an older one derived."""
    import hashlib
    import sys

    stamps = tuple((f, st.st_mtime_ns, st.st_size) for f, st in ((f, os.stat(f)) for f in code))
    return hashlib.sha256(repr((key, stamps, sys.version_info[:2])).encode()).hexdigest()[:24]


def trusted(st: os.stat_result) -> bool:
    """A cache file's stat allows reading it: a regular file of ours that only we can write."""
    euid = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
    return stat.S_ISREG(st.st_mode) and st.st_uid == euid and not st.st_mode & 0o022


def read_bytes(path: Union[str, Path], limit: int = LIMIT) -> Optional[bytes]:
    """The bytes of a trusted cache file (see the module docstring), else None."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(str(path), flags | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not trusted(st) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else None


def read_json(path: Union[str, Path], limit: int = LIMIT) -> Optional[Any]:
    """A trusted cache file's JSON, or None (absent, untrusted, not JSON, too deep)."""
    raw = read_bytes(path, limit)
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        return None


__all__ = ["LIMIT", "digest", "read_bytes", "read_json", "trusted"]
