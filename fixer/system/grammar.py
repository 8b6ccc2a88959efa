"""The grammar of every name, version and URL that comes from a file the tool reads (locks,
environment JSON, node files, plugin recipes, caches) and may end up in a command line. One
home: the readers call these, and the argv builders (fixer.planner.installers) call them again
before anything reaches pip, uv or apt-get.

Each check returns the value (or its normal form) or raises ValueError with one sentence that
says what was expected. Every string is bounded in length first, so that no later parser
(int() of a version part, a regular expression) sees thousands of characters.

Sources:
- pip names: PEP 508 "Names" (https://peps.python.org/pep-0508/#names), the regex
  `^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$` case-insensitive; packaging.utils.canonicalize_name
  normalises them (PEP 503).
- pip versions: PEP 440, parsed by packaging.version.Version.
- apt package names: Debian Policy 4.7, 5.6.1 "Source" (which 5.6.7 "Package" refers to):
  "at least two characters long", "only lower case letters (a-z), digits (0-9), plus (+) and
  minus (-) signs, and periods (.)", "must start with an alphanumeric character".
- apt versions: Debian Policy 4.7, 5.6.12 "Version": `[epoch:]upstream_version[-debian_revision]`;
  epoch an unsigned integer; upstream_version alphanumerics and `. + - ~`, starting with a digit,
  hyphens only when a debian_revision follows; debian_revision alphanumerics and `+ . ~`.
- index URLs: pip's secure origins (pip src/pip/_internal/network/session.py, SECURE_ORIGINS, 24.x):
  https, file, and http to localhost/127.0.0.0/8/::1 are secure; any other http is not.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit, urlunsplit
from fixer.system.versions import canonical_name

#: Longest name, version and URL a file may hold. No real distribution, Debian package or
#: version comes close (the longest names on PyPI are under 80 characters); bounded so that
#: a hostile value cannot make a parser do unbounded work.
MAX_NAME = 128
MAX_VERSION = 64
MAX_URL = 2048
#: Longest path (Linux PATH_MAX, limits.h).
MAX_PATH = 4096

_PIP_NAME = re.compile(r"[A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9]", re.IGNORECASE)
_APT_NAME = re.compile(r"[a-z0-9][a-z0-9+.-]+")
_APT_VERSION = re.compile(r"(?:[0-9]{1,9}:)?[0-9][A-Za-z0-9.+~]*(?:-[A-Za-z0-9.+~]+)*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
#: conda-build, "Package naming conventions": names "may contain only lowercase alpha characters,
#: numeric digits, underscores, hyphens, or dots"; a version never contains "-" (the canonical
#: name joins name, version and build string with hyphens) and is made of the characters conda's
#: VersionOrder reads (letters, digits, . _ + !).
_CONDA_NAME = re.compile(r"[a-z0-9_][a-z0-9_.-]*")
_CONDA_VERSION = re.compile(r"[0-9][A-Za-z0-9_.+!]*")


def _bounded(value: object, limit: int, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected {what} (a string), got {type(value).__name__}")
    if len(value) > limit:
        raise ValueError(f"{what} longer than {limit} characters ({len(value)})")
    return value


def _show(value: str) -> str:
    return repr(value if len(value) <= 60 else value[:57] + "...")


def pip_name(value: object) -> str:
    """A PEP 508 distribution name, as PEP 503 normalises it ("Nvidia_CUDNN_cu13" ->
    "nvidia-cudnn-cu13")."""
    s = _bounded(value, MAX_NAME, "a distribution name")
    if not _PIP_NAME.fullmatch(s):
        raise ValueError(f"{_show(s)} is not a distribution name (PEP 508: letters, digits, . _ -)")
    return canonical_name(s)


def pip_version(value: object) -> str:
    """A PEP 440 version, as written (its normal form is compared where it matters)."""
    from packaging.version import InvalidVersion, Version

    s = _bounded(value, MAX_VERSION, "a version")
    try:
        Version(s)
    except (InvalidVersion, ValueError):
        raise ValueError(f"{_show(s)} is not a version (PEP 440)") from None
    if s != s.strip():
        raise ValueError(f"{_show(s)} is not a version (PEP 440): spaces around it")
    return s


def conda_spec(value: object) -> str:
    """An exact conda spec as the plan writes it, `name==version` (conda-build's naming
    conventions; see _CONDA_NAME)."""
    s = _bounded(value, MAX_NAME + MAX_VERSION + 2, "a conda package spec")
    name, sep, version = s.partition("==")
    if not (sep and _CONDA_NAME.fullmatch(name) and _CONDA_VERSION.fullmatch(version)):
        raise ValueError(
            f"{_show(s)} is not a conda spec name==version (conda-build naming conventions: "
            "lower case letters, digits, _ - . in the name; no - in the version)"
        )
    return s


def apt_name(value: object) -> str:
    """A Debian binary package name (Debian Policy 5.6.1)."""
    s = _bounded(value, MAX_NAME, "an apt package name")
    if not _APT_NAME.fullmatch(s):
        raise ValueError(
            f"{_show(s)} is not an apt package name (Debian Policy 5.6.1: lower case letters, "
            "digits, + - ., starting with a letter or digit)"
        )
    return s


def apt_version(value: object) -> str:
    """A Debian version `[epoch:]upstream[-revision]` (Debian Policy 5.6.12)."""
    s = _bounded(value, MAX_VERSION, "an apt version")
    if not _APT_VERSION.fullmatch(s):
        raise ValueError(
            f"{_show(s)} is not an apt version (Debian Policy 5.6.12: "
            "[epoch:]upstream_version[-debian_revision], starting with a digit)"
        )
    return s


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def index_url(value: object, *, allow_insecure: bool = False) -> str:
    """A package index URL: https (or file, or http to this machine: pip's secure origins).
    Plain http elsewhere only when `allow_insecure`; the caller warns then."""
    s = _bounded(value, MAX_URL, "an index URL")
    if _CONTROL.search(s) or " " in s:
        raise ValueError(f"{_show(mask_url(s))} is not a URL: spaces or control characters")
    try:
        parts = urlsplit(s)
        host = parts.hostname or ""
    except ValueError as exc:
        raise ValueError(f"{_show(mask_url(s))} is not a URL: {exc}") from None
    if parts.scheme == "https" and host:
        return s
    if parts.scheme == "file" and parts.path.startswith("/"):
        return s
    if parts.scheme == "http" and host:
        if _loopback(host) or allow_insecure:
            return s
        raise ValueError(
            f"{_show(mask_url(s))}: plain http can be read and changed on the way; "
            "use https (or allow it explicitly: allow_insecure_index = true in the lock)"
        )
    raise ValueError(f"{_show(mask_url(s))} is not an https index URL")


def find_link(value: object) -> str:
    """A --find-links place as the tool writes one: an absolute directory (fixer.api.make_options
    makes each given path absolute) without control characters, or an index URL by `index_url`'s
    rule. Never a word pip would read as an option."""
    s = _bounded(value, MAX_PATH, "a find-links place")
    if "://" in s:
        return index_url(s)
    if not s.startswith("/") or _CONTROL.search(s):
        raise ValueError(
            f"{_show(s)} is not a find-links place: an absolute directory without control "
            "characters, or an https URL"
        )
    return s


def insecure(url: str) -> bool:
    """True for a plain-http URL to another machine (the ones index_url refuses by default)."""
    try:
        parts = urlsplit(url)
        return parts.scheme == "http" and not _loopback(parts.hostname or "")
    except ValueError:
        return False


def mask_url(url: str) -> str:
    """The URL with its userinfo (user:password@) replaced by "***@"; anything else as it is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return re.sub(r"//[^/@\s]*@", "//***@", url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, "***@" + host, parts.path, parts.query, parts.fragment))


def abs_path(value: object, what: str = "a path") -> str:
    """An absolute, normal path (no `.` or `..` components, no `//`), without control
    characters, ':' (a search-path separator) or whitespace at its ends."""
    s = _bounded(value, MAX_PATH, what)
    if not s.startswith("/") or _CONTROL.search(s) or ":" in s or s != s.strip():
        raise ValueError(
            f"{_show(s)} is not {what}: absolute, without ':', control characters or spaces at its ends"
        )
    parts = s.split("/")[1:]
    if s != "/" and (any(p in ("", ".", "..") for p in parts)):
        raise ValueError(f"{_show(s)} is not {what} in normal form (no '.', '..' or '//')")
    return s


#: Where a loader fix never points: temporary and pseudo file systems.
_NEVER_UNDER = ("/tmp", "/var/tmp", "/dev", "/proc", "/sys", "/run")
#: The last component of a library directory: lib, lib64, lib32 or a multiarch triplet.
_LIB_DIR = re.compile(r"lib|lib64|lib32|[a-z0-9_]+-linux-gnu[a-z0-9_]*")


def loader_dir(value: object, what: str) -> str:
    """A directory a loader fix may name: absolute and normal, a library directory (lib, lib64,
    a multiarch triplet), outside temporary and pseudo file systems."""
    path = abs_path(value, what)
    if any(path == top or path.startswith(top + "/") for top in _NEVER_UNDER):
        raise ValueError(f"{path!r}: a loader fix never points into {', '.join(_NEVER_UNDER)}")
    if not _LIB_DIR.fullmatch(path.rsplit("/", 1)[-1]):
        raise ValueError(
            f"{path!r} is not a library directory (lib, lib64 or a multiarch triplet such as "
            "x86_64-linux-gnu), where cuDNN copies live"
        )
    return path


def loader_file(value: object, what: str) -> str:
    """A shared library (lib*.so[.N]) in a directory `loader_dir` accepts."""
    path = abs_path(value, what)
    loader_dir(path.rsplit("/", 1)[0] or "/", what)
    if not re.fullmatch(r"lib[A-Za-z0-9_+-]*\.so(\.\d{1,4}){0,4}", path.rsplit("/", 1)[-1]):
        raise ValueError(f"{path!r} is not a shared library file (lib*.so[.N])")
    return path


def loader_fix_value(kind: str, value: object, *, env_file: str) -> str:
    """The value of one loader fix (fixer.model.EnvFix), by the grammar of its kind: what the
    tool itself writes. `env_file`: the one file an env-file fix writes
    (fixer.planner.envfix.ENV_FILE). Used for locks and for journals alike."""
    if kind in ("ld-library-path-drop", "ld-library-path-add", "ld-so-conf"):
        if kind == "ld-library-path-drop":
            return abs_path(value, "a directory")
        return loader_dir(value, "a library directory")
    if kind == "ld-preload-drop":
        return abs_path(value, "a library path")
    if kind == "ipython-preload":
        return loader_file(value, "a library file")
    if kind != "env-file":
        raise ValueError(f"{_show(str(kind))} is not a loader fix kind")
    if value != env_file:
        raise ValueError(f"an env-file fix writes {env_file} only, got {_show(str(value))}")
    return env_file


def sha256_hex(value: object) -> str:
    """A SHA-256 digest as the tool writes one (hashlib's hexdigest): 64 lowercase hex digits."""
    if not isinstance(value, str) or not re.fullmatch(r"[0-9a-f]{64}", value):
        raise ValueError("expected 64 hex digits")
    return value


def short_text(value: object, limit: int, what: str) -> str:
    """Free text of at most `limit` characters, without control characters other than tab."""
    s = _bounded(value, limit, what)
    if re.search(r"[\x00-\x08\x0a-\x1f\x7f]", s):
        raise ValueError(f"{what} holds control characters")
    return s


__all__ = [
    "MAX_NAME",
    "MAX_PATH",
    "MAX_URL",
    "MAX_VERSION",
    "abs_path",
    "apt_name",
    "apt_version",
    "find_link",
    "index_url",
    "insecure",
    "loader_dir",
    "loader_file",
    "loader_fix_value",
    "mask_url",
    "pip_name",
    "pip_version",
    "sha256_hex",
    "short_text",
]
