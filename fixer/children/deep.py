"""Runs INSIDE the target interpreter: import one framework and report what it sees, as JSON.

`python deep.py torch|jax|tensorflow|cupy`. Stdlib + the framework only, no fixer import.
Used by `doctor --deep`; the parent kills it after a timeout (a broken cuDNN can hang or crash).
"""

import json
import os
import sys
import time

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


def _load_childrules():
    """fixer/children/childrules.py, the rules shared with the package, loaded by path (this
    script runs in a foreign interpreter and cannot import the package)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "childrules.py")
    spec = importlib.util.spec_from_file_location("_colab_cudnn_fix_childrules", path)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load " + path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_rules = _load_childrules()
CUDNN_SUBLIBRARIES = _rules.CUDNN_SUBLIBRARIES
cudnn_sublibraries = _rules.cudnn_sublibraries
cudnn_version_from_int = _rules.cudnn_version_from_int
cudnn_requirement = _rules.cudnn_requirement


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
