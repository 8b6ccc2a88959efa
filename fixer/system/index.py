"""The one package-index client: project pages (PEP 691 JSON, else PEP 503 HTML, as
download.pytorch.org serves), file hashes, and a wheel's requirements (PEP 658 metadata), with
timeouts, retries and an on-disk cache. lock, plan and the maintainer scripts all read indexes
through it.

Two kinds of answer: the best-effort readers (`fetch_requires`, `project_files`,
`fetch_metadata`) give None when the index cannot tell (offline, HTTP error, no such file), and
the caller falls back to the recipes; `project_page` and `file_hashes` raise `Unreachable`
("cannot reach ...") when the index could not be reached at all, so that a lock made offline
says so instead of "no file found". Answers are cached on disk keyed by URL (project pages for
a day, metadata files forever: they are immutable).

    fetch_requires("https://download.pytorch.org/whl/cu126", "torch", "2.11.0+cu126", python_tag="cp312")
    -> ("nvidia-cudnn-cu12==9.10.2.21; platform_system == 'Linux'", ...)
    file_hashes("https://download.pytorch.org/whl/cu128", "torch", "2.11.0+cu128")
    -> ("sha256:...", ...)
"""

from __future__ import annotations

import hashlib
import html.parser
import json
import os
import re
import time
from email.parser import HeaderParser
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union
from fixer.system.paths import cache_dir, write_cache
from fixer.system.versions import canonical_name
from fixer.errors import FixerError
from fixer.system import cachefile, fsgate

PEP691_JSON = "application/vnd.pypi.simple.v1+json"
#: (connect, read) seconds per request.
DEFAULT_TIMEOUT: Tuple[float, float] = (3.05, 10.0)
#: Extra attempts after a connection error or a 5xx/429 answer. A read timeout is not retried:
#: an index that hangs once hangs again, and doctor/plan must stay fast.
RETRIES = 2
PAGE_MAX_AGE_S = 24 * 3600


__all__ = [
    "fetch_requires",
    "fetch_metadata",
    "project_files",
    "project_page",
    "file_hashes",
    "default_cache_dir",
    "select_file",
    "Unreachable",
    "download_file",
]

Timeout = Union[float, Tuple[float, float]]


def default_cache_dir() -> Path:
    return cache_dir() / "index"


# ---------------------------------------------------------------------------------------
# HTTP with cache, retries and timeouts
# ---------------------------------------------------------------------------------------


class _Offline(Exception):
    """Any reason the index could not answer; becomes None at the best-effort boundary."""


class _NotReached(_Offline):
    """No answer at all (connection refused, DNS, timeout): the index was not reached."""


class Unreachable(FixerError):
    """An index could not be reached (network down, wrong mirror). Exit 1."""


#: The largest index answer read back from the cache (a project's JSON page of every release
#: can run to tens of megabytes: torch's).
_CACHE_LIMIT = 256 * 1024 * 1024


def _cache_path(cache_dir: Path, url: str, accept: str) -> Path:
    key = hashlib.sha256(f"{accept}\n{url}".encode()).hexdigest()
    return cache_dir / key[:2] / key


def _cache_read(path: Path, max_age: Optional[float]) -> Optional[bytes]:
    """An index answer cached by an earlier run, younger than `max_age`: read only when it is
    our own private regular file (fixer.system.cachefile; a link is refused), as every cache
    is. The answer names the files to download and their hashes: a planted one under a shared
    cache directory would choose what gets installed."""
    try:
        if max_age is not None and time.time() - os.lstat(path).st_mtime > max_age:
            return None
    except OSError:
        return None
    return cachefile.read_bytes(path, limit=_CACHE_LIMIT)


def _get(
    session: Any,
    url: str,
    accept: str,
    timeout: Timeout,
    cache_dir: Optional[Path],
    max_age: Optional[float],
) -> bytes:
    import requests

    path = _cache_path(cache_dir, url, accept) if cache_dir is not None else None
    if path is not None:
        hit = _cache_read(path, max_age)
        if hit is not None:
            return hit
    last: Optional[str] = None
    reached = True
    for attempt in range(RETRIES + 1):
        if attempt:
            time.sleep(min(0.2 * (2 ** (attempt - 1)), 1.0))
        try:
            resp = session.get(
                url, headers={"Accept": accept}, timeout=timeout, allow_redirects=True
            )
        except requests.exceptions.Timeout as exc:
            raise _NotReached(f"timed out: {url}: {exc}")
        except requests.exceptions.RequestException as exc:
            last = f"{type(exc).__name__}: {exc}"
            reached = False
            continue
        if resp.status_code >= 500 or resp.status_code == 429:
            last = f"HTTP {resp.status_code} from {url}"
            reached = True
            continue
        if resp.status_code != 200:
            raise _Offline(f"HTTP {resp.status_code} from {url}")
        body: bytes = resp.content
        if path is not None:
            write_cache(path, body)
        return body
    raise (_Offline if reached else _NotReached)(last or f"no answer from {url}")


# ---------------------------------------------------------------------------------------
# PEP 691 / PEP 658
# ---------------------------------------------------------------------------------------


class _Links(html.parser.HTMLParser):
    """The <a> elements of a PEP 503 page: (text, href, attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.links: List[Tuple[str, str, Dict[str, Optional[str]]]] = []
        self._open: Optional[Tuple[str, Dict[str, Optional[str]]]] = None

    def handle_starttag(self, tag: str, attrs: List[Tuple[str, Optional[str]]]) -> None:
        if tag == "a":
            a = dict(attrs)
            self._open = (a.get("href") or "", a)
            self.links.append(("", self._open[0], a))

    def handle_data(self, data: str) -> None:
        if self._open is not None and self.links:
            text, href, a = self.links[-1]
            self.links[-1] = (text + data.strip(), href, a)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._open = None


def parse_page(body: bytes, url: str) -> List[Dict[str, Any]]:
    """The files of a project page, JSON (PEP 691) or HTML (PEP 503), in PEP 691's form:
    {"filename", "url" (absolute), "hashes": {"sha256"?}, "core-metadata"?, "yanked"?}."""
    from urllib.parse import urljoin

    out: List[Dict[str, Any]] = []
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        for f in doc.get("files") or []:
            if (
                isinstance(f, dict)
                and isinstance(f.get("filename"), str)
                and isinstance(f.get("url"), str)
            ):
                f = dict(f)
                f["url"] = urljoin(url, f["url"])
                out.append(f)
        return out
    parser = _Links()
    parser.feed(body.decode("utf-8", "replace"))
    for text, href, attrs in parser.links:
        target, _, fragment = href.partition("#")
        filename = text or target.rsplit("/", 1)[-1]
        entry: Dict[str, Any] = {"filename": filename, "url": urljoin(url, target), "hashes": {}}
        m = re.match(r"sha256=([0-9a-f]{64})$", fragment)
        if m:
            entry["hashes"]["sha256"] = m.group(1)
        meta = attrs.get("data-core-metadata") or attrs.get("data-dist-info-metadata")
        if meta:
            mm = re.match(r"sha256=([0-9a-f]{64})$", meta)
            entry["core-metadata"] = {"sha256": mm.group(1)} if mm else True
        if "data-yanked" in attrs:
            entry["yanked"] = attrs["data-yanked"] or True
        out.append(entry)
    return out


def project_page(
    index_url: str,
    name: str,
    *,
    session: Any = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    cache_dir: Optional[Union[str, Path]] = None,
) -> List[Dict[str, Any]]:
    """The files the index lists for `name` ([] when it has no such project or answers with an
    error). Raises Unreachable when the index could not be reached."""
    own = session is None
    session = session or _session()
    url = index_url.rstrip("/") + "/" + canonical_name(name) + "/"
    try:
        body = _get(
            session,
            url,
            PEP691_JSON + ", text/html;q=0.1",
            timeout,
            _cache(cache_dir),
            PAGE_MAX_AGE_S,
        )
    except _NotReached as exc:
        raise Unreachable(
            f"cannot reach {index_url}: {exc}",
            hint="check the network, or give a mirror with --index-mirror FROM=TO",
        )
    except _Offline:
        return []
    finally:
        if own:
            session.close()
    return parse_page(body, url)


def project_files(
    index_url: str,
    name: str,
    *,
    session: Any = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    cache_dir: Optional[Union[str, Path]] = None,
) -> Optional[List[Dict[str, Any]]]:
    """The files of a project page (JSON or HTML), or None when the index cannot tell."""
    try:
        return (
            project_page(index_url, name, session=session, timeout=timeout, cache_dir=cache_dir)
            or None
        )
    except Unreachable:
        return None


def file_hashes(
    index_url: str,
    name: str,
    version: str,
    *,
    session: Any = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    cache_dir: Optional[Union[str, Path]] = None,
) -> Tuple[str, ...]:
    """ "sha256:<hex>" of every file of name==version the index lists (a local version such as
    2.11.0+cu128 matches exactly). Raises Unreachable when the index could not be reached."""
    from packaging.utils import parse_sdist_filename, parse_wheel_filename
    from packaging.version import InvalidVersion, Version

    want = Version(version)
    out: List[str] = []
    for f in project_page(
        index_url,
        name,
        session=session,
        timeout=timeout,
        cache_dir=cache_dir if cache_dir is not None else default_cache_dir(),
    ):
        fn = f["filename"]
        try:
            fv = parse_wheel_filename(fn)[1] if fn.endswith(".whl") else parse_sdist_filename(fn)[1]
        except (ValueError, InvalidVersion):
            continue
        sha = (f.get("hashes") or {}).get("sha256")
        if fv == want and sha:
            out.append("sha256:" + str(sha).lower())
    return tuple(dict.fromkeys(out))


def _wheel_tags(filename: str) -> Optional[Tuple[str, str, List[str], List[str]]]:
    """(name, version, python tags, platform tags) of a wheel file name, or None."""
    if not filename.endswith(".whl"):
        return None
    parts = filename[:-4].split("-")
    if len(parts) == 6:  # with a build tag
        parts = parts[:2] + parts[3:]
    if len(parts) != 5:
        return None
    name, version, py, _abi, plat = parts
    return name, version, py.split("."), plat.split(".")


def _same_version(file_version: str, wanted: str) -> bool:
    from packaging.version import InvalidVersion, Version

    try:
        fv, wv = Version(file_version), Version(wanted)
    except InvalidVersion:
        return False
    if wv.local is None:
        return fv.public == wv.public
    return fv == wv


def select_file(
    files: Sequence[Dict[str, Any]], name: str, version: str, python_tag: Optional[str] = None
) -> Optional[Dict[str, Any]]:
    """The Linux x86_64 wheel of name==version (for python_tag when given) that has PEP 658
    metadata; the newest-looking platform tag wins among equals."""
    want = canonical_name(name)
    best: Optional[Tuple[Tuple[int, int], Dict[str, Any]]] = None
    for f in files:
        tags = _wheel_tags(f["filename"])
        if tags is None or canonical_name(tags[0]) != want or not _same_version(tags[1], version):
            continue
        if f.get("yanked"):
            continue
        if not any("linux" in p and "x86_64" in p for p in tags[3]):
            continue
        meta = f.get("core-metadata", f.get("data-dist-info-metadata"))
        if not meta:
            continue
        py_ok = (
            python_tag is None
            or python_tag in tags[2]
            or ("py3" in tags[2] and python_tag.startswith("cp3"))
        )
        if not py_ok:
            continue
        score = (
            1 if python_tag and python_tag in tags[2] else 0,
            1 if any("manylinux" in p for p in tags[3]) else 0,
        )
        if best is None or score > best[0]:
            best = (score, f)
    return best[1] if best else None


def fetch_metadata(
    file: Dict[str, Any],
    *,
    session: Any = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
    cache_dir: Optional[Union[str, Path]] = None,
) -> Optional[str]:
    """The METADATA text of one file of a project page (PEP 658), checked against the sha256
    the page gives for it; None when offline, absent or not matching."""
    own = session is None
    session = session or _session()
    try:
        meta = file.get("core-metadata", file.get("data-dist-info-metadata"))
        if not meta:
            return None
        url = file["url"].split("#", 1)[0] + ".metadata"
        body = _get(session, url, "*/*", timeout, _cache(cache_dir), None)
        if isinstance(meta, dict) and meta.get("sha256"):
            if hashlib.sha256(body).hexdigest() != str(meta["sha256"]).lower():
                if cache_dir is not None:
                    _drop_cache(_cache_path(Path(cache_dir), url, "*/*"))
                return None
        return body.decode("utf-8", errors="replace")
    except _Offline:
        return None
    finally:
        if own:
            session.close()


def fetch_requires(
    index_url: str,
    name: str,
    version: str,
    *,
    python_tag: Optional[str] = None,
    cache_dir: Optional[Union[str, Path]] = None,
    session: Any = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> Optional[Tuple[str, ...]]:
    """`Requires-Dist` of name==version (e.g. "2.11.0+cu126") on a PEP 691 index, verbatim
    (markers included), or None when the index cannot tell (offline, no such file, no PEP 658
    metadata). `cache_dir` defaults to ~/.cache/colab-cudnn-fix/index; pass a directory in
    tests. `session` is a requests.Session (one is made and closed when omitted)."""
    cache = cache_dir if cache_dir is not None else default_cache_dir()
    own = session is None
    try:
        session = session or _session()
    except Exception:  # requests missing or broken: behave as offline
        return None
    try:
        files = project_files(index_url, name, session=session, timeout=timeout, cache_dir=cache)
        if not files:
            return None
        chosen = select_file(files, name, version, python_tag)
        if chosen is None:
            return None
        text = fetch_metadata(chosen, session=session, timeout=timeout, cache_dir=cache)
        if text is None:
            return None
        msg = HeaderParser().parsestr(text)
        if not msg.get("Name") or not msg.get("Metadata-Version"):
            return None
        return tuple(r.strip() for r in (msg.get_all("Requires-Dist") or ()))
    finally:
        if own:
            session.close()


def _session() -> Any:
    import requests

    s = requests.Session()
    s.headers["User-Agent"] = "colab-cudnn-fix (index metadata)"
    return s


def _cache(cache_dir: Optional[Union[str, Path]]) -> Optional[Path]:
    return Path(cache_dir) if cache_dir is not None else None


def download_file(
    url: str,
    sha256: str,
    dest: Union[str, Path],
    *,
    session: Any = None,
    timeout: Timeout = DEFAULT_TIMEOUT,
) -> Path:
    """Download `url` to `dest` (streamed, through a `.part` file) and check its sha256.
    Raises Unreachable (naming the URL) when the index cannot be reached, FixerError when it
    answers with an error or with bytes whose sha256 is not `sha256`."""
    import requests

    dest = Path(dest)
    own = session is None
    session = session or _session()
    try:
        last = ""
        for attempt in range(RETRIES + 1):
            if attempt:
                time.sleep(min(0.2 * (2 ** (attempt - 1)), 1.0))
            try:
                got = _fetch_to(session, url, dest, sha256, timeout)
            except requests.exceptions.RequestException as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if got is None:
                return dest
            last = got
        raise Unreachable(
            f"cannot reach {url}: {last}", hint="check the network and run the command again"
        )
    finally:
        if own:
            session.close()


def _fetch_to(session: Any, url: str, dest: Path, sha256: str, timeout: Any) -> Optional[str]:
    """One GET of `url` into `dest` through the gate (fixer.system.fsgate.atomic_file: a fresh
    temporary file renamed over `dest` only when its sha256 is right). None when done; the
    status ("HTTP 503") on a 5xx or 429, worth another try."""
    with session.get(url, timeout=timeout, stream=True) as resp:
        if resp.status_code >= 500 or resp.status_code == 429:
            return f"HTTP {resp.status_code}"
        if resp.status_code != 200:
            raise FixerError(f"{url} answered HTTP {resp.status_code}")
        h = hashlib.sha256()
        with fsgate.atomic_file(dest, 0o600) as f:
            for chunk in resp.iter_content(1 << 20):
                h.update(chunk)
                f.write(chunk)
            if h.hexdigest() != sha256.lower():
                raise FixerError(
                    f"{url}: the downloaded file's sha256 is {h.hexdigest()}, not {sha256} "
                    "(the index no longer serves the same file)"
                )
    return None


def _drop_cache(path: Path) -> None:
    """Remove a cache entry that failed its check (best effort, through the gate)."""
    try:
        fsgate.remove(path)
    except OSError:
        pass
