#!/usr/bin/env python3
"""Build the apt catalogue of cuDNN (libcudnn8, libcudnn9-cuda-11/12/13) with each version's pip
twin, from the best public source this machine reaches. Every row names its source.

    python scripts/refresh_apt.py              # writes data/apt_cudnn.toml
    python scripts/refresh_apt.py --dry-run    # prints what it would write

Sources, best first:
1. NVIDIA's CUDA apt repositories (https://developer.download.nvidia.com/compute/cuda/repos/
   <distro>/x86_64/Packages.gz): every version with its SHA256, when reachable. (Not reachable
   from the project's machines: they reach PyPI and Debian mirrors only.)
2. Otherwise derived from the pip wheels' versions on PyPI (https://pypi.org/pypi/<dist>/json):
   - cuDNN 9: NVIDIA's apt package of cuDNN 9.a.b.c is libcudnn9-cuda-<CUDA major> version
     `9.a.b.c-1` (the CUDA major is in the package name). Pinned evidence of the rule, in rows
     below: Colab's apt list (libcudnn9-cuda-12 9.2.1.18-1 next to PyPI's nvidia-cudnn-cu12
     9.2.1.18), the GPU machine's dpkg (libcudnn9-cuda-13 9.14.0.64-1 / nvidia-cudnn-cu13
     9.14.0.64), NVIDIA's container Dockerfiles (libcudnn9-cuda-12=9.7.0.66-1).
   - cuDNN 8: `8.a.b.c-1+cudaX.Y`, where X.Y is the CUDA minor NVIDIA built that cuDNN minor for;
     it cannot be told from the pip version, so a PyPI version is given an apt twin only when a
     pinned source shows the suffix for that cuDNN major.minor and CUDA major.
3. Pinned public sources (always added, and the evidence for 2): the Colab snapshots in
   data/colab_snapshots/*/apt-list.txt (installed and "upgradable to" versions), the GPU
   machine's dpkg list (data/gpu_machine), and NVIDIA's container Dockerfiles
   (gitlab.com/nvidia/container-images/cuda, as copied in public repositories: PINNED below).

SHA256 is only given by source 1; rows from 2 and 3 carry none.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "data" / "apt_cudnn.toml"
NVIDIA_REPOS = [
    f"https://developer.download.nvidia.com/compute/cuda/repos/{d}/x86_64/Packages.gz"
    for d in ("ubuntu2404", "ubuntu2204", "ubuntu2004", "debian12")
]
PYPI_DISTS = ("nvidia-cudnn-cu11", "nvidia-cudnn-cu12", "nvidia-cudnn-cu13")
APT_PACKAGE = re.compile(r"^(libcudnn8|libcudnn9-cuda-1[1-9])$")

#: Versions pinned by NVIDIA's container Dockerfiles (gitlab.com/nvidia/container-images/cuda),
#: as found copied in public repositories (the search index does not hold gitlab itself).
PINNED: List[Tuple[str, str, str]] = [
    (
        "libcudnn9-cuda-12",
        "9.7.0.66-1",
        "NVIDIA container Dockerfile dist/12.8.0/ubuntu2404/devel/cudnn (NV_CUDNN_VERSION=9.7.0.66-1), as copied in "
        "github ziudeso/naba-comfyui-nvidia-docker components/base-ubuntu24_cuda12.8.Dockerfile",
    ),
    (
        "libcudnn9-cuda-12",
        "9.1.1.17-1",
        "apt pin libcudnn9-cuda-12=9.1.1.17-1 in a public requirements file (search index), after NVIDIA's "
        "cuDNN network-install docs",
    ),
    (
        "libcudnn8",
        "8.0.2.39-1+cuda11.0",
        "NVIDIA container Dockerfile 11.0-runtime-ubuntu18.04 cudnn8 (CUDNN_VERSION 8.0.2.39, libcudnn8=$CUDNN_VERSION-1+cuda11.0), "
        "as copied in public repositories (search index)",
    ),
    (
        "libcudnn8",
        "8.0.2.39-1+cuda10.2",
        "NVIDIA container Dockerfile dist/10.2/ubuntu18.04-x86_64/devel/cudnn8 (libcudnn8=8.0.2.39-1+cuda10.2), as copied "
        "in public repositories (search index)",
    ),
]


def vkey(v: str) -> Tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v.split("-")[0]))


# -- source 1 ---------------------------------------------------------------------------------


def parse_packages_index(text: str) -> Iterable[Dict[str, str]]:
    """Debian Packages stanzas (RFC822-like, blank-line separated) as dicts."""
    for block in re.split(r"\n\s*\n", text):
        fields: Dict[str, str] = {}
        for line in block.splitlines():
            if ":" in line and not line.startswith(" "):
                k, _, v = line.partition(":")
                fields[k.strip()] = v.strip()
        if fields.get("Package"):
            yield fields


def from_nvidia(timeout: float) -> Optional[List[Dict[str, str]]]:
    rows: List[Dict[str, str]] = []
    for url in NVIDIA_REPOS:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r:
                text = gzip.GzipFile(fileobj=io.BytesIO(r.read())).read().decode("utf-8", "replace")
        except OSError as exc:
            print(f"  {url}: not reachable ({exc})", file=sys.stderr)
            continue
        for f in parse_packages_index(text):
            if APT_PACKAGE.match(f["Package"]):
                rows.append(
                    {
                        "package": f["Package"],
                        "version": f["Version"],
                        "sha256": f.get("SHA256", ""),
                        "source": f"{url} (Filename {f.get('Filename', '?')})",
                    }
                )
    return rows or None


# -- source 2 ---------------------------------------------------------------------------------


def pypi_versions(dist: str, timeout: float) -> List[str]:
    with urllib.request.urlopen(f"https://pypi.org/pypi/{dist}/json", timeout=timeout) as r:
        data = json.load(r)
    return sorted(
        (
            v
            for v, files in data["releases"].items()
            if files and re.match(r"^\d+\.\d+\.\d+\.\d+$", v)
        ),
        key=vkey,
    )


# -- source 3 ---------------------------------------------------------------------------------


def pinned_rows() -> List[Dict[str, str]]:
    rows = [{"package": p, "version": v, "source": s} for p, v, s in PINNED]
    for listing in sorted((REPO / "data" / "colab_snapshots").glob("*/apt-list.txt")):
        snap = listing.parent.name
        for line in listing.read_text(encoding="utf-8", errors="replace").splitlines():
            m = re.match(r"^(libcudnn8|libcudnn9-cuda-\d+)/\S+ (\S+) \S+ \[([^\]]*)\]", line)
            if not m:
                continue
            where = f"Colab snapshot {snap} apt-list.txt (data/colab_snapshots, googlecolab/backend-info)"
            rows.append(
                {"package": m.group(1), "version": m.group(2), "source": where + ", installed"}
            )
            up = re.search(r"upgradable to: (\S+)", m.group(3))
            if up:
                rows.append(
                    {
                        "package": m.group(1),
                        "version": up.group(1),
                        "source": where + ", 'upgradable to'",
                    }
                )
    facts = REPO / "data" / "gpu_machine" / "facts_h200.txt"
    if not facts.exists():
        facts = REPO / "tests" / "data" / "gpu_machine" / "facts_h200.txt"
    if facts.exists():
        for line in facts.read_text(encoding="utf-8", errors="replace").splitlines():
            m = re.match(r"(libcudnn8|libcudnn9-cuda-\d+) (\S+) \w+ ok installed", line)
            if m:
                rows.append(
                    {
                        "package": m.group(1),
                        "version": m.group(2),
                        "source": "GPU machine dpkg (data/gpu_machine facts_h200.txt)",
                    }
                )
    return rows


def twin_of(package: str, version: str) -> Optional[Tuple[str, str]]:
    """The pip twin of an apt row: (distribution, version)."""
    four = version.split("-")[0]
    m = re.match(r"libcudnn9-cuda-(\d+)$", package)
    if m:
        return f"nvidia-cudnn-cu{m.group(1)}", four
    m = re.search(r"\+cuda(\d+)\.\d+$", version)
    if package == "libcudnn8" and m:
        return f"nvidia-cudnn-cu{m.group(1)}", four
    return None


def derived_rows(pinned: List[Dict[str, str]], timeout: float) -> List[Dict[str, str]]:
    """Apt twins of every PyPI cuDNN wheel version (rule in the module docstring)."""
    suffix: Dict[
        Tuple[str, int], str
    ] = {}  # (cuDNN major.minor, CUDA major) -> "+cudaX.Y" seen pinned
    for r in pinned:
        m = re.match(r"^(8\.\d+)\.\d+\.\d+-1(\+cuda(\d+)\.\d+)$", r["version"])
        if r["package"] == "libcudnn8" and m:
            suffix.setdefault((m.group(1), int(m.group(3))), m.group(2))
    rows: List[Dict[str, str]] = []
    for dist in PYPI_DISTS:
        cm = int(dist.rsplit("cu", 1)[1])
        try:
            versions = pypi_versions(dist, timeout)
        except OSError as exc:
            print(f"  PyPI {dist}: not reachable ({exc})", file=sys.stderr)
            continue
        for v in versions:
            major = vkey(v)[0]
            src = f"derived from PyPI {dist} {v}"
            if major == 9:
                rows.append(
                    {
                        "package": f"libcudnn9-cuda-{cm}",
                        "version": f"{v}-1",
                        "source": src + " (cuDNN 9 apt version = pip version + '-1')",
                    }
                )
            elif major == 8:
                sfx = suffix.get((".".join(v.split(".")[:2]), cm))
                if sfx:
                    rows.append(
                        {
                            "package": "libcudnn8",
                            "version": f"{v}-1{sfx}",
                            "source": src
                            + f" (suffix {sfx} as pinned for cuDNN {'.'.join(v.split('.')[:2])} on CUDA {cm})",
                        }
                    )
    return rows


def merge(rows: Iterable[Dict[str, str]]) -> List[Dict[str, str]]:
    out: Dict[Tuple[str, str], Dict[str, str]] = {}
    for r in rows:
        key = (r["package"], r["version"])
        if key in out:
            if r["source"] not in out[key]["source"]:
                out[key]["source"] += "; " + r["source"]
            if r.get("sha256") and not out[key].get("sha256"):
                out[key]["sha256"] = r["sha256"]
        else:
            out[key] = dict(r)
    for r in out.values():
        twin = twin_of(r["package"], r["version"])
        if twin:
            r["pip"], r["pip_version"] = twin
    return sorted(out.values(), key=lambda r: (r["package"], vkey(r["version"])), reverse=True)


def to_toml(rows: List[Dict[str, str]], how: str) -> str:
    lines = [
        "# cuDNN apt packages with their pip twins: written by scripts/refresh_apt.py (do not edit by hand).",
        f"# {how}",
        "",
    ]
    for r in rows:
        lines.append("[[package]]")
        for k in ("package", "version", "pip", "pip_version", "sha256", "source"):
            if r.get(k):
                lines.append(f"{k} = {json.dumps(r[k], ensure_ascii=False)}")
        lines.append("")
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--timeout", type=float, default=15.0)
    args = ap.parse_args(argv)
    pinned = pinned_rows()
    nvidia = from_nvidia(args.timeout)
    if nvidia is not None:
        rows, how = (
            merge(nvidia + pinned),
            "source: NVIDIA's CUDA apt repository Packages indexes (with SHA256)",
        )
    else:
        derived = derived_rows(pinned, args.timeout)
        rows = merge(derived + pinned)
        how = (
            "source: NVIDIA's repository was not reachable; apt twins derived from PyPI's nvidia-cudnn-cu* "
            "versions plus pinned public sources (no SHA256)"
        )
    text = to_toml(rows, how)
    if args.dry_run:
        sys.stdout.write(text)
    else:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT.relative_to(REPO)}: {len(rows)} rows ({how})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
