"""The rules the scripts of this folder share with the package, written once, stdlib only.

The scripts run inside a foreign interpreter by path (verify.py, deep.py) and cannot import the
`fixer` package; each loads this file by its path (`load_childrules` below, copied as three
lines) under a private module name. fixer.rules imports the same names from here, so the
package and the children read one rule, not two copies.
"""

from __future__ import annotations

import re
from typing import Optional, Sequence, Tuple

#: The sub-libraries of one cuDNN copy by major, without "lib" and ".so.N" (cuDNN 9 split the
#: library into graph/engine parts; cuDNN 8 into infer/train halves). Sources: cuDNN 9's
#: docs.nvidia.com/deeplearning/cudnn/latest/api/overview.html @release:9.19.0 ("API Library":
#: cudnn_graph, cudnn_engines_runtime_compiled, cudnn_engines_precompiled, cudnn_heuristic,
#: cudnn_ops, cudnn_cnn, cudnn_adv), the files of pypi:nvidia-cudnn-cu13 9.19.0.56 and of the
#: GPU machine's libcudnn9-cuda-13 9.14.0.64-1 (tests/data/gpu_machine/probe_h200_cuda13.txt,
#: pinned by tests/unit/test_rule_sources.py); cuDNN 8's docs.nvidia.com/deeplearning/cudnn/
#: archives/cudnn-890/api/index.html @release:8.9.0 (cudnn_ops_infer/_train, cudnn_cnn_infer/
#: _train, cudnn_adv_infer/_train).
CUDNN_SUBLIBRARIES = {
    9: (
        "graph",
        "ops",
        "cnn",
        "adv",
        "heuristic",
        "engines_precompiled",
        "engines_runtime_compiled",
    ),
    8: ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer", "adv_train"),
}


def cudnn_sublibraries(major: int) -> Tuple[str, ...]:
    """The sub-library names of cuDNN `major` (a later major is assumed to keep 9's split)."""
    return CUDNN_SUBLIBRARIES[9] if major >= 9 else CUDNN_SUBLIBRARIES.get(major, ())


def cudnn_version_from_int(v: int) -> str:
    """cudnnGetVersion() -> "9.19.0". cuDNN 9 changed CUDNN_VERSION from M*1000+m*100+p to
    M*10000+m*100+p (cudnn_version.h of 8.9.7 and 9.0.0), so any value >= 90000 is in the new
    form: 91900 -> "9.19.0", 8902 -> "8.9.2", 7104 -> "7.1.4"."""
    if v >= 90000:
        return "%d.%d.%d" % (v // 10000, (v % 10000) // 100, v % 100)
    return "%d.%d.%d" % (v // 1000, (v % 1000) // 100, v % 100)


_CUDNN_REQ = re.compile(
    r"^\s*(nvidia-cudnn-cu(\d+))\s*(?:\[[^\]]*\])?\s*\(?([^;)]*)\)?\s*(?:;(.*))?$", re.I
)


def cudnn_requirement(
    requires: Sequence[str], allow_extras: bool = False
) -> Tuple[Optional[str], Optional[str]]:
    """(requirement string, cuDNN major.minor.patch it implies) from Requires-Dist lines.

    "nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"" -> ("nvidia-cudnn-cu13==9.19.0.56", "9.19.0")
    "nvidia-cudnn-cu13<10.0,>=9.12.0.46; ... extra == "with-cuda"" -> (..., "9.12.0") (the lower bound)."""
    for line in requires:
        m = _CUDNN_REQ.match(line)
        if not m:
            continue
        marker = m.group(4) or ""
        if "extra" in marker and not allow_extras:
            continue
        spec = m.group(3).replace(" ", "")
        req = m.group(1).lower() + spec
        for clause in spec.split(","):
            cm = re.match(r"^(==|>=|~=|===)(\d+(?:\.\d+)*)", clause)
            if cm:
                return req, ".".join((cm.group(2).split(".") + ["0", "0"])[:3])
        return req, None
    return None, None
