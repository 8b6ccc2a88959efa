"""`report`: the machine's GPU stack as one plain value meant for pasting into a bug report.

    value = build_report(env, findings, healthy=..., exit_code=...)      # plain JSON-ready dict
    value = redact(value, Redaction.for_machine(os.environ))             # home and user hidden

fixer.render.report turns the value into markdown or HTML (one renderer for `report`,
`report --html` and the notebook rendering of the API's results). Pure: no I/O, no printing.

Redaction works on PATH COMPONENTS, never on substrings: in "/home/alice/x" the component
"alice" is a user name and becomes "<user>", while the word "alice" in prose, "root cause" or
"/usr/lib/rootfs" are left as they are. Rules, applied to every path-like token (one that
contains "/"):

- the home directory (by components) at the start of a path becomes "~";
- "/root" at the start of a path (the superuser's home) becomes "~";
- the component right after a leading /home or /Users (anyone's home) becomes "<user>";
- a component equal to the user's name becomes "<user>".
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from fixer.model import Environment, Finding, LoadResolution, to_dict

#: Version of the `report --json` value. 2: a cuDNN copy's "package" is an object {"name", "version"}
#: (1 had one string "name version"). Nothing in the tool reads reports back; fixer/schemas/report.json
#: describes this version only.
REPORT_SCHEMA = 2
HOME_HOLDERS = ("home", "Users")

# A path-like token: starts at "/" or "~/" (or a relative path with a "/" inside), not preceded
# by a character that would make it part of a word. A URL's "//host/..." is left alone.
_PATH_TOKEN = re.compile(
    r"(?<![\w./~<>-])(~?/[^\s'\"`,;()\[\]{}|]*|[\w.<>-]+/[^\s'\"`,;()\[\]{}|]*)"
)


@dataclasses.dataclass(frozen=True)
class Redaction:
    """What to hide: the home directory and the user names (empty: nothing)."""

    home: Optional[str] = None
    users: Tuple[str, ...] = ()

    @classmethod
    def for_machine(cls, environ: Mapping[str, str]) -> "Redaction":
        users: List[str] = []
        for key in ("USER", "LOGNAME", "USERNAME"):
            v = environ.get(key)
            if v and v not in users:
                users.append(v)
        home = environ.get("HOME")
        try:
            import pwd

            entry = pwd.getpwuid(os.getuid())
            if entry.pw_name not in users:
                users.append(entry.pw_name)
            home = home or entry.pw_dir
        except (ImportError, KeyError, AttributeError):
            pass
        home = os.path.normpath(home) if home and home not in ("/", "") else None
        return cls(home=home, users=tuple(u for u in users if u and "/" not in u))

    def path(self, token: str) -> str:
        """One path-like token, redacted by component (each entry of a colon-separated list alone)."""
        if token.startswith("//"):
            return token
        if ":" in token:
            return ":".join(self.path(p) for p in token.split(":"))
        if "/" not in token:
            return token
        parts = token.split("/")
        home = [p for p in (self.home or "").split("/")]
        if (
            self.home
            and len(parts) >= len(home)
            and parts[: len(home)] == home
            and token.startswith("/")
        ):
            parts = ["~"] + parts[len(home) :]
        elif token.startswith("/") and len(parts) >= 2 and parts[1] == "root":
            parts = ["~"] + parts[2:]
        elif token.startswith("/") and len(parts) >= 3 and parts[1] in HOME_HOLDERS and parts[2]:
            parts = parts[:2] + ["<user>"] + parts[3:]
        return "/".join("<user>" if p in self.users else p for p in parts)

    def text(self, text: str) -> str:
        """Every path-like token in `text` redacted; the words around them untouched."""
        if "/" not in text:
            return text
        return _PATH_TOKEN.sub(lambda m: self.path(m.group(1)), text)


def redact(value: Any, r: Redaction) -> Any:
    """The same plain value with every string (keys included) redacted."""
    if isinstance(value, str):
        return r.text(value)
    if isinstance(value, dict):
        return {r.text(str(k)): redact(v, r) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, r) for v in value]
    return value


def _load(env: Environment, consumer: str, library: str = "cudnn") -> Optional[LoadResolution]:
    return next((x for x in env.loads if x.consumer == consumer and x.library == library), None)


def _why(res: LoadResolution) -> str:
    """Why this copy loads, in words: the loader step that found it, and what it beat."""
    if res.path is None:
        return res.error or "not found on any search path"
    words = {
        "preload": "the framework preloads it by path",
        "DT_RPATH": "the library's DT_RPATH",
        "DT_RUNPATH": "the library's DT_RUNPATH",
        "LD_LIBRARY_PATH": "LD_LIBRARY_PATH",
        "LD_PRELOAD": "LD_PRELOAD",
        "ld.so.cache": "ld.so.cache (ldconfig)",
        "default": "the default directories",
    }
    why = f"found through {words.get(res.via, res.via or 'the loader')}"
    if res.intended and os.path.normpath(os.path.dirname(res.intended)) != os.path.normpath(
        res.directory or ""
    ):
        why += f", ahead of the copy the framework points at ({res.intended})"
    if res.shadowed:
        why += f"; also present: {', '.join(res.shadowed[:3])}"
    return why


def build_report(
    env: Environment,
    findings: Sequence[Finding],
    *,
    healthy: bool,
    exit_code: int,
    redaction: Optional[Redaction] = None,
) -> Dict[str, Any]:
    """The report as plain data (the `report --json` payload): what a maintainer needs to see."""
    rt = env.runtime
    gpus = [
        {
            "name": g.name,
            "compute_capability": g.compute_capability,
            "memory_mib": g.memory_mib,
            "source": g.source,
        }
        for g in env.gpus
    ]
    frameworks = []
    for fw in env.frameworks:
        res = _load(env, fw.framework)
        kernels = (
            " ".join(fw.arch_list)
            if fw.arch_list
            else (
                ", ".join(fw.compute_capabilities) + (f" +PTX {fw.ptx}" if fw.ptx else "")
                if fw.compute_capabilities
                else ""
            )
        )
        frameworks.append(
            {
                "framework": fw.framework,
                "distribution": fw.distribution,
                "version": fw.version,
                "variant": fw.variant,
                "cuda": fw.cuda,
                "cudnn_built": fw.cudnn,
                "cuda_build": fw.is_cuda_build,
                "kernels": kernels,
                "kernels_from": fw.arch_source
                or ("build_info" if fw.compute_capabilities else None),
                "cudnn_loads": None
                if res is None
                else {
                    "version": res.version,
                    "path": res.path,
                    "via": res.via,
                    "why": _why(res),
                    "error": res.error,
                },
                "source": fw.source,
            }
        )
    copies = [
        {
            "library": c.library,
            "version": c.version,
            "origin": c.origin,
            "package": None
            if c.package is None
            else {"name": c.package.name, "version": c.package.version},
            "directory": c.directory,
            "missing": list(c.missing),
            "mixed": c.mixed,
        }
        for c in env.libraries
        if c.library == "cudnn"
    ]
    value: Dict[str, Any] = {
        "schema": REPORT_SCHEMA,
        "tool_version": env.tool_version,
        "healthy": healthy,
        "exit_code": exit_code,
        "runtime": {
            "kind": rt.kind,
            "accelerator": rt.accelerator,
            "image": rt.image,
            "os": rt.os_name,
            "arch": rt.arch,
            "glibc": rt.glibc,
        },
        "python": None
        if env.python is None
        else {
            "version": env.python.version,
            "executable": env.python.executable,
            "venv": env.python.is_venv,
        },
        "gpus": gpus,
        "driver": {
            "version": env.driver.version,
            "cuda": env.driver.cuda_version,
            "error": env.driver.error,
        },
        "frameworks": frameworks,
        "cudnn_copies": copies,
        "findings": to_dict(list(findings)),
        "environment_variables": dict(env.env),
        "redacted": redaction is not None,
    }
    return redact(value, redaction) if redaction is not None else value
