"""`debug --json`: everything the tool reads, raw, for maintainers: the texts of the files the
detectors parse, the environment variables they consider, the raw output of the commands and
child probes they run, the build targets read from the frameworks' libraries, the plugins
found, and the Environment detection made of all that. Reads, never writes; never prints.
Environment variables come from the allowlist of fixer.system.redact (REPORTABLE_ENV), both
the considered ones and the detected Environment's, and the CLI redacts the whole bundle.
"""

from __future__ import annotations

import glob
import os
import sys
from typing import Any, Dict, List, Mapping, Optional

from fixer.model import to_dict
from fixer.system import proc as _proc
from fixer import __version__
from fixer.system import plugins
from fixer.detection import detect, overrides_from_env
from fixer.system.redact import reportable_env
from fixer.detection.fatbin import build_targets
from fixer.detection.gpu import SMI_FIELDS
from fixer.detection.gpu_probe import start as start_gpu_probe

DEBUG_SCHEMA = 1
#: The files detection parses (fixer.detection.gpu, .runtime, .ldcache, .libraries), read as text.
TEXT_FILES = (
    "/sys/module/nvidia/version",
    "/proc/driver/nvidia/version",
    "/etc/os-release",
    "/etc/ld.so.conf",
    "/proc/self/maps",
)
TEXT_GLOBS = ("/proc/driver/nvidia/gpus/*/information", "/etc/ld.so.conf.d/*.conf")
LIMIT = 256 * 1024


def _read(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(LIMIT + 1)
    except OSError as exc:
        return f"<unreadable: {exc.strerror or exc}>"
    return text if len(text) <= LIMIT else text[:LIMIT] + "\n<cut at 256 KiB>"


def _run(argv: List[str], timeout: float = 20.0) -> Dict[str, Any]:
    import errno

    p = _proc.run(argv, timeout=timeout)
    if p.errno == errno.ENOENT:
        return {"argv": argv, "error": "not found"}
    if p.error is not None:
        return {"argv": argv, "error": p.error}
    if p.timed_out:
        return {"argv": argv, "error": f"no answer within {timeout:g} s (killed)"}
    return {
        "argv": argv,
        "returncode": p.returncode,
        "stdout": p.text[-LIMIT:],
        "stderr": p.errors[-8192:],
    }


def bundle(
    python: Optional[str] = None, environ: Optional[Mapping[str, str]] = None
) -> Dict[str, Any]:
    """The debug bundle as plain JSON-ready data."""
    environ = dict(os.environ if environ is None else environ)
    native = start_gpu_probe(environ)
    env = detect(python, overrides=overrides_from_env(environ), environ=environ)
    files: Dict[str, Optional[str]] = {p: _read(p) for p in TEXT_FILES if os.path.exists(p)}
    for pattern in TEXT_GLOBS:
        for p in sorted(glob.glob(pattern)):
            files[p] = _read(p)
    considered = reportable_env(environ)
    data, err = native.result()
    targets = {}
    for fw in env.frameworks:
        if fw.is_cuda_build:
            t = build_targets(fw.framework, fw.location, fw.library_file)
            targets[fw.framework] = to_dict(t) if t is not None else None
    return {
        "schema": DEBUG_SCHEMA,
        "tool_version": __version__,
        "tool_python": sys.executable,
        "argv": list(sys.argv),
        "environment_variables": considered,
        "files": files,
        "commands": {
            "nvidia-smi": _run(
                ["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits"]
            ),
            "ldconfig -p": _run(["ldconfig", "-p"]),
        },
        "probes": {"native (NVML, libcuda)": {"data": data, "error": err}},
        "build_targets": targets,
        "plugins": {
            "found": plugins.names(plugins.discover()),
            "problems": list(plugins.problems()),
        },
        "environment": {**to_dict(env), "env": reportable_env(env.env)},
    }
