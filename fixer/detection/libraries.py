"""Every copy of cuDNN (and of cudart, cuBLAS, cuBLASLt, NVRTC) on the machine, with its version.

Where we look: the nvidia/*/lib directories of every site-packages the target sees (pip), the
framework's own lib dir (bundled), LD_PRELOAD and LD_LIBRARY_PATH, $CONDA_PREFIX/lib, the
directories ld.so.cache names, the default dirs and /usr/local/cuda*. Who owns a file: the
wheel's RECORD (pip), /var/lib/dpkg/info/*.list (apt), else by place.

Version of a file, cheapest first: the versioned real file name (libcudnn_cnn.so.9.14.0), the
owning wheel's version when the file's size matches its RECORD, the cudnn_version.h next to
the copy, and last cudnnGetVersion called in a child process (every cuDNN 9 sub-library
exports it) for files nothing else vouches for.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections import Counter, OrderedDict
from typing import Dict, Iterable, List, Mapping, Optional, Set, Tuple, cast

from fixer.system import fsgate
from fixer.system.paths import split_ld_preload
from fixer.system.versions import canonical_name
from fixer.model import Distribution, LibFile, LibraryCopy, Package, ProbeNote, PythonEnv
from fixer.rules import cudnn_version_from_int, expected_cudnn_sonames
from fixer.detection.fs import MachineFS

FAMILY_RE = re.compile(
    r"^lib(cudnn(?:_[a-z_]+)?|cudart|cublasLt|cublas|nvrtc)\.so\.(\d+)((?:\.\d+)*)$"
)
DEFAULT_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
)
DPKG_PACKAGES = re.compile(
    r"^(libcudnn|cudnn|cuda-cudart|libcublas|cuda-nvrtc|libnvrtc|libcudart)[^:]*(:[a-z0-9]+)?\.list$"
)
PIP_CUDA_DIST = re.compile(r"^nvidia-(cudnn|cuda-runtime|cublas|cuda-nvrtc|cu\d+)")


def _v3(v: str) -> str:
    return ".".join((v.split(".") + ["0", "0"])[:3])


@dataclasses.dataclass
class PipFile:
    """A library file an installed wheel's RECORD lists: the wheel and the size it recorded."""

    dist: str
    version: str
    size: Optional[int]
    hash: Optional[str] = None  # "sha256=<urlsafe b64>" as RECORD writes it


@dataclasses.dataclass
class Owners:
    """Who owns the library files found: the pip wheels (by their RECORD) and the apt packages."""

    pip: Dict[str, PipFile]  # real machine path -> owning wheel
    pip_expected: Dict[str, List[str]]  # lib dir -> files its wheel's RECORD lists there
    pip_dir_dist: Dict[str, Tuple[str, str]]  # lib dir -> (dist, version)
    dpkg: Dict[str, str]  # real machine path -> package
    dpkg_versions: Dict[str, str]  # package -> version
    hashes: bool = (
        False  # compare each wheel-owned file's sha256 with RECORD too (doctor --deep, apply)
    )


def read_pip_owners(
    python: Optional[PythonEnv], fs: MachineFS, notes: List[ProbeNote]
) -> Tuple[Dict[str, PipFile], Dict[str, List[str]], Dict[str, Tuple[str, str]]]:
    owned: Dict[str, PipFile] = {}
    expected: Dict[str, List[str]] = {}
    dir_dist: Dict[str, Tuple[str, str]] = {}
    if python is None:
        return owned, expected, dir_dist
    for d in python.distributions:
        if not PIP_CUDA_DIST.match(d.name):
            continue
        names = fs.listdir(d.location) or []
        info = next(
            (
                n
                for n in names
                if n.endswith(".dist-info") and canonical_name(n[:-10].split("-")[0]) == d.name
            ),
            None,
        )
        if info is None:
            continue
        text = fs.read_text(os.path.join(d.location, info, "RECORD"))
        if text is None:
            notes.append(ProbeNote("RECORD", False, f"{d.location}/{info}/RECORD unreadable"))
            continue
        for path, pf in _record_libraries(d, info, text, notes):
            owned[path] = pf
            lib_dir = os.path.dirname(path)
            expected.setdefault(lib_dir, []).append(os.path.basename(path))
            dir_dist.setdefault(lib_dir, (d.name, d.version))
    return owned, expected, dir_dist


#: The most digits a RECORD size has: a file of 2**64 bytes has 20 (int() of a longer one is
#: slow, and past 4300 digits a ValueError: Python's int_max_str_digits).
_SIZE_DIGITS = 20


def _record_libraries(
    d: Distribution, info: str, text: str, notes: List[ProbeNote]
) -> List[Tuple[str, PipFile]]:
    """The library files a RECORD lists (PEP 376: path, hash, size), as machine paths. A RECORD
    is untrusted: a row that is absolute or leaves the site directory is refused
    (fixer.system.fsgate.record_row; a wheel's libraries lie under it), so detection never
    claims, scans or hashes a file outside the wheel's own site directory."""
    out: List[Tuple[str, PipFile]] = []
    for row, hashed, sized in fsgate.record_rows(text):
        if not FAMILY_RE.match(os.path.basename(row)):
            continue
        try:
            path = fsgate.record_row(d.location, row, (d.location,))
        except fsgate.PathRefused as exc:
            notes.append(ProbeNote("RECORD", False, f"{d.location}/{info}/RECORD: {exc}"))
            continue
        digits = sized.strip()
        size = int(digits) if digits.isdigit() and len(digits) <= _SIZE_DIGITS else None
        digest = hashed.strip() if hashed.startswith("sha256=") else None
        out.append((path, PipFile(d.name, d.version, size, digest)))
    return out


def read_dpkg_owners(fs: MachineFS) -> Tuple[Dict[str, str], Dict[str, str]]:
    owners: Dict[str, str] = {}
    versions: Dict[str, str] = {}
    info_dir = "/var/lib/dpkg/info"
    names = [n for n in (fs.listdir(info_dir) or []) if DPKG_PACKAGES.match(n)]
    wanted: Set[str] = set()
    for n in names:
        pkg = n[:-5].split(":")[0]
        wanted.add(pkg)
        for line in (fs.read_text(os.path.join(info_dir, n)) or "").splitlines():
            if FAMILY_RE.match(os.path.basename(line.strip())):
                owners[fs.real(line.strip())] = pkg
                owners.setdefault(line.strip(), pkg)
    if wanted:
        # The status file holds every package of the system (megabytes): find the few
        # stanzas we need with str.find instead of splitting and matching them all.
        status = "\n" + (fs.read_text("/var/lib/dpkg/status", limit=64 << 20) or "")
        for pkg in wanted:
            start = status.find("\nPackage: %s\n" % pkg)
            if start < 0:
                continue
            end = status.find("\n\n", start + 1)
            v = re.search(
                r"^Version: (\S+)$", status[start : end if end > 0 else len(status)], re.M
            )
            if v:
                versions[pkg] = v.group(1)
    return owners, versions


def candidate_dirs(
    python: Optional[PythonEnv],
    env: Mapping[str, str],
    fs: MachineFS,
    cache_dirs: Iterable[str],
    frameworks_lib_dirs: Iterable[Tuple[str, str]],
) -> "OrderedDict[str, str]":
    """Directories to scan, in a stable order, each with an origin hint (first hint wins)."""
    out: "OrderedDict[str, str]" = OrderedDict()
    sources = (
        _pip_dirs(python, fs),
        frameworks_lib_dirs,
        _env_dirs(env),
        ((d, "system") for d in cache_dirs),
        ((d, "system") for d in DEFAULT_DIRS),
        _toolkit_dirs(fs),
    )
    for source in sources:
        for d, origin in source:
            if d and d.startswith("/") and os.path.normpath(d) not in out:
                out[os.path.normpath(d)] = origin
    return out


def _pip_dirs(python: Optional[PythonEnv], fs: MachineFS) -> List[Tuple[str, str]]:
    """site-packages/nvidia/*/lib of every site-packages the target sees."""
    return [
        (os.path.join(sp, "nvidia", sub, "lib"), "pip")
        for sp in (python.site_packages if python else ())
        for sub in fs.listdir(os.path.join(sp, "nvidia")) or []
    ]


def _env_dirs(env: Mapping[str, str]) -> List[Tuple[str, str]]:
    """The directories LD_PRELOAD's files live in, LD_LIBRARY_PATH's, and $CONDA_PREFIX/lib."""
    out = [
        (os.path.dirname(p), "ld-library-path")
        for p in split_ld_preload(env.get("LD_PRELOAD"))
        if p.startswith("/")
    ]
    out += [(d, "ld-library-path") for d in env.get("LD_LIBRARY_PATH", "").split(":")]
    if env.get("CONDA_PREFIX"):
        out.append((os.path.join(env["CONDA_PREFIX"], "lib"), "conda"))
    return out


def _toolkit_dirs(fs: MachineFS) -> List[Tuple[str, str]]:
    """/usr/local/cuda*/lib64 and their targets/*/lib."""
    out: List[Tuple[str, str]] = []
    for name in fs.listdir("/usr/local") or []:
        if name.startswith("cuda"):
            out.append((f"/usr/local/{name}/lib64", "cuda-toolkit"))
            out += [
                (f"/usr/local/{name}/targets/{t}/lib", "cuda-toolkit")
                for t in fs.listdir(f"/usr/local/{name}/targets") or []
            ]
    return out


#: The first character of every name pip's AdjacentTempDirectory gives an entry it moves aside
#: while it uninstalls ("~" + LEADING_CHARS + the original name's tail: ~vidia_cudnn_cu13-...,
#: nvidia/~udnn). pypa/pip src/pip/_internal/utils/temp_dir.py AdjacentTempDirectory
#: ._generate_names @ 26.2.1, used by req/req_uninstall.py StashedUninstallPathSet
#: ._get_directory_stash. No distribution or import package name starts with it.
PIP_STASH_PREFIX = "~"


def pip_leftovers(python: Optional[PythonEnv], fs: MachineFS) -> Tuple[str, ...]:
    """Entries pip moved aside and an interrupted run left behind: "~..." directly in each
    site-packages the target sees and in its nvidia/ namespace directory."""
    out: List[str] = []
    for sp in python.site_packages if python else ():
        for d in (sp, os.path.join(sp, "nvidia")):
            out += [
                os.path.join(d, n)
                for n in sorted(fs.listdir(d) or [])
                if n.startswith(PIP_STASH_PREFIX)
            ]
    return tuple(dict.fromkeys(out))


def _origin(
    directory: str, hint: str, owner_pkg: Optional[str], env: Mapping[str, str], is_pip: bool
) -> str:
    if is_pip or "/site-packages/nvidia/" in directory or "/dist-packages/nvidia/" in directory:
        return "pip"
    if owner_pkg:
        return "apt"
    if hint in ("bundled", "conda"):
        return hint
    if env.get("CONDA_PREFIX") and directory == os.path.normpath(
        os.path.join(env["CONDA_PREFIX"], "lib")
    ):
        return "conda"
    if directory.startswith("/usr/local/cuda"):
        return "cuda-toolkit"
    if directory in (os.path.normpath(d) for d in env.get("LD_LIBRARY_PATH", "").split(":") if d):
        return "ld-library-path"
    if hint == "ld-library-path":
        return "ld-library-path"
    return "system"


@dataclasses.dataclass
class _Copy:
    """A library copy while detection assembles it (frozen into a model.LibraryCopy at the end)."""

    library: str
    major: int
    directory: str
    real_dir: str
    files: Dict[str, LibFile]  # soname -> file
    origin: str = "unknown"
    package: Optional[Package] = None
    version: Optional[str] = None
    version_source: str = ""
    missing: Tuple[str, ...] = ()
    cuda_major: Optional[int] = None


def scan(
    python: Optional[PythonEnv],
    env: Mapping[str, str],
    fs: MachineFS,
    cache_dirs: Iterable[str],
    frameworks_lib_dirs: Iterable[Tuple[str, str]],
    notes: List[ProbeNote],
    hashes: bool = False,
) -> Tuple[List[_Copy], Owners]:
    pip, pip_expected, pip_dir_dist = read_pip_owners(python, fs, notes)
    dpkg, dpkg_versions = read_dpkg_owners(fs)
    owners = Owners(pip, pip_expected, pip_dir_dist, dpkg, dpkg_versions, hashes)
    _hash_library_files(pip, fs, hashes)
    dirs = candidate_dirs(python, env, fs, cache_dirs, frameworks_lib_dirs)
    for lib_dir, exp in pip_expected.items():
        if lib_dir not in dirs:
            dirs[lib_dir] = "pip"
    copies: List[_Copy] = []
    seen_real: Set[str] = set()
    for directory, hint in dirs.items():
        names = fs.listdir(directory)
        if names is None:
            if directory in pip_expected:  # the wheel is installed, its files are gone
                dist, ver = pip_dir_dist[directory]
                fam = _families_from_names(pip_expected[directory])
                for lib, major in fam:
                    missing = (
                        expected_cudnn_sonames(major)
                        if lib == "cudnn"
                        else (f"lib{lib}.so.{major}",)
                    )
                    copies.append(
                        _Copy(
                            lib,
                            major,
                            directory,
                            directory,
                            {},
                            origin="pip",
                            package=Package(dist, ver),
                            version=_v3(ver),
                            version_source="dist-info",
                            missing=missing,
                        )
                    )
                notes.append(
                    ProbeNote("pip files", False, f"{directory}: listed by {dist} {ver} but absent")
                )
            else:
                err = fs.listdir_error(directory) if fs.exists(directory) else None
                if err:
                    notes.append(ProbeNote("scan", False, f"{directory}: {err}"))
            continue
        real_dir = fs.real(directory)
        if real_dir in seen_real:
            continue
        seen_real.add(real_dir)
        groups: Dict[Tuple[str, int], Dict[str, List[str]]] = {}
        for n in names:
            m = FAMILY_RE.match(n)
            if not m:
                continue
            lib = "cudnn" if m.group(1).startswith("cudnn") else m.group(1)
            soname = f"lib{m.group(1)}.so.{m.group(2)}"
            groups.setdefault((lib, int(m.group(2))), {}).setdefault(soname, []).append(n)
        for (lib, major), by_soname in sorted(groups.items()):
            copies.append(
                _make_copy(lib, major, directory, real_dir, by_soname, hint, fs, owners, env)
            )
    name_foreign_files(copies, fs, hashes)
    return copies, owners


def _hash_library_files(pip: Mapping[str, PipFile], fs: MachineFS, hashes: bool) -> None:
    """With `hashes`, hash at once (MachineFS.hash_all) every wheel library file whose sha256
    the copies compare with its RECORD row (record_difference: read only where the size agrees)."""
    if not hashes:
        return
    fs.hash_all(
        real
        for real, pf in pip.items()
        if pf.hash and FAMILY_RE.match(os.path.basename(real)) and fs.size(real) == pf.size
    )


def name_foreign_files(copies: List[_Copy], fs: MachineFS, hashes: bool) -> None:
    """Say which release a file that differs from its RECORD looks like, from the copies beside
    it on the machine: a file of the same soname and size in another copy (the apt copy whose
    file was copied over the wheel's) is named in `differs`; with `hashes` (doctor --deep,
    apply's checks) only one of the same sha256, and then the file takes that copy's version.
    A claim of exactly that scope: "the size of" when only sizes were compared."""
    others: Dict[Tuple[str, int], List[Tuple[_Copy, str, LibFile]]] = {}
    for c in copies:
        for soname, f in c.files.items():
            if not f.differs and f.size:
                others.setdefault((soname, f.size), []).append((c, soname, f))
    for c in copies:
        for soname, f in list(c.files.items()):
            if not f.differs or not f.size:
                continue
            mine = fs.real(os.path.join(c.directory, soname))
            for o, o_soname, of in others.get((soname, f.size), []):
                theirs = fs.real(os.path.join(o.directory, o_soname))
                if o is c or theirs == mine:
                    continue
                owner = f" ({o.package})" if o.package else ""
                if not hashes:
                    c.files[soname] = dataclasses.replace(
                        f, differs=f"{f.differs}; the size of {theirs}{owner}"
                    )
                    break
                digest = fs.record_hash(mine)
                if digest is not None and digest == fs.record_hash(theirs):
                    c.files[soname] = dataclasses.replace(
                        f,
                        differs=f"{f.differs}; the same bytes as {theirs}{owner}",
                        version=f.version or of.version or o.version,
                    )
                    break


def _families_from_names(names: Iterable[str]) -> List[Tuple[str, int]]:
    out = []
    for n in names:
        m = FAMILY_RE.match(n)
        if m:
            key = ("cudnn" if m.group(1).startswith("cudnn") else m.group(1), int(m.group(2)))
            if key not in out:
                out.append(key)
    return out


def _make_copy(
    lib: str,
    major: int,
    directory: str,
    real_dir: str,
    by_soname: Dict[str, List[str]],
    hint: str,
    fs: MachineFS,
    owners: Owners,
    env: Mapping[str, str],
) -> _Copy:
    files: Dict[str, LibFile] = {}
    pkgs: Counter[str] = Counter()
    pip_dists: Counter[Package] = Counter()
    for soname, names in sorted(by_soname.items()):
        path = (
            os.path.join(directory, soname)
            if soname in names
            else os.path.join(directory, sorted(names)[-1])
        )
        if not fs.exists(path):  # dangling symlink
            continue
        real = fs.real(path)
        base = os.path.basename(real)
        version = None
        m = FAMILY_RE.match(base)
        if m and m.group(3).count(".") >= 2:
            version = _v3(f"{m.group(2)}{m.group(3)}")
        pf = owners.pip.get(real) or owners.pip.get(os.path.normpath(path))
        size = fs.size(real)
        info = fs.elf(path)
        own = owners.pip.get(real)
        differs = record_difference(own, real, size, fs, owners.hashes) if own else None
        if pf is not None:
            pip_dists[Package(pf.dist, pf.version)] += 1
            # the wheel's version only for the wheel's own file: wheels ship no symlinks, so a link
            # that leads out of the wheel's files is someone else's file (ask the library itself)
            if version is None and differs is None and lib == "cudnn" and own is not None:
                version = _v3(pf.version)
        pkg = owners.dpkg.get(real) or owners.dpkg.get(path)
        if pkg:
            pkgs[pkg] += 1
        files[soname] = LibFile(
            name=soname if soname in names else base,
            soname=info.soname or soname,
            version=version,
            size=size,
            valid_elf=info.valid,
            differs=differs,
        )
    c = _Copy(lib, major, directory, real_dir, files)
    if pip_dists:
        c.package = pip_dists.most_common(1)[0][0]
    elif pkgs:
        p = pkgs.most_common(1)[0][0]
        c.package = Package(p, owners.dpkg_versions.get(p))
    c.origin = _origin(
        directory, hint, pkgs.most_common(1)[0][0] if pkgs else None, env, bool(pip_dists)
    )
    if lib == "cudnn":
        c.missing = tuple(s for s in expected_cudnn_sonames(major) if s not in files)
        cm = re.search(r"-cu(?:da-)?(\d+)\b", c.package.name) if c.package else None
        c.cuda_major = int(cm.group(1)) if cm else None
    _settle_version(c, fs)
    return c


def record_difference(
    pf: PipFile, path: str, size: Optional[int], fs: MachineFS, hashes: bool
) -> Optional[str]:
    """How a wheel's file differs from its RECORD row (PEP 376: path, sha256, size), or None:
    the size always (one stat), the sha256 only when `hashes` (doctor --deep, apply's checks),
    since cuDNN's files are hundreds of megabytes."""
    if pf.size is not None and size is not None and size != pf.size:
        return f"size {size} bytes, RECORD {pf.size}"
    if hashes and pf.hash:
        digest = fs.record_hash(path)
        if digest is not None and digest != pf.hash:
            return "sha256 differs from RECORD (same size)"
    return None


def _settle_version(c: _Copy, fs: MachineFS) -> None:
    """The copy's version: its main library's, else the most common among its files, else the
    header next to it, else (non-cuDNN) the owning wheel's version."""
    main = c.files.get(f"lib{c.library}.so.{c.major}")
    known = [f.version for f in c.files.values() if f.version]
    if main is not None and main.version:
        c.version = main.version
    elif known:
        c.version = Counter(known).most_common(1)[0][0]
    if c.version:
        c.version_source = c.version_source or ("dist-info" if c.origin == "pip" else "soname")
        return
    if c.library == "cudnn":
        for inc in (os.path.join(os.path.dirname(c.directory), "include", "cudnn_version.h"),):
            v = parse_cudnn_version_h(fs.read_text(inc) or "")
            if v:
                c.version, c.version_source = v, "header"
                return
    elif c.package and c.package.version and c.origin == "pip":
        c.version, c.version_source = _v3(c.package.version), "dist-info"


def parse_cudnn_version_h(text: str) -> Optional[str]:
    """cudnn_version.h -> "9.14.0" (#define CUDNN_MAJOR 9 / CUDNN_MINOR 14 / CUDNN_PATCHLEVEL 0)."""
    vals = dict(re.findall(r"#define\s+CUDNN_(MAJOR|MINOR|PATCHLEVEL)\s+(\d+)", text))
    if len(vals) == 3:
        return f"{vals['MAJOR']}.{vals['MINOR']}.{vals['PATCHLEVEL']}"
    return None


def unknown_cudnn_files(copies: List[_Copy], deep: bool) -> Dict[int, List[str]]:
    """copy index -> machine paths of its cuDNN files whose version nothing cheap vouched for."""
    out: Dict[int, List[str]] = {}
    for i, c in enumerate(copies):
        if c.library != "cudnn":
            continue
        paths = [
            os.path.join(c.directory, s)
            for s, f in c.files.items()
            if f.valid_elf and (deep or not f.version)
        ]
        if paths:
            out[i] = paths
    return out


def apply_probe_versions(
    copies: List[_Copy],
    index: int,
    result: Mapping[str, Mapping[str, object]],
    fs: MachineFS,
    notes: List[ProbeNote],
) -> None:
    c = copies[index]
    for soname, f in list(c.files.items()):
        r = result.get(fs.R(os.path.join(c.directory, soname)))
        if not r:
            continue
        if "version" in r:
            # children/native.py's cudnn task writes {"version": int(cudnnGetVersion())}
            raw_version = cast(int, r["version"])
            c.files[soname] = dataclasses.replace(
                f, version=cudnn_version_from_int(int(raw_version))
            )
        elif r.get("load_failed"):
            # the loader refused it beside its own copy's libraries: not a loadable part of this
            # copy (completeness, fixer.rules.is_complete), e.g. a sub-library of another release
            c.files[soname] = dataclasses.replace(f, valid_elf=False)
            notes.append(
                ProbeNote("cudnnGetVersion", False, f"{c.directory}/{soname}: {r.get('error')}")
            )
        else:
            notes.append(
                ProbeNote("cudnnGetVersion", False, f"{c.directory}/{soname}: {r.get('error')}")
            )
    c.version = None
    before = c.version_source
    _settle_version(c, fs)
    if c.version and before in ("", "soname"):
        c.version_source = "cudnnGetVersion"


def freeze(c: _Copy) -> LibraryCopy:
    versions = {f.version for f in c.files.values() if f.version}
    return LibraryCopy(
        library=c.library,
        major=c.major,
        version=c.version,
        directory=c.directory,
        origin=c.origin,  # type: ignore[arg-type]
        package=c.package,
        version_source=c.version_source,
        files=tuple(c.files[k] for k in sorted(c.files)),
        missing=c.missing,
        mixed=len(versions) > 1,
        cuda_major=c.cuda_major,
    )
