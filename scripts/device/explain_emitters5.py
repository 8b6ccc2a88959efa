"""explain (round five's non-cuDNN classes) on texts the real emitters print on the GPU machine.

Reads files and starts child processes only; changes nothing on the machine (a throw-away
directory holds two tiny wheels for pip's resolver). Three parts:

1. The CUDA runtime's and driver's own error tables, read from the loaded libcudart / libcuda with
   cudaGetErrorName/cudaGetErrorString and cuGetErrorName/cuGetErrorString, put in the forms the
   frameworks print ("RuntimeError: CUDA error: <string>" (torch), "CUDARuntimeError: <name>:
   <string>" (CuPy), "failed call to cuInit: <NAME>: <string>" (XLA)).
2. Real failures, each in a child process: no visible GPU (CUDA_VISIBLE_DEVICES=""), an
   allocation far beyond the GPU's memory, in torch, CuPy and JAX; ptxas / nvcc asked for an
   architecture the toolkit dropped (sm_30) and one no release knows (sm_999); pip's resolver
   (no index: "No matching distribution"; two local wheels whose pins conflict:
   ResolutionImpossible); ldd of the healthy pip libcusparse (must NOT read as a CUDA mix).
3. A summary: how many texts explain ranked as expected.

One line per text:  OK|MISS  <emitter>  expected=<id>  got=<id>  | <text, first 110 chars>
Expected (what the output must show): OK on every line (a MISS names a wording the catalogue does
not read as its cause; SKIP lines say an emitter is absent on this machine).
Usage (repo root, GPU machine): OUT=/tmp/out python3 scripts/device/explain_emitters5.py  (~1 min)
"""

from __future__ import annotations

import ctypes
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from fixer.explainer import explain  # noqa: E402

RESULTS: list = []
OUT = os.environ.get("OUT", "/tmp/out")


def check(emitter: str, text: str, expected: str, negative: bool = False) -> None:
    found = explain(text)
    got = found[0].id if found else "NOT-RECOGNISED"
    ok = (got != expected) if negative else (got == expected)
    mark = "OK  " if ok else "MISS"
    exp = ("not " if negative else "") + expected
    line = " ".join(text.split())[:110]
    print(f"{mark} {emitter:24} expected={exp:22} got={got:22} | {line}")
    RESULTS.append(ok)


def run(code: str, env: dict, timeout: int = 120) -> str:
    e = dict(os.environ)
    e.update(env)
    try:
        p = subprocess.run(
            [sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return ""
    return (p.stdout + "\n" + p.stderr)[-4000:]


def _lib(pattern: str) -> str:
    import site

    dirs = site.getsitepackages() + [site.getusersitepackages()]
    for d in dirs:
        hits = sorted(glob.glob(os.path.join(d, "nvidia", "**", pattern), recursive=True))
        if hits:
            return hits[0]
    return ""


# the runtime's codes the catalogue reads, and the cause each names (driver_types.h@13.0.96)
RUNTIME = {
    2: "out-of-memory",
    34: "driver-missing",
    35: "driver-too-old",
    36: "driver-too-old",
    46: "gpu-missing",
    98: "gpu-arch-unsupported",
    100: "gpu-missing",
    101: "gpu-missing",
    200: "gpu-arch-unsupported",
    209: "gpu-arch-unsupported",
    221: "driver-missing",
    222: "driver-too-old",
    300: "gpu-arch-unsupported",
    802: "driver-missing",
    803: "driver-too-old",
    804: "driver-too-old",
    999: "driver-missing",
}


def runtime_table() -> None:
    path = _lib("libcudart.so*")
    if not path:
        print("SKIP cudart: no libcudart in site-packages/nvidia")
        return
    rt = ctypes.CDLL(path)
    rt.cudaGetErrorString.restype = ctypes.c_char_p
    rt.cudaGetErrorName.restype = ctypes.c_char_p
    print(f"# cudart: {path}")
    for code, want in RUNTIME.items():
        name = rt.cudaGetErrorName(code).decode()
        text = rt.cudaGetErrorString(code).decode()
        check(f"torch cudart {code}", f"RuntimeError: CUDA error: {text}", want)
        check(f"cupy cudart {code}", f"CUDARuntimeError: {name}: {text}", want)


def driver_table() -> None:
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        print(f"SKIP libcuda: {exc}")
        return
    for code, want in RUNTIME.items():
        if code in (36, 98):  # runtime-only codes
            continue
        s, n = ctypes.c_char_p(), ctypes.c_char_p()
        if cu.cuGetErrorString(code, ctypes.byref(s)) or cu.cuGetErrorName(code, ctypes.byref(n)):
            continue
        text = f"failed call to cuInit: {n.value.decode()}: {s.value.decode()}"
        check(f"xla cuInit {code}", text, want)


def real_failures() -> None:
    no_gpu = {"CUDA_VISIBLE_DEVICES": ""}
    cases = [
        ("torch no-gpu", "import torch; torch.zeros(1).cuda()", no_gpu, "gpu-missing"),
        (
            "torch oom",
            "import torch; torch.empty(2**47, dtype=torch.uint8, device='cuda')",
            {},
            "out-of-memory",
        ),
        ("cupy no-gpu", "import cupy; cupy.zeros(1)", no_gpu, "gpu-missing"),
        ("cupy oom", "import cupy; cupy.empty(2**47, dtype='uint8')", {}, "out-of-memory"),
        (
            "jax no-gpu",
            "import jax; print(jax.devices('cuda'))",
            {**no_gpu, "JAX_PLATFORMS": "cuda"},
            "gpu-missing",
        ),
        (
            "jax oom",
            "import jax.numpy as jnp; jnp.ones((2**47,), dtype=jnp.uint8).block_until_ready()",
            {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"},
            "out-of-memory",
        ),
    ]
    for name, code, env, want in cases:
        text = run(code, env)
        if "ModuleNotFoundError" in text:
            print(f"SKIP {name}: module absent")
            continue
        check(name, text, want)


def toolkit() -> None:
    for tool in ("ptxas", "nvcc"):
        exe = shutil.which(tool) or _lib(os.path.join("bin", tool))
        if not exe:
            print(f"SKIP {tool}: not found")
            continue
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "k.ptx" if tool == "ptxas" else "k.cu")
            with open(src, "w") as f:
                f.write(
                    ".version 7.0\n.target sm_52\n.address_size 64\n" if tool == "ptxas" else ""
                )
            for arch, want in (("sm_30", "gpu-arch-unsupported"), ("sm_999", "cuda-lib-mismatch")):
                flag = ["--gpu-name", arch] if tool == "ptxas" else ["-arch=" + arch, "-c"]
                p = subprocess.run(
                    [exe, *flag, src, "-o", os.path.join(d, "o")], capture_output=True, text=True
                )
                check(f"{tool} {arch}", (p.stdout + p.stderr).strip(), want)


def _wheel(d: str, name: str, version: str, requires: str = "") -> None:
    dist = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    meta += f"Requires-Dist: {requires}\n" if requires else ""
    with zipfile.ZipFile(os.path.join(d, f"{name}-{version}-py3-none-any.whl"), "w") as z:
        z.writestr(f"{dist}/METADATA", meta)
        z.writestr(
            f"{dist}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        z.writestr(f"{dist}/RECORD", "")


def pip_resolver() -> None:
    pip = [sys.executable, "-m", "pip", "install", "--dry-run", "--no-index", "--no-cache-dir"]
    p = subprocess.run(pip + ["nvidia-cudnn-cu12==8.9.2.26"], capture_output=True, text=True)
    check("pip no-candidate", p.stdout + p.stderr, "pip-conflict")
    with tempfile.TemporaryDirectory() as d:
        _wheel(d, "xfivea", "1.0", "xfiveb==1.0")
        _wheel(d, "xfiveb", "2.0")
        p = subprocess.run(
            pip + ["--find-links", d, "xfivea==1.0", "xfiveb==2.0"], capture_output=True, text=True
        )
        check("pip resolution", p.stdout + p.stderr, "pip-conflict")


def ldd_healthy() -> None:
    lib = _lib("libcusparse.so*")
    if not lib or not shutil.which("ldd"):
        print("SKIP ldd: no pip libcusparse")
        return
    p = subprocess.run(["ldd", lib], capture_output=True, text=True)
    check("ldd healthy cusparse", f"ldd {lib}\n{p.stdout}", "cuda-lib-mismatch", negative=True)


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    for part in (runtime_table, driver_table, real_failures, toolkit, pip_resolver, ldd_healthy):
        try:
            part()
        except Exception as exc:  # noqa: BLE001 - one part's failure must not hide the others
            print(f"ERROR {part.__name__}: {exc!r}")
    print(f"# {sum(RESULTS)}/{len(RESULTS)} ranked as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
