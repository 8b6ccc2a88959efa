"""A real Python package index for tests: small wheels built here, served on 127.0.0.1.

    with PackageIndex(tmp_path / "index") as index:
        index.add(cudnn_wheel(tmp_path / "wheels", "9.19.0.56", cuda_major=13))
        index.add(torch_wheel(tmp_path / "wheels", "2.11.0+cu130", requires=["nvidia-cudnn-cu13==9.19.0.56"]))
        subprocess.run([py, "-m", "pip", "install", "--index-url", index.url, "torch"])

The index speaks PEP 503 (HTML with `#sha256=` fragments and `data-requires-python`) and
PEP 691 (JSON with `hashes`, chosen by the Accept header), like PyPI and the PyTorch index,
so real pip and real uv install from it. Fault switches make it misbehave the way real
indexes do: `fail_after(n)` answers 500 from the n+1-th request on, `truncate(name)` closes
the connection half way through a file, `wrong_hash(name)` advertises a wrong sha256,
`slow(seconds)` delays every answer, `bandwidth(bytes_per_second)` throttles downloads.
Files support Range requests and PEP 658 metadata (`<file>.metadata`), as PyPI does, so
installers fetch metadata without downloading wheels. `requests` and `bytes_served` record
what clients asked for.

Wheel builders (`build_wheel`, `cudnn_wheel`, `cuda_runtime_wheel`, `torch_wheel`, `tensorflow_wheel`) write
deterministic wheels (fixed timestamps), so the same arguments give the same sha256.
The cuDNN stand-ins carry real compiled stub libraries (tests/helpers/stublibs.py).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import random
import tempfile
import threading
import time
import urllib.parse
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from packaging.utils import canonicalize_name, parse_wheel_filename

from tests.helpers.stublibs import build_cudnn_copy, build_stub

PathLike = Union[str, "os.PathLike[str]"]
FileData = Union[bytes, str, Path]

_EPOCH = (2020, 1, 1, 0, 0, 0)
PLATFORM_TAG = "py3-none-manylinux_2_17_x86_64"


# ---------------------------------------------------------------------------------------
# wheels
# ---------------------------------------------------------------------------------------


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def sha256_file(path: PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_wheel(
    out_dir: PathLike,
    name: str,
    version: str,
    files: Mapping[str, FileData],
    *,
    requires: Sequence[str] = (),
    requires_python: Optional[str] = None,
    tag: str = "py3-none-any",
    padding: int = 0,
    padding_path: Optional[str] = None,
    summary: str = "test stand-in",
    entry_points: Optional[str] = None,
) -> Path:
    """Write `{name}-{version}-{tag}.whl` into `out_dir` and return its path.

    `files` maps archive paths to contents (bytes, text, or a Path to copy, keeping its mode).
    `padding` adds that many incompressible bytes (stored, so the wheel really is that big) at
    `padding_path` (default `<first top-level dir>/_padding.bin`)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    dist = canonicalize_name(name).replace("-", "_")
    dist_info = f"{dist}-{version}.dist-info"
    path = out_dir / f"{dist}-{version}-{tag}.whl"
    entries: List[Tuple[str, bytes, int]] = []
    for arc, data in sorted(files.items()):
        mode = 0o644
        if isinstance(data, Path):
            mode = data.stat().st_mode & 0o777
            data = data.read_bytes()
        elif isinstance(data, str):
            data = data.encode()
        entries.append((arc, data, mode))
    if padding:
        top = padding_path or (
            sorted(files)[0].split("/")[0] + "/_padding.bin" if files else f"{dist}/_padding.bin"
        )
        rnd = random.Random(f"{name}-{version}")
        entries.append(
            (
                top,
                bytes(rnd.getrandbits(8) for _ in range(min(padding, 4096))) * (padding // 4096)
                + bytes(padding % 4096),
                0o644,
            )
        )
    meta = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {summary}",
    ]
    if requires_python:
        meta.append(f"Requires-Python: {requires_python}")
    meta += [f"Requires-Dist: {r}" for r in requires]
    entries.append((f"{dist_info}/METADATA", ("\n".join(meta) + "\n").encode(), 0o644))
    wheel_meta = f"Wheel-Version: 1.0\nGenerator: tests.helpers.pyindex\nRoot-Is-Purelib: {'true' if tag.endswith('-any') else 'false'}\nTag: {tag}\n"
    entries.append((f"{dist_info}/WHEEL", wheel_meta.encode(), 0o644))
    if entry_points:
        entries.append((f"{dist_info}/entry_points.txt", entry_points.encode(), 0o644))
    top_level = sorted(
        {arc.split("/")[0] for arc, _, _ in entries if not arc.startswith(dist_info)}
    )
    entries.append((f"{dist_info}/top_level.txt", ("\n".join(top_level) + "\n").encode(), 0o644))
    record = "".join(f"{arc},{_record_hash(data)},{len(data)}\n" for arc, data, _ in entries)
    record += f"{dist_info}/RECORD,,\n"
    entries.append((f"{dist_info}/RECORD", record.encode(), 0o644))
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for arc, data, mode in entries:
            info = zipfile.ZipInfo(arc, date_time=_EPOCH)
            info.external_attr = (0o100000 | mode) << 16
            big = len(data) > (1 << 20)
            info.compress_type = zipfile.ZIP_STORED if big else zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    os.replace(tmp, path)
    return path


def cudnn_wheel(
    out_dir: PathLike,
    version: str = "9.19.0.56",
    *,
    cuda_major: int = 13,
    skip: Iterable[str] = (),
    tag: str = PLATFORM_TAG,
    padding: int = 0,
) -> Path:
    """An nvidia-cudnn-cuXX stand-in: nvidia/cudnn/lib/libcudnn.so.9 and its sub-libraries,
    real compiled stubs whose cudnnGetVersion() answers `version` (first three parts)."""
    short = ".".join(version.split(".")[:3])
    with tempfile.TemporaryDirectory(prefix="cudnn-wheel-") as tmp:
        lib = build_cudnn_copy(Path(tmp), short, cudart=cuda_major * 1000, skip=skip)
        files: Dict[str, FileData] = {
            f"nvidia/cudnn/lib/{p.name}": p.read_bytes()
            for p in sorted(lib.iterdir())
            if ".so" in p.name
        }
        files["nvidia/cudnn/include/cudnn_version.h"] = _cudnn_header(short)
        return build_wheel(
            out_dir,
            f"nvidia-cudnn-cu{cuda_major}",
            version,
            files,
            tag=tag,
            padding=padding,
            padding_path="nvidia/cudnn/lib/_padding.bin",
            summary="cuDNN runtime libraries (stand-in)",
        )


def _cudnn_header(version: str) -> str:
    major, minor, patch = version.split(".")[:3]
    return (
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n#define CUDNN_PATCHLEVEL {patch}\n"
        "#define CUDNN_VERSION (CUDNN_MAJOR * 10000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
    )


def cuda_runtime_wheel(
    out_dir: PathLike, version: str = "13.0.96", *, cuda_major: int = 13, tag: str = PLATFORM_TAG
) -> Path:
    """An nvidia-cuda-runtime stand-in: nvidia/cu13/lib/libcudart.so.13 (CUDA 13 layout; CUDA 12
    wheels use nvidia/cuda_runtime/lib), a real stub answering cudaRuntimeGetVersion."""
    folder = f"cu{cuda_major}" if cuda_major >= 13 else "cuda_runtime"
    name = "nvidia-cuda-runtime" if cuda_major >= 13 else f"nvidia-cuda-runtime-cu{cuda_major}"
    with tempfile.TemporaryDirectory(prefix="cudart-wheel-") as tmp:
        major, minor = (int(x) for x in version.split(".")[:2])
        lib = build_stub(
            Path(tmp) / f"libcudart.so.{cuda_major}",
            exports={"cudaRuntimeGetVersion": major * 1000 + minor * 10},
        )
        return build_wheel(
            out_dir, name, version, {f"nvidia/{folder}/lib/{lib.name}": lib.read_bytes()}, tag=tag
        )


def _torch_native(cuda_major: int, cudnn_major: int) -> Dict[str, FileData]:
    """torch/lib/libtorch_cuda.so: NEEDED libcudnn.so.N and libcudart.so.M, found through
    RPATH $ORIGIN/../../nvidia/... as in the real wheels (read by detect, never loaded)."""
    folder = f"cu{cuda_major}" if cuda_major >= 13 else "cuda_runtime"
    with tempfile.TemporaryDirectory(prefix="torch-native-") as tmp:
        t = Path(tmp)
        cudnn = build_stub(t / f"libcudnn.so.{cudnn_major}")
        cudart = build_stub(t / f"libcudart.so.{cuda_major}")
        lib = build_stub(
            t / "libtorch_cuda.so",
            needed=[cudnn, cudart],
            rpath=["$ORIGIN/../../nvidia/cudnn/lib", f"$ORIGIN/../../nvidia/{folder}/lib"],
        )
        return {"torch/lib/libtorch_cuda.so": lib.read_bytes()}


def torch_wheel(
    out_dir: PathLike,
    version: str = "2.11.0+cu130",
    *,
    cuda: Optional[str] = "13.0",
    requires: Sequence[str] = ("nvidia-cudnn-cu13==9.19.0.56",),
    padding: int = 0,
    tag: str = PLATFORM_TAG,
    native: bool = False,
) -> Path:
    """A torch stand-in: torch/version.py exactly as real wheels write it, and Requires-Dist pins.
    `native` adds torch/lib/libtorch_cuda.so (a stub with the real NEEDED/RPATH layout) so that
    detection follows the loader to the nvidia wheels as it does for real torch."""
    version_py = (
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n"
        f"__version__ = '{version}'\n"
        "debug = False\n"
        f"cuda: Optional[str] = {cuda!r}\n"
        "git_version = '0000000000000000000000000000000000000000'\n"
        "hip: Optional[str] = None\nrocm: Optional[str] = None\nxpu: Optional[str] = None\n"
    )
    files: Dict[str, FileData] = {
        "torch/__init__.py": "from .version import __version__  # stand-in\n",
        "torch/version.py": version_py,
    }
    if native and cuda:
        files.update(_torch_native(int(cuda.split(".")[0]), 9))
    return build_wheel(
        out_dir,
        "torch",
        version,
        files,
        requires=requires,
        padding=padding,
        tag=tag,
        padding_path="torch/lib/_padding.bin",
    )


def tensorflow_wheel(
    out_dir: PathLike,
    version: str = "2.20.0",
    *,
    cuda: str = "12.5.1",
    cudnn: str = "9",
    requires: Sequence[str] = (),
    tag: str = PLATFORM_TAG,
) -> Path:
    """A tensorflow stand-in with tensorflow/python/platform/build_info.py as real wheels carry it."""
    build_info = (
        "import collections\n"
        "build_info = collections.OrderedDict()\n"
        f"build_info['cuda_version'] = '{cuda}'\n"
        f"build_info['cudnn_version'] = '{cudnn}'\n"
        "build_info['is_cuda_build'] = True\n"
        "build_info['is_rocm_build'] = False\n"
        "build_info['is_tensorrt_build'] = False\n"
        "build_info['cuda_compute_capabilities'] = ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'compute_90']\n"
    )
    files: Dict[str, FileData] = {
        "tensorflow/__init__.py": f"__version__ = '{version}'  # stand-in\n",
        "tensorflow/python/__init__.py": "",
        "tensorflow/python/platform/__init__.py": "",
        "tensorflow/python/platform/build_info.py": build_info,
    }
    return build_wheel(out_dir, "tensorflow", version, files, requires=requires, tag=tag)


# ---------------------------------------------------------------------------------------
# the index server
# ---------------------------------------------------------------------------------------


class PackageIndex:
    """Serves the wheels in `directory` as a PEP 503 / PEP 691 simple index on 127.0.0.1.

    Use as a context manager (or call start()/stop()). `url` is the simple index URL to pass
    as `--index-url`; `files_url` is where the files are (a flat `--find-links` page)."""

    def __init__(self, directory: PathLike) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        self.requests: List[str] = []
        self.bytes_served = 0
        self._fail_after: Optional[int] = None
        self._truncate: set = set()
        self._wrong_hash: set = set()
        self._delay = 0.0
        self._fail_paths: set = set()
        self._bandwidth: Optional[float] = None

    # -- setup ---------------------------------------------------------------------------

    def add(self, *wheels: PathLike) -> "PackageIndex":
        """Copy wheels into the served directory (a wheel already there is left as is)."""
        for w in wheels:
            w = Path(w)
            target = self.directory / w.name
            if w.resolve() != target.resolve():
                target.write_bytes(w.read_bytes())
        return self

    def add_pytorch(self, variant: str, *wheels: PathLike) -> "PackageIndex":
        """Serve wheels the way download.pytorch.org does, under /whl/<variant>/ (e.g. cu128):
        HTML pages only (no PEP 691 JSON, whatever the Accept header), files next to them."""
        target_dir = self.directory / "whl" / variant
        target_dir.mkdir(parents=True, exist_ok=True)
        for w in wheels:
            w = Path(w)
            (target_dir / w.name).write_bytes(w.read_bytes())
        return self

    def fail_after(self, n: Optional[int]) -> None:
        """From request n+1 on answer HTTP 500 (None switches it off). Counts every request."""
        with self._lock:
            self._fail_after = None if n is None else len(self.requests) + n

    def fail_files(self, *names: str) -> None:
        """Answer 500 for these file names (a download that fails mid-way through a plan)."""
        self._fail_paths.update(names)

    def truncate(self, filename: str) -> None:
        """Send half of `filename`, announcing its full length, then drop the connection."""
        self._truncate.add(filename)

    def wrong_hash(self, filename: str) -> None:
        """Advertise a wrong sha256 for `filename` (HTML fragment and JSON hashes)."""
        self._wrong_hash.add(filename)

    def slow(self, seconds: float) -> None:
        """Delay every answer by `seconds`."""
        self._delay = seconds

    def bandwidth(self, bytes_per_second: Optional[float]) -> None:
        """Send files no faster than this (None: as fast as loopback goes), to make download
        size show in wall time as it does on a real network."""
        self._bandwidth = bytes_per_second

    def reset_faults(self) -> None:
        self._fail_after = None
        self._truncate.clear()
        self._wrong_hash.clear()
        self._fail_paths.clear()
        self._delay = 0.0
        self._bandwidth = None

    # -- what is served ------------------------------------------------------------------

    def wheels(self) -> List[Path]:
        return sorted(p for p in self.directory.iterdir() if p.suffix == ".whl")

    def projects(self) -> Dict[str, List[Path]]:
        out: Dict[str, List[Path]] = {}
        for w in self.wheels():
            name = canonicalize_name(parse_wheel_filename(w.name)[0])
            out.setdefault(name, []).append(w)
        return out

    def sha256(self, filename: str) -> str:
        digest = sha256_file(self.directory / filename)
        if filename in self._wrong_hash:
            return hashlib.sha256(digest.encode()).hexdigest()
        return digest

    def file_downloads(self) -> List[str]:
        """File names clients downloaded (in order)."""
        return [p.rsplit("/", 1)[-1] for p in self.requests if p.startswith("/files/")]

    # -- server --------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._server is not None, "index not started"
        return self._server.server_address[1]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base}/simple/"

    @property
    def pytorch_url(self) -> str:
        """Stands in for https://download.pytorch.org/whl (append /cu128 and so on)."""
        return f"{self.base}/whl"

    @property
    def files_url(self) -> str:
        return f"{self.base}/files/"

    def start(self) -> "PackageIndex":
        index = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: object) -> None:  # quiet
                return

            def do_GET(self) -> None:  # noqa: N802
                index._handle(self)

            def do_HEAD(self) -> None:  # noqa: N802
                index._handle(self, head=True)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="pyindex", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> "PackageIndex":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling ----------------------------------------------------------------

    def _handle(self, req: BaseHTTPRequestHandler, head: bool = False) -> None:
        path = urllib.parse.unquote(req.path.split("?", 1)[0])
        with self._lock:
            self.requests.append(path)
            failing = self._fail_after is not None and len(self.requests) > self._fail_after
        if self._delay:
            time.sleep(self._delay)
        name = path.rsplit("/", 1)[-1]
        if failing or (path.startswith("/files/") and name in self._fail_paths):
            return self._send(req, 500, b"injected failure\n", "text/plain", head)
        if path in ("/simple", "/simple/"):
            return self._root(req, head)
        if path.startswith("/simple/"):
            project = canonicalize_name(path[len("/simple/") :].strip("/"))
            if path != f"/simple/{project}/":
                return self._redirect(req, f"/simple/{project}/")
            return self._project(req, project, head)
        if path.startswith("/whl/"):
            return self._pytorch(req, path, head)
        if path in ("/files", "/files/"):
            return self._flat(req, head)
        if path.startswith("/files/") and name.endswith(".whl.metadata"):
            return self._metadata(req, name[: -len(".metadata")], head)
        if path.startswith("/files/"):
            return self._file(req, name, head)
        return self._send(req, 404, b"not found\n", "text/plain", head)

    def _pytorch(self, req: BaseHTTPRequestHandler, path: str, head: bool) -> None:
        parts = [p for p in path[len("/whl/") :].split("/") if p]
        folder = self.directory / "whl" / (parts[0] if parts else "")
        if not parts or not folder.is_dir() or ".." in parts:
            return self._send(req, 404, b"not found\n", "text/plain", head)
        wheels = sorted(p for p in folder.iterdir() if p.suffix == ".whl")
        if len(parts) == 1:
            names = sorted({canonicalize_name(parse_wheel_filename(w.name)[0]) for w in wheels})
            links = "".join(
                f'<a href="/whl/{parts[0]}/{n}/">{html.escape(n)}</a><br/>\n' for n in names
            )
            return self._send(
                req,
                200,
                f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode(),
                "text/html",
                head,
            )
        name = parts[1]
        if name.endswith(".whl.metadata"):
            meta = _core_metadata(folder / name[: -len(".metadata")])
            if meta is None:
                return self._send(req, 404, b"no such file\n", "text/plain", head)
            return self._send(req, 200, meta, "text/plain", head)
        if name.endswith(".whl"):
            if not (folder / name).is_file():
                return self._send(req, 404, b"no such file\n", "text/plain", head)
            return self._send(
                req, 200, (folder / name).read_bytes(), "application/octet-stream", head
            )
        project = canonicalize_name(name)
        files = [w for w in wheels if canonicalize_name(parse_wheel_filename(w.name)[0]) == project]
        if not files:
            return self._send(req, 404, b"no such project\n", "text/plain", head)
        rows = [
            f'<a href="/whl/{parts[0]}/{urllib.parse.quote(f.name)}#sha256={sha256_file(f)}">{f.name}</a><br/>'
            for f in files
        ]
        return self._send(
            req,
            200,
            ("<!DOCTYPE html><html><body>\n" + "\n".join(rows) + "\n</body></html>\n").encode(),
            "text/html",
            head,
        )

    def _wants_json(self, req: BaseHTTPRequestHandler) -> bool:
        accept = req.headers.get("Accept", "")
        return "application/vnd.pypi.simple.v1+json" in accept

    def _root(self, req: BaseHTTPRequestHandler, head: bool) -> None:
        names = sorted(self.projects())
        if self._wants_json(req):
            body = json.dumps(
                {"meta": {"api-version": "1.0"}, "projects": [{"name": n} for n in names]}
            ).encode()
            return self._send(req, 200, body, "application/vnd.pypi.simple.v1+json", head)
        links = "".join(f'<a href="/simple/{n}/">{html.escape(n)}</a>\n' for n in names)
        return self._send(
            req,
            200,
            f"<!DOCTYPE html><html><body>\n{links}</body></html>\n".encode(),
            "text/html",
            head,
        )

    def _project(self, req: BaseHTTPRequestHandler, project: str, head: bool) -> None:
        files = self.projects().get(project)
        if not files:
            return self._send(req, 404, b"no such project\n", "text/plain", head)
        if self._wants_json(req):
            body = json.dumps(
                {
                    "meta": {"api-version": "1.0"},
                    "name": project,
                    "files": [
                        {
                            "filename": f.name,
                            "url": f"/files/{urllib.parse.quote(f.name)}",
                            "hashes": {"sha256": self.sha256(f.name)},
                            "size": f.stat().st_size,
                            "core-metadata": {
                                "sha256": hashlib.sha256(_core_metadata(f) or b"").hexdigest()
                            },
                            "dist-info-metadata": {
                                "sha256": hashlib.sha256(_core_metadata(f) or b"").hexdigest()
                            },
                            **({"requires-python": rp} if (rp := _requires_python(f)) else {}),
                        }
                        for f in files
                    ],
                }
            ).encode()
            return self._send(req, 200, body, "application/vnd.pypi.simple.v1+json", head)
        return self._send(req, 200, self._links(files, "/files/").encode(), "text/html", head)

    def _flat(self, req: BaseHTTPRequestHandler, head: bool) -> None:
        return self._send(
            req, 200, self._links(self.wheels(), "/files/").encode(), "text/html", head
        )

    def _links(self, files: Sequence[Path], prefix: str) -> str:
        rows = []
        for f in files:
            rp = _requires_python(f)
            attr = f' data-requires-python="{html.escape(rp)}"' if rp else ""
            meta = _core_metadata(f)
            if meta is not None:
                digest = hashlib.sha256(meta).hexdigest()
                attr += f' data-dist-info-metadata="sha256={digest}" data-core-metadata="sha256={digest}"'
            rows.append(
                f'<a href="{prefix}{urllib.parse.quote(f.name)}#sha256={self.sha256(f.name)}"{attr}>{f.name}</a><br/>'
            )
        return "<!DOCTYPE html><html><body>\n" + "\n".join(rows) + "\n</body></html>\n"

    def _file(self, req: BaseHTTPRequestHandler, name: str, head: bool) -> None:
        path = self.directory / name
        if not path.is_file():
            return self._send(req, 404, b"no such file\n", "text/plain", head)
        data = path.read_bytes()
        if name in self._truncate and not head:
            req.send_response(200)
            req.send_header("Content-Type", "application/octet-stream")
            req.send_header("Content-Length", str(len(data)))
            req.end_headers()
            half = data[: len(data) // 2]
            req.wfile.write(half)
            req.wfile.flush()
            with self._lock:
                self.bytes_served += len(half)
            req.close_connection = True
            return
        rng = req.headers.get("Range", "")
        if rng.startswith("bytes=") and not head:
            start_s, _, end_s = rng[len("bytes=") :].split(",")[0].partition("-")
            if start_s:
                start, end = int(start_s), int(end_s) if end_s else len(data) - 1
            else:
                start, end = max(0, len(data) - int(end_s)), len(data) - 1
            end = min(end, len(data) - 1)
            part = data[start : end + 1]
            req.send_response(206)
            req.send_header("Content-Type", "application/octet-stream")
            req.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
            req.send_header("Content-Length", str(len(part)))
            req.end_headers()
            self._write(req, part)
            return None
        return self._send(req, 200, data, "application/octet-stream", head, accept_ranges=True)

    def _metadata(self, req: BaseHTTPRequestHandler, wheel: str, head: bool) -> None:
        """PEP 658: the wheel's METADATA file next to it, so installers resolve without downloading."""
        meta = _core_metadata(self.directory / wheel)
        if meta is None:
            return self._send(req, 404, b"no such file\n", "text/plain", head)
        return self._send(req, 200, meta, "text/plain", head)

    def _redirect(self, req: BaseHTTPRequestHandler, location: str) -> None:
        req.send_response(301)
        req.send_header("Location", location)
        req.send_header("Content-Length", "0")
        req.end_headers()

    def _send(
        self,
        req: BaseHTTPRequestHandler,
        code: int,
        body: bytes,
        ctype: str,
        head: bool,
        accept_ranges: bool = False,
    ) -> None:
        req.send_response(code)
        req.send_header("Content-Type", ctype)
        req.send_header("Content-Length", str(len(body)))
        if accept_ranges:
            req.send_header("Accept-Ranges", "bytes")
        req.end_headers()
        if not head:
            self._write(req, body)

    def _write(self, req: BaseHTTPRequestHandler, body: bytes) -> None:
        if not self._bandwidth:
            req.wfile.write(body)
        else:
            chunk = 1 << 16
            start = time.monotonic()
            for i in range(0, len(body), chunk):
                req.wfile.write(body[i : i + chunk])
                ahead = (i + chunk) / self._bandwidth - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)
        with self._lock:
            self.bytes_served += len(body)


_META_CACHE: Dict[Tuple[str, float], Optional[bytes]] = {}


def _core_metadata(wheel: Path) -> Optional[bytes]:
    """The METADATA file inside a wheel (PEP 658 serves it on its own)."""
    try:
        key = (str(wheel), wheel.stat().st_mtime)
    except OSError:
        return None
    if key not in _META_CACHE:
        data = None
        with zipfile.ZipFile(wheel) as zf:
            for n in zf.namelist():
                if n.endswith(".dist-info/METADATA") and n.count("/") == 1:
                    data = zf.read(n)
                    break
        _META_CACHE[key] = data
    return _META_CACHE[key]


def _requires_python(wheel: Path) -> Optional[str]:
    with zipfile.ZipFile(wheel) as zf:
        for n in zf.namelist():
            if n.endswith(".dist-info/METADATA"):
                for line in zf.read(n).decode().splitlines():
                    if line.startswith("Requires-Python:"):
                        return line.split(":", 1)[1].strip()
                break
    return None


def freeze_of(python: PathLike) -> str:
    """`pip freeze --all` of an interpreter, run with this venv's pip against it (works for a
    target created --without-pip), as the text pip prints: the ground truth tests compare."""
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "freeze", "--all"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"pip freeze failed: {proc.stderr}")
    return proc.stdout


def tree_of(directory: PathLike) -> Dict[str, str]:
    """Every file under `directory` with its sha256 (symlinks by target): compare written files."""
    directory = Path(directory)
    out: Dict[str, str] = {}
    if not directory.exists():
        return out
    for p in sorted(directory.rglob("*")):
        rel = str(p.relative_to(directory))
        if p.is_symlink():
            out[rel] = "-> " + os.readlink(p)
        elif p.is_file():
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out
