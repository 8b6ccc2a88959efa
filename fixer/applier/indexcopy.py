"""Backups the index can vouch for: record {url, sha256} of the exact wheel instead of a copy.

A distribution pip installed from an index is, file for file, the wheel the index still serves:
pip copies every file under site-packages unchanged and lists its sha256 in the installed
RECORD. So apply need not keep those bytes when the index vouches for the wheel, and rollback
downloads it (checking its sha256) and takes the files from it.

The identity check, made before the apply without downloading the wheel:
    - the installer was pip or uv (`*.dist-info/INSTALLER`) and no `direct_url.json` exists
      (not a local file, a VCS checkout or an editable install);
    - the index the plan installs from lists a wheel of exactly this name and version, with a
      sha256, whose PEP 658 metadata sha256 equals the sha256 of the installed METADATA file
      (the same metadata, byte for byte) and whose tags equal the installed WHEEL file's tags
      (the same build for the same platform and Python).
Only files whose sha256 today equals the one the installed RECORD gives (the wheel's, as pip
copied it) are left to the index; everything else (INSTALLER, RECORD, REQUESTED, generated
console scripts, `.pyc`, a file changed since install) goes into the local backup as before.
Rollback checks every file it writes against the sha256 recorded here, whichever source it
came from.

Local copy anyway: when the journal's disk has more than KEEP_LOCAL_FACTOR times the vouched
bytes free, the local compressed backup keeps them too (rollback then needs no network); below
that, the index is the only copy, and a rollback while the index is down says it cannot reach
it, names the URL, and exits 1 (run it again when the index answers).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any, Dict, Optional, Sequence, Set

from packaging.tags import Tag, parse_tag
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from fixer.system import fsgate
from fixer.system import index as index_client
from fixer.applier.filetree import sha256_of

#: Keep the local copy of vouched files too when the disk has this many times their size free.
KEEP_LOCAL_FACTOR = 4
#: (connect, read) seconds for the index lookup made while preparing an apply.
LOOKUP_TIMEOUT = (3.05, 10.0)
#: Files an installer writes itself (not taken from the wheel).
_INSTALLER_FILES = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json", "uv_cache.json"}


def _installed_tags(dist_info: Path) -> Set[Tag]:
    tags: Set[Tag] = set()
    try:
        text = (dist_info / "WHEEL").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return tags
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Tag" and value.strip():
            try:
                tags |= set(parse_tag(value.strip()))
            except ValueError:
                continue
    return tags


def find(
    dist_info: str, name: str, version: str, index_urls: Sequence[str]
) -> Optional[Dict[str, str]]:
    """{"url", "sha256", "filename", "index"} of the wheel the index serves that is this very
    installed distribution (see the module doc), or None (not vouched, index unreachable)."""
    di = Path(dist_info)
    try:
        installer = (di / "INSTALLER").read_text(encoding="utf-8", errors="replace").strip()
        meta_sha = sha256_of(str(di / "METADATA"))
    except OSError:
        return None
    if installer not in ("pip", "uv") or (di / "direct_url.json").exists():
        return None
    tags = _installed_tags(di)
    try:
        want = Version(version)
    except InvalidVersion:
        return None
    if not tags:
        return None
    for url in index_urls:
        try:
            files = index_client.project_page(url, name, timeout=LOOKUP_TIMEOUT)
        except index_client.Unreachable:
            continue
        for f in files:
            try:
                fname, fver, _build, ftags = parse_wheel_filename(f["filename"])
            except (InvalidWheelFilename, InvalidVersion):
                continue
            sha = (f.get("hashes") or {}).get("sha256")
            meta = f.get("core-metadata", f.get("data-dist-info-metadata"))
            meta_ok = isinstance(meta, dict) and str(meta.get("sha256", "")).lower() == meta_sha
            if (
                fname == canonicalize_name(name)
                and fver == want
                and sha
                and meta_ok
                and set(ftags) == tags
                and not f.get("yanked")
            ):
                return {
                    "url": f["url"].split("#", 1)[0],
                    "sha256": str(sha).lower(),
                    "filename": f["filename"],
                    "index": url,
                }
    return None


def mark(manifest: Dict[str, Any]) -> int:
    """Mark the manifest's files the wheel supplies unchanged (`wheel_path`, and their sha256);
    return their total size."""
    di = manifest["dist_info"]
    site = manifest["site"]
    record: Dict[str, str] = {}
    try:
        with open(os.path.join(di, "RECORD"), encoding="utf-8") as f:
            for row, hashed, _size in fsgate.record_rows(f.read()):
                if hashed.startswith("sha256="):
                    b64 = hashed[len("sha256=") :]
                    digest = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
                    record[os.path.normpath(os.path.join(site, row))] = digest
    except (OSError, ValueError):
        return 0
    total = 0
    for entry in manifest["files"]:
        p = entry["path"]
        if entry["kind"] != "file" or not p.startswith(site + os.sep) or p not in record:
            continue
        rel = os.path.relpath(p, site)
        if os.path.dirname(p) == di and os.path.basename(p) in _INSTALLER_FILES:
            continue
        sha = entry.get("sha256") or sha256_of(p)
        if sha != record[p]:
            continue  # changed since install (or never the wheel's): only a local copy has it
        entry["sha256"] = sha
        entry["wheel_path"] = rel.replace(os.sep, "/")
        total += int(entry.get("size", 0))
    return total


def keep_local(journal_dir: Path, vouched_bytes: int) -> bool:
    """Keep a local copy of the vouched files too (see KEEP_LOCAL_FACTOR)."""
    import shutil

    try:
        return shutil.disk_usage(str(journal_dir)).free > KEEP_LOCAL_FACTOR * vouched_bytes
    except OSError:
        return False


def fetch(copy: Dict[str, str], dest_dir: Path) -> Path:
    """The wheel `copy` names, downloaded into `dest_dir` (reused when already there with the
    right sha256). Raises index.Unreachable / FixerError (see index.download_file)."""
    dest = dest_dir / copy["filename"]
    if dest.is_file() and sha256_of(str(dest)) == copy["sha256"]:
        return dest
    return index_client.download_file(copy["url"], copy["sha256"], dest)


__all__ = ["KEEP_LOCAL_FACTOR", "fetch", "find", "keep_local", "mark"]
