"""Check plugins run (entry point group colab_cudnn_fix.checks, found by fixer.system.plugins):
each isolated in a thread of its own with a deadline, every exception caught, its prints
captured; a broken one is skipped and named in fixer.system.plugins.problems(), and changes
neither the exit code nor the JSON (fixer.system.plugins' docstring says why each guard is
there). Their findings join diagnose's."""

from __future__ import annotations

import dataclasses
import io
import sys
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from fixer.model import FINDING_IDS, Finding
from fixer.system.plugins import CHECKS_GROUP, Plugin, discover, note

#: How long one check plugin may run (seconds) before it is reported as slow and skipped.
CHECK_TIMEOUT = 10.0


class _Routed:
    """sys.stdout / sys.stderr while check plugins run: what a plugin's thread writes goes to
    that plugin's buffer (shown in its problem line, never on the command's output, so --json
    stays one JSON document); every other thread writes to the real stream."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.buffers: Dict[int, io.StringIO] = {}

    def write(self, text: str) -> int:
        buf = self.buffers.get(threading.get_ident())
        return buf.write(text) if buf is not None else self.real.write(text)

    def flush(self) -> None:
        if threading.get_ident() not in self.buffers:
            self.real.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _routed() -> Tuple[_Routed, _Routed]:
    """The routing streams, installed while plugins run (and for as long as a plugin thread
    that outlived its deadline is alive, which keeps writing into its own buffer, never into
    the output of the command)."""
    out, err = sys.stdout, sys.stderr
    if not isinstance(out, _Routed):
        out = _Routed(out)
        sys.stdout = out
    if not isinstance(err, _Routed):
        err = _Routed(err)
        sys.stderr = err
    return out, err


def _unroute(threads: Sequence[threading.Thread]) -> None:
    """Put the real streams back once no plugin thread is left running."""
    if any(t.is_alive() for t in threads):
        return
    if isinstance(sys.stdout, _Routed):
        sys.stdout = sys.stdout.real
    if isinstance(sys.stderr, _Routed):
        sys.stderr = sys.stderr.real


@dataclasses.dataclass
class _Outcome:
    got: Optional[List[Any]] = None
    error: Optional[BaseException] = None
    printed: str = ""


def _call(p: Plugin, env: Any, recipes: Any, outcome: _Outcome) -> None:
    """Import and call one check plugin in this (worker) thread; whatever it raises, SystemExit
    and KeyboardInterrupt included, is its own failure: a user's Ctrl-C is delivered to the
    main thread (Python runs signal handlers there only), which is waiting in join()."""
    import importlib

    out, err = sys.stdout, sys.stderr
    buf = io.StringIO()
    me = threading.get_ident()
    if isinstance(out, _Routed):
        out.buffers[me] = buf
    if isinstance(err, _Routed):
        err.buffers[me] = buf
    module, _, attr = p.value.partition(":")
    try:
        fn: Any = importlib.import_module(module.strip())
        for part in attr.strip().split(".") if attr else []:
            fn = getattr(fn, part)
        outcome.got = list(fn(env, recipes) or ())
    except BaseException as exc:  # noqa: BLE001 - a plugin's failure is reported, never raised
        outcome.error = exc
    finally:
        outcome.printed = buf.getvalue()


_THREADS: List[threading.Thread] = []


def _run_one(p: Plugin, env: Any, recipes: Any, timeout: float) -> Optional[List[Any]]:
    """The plugin's results, or None when it failed or ran past `timeout` (reported)."""
    where = f"check plugin {p.name!r} of {p.distribution}"
    outcome = _Outcome()
    _routed()
    t = threading.Thread(
        target=_call, args=(p, env, recipes, outcome), name=f"ccf-plugin-{p.name}", daemon=True
    )
    _THREADS.append(t)
    t.start()
    t.join(timeout)
    printed = f" (it printed {outcome.printed[:200]!r})" if outcome.printed.strip() else ""
    if t.is_alive():
        note(f"{where} did not answer within {timeout:g} s; skipped")
        return None
    if outcome.error is not None:
        exc = outcome.error
        note(f"{where} failed: {type(exc).__name__}: {str(exc)[:300]}{printed}; skipped")
        return None
    return outcome.got


def run_checks(
    env: Any,
    recipes: Any,
    path: Optional[Sequence[str]] = None,
    timeout: float = CHECK_TIMEOUT,
) -> Tuple[Any, ...]:
    """The findings of every check plugin. Each runs in a thread of its own with a deadline,
    its prints captured and every exception caught (fixer.system.plugins docstring); a plugin
    that fails to import, raises, exits, runs past `timeout` or returns anything but fixer
    Findings is skipped and reported, and changes nothing else."""
    plugins = [p for p in discover(path) if p.group == CHECKS_GROUP]
    if not plugins:
        return ()

    out: List[Finding] = []
    for p in plugins:
        where = f"check plugin {p.name!r} of {p.distribution}"
        got = _run_one(p, env, recipes, timeout)
        if got is None:
            continue
        bad = [
            g
            for g in got
            if not isinstance(g, Finding)
            or g.id not in FINDING_IDS
            or g.severity not in ("error", "warning", "info")
        ]
        if bad:
            note(
                f"{where} returned {str(bad[0])[:200]!r}, not a Finding with a known id and "
                "severity; skipped"
            )
            continue
        out += [
            dataclasses.replace(f, evidence=tuple(f.evidence) + (f"reported by {where}",))
            for f in got
        ]
    _unroute(_THREADS)
    return tuple(out)
