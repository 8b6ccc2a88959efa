"""One `sys.audit` hook for the whole test process, dispatching by event name.

The interpreter calls every audit hook on every audited event (PEP 578,
https://docs.python.org/3/library/audit_events.html), and among those is each call of `id()`
(`builtins.id`): the tool's resolver keys its memos by identity and calls it about a million
times in a unit run. Four test helpers watch a few events each (the stands-alone check, the
unit guard, the hostile-input watch, the hostile-record reads); as four hooks they cost four
Python calls per event, about 2.5 s of CPU per unit run on the 2-core CI machine. Here one hook
looks the event up in a dict and returns at once for every event no helper watches.

Audit hooks cannot be removed, so a handler is registered once per process and gates itself
(an `active` flag of its own)."""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Iterable, List, Tuple

Handler = Callable[[str, Tuple[Any, ...]], None]

#: event name -> the handlers watching it, in registration order
_HANDLERS: Dict[str, List[Handler]] = {}
#: whether _hook is installed (once per process)
_INSTALLED: List[bool] = []


def _hook(event: str, args: Tuple[Any, ...]) -> None:
    handlers = _HANDLERS.get(event)
    if handlers is not None:
        for handler in handlers:
            handler(event, args)


def watch(events: Iterable[str], handler: Handler) -> None:
    """Call `handler(event, args)` on each of `events` from now on (the first call installs the
    hook). Registering the same handler twice for an event calls it once."""
    if not _INSTALLED:
        sys.addaudithook(_hook)
        _INSTALLED.append(True)
    for event in events:
        handlers = _HANDLERS.setdefault(event, [])
        if handler not in handlers:
            handlers.append(handler)
