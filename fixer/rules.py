"""The domain rules, each written once (DESIGN: "Every rule has one home").

Detection, diagnosis, resolution, explanation and verification call these; none keeps a copy.
"""
from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple, Union

from ._versions import version_key

#: cuDNN 9 changed CUDNN_VERSION from MAJOR*1000+MINOR*100+PATCH to MAJOR*10000+MINOR*100+PATCH
#: (cudnn_version.h of 8.9.7 and 9.0.0), so any value >= 90000 is in the new form.
_CUDNN9_ENCODING_FROM = 90000


def decode_cudnn_version(value: Union[int, str, Sequence[int]]) -> Optional[str]:
    """A cuDNN version in any form the libraries and frameworks print it, as "M.m.p".

    cudnnGetVersion() integers (91900 -> "9.19.0", 8907 -> "8.9.7", 7104 -> "7.1.4", 5105 ->
    "5.1.5"), tuples as torch prints them ((9, 19, 0) or the text "(9, 19, 0)"), and dotted
    strings ("9.19.0.56" -> "9.19.0.56"). None when the value is none of these."""
    if isinstance(value, (tuple, list)):
        parts = [int(p) for p in value]
        return ".".join(str(p) for p in parts) if parts else None
    if isinstance(value, int) and not isinstance(value, bool):
        n = value
    else:
        t = str(value).strip().strip("()[]")
        if "," in t:
            items = [p.strip() for p in t.split(",") if p.strip()]
            return ".".join(str(int(p)) for p in items) if items and all(p.isdigit() for p in items) else None
        if re.fullmatch(r"\d+(?:\.\d+)+", t):
            return t
        if not t.isdigit():
            return None
        n = int(t)
    if n < 1000:
        return None
    if n >= _CUDNN9_ENCODING_FROM:
        return f"{n // 10000}.{(n % 10000) // 100}.{n % 100}"
    return f"{n // 1000}.{(n % 1000) // 100}.{n % 100}"


def cudnn_compatible(runtime: Optional[str], built: Optional[str]) -> Optional[bool]:
    """Whether a cuDNN `runtime` version works for a framework built against `built`.

    Same major always; from cuDNN 8 on a runtime minor >= the build's minor (torch
    backends/cudnn/__init__.py, XLA cuda_dnn.cc IsSourceCompatibleWithCudnnLibrary). Before
    cuDNN 8 the same minor was required: torch for cuDNN < 7, and TensorFlow 1.x compared
    "compatibility versions" (M*1000+m*100, e.g. 7100 against 7000) for 7.x. None when a
    version is missing or unreadable."""
    r, b = version_key(runtime), version_key(built)
    if len(r) < 2 or len(b) < 2:
        return None
    if r[0] != b[0]:
        return False
    if b[0] < 8:
        return r[1] == b[1]
    return r[1] >= b[1]


def cudnn_relation(runtime: Optional[str], built: Optional[str]) -> Optional[str]:
    """How a runtime cuDNN relates to the build: "ok", "other-major", "older" (same major, an
    older minor), or "other-minor" (same major, a newer minor that the rule before cuDNN 8
    refused). None when unreadable."""
    ok = cudnn_compatible(runtime, built)
    if ok is None:
        return None
    if ok:
        return "ok"
    r, b = version_key(runtime), version_key(built)
    if r[0] != b[0]:
        return "other-major"
    return "older" if r[:2] < b[:2] else "other-minor"


def cudnn_major_minor(version: Optional[str]) -> Tuple[int, ...]:
    """(major, minor) of a cuDNN version string."""
    return version_key(version)[:2]
