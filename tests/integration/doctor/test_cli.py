"""`colab-cudnn-fix doctor` through fixer.cli.main, on this machine and on a fake site-packages
(real compiled stub libraries, real probe child process) with the GPU given by override."""

from __future__ import annotations

import json
import os
import sys
import types

import pytest

from fixer.cli import main
from fixer.model import ENVIRONMENT_SCHEMA, Environment, from_dict
from tests.helpers.fakemachine import FakeMachine, SITE

GPU_ENV = {
    "COLAB_CUDNN_FIX_GPU": "NVIDIA H200:9.0",
    "COLAB_CUDNN_FIX_DRIVER": "580.159.04",
    "COLAB_CUDNN_FIX_CUDA": "13.0",
}


@pytest.fixture
def clean_env(monkeypatch):
    for k in list(os.environ):
        if k.startswith(("COLAB_", "KAGGLE_", "CUDA_VISIBLE", "LD_PRELOAD")):
            monkeypatch.delenv(k, raising=False)
    return monkeypatch


@pytest.fixture
def fake_site(tmp_path, clean_env):
    """torch 2.11+cu130 with its pip cuDNN 9.19 in a site-packages dir on PYTHONPATH (root "/")."""
    m = FakeMachine(tmp_path / "m")
    m.pip_cuda_libs(13)
    m.pip_cudnn()
    m.torch()
    clean_env.setenv("PYTHONPATH", str(m.p(SITE)))
    for k, v in GPU_ENV.items():
        clean_env.setenv(k, v)
    return m


def run(capsys, *argv):
    code = main(["doctor", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_this_machine_text_and_json(capsys, clean_env):
    code, out, err = run(capsys)
    assert "Traceback" not in out + err
    code_j, out_j, _ = run(capsys, "--json")
    data = json.loads(out_j)
    assert data["schema"] == ENVIRONMENT_SCHEMA and set(data) >= {
        "environment",
        "findings",
        "healthy",
    }
    env = from_dict(Environment, data["environment"])
    assert env.python is not None and env.python.executable
    assert code == code_j == data["exit_code"]
    if not env.gpus and not any(f.is_cuda_build for f in env.frameworks):
        assert code == 0 and "Nothing to fix" in out and data["healthy"] is True


def test_healthy_fake_gpu_stack(capsys, fake_site):
    code, out, err = run(capsys)
    assert code == 0, out + err
    assert "NVIDIA H200" in out and "580.159.04 -> CUDA 13.0" in out
    assert "torch" in out and "9.19.0" in out and "DT_RPATH" in out and "Healthy" in out
    code, out, _ = run(capsys, "--json")
    data = json.loads(out)
    assert code == 0 and data["healthy"] and data["findings"] == []
    torch = [
        l
        for l in data["environment"]["loads"]
        if l["consumer"] == "torch" and l["library"] == "cudnn"
    ][0]
    assert torch["version"] == "9.19.0" and torch["path"].endswith("nvidia/cudnn/lib/libcudnn.so.9")


def test_pip_cudnn_gone_exit_1(capsys, fake_site):
    lib = fake_site.p(SITE) / "nvidia" / "cudnn" / "lib"
    os.rename(lib, str(lib) + ".hidden")
    code, out, err = run(capsys)
    assert code == 1
    assert "cudnn-" in out and "fix:" in out
    data = json.loads(run(capsys, "--json")[1])
    assert not data["healthy"] and {f["id"] for f in data["findings"]} & {
        "cudnn-missing",
        "cudnn-too-old",
    }


def test_no_gpu_visible_exit_3(capsys, fake_site):
    fake_site.p("/")  # noqa: B018
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        code, out, err = run(capsys)
    finally:
        del os.environ["CUDA_VISIBLE_DEVICES"]
    assert code == 3 and "gpu-missing" in out and "CUDA_VISIBLE_DEVICES" in out


def test_old_driver_exit_1(capsys, fake_site, clean_env):
    clean_env.setenv("COLAB_CUDNN_FIX_DRIVER", "550.54.15")
    clean_env.setenv("COLAB_CUDNN_FIX_CUDA", "12.4")
    code, out, err = run(capsys, "--json")
    ids = {f["id"] for f in json.loads(out)["findings"]}
    assert code == 1 and "driver-too-old" in ids


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--python", "/nonexistent/python3"], "no such file"),
        (["--python", "/bin/false"], "could not inspect"),
        (["--recipes", "/nonexistent-dir"], "not a directory"),
    ],
)
def test_bad_input_exit_2(capsys, clean_env, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and needle in err and "Traceback" not in out + err


def test_bad_override_exit_2(capsys, clean_env):
    clean_env.setenv("COLAB_CUDNN_FIX_DRIVER", "latest")
    code, out, err = run(capsys)
    assert code == 2 and "COLAB_CUDNN_FIX_DRIVER" in err


def test_lock_drift_findings_are_reported(capsys, clean_env, monkeypatch, tmp_path):
    from fixer.model import Finding

    mod = types.ModuleType("fixer.lockfile")
    mod.check_drift = lambda path, env: (Finding("pip-conflict", "warning", f"drift from {path}"),)
    monkeypatch.setitem(sys.modules, "fixer.lockfile", mod)
    code, out, err = run(capsys, "--json", "--lock", str(tmp_path / "x.lock"))
    data = json.loads(out)
    assert code == 1 and any("drift from" in f["title"] for f in data["findings"])


FAKE_TORCH = """
__version__ = "2.11.0+cu130"
class _Cudnn:
    @staticmethod
    def version():
        return 91900
class backends:
    cudnn = _Cudnn
class cuda:
    @staticmethod
    def is_available():
        return False
"""


def test_deep_imports_the_framework_in_a_child(capsys, fake_site):
    (fake_site.p(SITE) / "torch" / "__init__.py").write_text(FAKE_TORCH)
    code, out, err = run(capsys, "--deep", "--json")
    views = json.loads(out)["environment"]["runtime_views"]
    torch = next(v for v in views if v["framework"] == "torch")
    assert (
        torch["imported"]
        and torch["cudnn_runtime"] == "9.19.0"
        and torch["cuda_available"] is False
    )
    assert torch["version"] == "2.11.0+cu130" and torch["seconds"] is not None
