"""Detection's Python probe for the default target (the running interpreter), started on a thread
ahead of the tool's own imports.

`doctor` on this machine probes the interpreter it runs in: detection/_probe.py's `collect`, in
process (detection.python_env.InProcessProbe). That reads every dist-info directory on sys.path
and the metadata of the GPU-relevant ones, file system work that the console script
(fixer._entry) starts here, next to the GPU probe child, so that it overlaps the imports.
InProcessProbe takes this answer when it asks for exactly the same environment, once; otherwise
it probes again. A wrong guess costs one probe on a thread.

This module loads _probe.py by its path (stdlib only, as it runs in foreign interpreters too):
importing fixer.detection would import the whole tool, the very work this runs beside.
"""
from __future__ import annotations

import os
import threading
from typing import Any, Dict, Mapping, Optional, Tuple

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "detection", "_probe.py")

Answer = Tuple[Optional[Any], Optional[str]]

_LOCK = threading.Lock()
#: the probe started early: its environment, its thread and the box its answer goes into
_EARLY: Dict[str, Any] = {}


def collect(environ: Mapping[str, str]) -> Answer:
    """_probe.collect(environ) as (data, None), or (None, the error) when it raised."""
    import importlib.util

    try:
        spec = importlib.util.spec_from_file_location("fixer_python_probe_script", SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.collect(dict(environ)), None
    except Exception as exc:  # noqa: BLE001 - reported as a probe note, like a failed child
        return None, f"{type(exc).__name__}: {exc}"


def start_early(environ: Mapping[str, str]) -> None:
    """Start the probe of this interpreter with `environ` (the probe's environment, as
    InProcessProbe keeps it) on a daemon thread."""
    env = dict(environ)
    box: Dict[str, Answer] = {}      # this start's answer (a later start has its own)

    def run() -> None:
        box["answer"] = collect(env)

    thread = threading.Thread(target=run, name="colab-cudnn-fix python probe", daemon=True)
    with _LOCK:
        _EARLY.clear()
        _EARLY.update(environ=env, thread=thread, box=box)
    thread.start()


def take(environ: Mapping[str, str]) -> Optional[Answer]:
    """The early probe's answer when it was started with exactly `environ` (waiting for it),
    handed out once; None otherwise."""
    with _LOCK:
        if not _EARLY or _EARLY["environ"] != dict(environ):
            return None
        early = dict(_EARLY)
        _EARLY.clear()
    early["thread"].join()
    answer: Answer = early["box"].get("answer") or (None, "the early probe ended without an answer")
    return answer
