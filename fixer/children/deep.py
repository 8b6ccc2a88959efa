"""Runs INSIDE the target interpreter: import one framework and report what it sees, as JSON.

`python deep.py torch|jax|tensorflow|cupy`. Stdlib + the framework only, no fixer import.
Used by `doctor --deep`; the parent kills it after a timeout (a broken cuDNN can hang or crash).
"""

import json
import os
import re
import sys
import time
from typing import Optional, Sequence, Tuple  # the annotations of the rules block

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    sys.path.pop(0)


def mapped():
    out = []
    try:
        with open("/proc/self/maps") as fh:
            for line in fh:
                p = line.split()[-1] if len(line.split()) >= 6 else ""
                base = os.path.basename(p)
                if (
                    base.startswith(("libcudnn", "libcuda.", "libcudart", "libcublas", "libnvrtc"))
                    and p not in out
                ):
                    out.append(p)
    except OSError:
        pass
    return out


def v_cudnn(n):
    return None if n is None else cudnn_version_from_int(int(n))


# RULES-FOR-CHILDREN BEGIN
#: The sub-libraries of one cuDNN copy by major, without "lib" and ".so.N" (cuDNN 9 split the
#: library into graph/engine parts; cuDNN 8 into infer/train halves).
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


def cudnn_sublibraries(major: int) -> "Tuple[str, ...]":
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
    requires: "Sequence[str]", allow_extras: bool = False
) -> "Tuple[Optional[str], Optional[str]]":
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


# RULES-FOR-CHILDREN END


def torch_view(r):
    import torch

    r["version"] = torch.__version__
    r["cuda_available"] = bool(torch.cuda.is_available())
    if r["cuda_available"]:
        r["devices"] = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    try:
        r["cudnn_runtime"] = v_cudnn(torch.backends.cudnn.version())
    except Exception as exc:  # noqa: BLE001 - the message is the finding
        r["error"] = "%s: %s" % (type(exc).__name__, exc)


def jax_view(r):
    import jax

    r["version"] = jax.__version__
    try:
        devs = jax.devices()
        r["devices"] = [str(d) for d in devs]
        r["cuda_available"] = any(d.platform == "gpu" for d in devs)
    except Exception as exc:  # noqa: BLE001
        r["error"] = "%s: %s" % (type(exc).__name__, exc)
        r["cuda_available"] = False
    for mod in ("jax_cuda13_plugin._versions", "jax_cuda12_plugin._versions"):
        try:
            import importlib

            v = importlib.import_module(mod)
            r["cudnn_runtime"] = v_cudnn(v.cudnn_get_version())
            break
        except Exception:  # noqa: BLE001
            continue


def tensorflow_view(r):
    import tensorflow as tf

    r["version"] = tf.__version__
    gpus = tf.config.list_physical_devices("GPU")
    r["devices"] = [g.name for g in gpus]
    r["cuda_available"] = bool(gpus)
    r["cudnn_runtime"] = None


def cupy_view(r):
    import cupy

    r["version"] = cupy.__version__
    n = cupy.cuda.runtime.getDeviceCount()
    r["devices"] = [str(i) for i in range(n)]
    r["cuda_available"] = n > 0


VIEWS = {"torch": torch_view, "jax": jax_view, "tensorflow": tensorflow_view, "cupy": cupy_view}


def main():
    fw = sys.argv[1]
    r = {"framework": fw, "imported": False, "error": None, "devices": [], "mapped": []}
    t = time.perf_counter()
    try:
        VIEWS[fw](r)
        r["imported"] = True
    except Exception as exc:  # noqa: BLE001
        r["error"] = r.get("error") or "%s: %s" % (type(exc).__name__, exc)
        r["imported"] = "version" in r
    r["mapped"] = mapped()
    r["seconds"] = round(time.perf_counter() - t, 3)
    sys.stdout.write("\n" + json.dumps(r))


if __name__ == "__main__":
    main()
