#!/usr/bin/env python3
"""Bytes downloaded and wall time: `colab-cudnn-fix apply` for "only cuDNN is wrong" versus the
usual advice, `pip install --force-reinstall torch --index-url ...`; pip versus uv.

Everything is local: stand-in wheels built here (torch padded to --torch-mb, cuDNN to
--cudnn-mb, both stored uncompressed so the sizes are real; cuDNN's libraries are real shared
objects compiled with `cc`, each answering cudnnGetVersion, named by fixer.rules) served on
127.0.0.1 as a static PEP 503 index, throw-away venvs in a temp dir, empty installer caches for
every run (so each run downloads what it needs). The machine the plan is made for is given with
detection overrides (an H200 with driver 580), since this script runs on a CPU box. The script
stands alone (it imports the package, never the tests).

    python scripts/bench_apply.py [--torch-mb 50] [--cudnn-mb 10] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import http.server
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fixer.rules import expected_cudnn_sonames  # noqa: E402

TAG = "py3-none-manylinux_2_17_x86_64"


def _wheel(
    out: Path,
    name: str,
    version: str,
    files: Mapping[str, bytes],
    requires: Sequence[str] = (),
    padding: int = 0,
    padding_path: str = "",
) -> Path:
    """A wheel with `files`, its METADATA (Requires-Dist), WHEEL and RECORD; `padding` bytes of
    incompressible data at `padding_path`, stored, so the wheel really is that big."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    entries = dict(files)
    if padding:
        block = (
            random.Random(name).randbytes(4096)
            if hasattr(random.Random, "randbytes")
            else os.urandom(4096)
        )
        entries[padding_path] = block * (padding // 4096)
    meta = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"] + [
        f"Requires-Dist: {r}" for r in requires
    ]
    entries[f"{info}/METADATA"] = ("\n".join(meta) + "\n").encode()
    entries[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: bench_apply\nRoot-Is-Purelib: false\nTag: {TAG}\n".encode()
    )
    record = (
        "".join(
            f"{arc},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
            f"{len(data)}\n"
            for arc, data in entries.items()
        )
        + f"{info}/RECORD,,\n"
    )
    entries[f"{info}/RECORD"] = record.encode()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{dist}-{version}-{TAG}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for arc, data in entries.items():
            zi = zipfile.ZipInfo(arc, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o100644 << 16
            zi.compress_type = zipfile.ZIP_STORED if len(data) > 1 << 20 else zipfile.ZIP_DEFLATED
            zf.writestr(zi, data)
    return path


def _cudnn_wheel(out: Path, version: str, padding: int) -> Path:
    """nvidia-cudnn-cu13 VERSION: every library of a complete cuDNN 9 copy (fixer.rules), each a
    shared object compiled here whose cudnnGetVersion answers VERSION."""
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    number = major * 10000 + minor * 100 + patch
    files: Dict[str, bytes] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "stub.c"
        src.write_text(
            f"#include <stddef.h>\nsize_t cudnnGetVersion(void) {{ return {number}; }}\n"
            "size_t cudnnGetCudartVersion(void) { return 13000; }\n"
        )
        for soname in expected_cudnn_sonames(major):
            lib = Path(tmp) / soname
            subprocess.run(
                [
                    os.environ.get("CC", "cc"),
                    "-shared",
                    "-fPIC",
                    f"-Wl,-soname,{soname}",
                    "-o",
                    str(lib),
                    str(src),
                ],
                check=True,
            )
            files[f"nvidia/cudnn/lib/{soname}"] = lib.read_bytes()
    files["nvidia/cudnn/include/cudnn_version.h"] = (
        f"#define CUDNN_MAJOR {major}\n#define CUDNN_MINOR {minor}\n"
        f"#define CUDNN_PATCHLEVEL {patch}\n"
    ).encode()
    return _wheel(
        out,
        "nvidia-cudnn-cu13",
        version,
        files,
        padding=padding,
        padding_path="nvidia/cudnn/lib/_padding.bin",
    )


def _torch_wheel(out: Path, version: str, cudnn_pin: str, padding: int) -> Path:
    """torch VERSION: torch/version.py as real wheels write it, pinning nvidia-cudnn-cu13."""
    version_py = f"__version__ = '{version}'\ndebug = False\ncuda = '13.0'\nhip = None\n"
    return _wheel(
        out,
        "torch",
        version,
        {
            "torch/__init__.py": b"from .version import __version__\n",
            "torch/version.py": version_py.encode(),
        },
        requires=[f"nvidia-cudnn-cu13=={cudnn_pin}"],
        padding=padding,
        padding_path="torch/lib/_padding.bin",
    )


class Index:
    """A static PEP 503 index of `wheels` served on 127.0.0.1, counting the bytes it sends and
    sending at most `bytes_per_second` (None: as fast as loopback goes)."""

    def __init__(self, root: Path, wheels: Sequence[Path], bytes_per_second: Any = None) -> None:
        for w in wheels:
            project = w.name.split("-")[0].replace("_", "-").lower()
            d = root / "simple" / project
            d.mkdir(parents=True, exist_ok=True)
            shutil.copy(w, root / w.name)
            sha = hashlib.sha256(w.read_bytes()).hexdigest()
            with open(d / "index.html", "a") as f:
                f.write(f'<a href="../../{w.name}#sha256={sha}">{w.name}</a><br>\n')
        self.bytes_served = 0
        index = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def copyfile(self, source: Any, outputfile: Any) -> None:
                start, sent = time.monotonic(), 0
                while True:
                    chunk = source.read(1 << 16)
                    if not chunk:
                        break
                    outputfile.write(chunk)
                    sent += len(chunk)
                    index.bytes_served += len(chunk)
                    if bytes_per_second:
                        ahead = sent / bytes_per_second - (time.monotonic() - start)
                        if ahead > 0:
                            time.sleep(ahead)

        self.server = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root))
        )
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


TORCH = "2.11.0+cu130"
PINNED = "9.19.0.56"
OLD = "9.14.0.64"


def _env(tmp: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_CACHE_DIR="1",
        UV_NO_CONFIG="1",
        UV_CACHE_DIR=str(tmp / "uv-cache"),
        PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    )
    return env


def _broken_venv(base: Path, dest: Path, index: Index, env: Dict[str, str]) -> str:
    shutil.copytree(base, dest, symlinks=True)
    py = str(dest / "bin" / "python")
    subprocess.run(
        [
            shutil.which("uv", path=env["PATH"]) or "uv",
            "pip",
            "install",
            "--python",
            py,
            "--no-deps",
            "--index-url",
            index.url,
            f"torch=={TORCH}",
            f"nvidia-cudnn-cu13=={OLD}",
        ],
        check=True,
        capture_output=True,
        env=env,
    )
    return py


def _timed(argv: List[str], env: Dict[str, str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(argv)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return time.perf_counter() - t


def run(args: argparse.Namespace) -> Dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="bench-apply-"))
    try:
        wheels = tmp / "wheels"
        built = [_torch_wheel(wheels, TORCH, PINNED, padding=args.torch_mb << 20)]
        for v in (OLD, PINNED, "9.28.1.4"):
            built.append(_cudnn_wheel(wheels, v, padding=args.cudnn_mb << 20))
        sizes = {p.name: p.stat().st_size for p in built}
        base = tmp / "base"
        subprocess.run([sys.executable, "-m", "venv", str(base)], check=True, capture_output=True)
        results: Dict[str, List[Dict[str, float]]] = {}
        index = Index(tmp / "index", built, args.mib_per_s * 2**20 if args.mib_per_s else None)
        try:
            mirror = f"https://pypi.org/simple={index.url.rstrip('/')}"
            for i in range(args.repeat):
                for k, name in enumerate(
                    (
                        "apply (pip)",
                        "apply (uv)",
                        "naive pip --force-reinstall torch",
                        "naive uv --reinstall torch",
                    )
                ):
                    run_dir = tmp / f"run{i}-{k}"
                    env = _env(run_dir)
                    py = _broken_venv(base, run_dir / "venv", index, env)
                    env.update(
                        COLAB_CUDNN_FIX_DRIVER="580.159.04",
                        COLAB_CUDNN_FIX_CUDA="13.0",
                        COLAB_CUDNN_FIX_GPU="NVIDIA H200:9.0",
                    )
                    (run_dir / "root").mkdir()
                    start_bytes = index.bytes_served
                    if name.startswith("apply"):
                        installer = "uv" if "uv" in name else "pip"
                        argv = [
                            sys.executable,
                            "-m",
                            "fixer",
                            "apply",
                            "--python",
                            py,
                            "--index-mirror",
                            mirror,
                            "--installer",
                            installer,
                            "--root",
                            str(run_dir / "root"),
                            "--no-verify",
                        ]
                        seconds = _timed(argv, {**env, "PYTHONPATH": str(REPO)})
                    elif "pip" in name:
                        seconds = _timed(
                            [
                                py,
                                "-m",
                                "pip",
                                "install",
                                "--force-reinstall",
                                f"torch=={TORCH}",
                                "--index-url",
                                index.url,
                            ],
                            env,
                        )
                    else:
                        seconds = _timed(
                            [
                                shutil.which("uv", path=env["PATH"]) or "uv",
                                "pip",
                                "install",
                                "--python",
                                py,
                                "--reinstall",
                                f"torch=={TORCH}",
                                "--index-url",
                                index.url,
                            ],
                            env,
                        )
                    results.setdefault(name, []).append(
                        {"seconds": seconds, "bytes": index.bytes_served - start_bytes}
                    )
        finally:
            index.close()
        summary = {
            name: {
                "median_seconds": statistics.median(r["seconds"] for r in runs),
                "median_bytes": statistics.median(r["bytes"] for r in runs),
                "runs": runs,
            }
            for name, runs in results.items()
        }
        return {
            "wheel_sizes": sizes,
            "mib_per_s": args.mib_per_s,
            "torch_mb": args.torch_mb,
            "cudnn_mb": args.cudnn_mb,
            "repeat": args.repeat,
            "results": summary,
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torch-mb", type=int, default=50)
    ap.add_argument("--cudnn-mb", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--mib-per-s",
        type=float,
        default=40.0,
        help="download bandwidth of the local index (0: unthrottled loopback)",
    )
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    data = run(args)
    print(
        f"torch stand-in {args.torch_mb} MiB, cuDNN stand-in {args.cudnn_mb} MiB, index at "
        f"{args.mib_per_s or 'unthrottled'} MiB/s; median of {args.repeat} runs"
    )
    print(f"{'':38} {'downloaded':>12} {'wall':>8}")
    for name, r in data["results"].items():
        print(f"{name:38} {r['median_bytes'] / 2**20:9.1f} MiB {r['median_seconds']:7.2f}s")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
