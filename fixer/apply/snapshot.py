"""What is installed in the target interpreter, read by a child process of that interpreter.

The target may not be the interpreter running the tool (`--python PATH`), so we never use
our own importlib.metadata: a small stdlib-only script runs inside the target and prints
JSON. The first distribution of a name on sys.path wins, as for imports and pip freeze.
"""
from __future__ import annotations

import dataclasses
import json
import subprocess
from typing import Any, Dict, Optional, Tuple

from .._paths import runnable_python
from ..errors import UsageError

_SCRIPT = r"""
import json, re, sys
from importlib import metadata
seen = set()
dists = []
for d in metadata.distributions():
    try:
        name = d.metadata["Name"]
    except Exception:
        name = None
    if not name:
        continue
    key = re.sub(r"[-_.]+", "-", name).lower()
    if key in seen:
        continue
    seen.add(key)
    path = getattr(d, "_path", None)
    try:
        direct = d.read_text("direct_url.json")
        direct = json.loads(direct) if direct else None
    except Exception:
        direct = None
    installer = (d.read_text("INSTALLER") or "").strip() or None
    dists.append({"name": key, "version": d.version, "dist_info": str(path) if path else "",
                  "installer": installer, "direct_url": direct,
                  "requested": d.read_text("REQUESTED") is not None})
print(json.dumps({"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
                  "prefix": sys.prefix, "dists": dists}))
"""


@dataclasses.dataclass(frozen=True)
class InstalledDist:
    name: str                       # canonical name
    version: str
    dist_info: str = ""             # the .dist-info (or .egg-info) directory
    installer: Optional[str] = None
    direct_url: Optional[Dict[str, Any]] = None   # PEP 610 direct_url.json, when installed from a URL/path
    requested: bool = False

    @property
    def editable(self) -> bool:
        return bool(self.direct_url and self.direct_url.get("dir_info", {}).get("editable"))

    @property
    def site_packages(self) -> str:
        import os

        return os.path.dirname(self.dist_info)


@dataclasses.dataclass(frozen=True)
class TargetSnapshot:
    executable: str
    version: str
    prefix: str
    dists: Tuple[InstalledDist, ...] = ()

    def get(self, name: str) -> Optional[InstalledDist]:
        from packaging.utils import canonicalize_name

        want = canonicalize_name(name)
        for d in self.dists:
            if d.name == want:
                return d
        return None

    def versions(self) -> Dict[str, str]:
        return {d.name: d.version for d in self.dists}

    def has(self, name: str) -> bool:
        return self.get(name) is not None


def read_target(python: str, timeout: float = 60.0) -> TargetSnapshot:
    """Run the snapshot script in `python`. Raises UsageError when it is not a working interpreter."""
    try:
        proc = subprocess.run([runnable_python(python), "-c", _SCRIPT], capture_output=True, text=True, timeout=timeout,
                              cwd="/", stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise UsageError(f"--python {python}: no such interpreter")
    except PermissionError:
        raise UsageError(f"--python {python}: not executable")
    except subprocess.TimeoutExpired:
        raise UsageError(f"--python {python}: did not answer within {timeout:.0f} s")
    if proc.returncode != 0:
        raise UsageError(f"--python {python}: cannot list its distributions: {proc.stderr.strip()[-500:]}")
    try:
        data = json.loads(proc.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise UsageError(f"--python {python}: unexpected output {proc.stdout[-200:]!r}")
    return snapshot_from_dict(data)


def snapshot_from_dict(data: Dict[str, Any]) -> TargetSnapshot:
    return TargetSnapshot(
        executable=data["executable"], version=data["version"], prefix=data.get("prefix", ""),
        dists=tuple(InstalledDist(**d) for d in data.get("dists", ())),
    )


def snapshot_to_dict(snap: TargetSnapshot) -> Dict[str, Any]:
    return dataclasses.asdict(snap)
