"""What is installed in the target interpreter, read by a child process of that interpreter.

The target may not be the interpreter running the tool (`--python PATH`), so we never use
our own importlib.metadata: a small stdlib-only script runs inside the target and prints
JSON. The first distribution of a name on sys.path wins, as for imports and pip freeze.

pip moves a distribution it is replacing aside under a `~`-prefixed name
(`~vidia_cudnn_cu13-9.14.0.64.dist-info`) and deletes it only when the new one is in place.
importlib.metadata would count such a copy as installed; pip itself ignores it ("Ignoring
invalid distribution"). The snapshot does as pip does and reports those entries as
`leftovers`: an interrupted installer was here.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Tuple

from fixer.system.paths import runnable_python
from fixer.errors import UsageError
from fixer.system.proc import run
from fixer.system.versions import canonical_name

if TYPE_CHECKING:
    from fixer.model import PythonEnv

_SCRIPT = r"""
import json, os, re, sys
from importlib import metadata
seen = set()
dists = []
leftovers = []
for entry in sys.path:
    try:
        names = os.listdir(entry or ".")
    except OSError:
        continue
    leftovers.extend(os.path.join(entry, n) for n in sorted(names)
                     if n.startswith("~") and n.endswith((".dist-info", ".egg-info")))
for d in metadata.distributions():
    path = getattr(d, "_path", None)
    if path is not None and os.path.basename(str(path)).startswith("~"):
        continue
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
    requires = []
    for r in d.requires or ():
        head = r.split(";", 1)
        if len(head) > 1 and "extra" in head[1]:
            continue
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", head[0])
        if m:
            requires.append(re.sub(r"[-_.]+", "-", m.group(1)).lower())
    try:
        direct = d.read_text("direct_url.json")
        direct = json.loads(direct) if direct else None
    except Exception:
        direct = None
    installer = (d.read_text("INSTALLER") or "").strip() or None
    dists.append({"name": key, "version": d.version, "dist_info": str(path) if path else "",
                  "installer": installer, "direct_url": direct,
                  "requested": d.read_text("REQUESTED") is not None, "requires": requires})
print(json.dumps({"executable": sys.executable, "version": "%d.%d.%d" % sys.version_info[:3],
                  "prefix": sys.prefix, "dists": dists, "leftovers": leftovers}))
"""


@dataclasses.dataclass(frozen=True)
class InstalledDist:
    name: str  # canonical name
    version: str
    dist_info: str = ""  # the .dist-info (or .egg-info) directory
    installer: Optional[str] = None
    direct_url: Optional[Dict[str, Any]] = (
        None  # PEP 610 direct_url.json, when installed from a URL/path
    )
    requested: bool = False
    requires: Tuple[str, ...] = ()  # canonical names of its unconditional requirements

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
    leftovers: Tuple[str, ...] = ()  # `~` metadata directories an interrupted installer left

    def get(self, name: str) -> Optional[InstalledDist]:
        want = canonical_name(name)
        for d in self.dists:
            if d.name == want:
                return d
        return None

    def versions(self) -> Dict[str, str]:
        return {d.name: d.version for d in self.dists}

    def has(self, name: str) -> bool:
        return self.get(name) is not None

    def closure(self, names: "Iterable[str]") -> List[str]:
        """`names` and every installed distribution they require, transitively (canonical names)."""
        out: List[str] = []
        todo: List[str] = [canonical_name(n) for n in names]
        while todo:
            n = todo.pop(0)
            if n in out:
                continue
            out.append(n)
            d = self.get(n)
            if d is not None:
                todo.extend(r for r in d.requires if r not in out)
        return out


def read_target(python: str, timeout: float = 60.0) -> TargetSnapshot:
    """Run the snapshot script in `python`. Raises UsageError when it is not a working interpreter."""
    import errno

    proc = run([runnable_python(python), "-c", _SCRIPT], timeout=timeout, cwd="/")
    if proc.errno == errno.ENOENT:
        raise UsageError(f"--python {python}: no such interpreter")
    if proc.errno in (errno.EACCES, errno.EPERM):
        raise UsageError(f"--python {python}: not executable")
    if proc.error is not None:
        raise UsageError(f"--python {python}: {proc.error}")
    if proc.timed_out:
        raise UsageError(f"--python {python}: did not answer within {timeout:.0f} s")
    if proc.returncode != 0:
        raise UsageError(
            f"--python {python}: cannot list its distributions: {proc.errors.strip()[-500:]}"
        )
    try:
        data = json.loads(proc.text.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise UsageError(f"--python {python}: unexpected output {proc.text[-200:]!r}")
    return snapshot_from_dict(data)


def snapshot_of_env(python: Optional["PythonEnv"], executable: str) -> TargetSnapshot:
    """What detection saw of the target (fixer.model.PythonEnv), as a snapshot for the decisions
    the dry run shares with apply (fixer.applier.prepare.sandbox_refusal); each distribution's
    dist_info stands for its site directory only (`InstalledDist.site_packages`)."""
    import os

    if python is None:
        return TargetSnapshot(executable=executable, version="", prefix="")
    dists = tuple(
        InstalledDist(
            name=canonical_name(d.name),
            version=d.version,
            dist_info=os.path.join(d.location, f"{d.name}.dist-info") if d.location else "",
            requires=tuple(_requirement_names(d.requires)),
        )
        for d in python.distributions
    )
    return TargetSnapshot(
        executable=python.executable or executable,
        version=python.version,
        prefix=python.prefix,
        dists=dists,
    )


def _requirement_names(lines: Iterable[str]) -> List[str]:
    """The canonical names of Requires-Dist lines that no extra conditions (as _SCRIPT reads them)."""
    import re

    out: List[str] = []
    for line in lines:
        head = line.split(";", 1)
        if len(head) > 1 and "extra" in head[1]:
            continue
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", head[0])
        if m:
            out.append(canonical_name(m.group(1)))
    return out


def snapshot_from_dict(data: Dict[str, Any]) -> TargetSnapshot:
    return TargetSnapshot(
        executable=data["executable"],
        version=data["version"],
        prefix=data.get("prefix", ""),
        dists=tuple(
            InstalledDist(**{**d, "requires": tuple(d.get("requires", ()))})
            for d in data.get("dists", ())
        ),
        leftovers=tuple(data.get("leftovers", ())),
    )


def snapshot_to_dict(snap: TargetSnapshot) -> Dict[str, Any]:
    return dataclasses.asdict(snap)
