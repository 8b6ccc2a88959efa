#!/usr/bin/env python3
"""Refresh the exact GPU-library pins of recipes/torch.toml from the packages' own metadata.

For each [[build]] of torch.toml it reads what the wheel really requires:
  - the PyPI default build (no index_url): PyPI's JSON API, /pypi/torch/<version>/json;
  - a build on the PyTorch index: the index's PEP 691 page + the wheel's PEP 658 .metadata
    (fixer.system.index.fetch_requires), for torch==<version>+<variant>.
It keeps the nvidia-* / cuda-* requirements that apply on Linux x86_64, sets `cudnn` from an
exact nvidia-cudnn pin, and rewrites only those records' `requires`, `cudnn`, `source` and
`note` lines in place (comments and layout stay). A record the index cannot answer for stays
as it is. scripts/import_shared_data.py keeps refreshed records when it regenerates the file.

    python scripts/refresh_recipes.py --dry-run                 # print the diff, change nothing
    python scripts/refresh_recipes.py --index-url https://download.pytorch.org/whl --pypi-url https://pypi.org
    python scripts/refresh_recipes.py --only 2.11.0 --python-tag cp312

Exit 0 when done (or nothing changed), 1 when the refreshed file fails validation.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixer.system.compat import tomllib  # noqa: E402
from fixer.system.index import DEFAULT_TIMEOUT, fetch_requires  # noqa: E402

#: Marker written into `source` of refreshed records (import_shared_data.py looks for it).
REFRESHED = "package metadata read by refresh_recipes.py"
DEFAULT_INDEX = "https://download.pytorch.org/whl"
DEFAULT_PYPI = "https://pypi.org"


def _marker_env(python_tag: str) -> Dict[str, str]:
    m = re.fullmatch(r"cp(\d)(\d+)", python_tag)
    pyver = f"{m.group(1)}.{m.group(2)}" if m else "3.12"
    return {
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "sys_platform": "linux",
        "os_name": "posix",
        "python_version": pyver,
        "python_full_version": pyver + ".0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


def gpu_requirements(requires_dist: Sequence[str], python_tag: str) -> List[str]:
    """The nvidia-*/cuda-* requirements that apply on Linux x86_64, without markers."""
    from packaging.requirements import InvalidRequirement, Requirement

    env = _marker_env(python_tag)
    out: List[str] = []
    for line in requires_dist:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = req.name.lower()
        if not name.startswith(("nvidia-", "cuda-")):
            continue
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        extras = f"[{','.join(sorted(req.extras))}]" if req.extras else ""
        out.append(f"{req.name}{extras}{req.specifier}")
    return out


def pypi_requires(pypi_url: str, name: str, version: str, timeout: Any) -> Optional[List[str]]:
    """requires_dist of a release from PyPI's JSON API; None when offline."""
    import requests

    url = f"{pypi_url.rstrip('/')}/pypi/{name}/{version}/json"
    try:
        r = requests.get(url, timeout=timeout, headers={"Accept": "application/json"})
        if r.status_code != 200:
            return None
        info = r.json().get("info") or {}
        return list(info.get("requires_dist") or [])
    except (requests.RequestException, ValueError):
        return None


# --------------------------------------------------------------------------------------------
# in-place TOML record edits
# --------------------------------------------------------------------------------------------


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _record_spans(lines: List[str], table: str = "build") -> List[Tuple[int, int]]:
    heads = [
        i for i, line in enumerate(lines) if re.match(r"\s*\[\[\s*" + table + r"\s*\]\]", line)
    ]
    anyh = [i for i, line in enumerate(lines) if re.match(r"\s*\[", line)]
    spans = []
    for h in heads:
        end = next((j for j in anyh if j > h), len(lines))
        while end > h + 1 and not lines[end - 1].strip():
            end -= 1
        spans.append((h, end))
    return spans


def _set_key(
    lines: List[str], span: Tuple[int, int], key: str, value: str, after: Sequence[str] = ()
) -> Tuple[int, int]:
    start, end = span
    rx = re.compile(r"\s*" + re.escape(key) + r"\s*=")
    for i in range(start + 1, end):
        if rx.match(lines[i]):
            lines[i] = f"{key} = {value}"
            return span
    pos = end
    for k in after:
        rk = re.compile(r"\s*" + re.escape(k) + r"\s*=")
        hits = [i for i in range(start + 1, end) if rk.match(lines[i])]
        if hits:
            pos = hits[-1] + 1
            break
    lines.insert(pos, f"{key} = {value}")
    return (start, end + 1)


def refresh(
    text: str,
    *,
    index_url: str,
    pypi_url: str,
    python_tag: str,
    only: Optional[str],
    timeout: Any,
    cache_dir: Optional[str],
    today: str,
) -> Tuple[str, Dict[str, int]]:
    doc = tomllib.loads(text)
    builds = doc.get("build", [])
    lines = text.split("\n")
    spans = _record_spans(lines)
    stats = {"checked": 0, "changed": 0, "unknown": 0}
    # edit from the last record up so earlier spans stay valid
    for idx in range(len(builds) - 1, -1, -1):
        b = builds[idx]
        if b.get("framework") != "torch" or (
            only and b["version"] != only and not b["version"].startswith(only + ".")
        ):
            continue
        stats["checked"] += 1
        if b.get("index_url"):
            url = index_url.rstrip("/") + "/" + b["variant"]
            raw = fetch_requires(
                url,
                "torch",
                f"{b['version']}+{b['variant']}",
                python_tag=python_tag,
                cache_dir=cache_dir,
                timeout=timeout,
            )
            where = f"{url}/torch/ (torch {b['version']}+{b['variant']}, {python_tag} .metadata)"
        else:
            raw = pypi_requires(pypi_url, "torch", b["version"], timeout)
            where = f"{pypi_url.rstrip('/')}/pypi/torch/{b['version']}/json"
        if raw is None:
            stats["unknown"] += 1
            continue
        reqs = gpu_requirements(raw, python_tag)
        cudnn = b.get("cudnn")
        for r in reqs:
            m = re.fullmatch(r"nvidia-cudnn-cu\d+==(\d+\.\d+\.\d+)(\.\d+)?", r)
            if m:
                cudnn = m.group(1)
        if reqs == list(b.get("requires", [])) and cudnn == b.get("cudnn"):
            continue
        stats["changed"] += 1
        span = spans[idx]
        source = b.get("source", "")
        if REFRESHED not in source:
            source = f"{REFRESHED}: {where}, read {today}; " + source
        else:
            source = re.sub(
                re.escape(REFRESHED) + r": [^;]*;",
                f"{REFRESHED}: {where}, read {today};",
                source,
                count=1,
            )
        note = b.get("note", "")
        note = " | ".join(
            p
            for p in note.split(" | ")
            if not p.startswith(("requires:", "exact nvidia-* pins not read"))
        )
        note = " | ".join(filter(None, ["requires: read from the wheel's own metadata", note]))
        span = _set_key(
            lines,
            span,
            "requires",
            "[" + ", ".join(_q(r) for r in reqs) + "]",
            after=("packages", "index_url"),
        )
        if cudnn:
            span = _set_key(lines, span, "cudnn", _q(cudnn), after=("cuda",))
        span = _set_key(lines, span, "source", _q(source))
        _set_key(lines, span, "note", _q(note), after=("source",))
    return "\n".join(lines), stats


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--recipes", default=str(ROOT / "recipes" / "torch.toml"), help="the torch recipe file"
    )
    ap.add_argument(
        "--index-url",
        default=DEFAULT_INDEX,
        help="PyTorch index base; <base>/<variant> is each variant's index",
    )
    ap.add_argument("--pypi-url", default=DEFAULT_PYPI, help="PyPI base for the JSON API")
    ap.add_argument(
        "--python-tag", default="cp312", help="wheel whose metadata is read (cp311, cp312, ...)"
    )
    ap.add_argument("--only", help="refresh only this torch version (or release line, e.g. 2.11)")
    ap.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT[1],
        help="read timeout per request, seconds",
    )
    ap.add_argument(
        "--cache-dir", help="HTTP cache directory (default ~/.cache/colab-cudnn-fix/index)"
    )
    ap.add_argument("--dry-run", action="store_true", help="print the diff and change nothing")
    args = ap.parse_args(argv)

    path = Path(args.recipes)
    old = path.read_text()
    today = datetime.date.today().isoformat()
    new, stats = refresh(
        old,
        index_url=args.index_url,
        pypi_url=args.pypi_url,
        python_tag=args.python_tag,
        only=args.only,
        timeout=(DEFAULT_TIMEOUT[0], args.timeout),
        cache_dir=args.cache_dir,
        today=today,
    )
    print(
        f"{stats['checked']} builds checked, {stats['changed']} changed, {stats['unknown']} not answered by the index",
        file=sys.stderr,
    )
    if new != old:
        sys.stdout.writelines(
            difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), str(path), str(path) + " (refreshed)"
            )
        )
    problems = _validate(path.name, new)
    for p in problems:
        print(f"invalid after refresh: {p}", file=sys.stderr)
    if args.dry_run or new == old:
        return 1 if problems else 0
    if problems:
        print(
            "not written: fix the problems above (e.g. add the [[cudnn]] row a new pin needs)",
            file=sys.stderr,
        )
        return 1
    path.write_text(new)
    print(f"wrote {path}", file=sys.stderr)
    return 0


def _validate(name: str, text: str) -> List[str]:
    """Problems of the shipped recipes with this file in place of the same-named one."""
    from fixer import recipebook as recipes

    with tempfile.TemporaryDirectory() as d:
        (Path(d) / name).write_text(text)
        return [str(e) for e in recipes.validate([d])]


if __name__ == "__main__":
    sys.exit(main())
