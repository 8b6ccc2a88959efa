"""The target interpreter: its distributions, read by `children/probe.py` running inside it.

The tool may live in its own venv while the user's frameworks live elsewhere (`--python PATH`),
so nothing here looks at the running interpreter's own packages.
"""

from __future__ import annotations

import os
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

from fixer.system import proc as _proc
from fixer.system.proc import Child, child_env
from fixer.errors import UsageError
from fixer.model import Distribution, ProbeNote, PythonEnv
from fixer.system.versions import same_version
from fixer.children import probe as _probe


def check_interpreter(python: str) -> str:
    """A usable path to the interpreter, or a UsageError naming what is wrong with it."""
    if os.sep not in python:
        import shutil

        found = shutil.which(python)
        if found is None:
            raise UsageError(f"--python {python}: no such interpreter on PATH")
        python = found
    if not os.path.exists(python):
        raise UsageError(f"--python {python}: no such file")
    if os.path.isdir(python):
        raise UsageError(
            f"--python {python}: is a directory, not an interpreter (try {os.path.join(python, 'bin', 'python')})"
        )
    if not os.access(python, os.X_OK):
        raise UsageError(f"--python {python}: not executable")
    return python


HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "children")


def python_script(
    python: str,
    script: str,
    args: Sequence[str] = (),
    *,
    isolated: bool = True,
    timeout: float,
    env: Optional[Mapping[str, str]] = None,
    label: str = "",
) -> Child:
    """Start detection's stdlib-only script `script` (a file of fixer/detection, run by path) in
    interpreter `python`; `result()` waits for its JSON answer."""
    return _proc.python_child(
        python,
        os.path.join(HERE, script),
        args,
        isolated=isolated,
        timeout=timeout,
        env=env,
        label=label or script,
    )


def start_probe(python: str, environ: Mapping[str, str], timeout: float) -> Child:
    return python_script(
        python,
        "probe.py",
        isolated=False,
        timeout=timeout,
        env=child_env(environ),
        label=f"probe in {python}",
    )


class InProcessProbe:
    """The probe run in this process, for the default target: the running interpreter. A second
    interpreter start costs 60-80 ms on the GPU machine (its venv's .pth hooks run at every
    start) and tells nothing new. Same interface as a Child: result() -> (data, error)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = dict(child_env(environ))

    def result(self) -> Tuple[Optional[Any], Optional[str]]:
        try:
            return _probe.collect(self.environ), None
        except Exception as exc:  # noqa: BLE001 - reported as a probe note, like a failed child
            return None, f"{type(exc).__name__}: {exc}"


def finish_probe(
    child: "Child | InProcessProbe",
    python: str,
    explicit: bool,
    map_path: Callable[[str], str] = lambda p: p,
) -> Tuple[Optional[PythonEnv], List[ProbeNote]]:
    data, err = child.result()
    if data is None:
        if explicit:
            raise UsageError(
                f"--python {python}: could not inspect it ({err})",
                hint="it must be a Python 3 interpreter that runs on this machine",
            )
        return None, [ProbeNote("python", False, err or "no answer")]
    return parse_probe(data, map_path), [
        ProbeNote(
            "python",
            True,
            f"{data.get('executable')} {data.get('version')}: "
            f"{len(data.get('distributions', []))} distributions",
        )
    ] + [ProbeNote("dist-info", False, e) for e in data.get("errors", [])]


def _named_version(d: Mapping[str, Any]) -> Optional[str]:
    """The dist-info folder name's version when it is not METADATA's by PEP 440 (the probe
    reports it when the two strings differ; "9.19.0.56" and "9.19.0.056" are one version)."""
    named = d.get("named_version")
    if not isinstance(named, str) or not named:
        return None
    return None if same_version(str(d.get("version")), named) else named


def parse_probe(data: Mapping[str, Any], map_path: Callable[[str], str] = lambda p: p) -> PythonEnv:
    """The probe's JSON as a PythonEnv; `map_path` turns host paths into machine paths (a fake
    machine tree under --root whose interpreter lives inside the tree)."""
    dists = tuple(
        Distribution(
            name=d["name"],
            version=str(d["version"]),
            location=map_path(d.get("location", "")),
            installer=d.get("installer"),
            requires=tuple(d.get("requires") or ()),
            editable=bool(d.get("editable")),
            named_version=_named_version(d),
        )
        for d in data.get("distributions", [])
    )
    return PythonEnv(
        executable=data.get("executable", ""),
        version=data.get("version", ""),
        prefix=data.get("prefix", ""),
        base_prefix=data.get("base_prefix", ""),
        is_venv=bool(data.get("is_venv")),
        site_packages=tuple(map_path(p) for p in data.get("site_packages", ())),
        distributions=dists,
        pip=data.get("pip"),
        uv=data.get("uv"),
        conda=data.get("conda"),
        externally_managed=bool(data.get("externally_managed")),
        markers={str(k): str(v) for k, v in (data.get("markers") or {}).items()},
    )
