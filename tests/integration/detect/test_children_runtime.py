"""Risky loads happen in child processes: a library that crashes or hangs its loader must not take
detection down. Runtime kind from the environment and files."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from fixer.detection.python_env import python_script
from fixer.detection.fs import MachineFS
from fixer.detection.runtime import detect_runtime
from fixer.model import Environment, from_dict, to_dict
from tests.helpers.stublibs import build_cudnn_copy, build_stub

CRASH = "#include <stdlib.h>\n__attribute__((constructor)) static void boom(void) { abort(); }\n"
HANG = "#include <unistd.h>\n__attribute__((constructor)) static void nap(void) { sleep(30); }\n"


def test_native_gpu_probe_answers_without_a_gpu():
    out = subprocess.run(
        [sys.executable, "-I", "-S", "fixer/children/native.py", "gpu"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    data = json.loads(out.stdout)
    assert set(data) >= {"nvml", "nvml_error", "cuda_driver", "cuda_error"}


def test_cudnn_probe_reads_versions_and_survives_crash_and_hang(tmp_path):
    good = build_cudnn_copy(tmp_path / "good", "9.14.0") / "libcudnn.so.9"
    data, err = python_script(
        sys.executable, "native.py", ["cudnn", str(good), str(tmp_path / "nope.so")], timeout=20
    ).result()
    assert data[str(good)] == {"version": 91400} and "error" in data[str(tmp_path / "nope.so")]
    crash = build_stub(
        tmp_path / "crash" / "libcudnn.so.9", exports={"cudnnGetVersion": 91900}, extra_source=CRASH
    )
    data, err = python_script(
        sys.executable, "native.py", ["cudnn", str(crash)], timeout=20
    ).result()
    assert data is None and "signal" in err
    hang = build_stub(
        tmp_path / "hang" / "libcudnn.so.9", exports={"cudnnGetVersion": 91900}, extra_source=HANG
    )
    t = time.monotonic()
    data, err = python_script(sys.executable, "native.py", ["cudnn", str(hang)], timeout=1).result()
    assert data is None and "no answer within 1 s" in err and time.monotonic() - t < 10


def test_detect_notes_a_crashing_copy_and_goes_on(machine):
    machine.h200(jax=False)
    build_stub(
        machine.p("/opt/crash/libcudnn.so.9"),
        exports={"cudnnGetVersion": 91900},
        extra_source=CRASH,
    )
    machine.environ["LD_LIBRARY_PATH"] = "/opt/crash"
    env = machine.detect()
    crash = next(c for c in env.libraries if c.directory == "/opt/crash")
    assert crash.version is None
    assert any(p.probe == "cudnnGetVersion" and not p.ok for p in env.probes)
    assert env.framework("torch").cudnn == "9.19.0"


def test_environment_json_round_trip(machine):
    env = machine.h200().detect()
    back = from_dict(Environment, json.loads(json.dumps(to_dict(env))))
    assert back == env


def test_runtime_kinds(tmp_path):
    fs = MachineFS(str(tmp_path))
    rt, _ = detect_runtime(
        fs, {"COLAB_RELEASE_TAG": "release-colab_20261101-060225_RC00", "COLAB_GPU": "1"}, True
    )
    assert (rt.kind, rt.accelerator, rt.image) == (
        "colab",
        "gpu",
        "release-colab_20261101-060225_RC00",
    )
    rt, _ = detect_runtime(fs, {"COLAB_RELEASE_TAG": "x", "COLAB_TPU_ADDR": "10.0.0.2:8470"}, False)
    assert rt.accelerator == "tpu"
    rt, _ = detect_runtime(
        fs, {"KAGGLE_KERNEL_RUN_TYPE": "Interactive", "KAGGLE_KEY": "secret"}, False
    )
    assert (rt.kind, rt.accelerator) == ("kaggle", "cpu")
    rt, _ = detect_runtime(fs, {"COLAB_CUDNN_FIX_DRIVER": "580.65.06"}, False)
    assert rt.kind == "linux"  # our own override variables are not Colab's
    (tmp_path / ".dockerenv").write_text("")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text('PRETTY_NAME="Ubuntu 24.04.3 LTS"\n')
    rt, _ = detect_runtime(MachineFS(str(tmp_path)), {}, True)
    assert (rt.kind, rt.accelerator, rt.os_name) == ("docker", "gpu", "Ubuntu 24.04.3 LTS")


def test_secrets_are_not_recorded(machine):
    machine.environ.update(
        {"KAGGLE_KEY": "s3cret", "KAGGLE_URL_BASE": "https://kaggle", "COLAB_GPU": "1"}
    )
    env = machine.detect()
    assert "KAGGLE_KEY" not in env.env and env.env["COLAB_GPU"] == "1"
