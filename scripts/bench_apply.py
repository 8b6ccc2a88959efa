#!/usr/bin/env python3
"""Bytes downloaded and wall time: `colab-cudnn-fix apply` for "only cuDNN is wrong" versus the
usual advice, `pip install --force-reinstall torch --index-url ...`; pip versus uv.

Everything is local: stand-in wheels built here (torch padded to --torch-mb, cuDNN to
--cudnn-mb, both stored uncompressed so the sizes are real) served on 127.0.0.1 by
tests/helpers/pyindex.py, throw-away venvs in a temp dir, empty installer caches for every
run (so each run downloads what it needs). The machine the plan is made for is given with
detection overrides (an H200 with driver 580), since this script runs on a CPU box.

    python scripts/bench_apply.py [--torch-mb 50] [--cudnn-mb 10] [--repeat 3] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.helpers.pyindex import PackageIndex, cudnn_wheel, torch_wheel  # noqa: E402

TORCH = "2.11.0+cu130"
PINNED = "9.19.0.56"
OLD = "9.14.0.64"


def _env(tmp: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1",
               UV_NO_CONFIG="1", UV_CACHE_DIR=str(tmp / "uv-cache"),
               PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    return env


def _broken_venv(base: Path, dest: Path, index: PackageIndex, env: Dict[str, str]) -> str:
    shutil.copytree(base, dest, symlinks=True)
    py = str(dest / "bin" / "python")
    subprocess.run([shutil.which("uv", path=env["PATH"]) or "uv", "pip", "install", "--python", py, "--no-deps",
                    "--index-url", index.url, f"torch=={TORCH}", f"nvidia-cudnn-cu13=={OLD}"],
                   check=True, capture_output=True, env=env)
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
        built = [torch_wheel(wheels, TORCH, requires=[f"nvidia-cudnn-cu13=={PINNED}"], padding=args.torch_mb << 20)]
        for v in (OLD, PINNED, "9.28.1.4"):
            built.append(cudnn_wheel(wheels, v, padding=args.cudnn_mb << 20))
        sizes = {p.name: p.stat().st_size for p in built}
        base = tmp / "base"
        subprocess.run([sys.executable, "-m", "venv", str(base)], check=True, capture_output=True)
        results: Dict[str, List[Dict[str, float]]] = {}
        with PackageIndex(tmp / "index") as index:
            index.add(*built)
            if args.mib_per_s:
                index.bandwidth(args.mib_per_s * 2**20)
            mirror = f"https://pypi.org/simple={index.url.rstrip('/')}"
            for i in range(args.repeat):
                for k, name in enumerate(("apply (pip)", "apply (uv)", "naive pip --force-reinstall torch",
                                          "naive uv --reinstall torch")):
                    run_dir = tmp / f"run{i}-{k}"
                    env = _env(run_dir)
                    py = _broken_venv(base, run_dir / "venv", index, env)
                    env.update(COLAB_CUDNN_FIX_DRIVER="580.159.04", COLAB_CUDNN_FIX_CUDA="13.0",
                               COLAB_CUDNN_FIX_GPU="NVIDIA H200:9.0")
                    (run_dir / "root").mkdir()
                    start_bytes = index.bytes_served
                    if name.startswith("apply"):
                        installer = "uv" if "uv" in name else "pip"
                        argv = [sys.executable, "-m", "fixer", "apply", "--python", py, "--index-mirror", mirror,
                                "--installer", installer, "--root", str(run_dir / "root"), "--no-verify"]
                        seconds = _timed(argv, {**env, "PYTHONPATH": str(REPO)})
                    elif "pip" in name:
                        seconds = _timed([py, "-m", "pip", "install", "--force-reinstall", f"torch=={TORCH}",
                                          "--index-url", index.url], env)
                    else:
                        seconds = _timed([shutil.which("uv", path=env["PATH"]) or "uv", "pip", "install",
                                          "--python", py, "--reinstall", f"torch=={TORCH}", "--index-url",
                                          index.url], env)
                    results.setdefault(name, []).append({"seconds": seconds,
                                                         "bytes": index.bytes_served - start_bytes})
        summary = {name: {"median_seconds": statistics.median(r["seconds"] for r in runs),
                          "median_bytes": statistics.median(r["bytes"] for r in runs), "runs": runs}
                   for name, runs in results.items()}
        return {"wheel_sizes": sizes, "mib_per_s": args.mib_per_s, "torch_mb": args.torch_mb, "cudnn_mb": args.cudnn_mb,
                "repeat": args.repeat, "results": summary}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torch-mb", type=int, default=50)
    ap.add_argument("--cudnn-mb", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--mib-per-s", type=float, default=40.0,
                    help="download bandwidth of the local index (0: unthrottled loopback)")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    data = run(args)
    print(f"torch stand-in {args.torch_mb} MiB, cuDNN stand-in {args.cudnn_mb} MiB, index at "
          f"{args.mib_per_s or 'unthrottled'} MiB/s; median of {args.repeat} runs")
    print(f"{'':38} {'downloaded':>12} {'wall':>8}")
    for name, r in data["results"].items():
        print(f"{name:38} {r['median_bytes'] / 2**20:9.1f} MiB {r['median_seconds']:7.2f}s")
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1))


if __name__ == "__main__":
    main()
