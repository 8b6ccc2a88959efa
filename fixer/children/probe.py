"""Runs INSIDE the target interpreter (`python probe.py`): what it has installed, as JSON.

Stdlib only, no fixer import, Python 3.6+ syntax: the target may be any interpreter on the
machine (`--python PATH`). It reads dist-info directory names on sys.path (fast: ~200
distributions in a few ms; `pip list` takes 0.65 s on the GPU machine) and the METADATA
headers of the GPU-relevant distributions only (their Requires-Dist pins are evidence).
"""

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and os.path.abspath(sys.path[0] or ".") == HERE:
    sys.path.pop(0)  # don't let this directory's modules shadow anything

RELEVANT = re.compile(
    r"^(torch|torchvision|torchaudio|triton|xformers|tensorflow.*|tf-keras|tf-nightly.*|jax|jaxlib|jax-cuda.*"
    r"|nvidia-.*|cupy.*|onnxruntime.*|ctranslate2|paddlepaddle.*|cuda-.*|flash-attn|pip)$"
)


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def headers(path):
    """The header block of a METADATA/PKG-INFO file (stops at the first blank line)."""
    out: dict = {}
    last = None
    with open(path, "rb") as fh:
        for raw in fh:
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if not line:
                break
            if line[0] in " \t" and last:
                continue
            if ":" not in line:
                raise ValueError("not a metadata header line: %r" % line[:80])
            k, v = line.split(":", 1)
            last = k
            out.setdefault(k.strip().lower(), []).append(v.strip())
    return out


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def read_metadata(rec, path, meta_name, errors):
    """Fill `rec` from the distribution's metadata: its real name and version, requirements,
    installer, and whether it is an editable install (PEP 610 direct_url.json)."""
    meta = os.path.join(path, meta_name) if os.path.isdir(path) else path
    try:
        h = headers(meta)
        if h.get("name"):
            rec["name"] = canonical(h["name"][0])
        if h.get("version"):
            rec["version"] = h["version"][0]
        rec["requires"] = h.get("requires-dist", [])
    except (OSError, ValueError) as exc:
        errors.append("%s: unreadable metadata (%s)" % (path, exc))
    rec["installer"] = read_text(os.path.join(path, "INSTALLER"))
    du = read_text(os.path.join(path, "direct_url.json"))
    if du:
        try:
            rec["editable"] = bool(json.loads(du).get("dir_info", {}).get("editable"))
        except ValueError:
            pass


def scan(entry, seen, dists, errors):
    try:
        names = sorted(os.listdir(entry))
    except OSError:
        return
    for d in names:
        if d.endswith(".dist-info"):
            base, meta_name = d[:-10], "METADATA"
        elif d.endswith(".egg-info"):
            base, meta_name = d[:-9], "PKG-INFO"
        else:
            continue
        parts = base.split("-")
        name, version = parts[0], (parts[1] if len(parts) > 1 else None)
        key = canonical(name)
        if key in seen:
            continue
        path = os.path.join(entry, d)
        rec = {
            "name": key,
            "version": version,
            "location": entry,
            "installer": None,
            "requires": [],
            "editable": False,
        }
        if RELEVANT.match(key) or version is None:
            read_metadata(rec, path, meta_name, errors)
            key = rec["name"]
            if version and rec["version"] != version:
                # the folder's name says another version than METADATA: uv reads the installed
                # version from the name, pip from METADATA (fixer.system.versions.NAMED_VERSION)
                rec["named_version"] = version
        if not rec["version"]:
            errors.append("%s: no version in its name or metadata; skipped" % path)
            continue
        if key in seen:
            continue
        seen.add(key)
        dists.append(rec)


def which(name, extra_dirs, environ=None):
    for d in list(extra_dirs) + (os.environ if environ is None else environ).get("PATH", "").split(
        os.pathsep
    ):
        p = os.path.join(d, name)
        if d and os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def markers():
    import platform

    return {
        "os_name": os.name,
        "sys_platform": sys.platform,
        "platform_machine": platform.machine(),
        "platform_system": platform.system(),
        "platform_release": platform.release(),
        "python_version": "%d.%d" % sys.version_info[:2],
        "python_full_version": platform.python_version(),
        "implementation_name": sys.implementation.name,
        "platform_python_implementation": platform.python_implementation(),
    }


def collect(environ=None) -> dict:
    """Everything the probe reports, as a dict. `environ` (default os.environ) is where uv and
    conda are looked for. fixer.detection calls this in-process when the target is the running
    interpreter; `main` prints it as JSON when run inside another one."""
    if environ is None:
        environ = os.environ
    dists: list = []
    errors: list = []
    seen: set = set()
    site_dirs = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        if entry.endswith(("site-packages", "dist-packages")) and entry not in site_dirs:
            site_dirs.append(entry)
        scan(entry, seen, dists, errors)
    pip = next((d["version"] for d in dists if d["name"] == "pip"), None)
    bindir = os.path.dirname(sys.executable)
    base_prefix = getattr(sys, "base_prefix", sys.prefix)
    is_venv = sys.prefix != base_prefix
    em = False
    if not is_venv:  # PEP 668: a virtual environment is never externally managed
        try:
            import sysconfig

            em = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
        except Exception:  # noqa
            pass
    out = {
        "executable": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "prefix": sys.prefix,
        "base_prefix": base_prefix,
        "is_venv": is_venv,
        "site_packages": site_dirs,
        "sys_path": [p for p in sys.path if p],
        "distributions": dists,
        "pip": pip,
        "uv": which("uv", [bindir], environ),
        "conda": environ.get("CONDA_EXE")
        or which("conda", [], environ)
        or which("mamba", [], environ)
        or which("micromamba", [], environ),
        "externally_managed": em,
        "markers": markers(),
        "errors": errors,
    }
    return out


def main():
    sys.stdout.write(json.dumps(collect()))


if __name__ == "__main__":
    main()
