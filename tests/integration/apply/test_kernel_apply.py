"""fixer.apply() inside a REAL Jupyter kernel (jupyter_client + ipykernel) fixes that kernel in place.

The kernel's interpreter is a venv holding torch (a stand-in whose libtorch_cuda.so has the real
NEEDED/RPATH layout), its pip cuDNN 9.19 and CUDA runtime, installed with uv from an index on
127.0.0.1; the libraries are stubs compiled by the test. The kernel starts with LD_LIBRARY_PATH
putting a wrong copy first (an apt-style cuDNN 9.14 folder: its sub-libraries would be picked up by
the pip libcudnn.so.9, the breakage seen on the GPU machine). Only the GPU and driver are the edge
(COLAB_CUDNN_FIX_* overrides). All files land in a --root sandbox.

1. Nothing loaded yet: `fixer.apply()` in a cell applies the loader fix to the kernel itself. In the
   same kernel, a later dlopen by soname (what cuDNN does for its sub-libraries) gets the pip copy,
   /proc/self/maps holds no other copy, and r.to_dict() says "fixed in this kernel", not "nothing to do".
2. The wrong copy already mapped (as after a framework import): the verdict is "fixed for new
   processes" with the restart to do; a second apply() finds the machine fixed but this kernel still
   stale ("restart-needed"), and restart=True ends the kernel (its manager starts a fresh one).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.kernels import run_cell, see_this_environment, validate_apply
from tests.helpers.pyindex import PackageIndex, cuda_runtime_wheel, cudnn_wheel, torch_wheel
from tests.helpers.stublibs import build_cudnn_copy, cc

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
jsonschema = pytest.importorskip("jsonschema")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(cc() is None, reason="no C compiler to build the stub libraries"),
]

TORCH, CUDNN = "2.11.0+cu130", "9.19.0.56"
OVERRIDES = {
    "COLAB_CUDNN_FIX_GPU": "NVIDIA H200:9.0",
    "COLAB_CUDNN_FIX_DRIVER": "580.159.04",
    "COLAB_CUDNN_FIX_CUDA": "13.0",
}

#: runs in the kernel: what the process maps and what a dlopen by soname gets, after the cell's apply
PROBE = """
import ctypes, json, os
ops = ctypes.CDLL("libcudnn_ops.so.9")          # by soname, as libcudnn.so.9 loads its sub-libraries
ops.cudnnGetVersion.restype = ctypes.c_size_t
maps = sorted({l.split(None, 5)[5].strip() for l in open("/proc/self/maps") if "libcudnn" in l})
print("PROBE", json.dumps({"payload": r.to_dict(), "verdict": r.verdict, "ops_version": ops.cudnnGetVersion(),
                           "maps": maps, "ld": os.environ.get("LD_LIBRARY_PATH")}))
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """A venv with torch + pip cuDNN 9.19 (the kernel's interpreter; it sees this test
    environment's fixer and ipykernel through a .pth), and an apt-style cuDNN 9.14 folder."""
    from tests.integration.apply.conftest import _make_venv

    d = tmp_path_factory.mktemp("kernel-apply")
    wheels = [
        torch_wheel(
            d / "wheels",
            TORCH,
            native=True,
            requires=[f"nvidia-cudnn-cu13=={CUDNN}", "nvidia-cuda-runtime==13.0.96"],
        ),
        cuda_runtime_wheel(d / "wheels"),
        cudnn_wheel(d / "wheels", CUDNN),
    ]
    venv = _make_venv(d / "root" / "venv", False)  # inside the --root sandbox, as --root requires
    with PackageIndex(d / "index") as ix:
        ix.add(*wheels)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
        env.update(UV_NO_CONFIG="1", UV_CACHE_DIR=str(d / "uv-cache"))
        subprocess.run(
            [
                str(Path(sys.executable).parent / "uv"),
                "pip",
                "install",
                "--python",
                str(venv / "bin" / "python"),
                "--no-deps",
                "--index-url",
                ix.url,
                f"torch=={TORCH}",
                "nvidia-cuda-runtime==13.0.96",
                f"nvidia-cudnn-cu13=={CUDNN}",
            ],
            check=True,
            capture_output=True,
            timeout=300,
            env=env,
        )
    (sp,) = list((venv / "lib").glob("python3*/site-packages"))
    see_this_environment(sp)
    apt = build_cudnn_copy(d / "apt" / "lib", "9.14.0", versioned_files=True)
    return {
        "python": venv / "bin" / "python",
        "pip_cudnn": sp / "nvidia" / "cudnn" / "lib",
        "apt": apt,
        "tmp": d,
        "root": d / "root",
    }


@pytest.fixture
def kernel(world, tmp_path, monkeypatch):
    """A kernel on the venv's interpreter, started with the wrong copy first on LD_LIBRARY_PATH;
    yields (manager, client, --root sandbox)."""
    spec = tmp_path / "jupyter" / "kernels" / "ccf"
    spec.mkdir(parents=True)
    (tmp_path / "home").mkdir()
    sandbox = world["root"]  # each test starts from a sandbox that holds only the venv
    for entry in sandbox.iterdir():
        if entry.name != "venv":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [
                    str(world["python"]),
                    "-m",
                    "ipykernel_launcher",
                    "-f",
                    "{connection_file}",
                ],
                "display_name": "ccf",
                "language": "python",
                "env": {
                    "LD_LIBRARY_PATH": str(world["apt"]),
                    "HOME": str(tmp_path / "home"),
                    **OVERRIDES,
                },
            }
        )
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    km = jupyter_client.KernelManager(kernel_name="ccf")
    km.start_kernel(cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        yield km, kc, sandbox
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _probe(out: str) -> dict:
    return json.loads(out.split("PROBE ", 1)[1].splitlines()[0])


def test_apply_in_a_kernel_that_loaded_nothing_fixes_the_kernel_itself(world, kernel):
    _km, kc, sandbox = kernel
    res = _probe(run_cell(kc, f"import fixer\nr = fixer.apply(root={str(sandbox)!r})\n" + PROBE))
    payload = res["payload"]
    validate_apply(payload)
    assert payload["outcome"] == "applied" and payload["exit_code"] == 0, payload
    assert any(
        f["kind"] == "ld-library-path-drop" and f["value"] == str(world["apt"])
        for f in payload["plan"]["stack"]["env_fixes"]
    )
    # the verdict, and the invariant seen on the GPU machine: an in-process fix is not "nothing to do"
    assert res["verdict"] == payload["restart"]["verdict"] == "fixed in this kernel"
    assert payload["nothing_to_do"] is False and payload["restart"]["needed"] is False
    assert payload["restart"]["this_process"] is True and payload["restart"]["todo"] is None
    pip_dir = os.path.realpath(world["pip_cudnn"])
    assert any(p.endswith("/libcudnn_ops.so.9") for p in payload["restart"]["process"]["loaded"])
    # in the same kernel: the soname resolves to the pip copy and nothing of the apt copy is mapped
    assert res["ops_version"] == 91900
    assert res["maps"] and {os.path.dirname(os.path.realpath(m)) for m in res["maps"]} == {pip_dir}
    # child processes (`!` cells) get LD_LIBRARY_PATH without the wrong folder
    assert str(world["apt"]) not in (res["ld"] or "")


def test_apply_in_a_kernel_that_mapped_the_wrong_copy_says_restart_and_restart_does_it(kernel):
    km, kc, sandbox = kernel
    out = run_cell(
        kc,
        textwrap.dedent(f"""
        import ctypes
        ctypes.CDLL("libcudnn_ops.so.9")        # as a framework import would: the apt 9.14 copy, first on the path
        import fixer
        r = fixer.apply(root={str(sandbox)!r})
    """)
        + PROBE,
    )
    res = _probe(out)
    payload = res["payload"]
    validate_apply(payload)
    assert payload["outcome"] == "applied" and payload["nothing_to_do"] is False
    info = payload["restart"]
    assert res["verdict"] == info["verdict"] == "fixed for new processes"
    assert info["needed"] is True and info["do"] is False and info["this_process"] is True
    assert info["todo"].startswith("restart the runtime") and "restart=True" in info["todo"]
    assert any(
        c[0].endswith("libcudnn_ops.so.9") and "/apt/lib/" in c[1]
        for c in info["process"]["conflicts"]
    )
    assert res["ops_version"] == 91400  # honest: this kernel still has the 9.14 sub-library
    # again: the machine needs nothing now, this kernel still maps the wrong copy
    out = run_cell(kc, f"import fixer\nr = fixer.apply(root={str(sandbox)!r})\n" + PROBE)
    again = _probe(out)["payload"]
    validate_apply(again)
    assert (
        again["outcome"] == "restart-needed"
        and again["nothing_to_do"] is False
        and again["exit_code"] == 1
    )
    assert (
        again["restart"]["verdict"] == "fixed for new processes"
        and again["restart"]["process"]["stray"]
    )
    # restart=True ends the kernel (its manager starts a fresh one, as Colab's does)
    kc.execute(f"import fixer\nfixer.apply(root={str(sandbox)!r}, restart=True)\n")
    deadline = time.monotonic() + 60
    while km.is_alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not km.is_alive(), "restart=True did not end the kernel"
