"""--cudnn-from conda on Colab: condacolab's prefix, one spec per cuDNN major, the
loader pointed at the conda copy; --installer conda refuses what conda cannot install."""

from __future__ import annotations

import json


from fixer.cli import main


def _plan(capsys, *argv):
    code = main(["plan", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_tf215_from_conda_keeps_torchs_pip_cudnn9_and_adds_cudnn8_under_usr_local(capsys):
    code, out, _ = _plan(
        capsys, "--environment", "colab-2025-01-tf215", "--cudnn-from", "conda", "--json"
    )
    assert code == 0
    plan = json.loads(out)["plan"]
    steps = plan["steps"]
    # torch's pip cuDNN 9 stays: nothing removes or changes nvidia-cudnn-cu12
    assert not [s for s in steps if s["kind"] == "pip-uninstall"]
    assert plan["stack"]["cudnn_copies"]["9"]["package"]["name"] == "nvidia-cudnn-cu12"
    # cuDNN 8 for TensorFlow from conda-forge, into condacolab's /usr/local, after condacolab
    kinds = [s["kind"] for s in steps]
    condacolab = [i for i, s in enumerate(steps) if s["packages"] == ["condacolab"]]
    assert [kinds[i] for i in condacolab] == ["pip-install", "conda-install"]
    conda = [s for s in steps if s["kind"] == "conda-install" and s["packages"] != ["condacolab"]]
    assert len(conda) == 1 and conda[0]["argv"][-4:-1] == ["-p", "/usr/local", "--"]
    (spec,) = conda[0]["packages"]
    assert spec.startswith("cudnn==8.")
    assert plan["stack"]["conda"] == {"cudnn": spec.split("==")[1]}
    assert max(condacolab) < steps.index(conda[0])
    # the loader finds it: /usr/local/lib in ld.so.conf.d (+ ldconfig), preloaded in new kernels
    fixes = {(f["kind"], f["value"]) for f in plan["stack"]["env_fixes"]}
    assert ("ld-so-conf", "/usr/local/lib") in fixes
    assert ("ipython-preload", "/usr/local/lib/libcudnn.so.8") in fixes
    # simulated healthy
    sim = plan["simulation"]
    assert sim.get("healthy") is True, sim


def test_installer_conda_refuses_pip_framework_installs_with_exit_2(capsys):
    code, out, err = _plan(
        capsys, "--environment", "colab-2026-08", "--installer", "conda", "--torch", "2.5.1"
    )
    assert code == 2
    text = out + err
    assert "--installer conda" in text and "conda-forge" in text and "Traceback" not in text


def test_installer_conda_alone_takes_cudnn_from_conda(capsys):
    code, out, _ = _plan(
        capsys, "--environment", "colab-2025-01-tf215", "--installer", "conda", "--json"
    )
    assert code == 0
    plan = json.loads(out)["plan"]
    assert plan["stack"]["conda"] and not [s for s in plan["steps"] if s["kind"] == "apt-install"]
