"""explain (round eleven (a)) on texts the real emitters print on the GPU machine.

Reads files and starts child processes only; changes nothing on the machine (a throw-away
directory holds two tiny shared libraries built with cc). Parts:

1. cuBLAS's own status names, read from the loaded libcublas with cublasGetStatusName (and
   cublasGetStatusString beside it), put in torch's TORCH_CUDABLAS_CHECK form
   ("RuntimeError: CUDA error: <name> when calling `cublasSgemm( handle, ...)`"); one of them
   (INVALID_VALUE) produced for real by a cublasSgemm call with a negative size.
2. torch's strings: libtorch_cuda.so must still hold "cuFFT error: " and " when calling `".
3. torch's autocast warning in a child with no visible GPU (CUDA_VISIBLE_DEVICES=""): torch 2.10+
   prints "CUDA is not available or torch_xla is imported. Disabling autocast."
4. The c10 dispatcher: an operator registered (torch.library) with a CPU kernel only, called on a
   CUDA tensor: "Could not run 'round11a::cpu_only' with arguments from the 'CUDA' backend".
5. An extension linked against torch 1.x's split libtorch_cuda_cu.so (a stub built here, then
   removed, as a torch 2.x wheel has none): glibc's "libtorch_cuda_cu.so: cannot open shared
   object file", and torch/lib's own file list (no libtorch_cuda_cu / _cpp).

One line per text:  OK|MISS  <emitter>  expected=<id>  got=<id>  | <text, first 110 chars>
Expected (what the output must show): OK on every line; SKIP lines name an emitter absent here.
Usage (repo root, GPU machine): python3 scripts/device/explain_emitters11a.py  (~30 s)
"""

from __future__ import annotations

import ctypes
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from fixer.explainer import explain  # noqa: E402

RESULTS: list = []
CALL = "cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)"
EXPECTED = {
    1: "out-of-memory",  # NOT_INITIALIZED (the catalogue's earlier reading)
    3: "out-of-memory",  # ALLOC_FAILED
    7: "cuda-lib-mismatch",  # INVALID_VALUE
    8: "gpu-arch-unsupported",  # ARCH_MISMATCH
    13: "gpu-arch-unsupported",  # EXECUTION_FAILED
    14: "gpu-arch-unsupported",  # INTERNAL_ERROR
    15: "gpu-arch-unsupported",  # NOT_SUPPORTED
}


def check(emitter: str, text: str, expected: str) -> None:
    found = explain(text)
    got = found[0].id if found else "NOT-RECOGNISED"
    ok = got == expected
    line = " ".join(text.split())[:110]
    print(f"{'OK  ' if ok else 'MISS'} {emitter:24} expected={expected:22} got={got:22} | {line}")
    RESULTS.append(ok)


def run(code: str, env: dict, timeout: int = 120) -> str:
    e = dict(os.environ)
    e.update(env)
    p = subprocess.run(
        [sys.executable, "-c", code], env=e, capture_output=True, text=True, timeout=timeout
    )
    return p.stdout + p.stderr


def torch_lib() -> str:
    p = subprocess.run(
        [sys.executable, "-c", "import torch, os; print(os.path.dirname(torch.__file__))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = p.stdout.strip().splitlines()
    return os.path.join(lines[-1], "lib") if p.returncode == 0 and lines else ""


def cublas_part(tlib: str) -> None:
    site = os.path.dirname(os.path.dirname(tlib)) if tlib else sys.prefix
    libs = sorted(glob.glob(os.path.join(site, "nvidia", "**", "libcublas.so.*"), recursive=True))
    libs = [p for p in libs if os.path.basename(p).startswith("libcublas.so.")]
    if not libs:
        print(f"SKIP cuBLAS: no libcublas.so.* under {site}/nvidia")
        return
    lib = ctypes.CDLL(libs[0])
    print(f"# {libs[0]}")
    lib.cublasGetStatusName.restype = ctypes.c_char_p
    lib.cublasGetStatusString.restype = ctypes.c_char_p
    for code, expected in EXPECTED.items():
        name = lib.cublasGetStatusName(code).decode()
        print(f"#   {code}: {name}: {lib.cublasGetStatusString(code).decode()}")
        check(
            "TORCH_CUDABLAS_CHECK",
            f"RuntimeError: CUDA error: {name} when calling `{CALL}`",
            expected,
        )
    handle = ctypes.c_void_p()
    if lib.cublasCreate_v2(ctypes.byref(handle)) != 0:
        print("SKIP cublasSgemm: cublasCreate failed")
        return
    one = ctypes.c_float(1.0)
    status = lib.cublasSgemm_v2(
        handle, 0, 0, -1, 1, 1, ctypes.byref(one), None, 1, None, 1, ctypes.byref(one), None, 1
    )
    name = lib.cublasGetStatusName(status).decode()
    print(f"#   cublasSgemm(m=-1) returned {status} ({name})")
    check(
        "cublasSgemm(m=-1)",
        f"RuntimeError: CUDA error: {name} when calling `{CALL}`",
        "cuda-lib-mismatch",
    )
    lib.cublasDestroy_v2(handle)


def strings_part(tlib: str) -> None:
    so = os.path.join(tlib, "libtorch_cuda.so")
    if not os.path.exists(so):
        print(f"SKIP strings: no {so}")
        return
    data = open(so, "rb").read()
    for s in (
        b"cuFFT error: ",
        b" when calling `",
        b"CUFFT_INTERNAL_ERROR",
        b"cublasSgemm( handle",
    ):
        print(f"{'OK  ' if s in data else 'MISS'} libtorch_cuda.so strings  {s.decode()!r}")
        RESULTS.append(s in data)
    check("CUFFT_CHECK", "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR", "gpu-arch-unsupported")


def autocast_part() -> None:
    code = "import warnings, torch\nwarnings.simplefilter('always')\ntorch.autocast('cuda')"
    out = run(code, {"CUDA_VISIBLE_DEVICES": ""})
    line = next((x for x in out.splitlines() if "Disabling" in x), "")
    print(f"# autocast child: {out.strip()[-300:]}")
    if not line:
        print("MISS autocast: no 'Disabling' warning printed")
        RESULTS.append(False)
        return
    check("torch.autocast", line, "gpu-missing")


def dispatcher_part() -> None:
    code = (
        "import torch\n"
        "lib = torch.library.Library('round11a', 'DEF')\n"
        "lib.define('cpu_only(Tensor x) -> Tensor')\n"
        "lib.impl('cpu_only', lambda x: x.clone(), 'CPU')\n"
        "torch.ops.round11a.cpu_only(torch.ones(2, device='cuda'))\n"
    )
    out = run(code, {})
    line = next((x for x in out.splitlines() if "Could not run" in x), "")
    if not line:
        print(f"MISS dispatcher: no 'Could not run' line: {out.strip()[-300:]}")
        RESULTS.append(False)
        return
    check("c10 dispatcher", line, "pip-conflict")


def split_cuda_part(tlib: str) -> None:
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(tlib, "libtorch_cuda*")))
    print(f"# torch/lib: {names}")
    RESULTS.append(not any("_cu." in n or "_cpp." in n for n in names))
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("SKIP split libtorch_cuda_cu: no C compiler")
        return
    tmp = tempfile.mkdtemp(prefix="r11a-")
    try:
        stub = os.path.join(tmp, "stub.c")
        with open(stub, "w") as f:
            f.write("int round11a_stub(void) { return 0; }\n")
        subprocess.run(
            [cc, "-shared", "-fPIC", "-o", os.path.join(tmp, "libtorch_cuda_cu.so"), stub],
            check=True,
        )
        ext = os.path.join(tmp, "ext.c")
        with open(ext, "w") as f:
            f.write("int round11a_stub(void);\nint ext(void) { return round11a_stub(); }\n")
        so = os.path.join(tmp, "old_ext.so")
        subprocess.run(
            [
                cc,
                "-shared",
                "-fPIC",
                "-o",
                so,
                ext,
                f"-L{tmp}",
                "-ltorch_cuda_cu",
                "-Wl,--no-as-needed",
            ],
            check=True,
        )
        os.remove(os.path.join(tmp, "libtorch_cuda_cu.so"))
        out = run(f"import ctypes; ctypes.CDLL({so!r})", {})
        line = next((x for x in out.splitlines() if "libtorch_cuda_cu" in x), "")
        check("glibc (old extension)", line or out, "pip-conflict")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    tlib = torch_lib()
    print(f"# torch lib: {tlib or 'torch not importable'}")
    cublas_part(tlib)
    if tlib:
        strings_part(tlib)
        autocast_part()
        dispatcher_part()
        split_cuda_part(tlib)
    print(f"# {sum(RESULTS)}/{len(RESULTS)} as expected")
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
