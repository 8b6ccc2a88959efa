"""What explain ranks, as the explain tests compare it, and the harmless log lines its tests put
before an error: one home for what every emitter round's tests used to define for itself."""

from __future__ import annotations

from typing import Any, List

from hypothesis import strategies as st

from fixer.explainer import analyze

#: Lines that stand before an error in a real paste and name no cause (a training loop's
#: progress, TensorFlow's oneDNN notice, a traceback's head): a reading must not move with them.
NOISE = st.sampled_from(
    [
        "",
        "Epoch 1/10\n",
        "I0000 00:00:1768485308.759699     549 port.cc:153] oneDNN custom operations are on.\n",
        'Traceback (most recent call last):\n  File "infer.py", line 12, in <module>\n',
    ]
)


def ids(text: str, **kw: Any) -> List[str]:
    """The finding ids explain reads in `text`, first-ranked first (keywords go to analyze): the
    readings of messages and of a finding's words. The guess by similarity for a text nothing
    else reads is left out here (similar=False); tests/unit/explain/test_similar.py tests it."""
    kw.setdefault("similar", False)
    return [f.id for f in analyze(text, **kw).findings]
