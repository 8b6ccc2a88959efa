"""Repack an installed distribution into a wheel, from the files its RECORD lists.

pip has no "repack": once it uninstalls a distribution, getting it back means downloading it
again, which an offline machine (or an index that just failed) cannot do. So before apply
changes a distribution it packs the installed files into a wheel in the journal, and
rollback reinstalls that wheel with `--no-index --find-links`. The same builder makes a
wheelhouse on a machine with no internet (scripts/device/apply.sh).

A wheel is a zip: the files under site-packages as they are, plus the .dist-info directory
with a fresh RECORD. Files installed outside site-packages (RECORD paths starting with
`../`) go to `<name>-<version>.data/scripts|data/`. Console scripts are left out, since
installers regenerate them from entry_points.txt. Large files are stored uncompressed: backup
speed matters more than size (cuDNN is ~500 MB of already-dense code).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import zipfile
from configparser import ConfigParser
from pathlib import Path
from typing import Any, List, Optional, Set, Tuple

from fixer.errors import FixerError

#: Files installers write that do not belong in a wheel.
_INSTALLER_FILES = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD", "uv_cache.json"}
_COMPRESS_BELOW = 1 << 20


class WheelBuildError(FixerError):
    """The installed distribution cannot be packed (no RECORD, files missing)."""


def _record_hash(data_hash: "hashlib._Hash") -> str:
    return "sha256=" + base64.urlsafe_b64encode(data_hash.digest()).rstrip(b"=").decode()


def _read_record(dist_info: Path) -> List[str]:
    record = dist_info / "RECORD"
    if not record.is_file():
        raise WheelBuildError(f"{dist_info}: no RECORD file; cannot repack it into a wheel")
    with open(record, newline="", encoding="utf-8") as f:
        return [row[0] for row in csv.reader(f) if row]


def _wheel_tags(dist_info: Path) -> Tuple[str, bool]:
    """The compressed tag set ("py3-none-any", "cp312-cp312-manylinux_2_28_x86_64") and purelib flag."""
    tags: List[Tuple[str, str, str]] = []
    purelib = True
    wheel_file = dist_info / "WHEEL"
    if wheel_file.is_file():
        for line in wheel_file.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "Tag":
                parts = value.strip().split("-")
                if len(parts) == 3:
                    tags.append((parts[0], parts[1], parts[2]))
            elif key.strip() == "Root-Is-Purelib":
                purelib = value.strip().lower() == "true"
    if not tags:
        return "py3-none-any", purelib

    def join(i: int) -> str:
        seen: List[str] = []
        for t in tags:
            for part in t[i].split("."):
                if part not in seen:
                    seen.append(part)
        return ".".join(seen)

    return f"{join(0)}-{join(1)}-{join(2)}", purelib


def _console_scripts(dist_info: Path) -> Set[str]:
    ep = dist_info / "entry_points.txt"
    if not ep.is_file():
        return set()
    parser = ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read_string(ep.read_text(encoding="utf-8"))
    except Exception:
        return set()
    names: Set[str] = set()
    for section in ("console_scripts", "gui_scripts"):
        if parser.has_section(section):
            names.update(parser.options(section))
    return names


def _metadata_name_version(dist_info: Path) -> Tuple[str, str]:
    name = version = ""
    meta = dist_info / "METADATA"
    if meta.is_file():
        for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                break
            if line.startswith("Name:") and not name:
                name = line.split(":", 1)[1].strip()
            elif line.startswith("Version:") and not version:
                version = line.split(":", 1)[1].strip()
    if not name or not version:
        m = re.match(r"(.+?)-([^-]+)\.dist-info$", dist_info.name)
        if not m:
            raise WheelBuildError(f"{dist_info}: cannot tell its name and version")
        name, version = name or m.group(1), version or m.group(2)
    return name, version


def wheel_filename(name: str, version: str, tag: str) -> str:
    safe = re.sub(r"[-_.]+", "_", name).lower()
    return f"{safe}-{version.replace('-', '_')}-{tag}.whl"


def _entries(
    dist_info: Path, site: Path, prefix_path: Path, scripts: Any, data_dir: str, di_arc: str
) -> List[Tuple[str, Path]]:
    """(name in the wheel, file on disk) for every file RECORD lists that belongs in the wheel."""
    entries: List[Tuple[str, Path]] = []
    for rel in _read_record(dist_info):
        src = site / rel
        if rel.endswith(".pyc") or "/__pycache__/" in f"/{rel}":
            continue
        if Path(rel).parts[0] == dist_info.name:
            leaf = "/".join(Path(rel).parts[1:])
            if leaf in _INSTALLER_FILES:
                continue
            entries.append((f"{di_arc}/{leaf}", src))
            continue
        if rel.startswith("../") or rel.startswith("/"):
            real = Path(os.path.normpath(site / rel)) if not rel.startswith("/") else Path(rel)
            try:
                inside = real.relative_to(prefix_path)
            except ValueError:
                continue  # outside the environment: not ours to pack
            if inside.parts and inside.parts[0] == "bin":
                if real.name in scripts:
                    continue
                entries.append((f"{data_dir}/scripts/{real.name}", real))
            else:
                entries.append((f"{data_dir}/data/{inside.as_posix()}", real))
            continue
        entries.append((rel, src))
    return entries


def _write_wheel(tmp: Path, entries: List[Tuple[str, Path]], di_arc: str, tag: str) -> None:
    """The wheel's zip at `tmp`: every entry with its RECORD row, a WHEEL file if it had none."""
    record = io.StringIO()
    writer = csv.writer(record, lineterminator="\n")
    with zipfile.ZipFile(tmp, "w", allowZip64=True) as zf:
        for arc, src in entries:
            st = src.stat()
            info = zipfile.ZipInfo.from_file(src, arcname=arc)
            info.external_attr = (st.st_mode & 0xFFFF) << 16
            info.compress_type = (
                zipfile.ZIP_DEFLATED if st.st_size < _COMPRESS_BELOW else zipfile.ZIP_STORED
            )
            h = hashlib.sha256()
            with (
                open(src, "rb") as fin,
                zf.open(info, "w", force_zip64=st.st_size > 0x7FFFFFFF) as fout,
            ):
                for chunk in iter(lambda: fin.read(1 << 22), b""):
                    h.update(chunk)
                    fout.write(chunk)
            writer.writerow([arc, _record_hash(h), st.st_size])
        if not any(a == f"{di_arc}/WHEEL" for a, _ in entries):
            wheel_text = f"Wheel-Version: 1.0\nGenerator: colab-cudnn-fix\nRoot-Is-Purelib: true\nTag: {tag}\n"
            zf.writestr(f"{di_arc}/WHEEL", wheel_text)
            h = hashlib.sha256(wheel_text.encode())
            writer.writerow([f"{di_arc}/WHEEL", _record_hash(h), len(wheel_text)])
        writer.writerow([f"{di_arc}/RECORD", "", ""])
        zf.writestr(f"{di_arc}/RECORD", record.getvalue())


def build_wheel_from_installed(
    dist_info: "os.PathLike[str] | str",
    out_dir: "os.PathLike[str] | str",
    *,
    prefix: Optional[str] = None,
) -> Path:
    """Pack the distribution whose metadata is `dist_info` into a wheel in `out_dir`; return it.

    `prefix` is the environment prefix (sys.prefix) used to place files RECORD lists outside
    site-packages; default: three levels above site-packages (prefix/lib/pythonX.Y/site-packages)."""
    dist_info = Path(dist_info)
    if not dist_info.name.endswith(".dist-info"):
        raise WheelBuildError(f"{dist_info}: only .dist-info installs can be repacked")
    site = dist_info.parent
    prefix_path = Path(prefix) if prefix else site.parent.parent.parent
    name, version = _metadata_name_version(dist_info)
    tag, _purelib = _wheel_tags(dist_info)
    scripts = _console_scripts(dist_info)
    data_dir = f"{re.sub(r'[-_.]+', '_', name)}-{version}.data"
    di_arc = f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    entries = _entries(dist_info, site, prefix_path, scripts, data_dir, di_arc)
    missing = [str(p) for _, p in entries if not p.is_file()]
    if missing:
        raise WheelBuildError(
            f"{name} {version}: {len(missing)} file(s) its RECORD lists are missing, "
            f"e.g. {missing[0]}; the installation is damaged"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    target = out / wheel_filename(name, version, tag)
    tmp = target.with_name(target.name + ".part")
    _write_wheel(tmp, entries, di_arc, tag)
    os.replace(tmp, target)
    return target
