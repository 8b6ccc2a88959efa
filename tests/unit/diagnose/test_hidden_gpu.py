"""Verdict 9b: GPUs the driver sees but CUDA_VISIBLE_DEVICES hides are "hidden", never "no GPU
on this CPU runtime". Detection reads the H200 machine's recorded /proc/driver/nvidia and PCI
sysfs texts (tests/data/gpu_machine/facts_h200.txt) from a fake root, as it reads a real one;
the variable takes every value that hides all GPUs (CUDA's rule: "-1", "", ids that name no
device, a UUID no GPU has)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.detection.fs import MachineFS
from fixer.detection.gpu import assemble
from fixer.detection.overrides import Overrides
from fixer.detection.runtime import detect_runtime
from fixer import recipebook
from fixer.diagnosis.findings import diagnose
from fixer.diagnosis.nogpu import no_gpu
from fixer.model import Environment, FrameworkBuild
from tests.helpers.examples import examples
from tests.helpers.fakemachine import recorded_section

TORCH = FrameworkBuild(
    framework="torch",
    distribution="torch",
    version="2.11.0+cu130",
    location="/opt/torch/.venv/lib/python3.12/site-packages/torch",
    variant="cu130",
    cuda="13.0",
    cudnn="9.19.0",
    is_cuda_build=True,
)


def _recorded_root(root: Path) -> None:
    """/proc/driver/nvidia/gpus/<bus>/information, /sys/module/nvidia/version and the PCI
    device files, each with the text recorded on the H200 machine; a docker marker."""
    info = recorded_section("proc gpus").split("\n", 1)[1]
    gpu_dir = root / "proc/driver/nvidia/gpus/0000:00:06.0"
    gpu_dir.mkdir(parents=True)
    (gpu_dir / "information").write_text(info)
    module = recorded_section("sys module").splitlines()
    (root / "sys/module/nvidia").mkdir(parents=True)
    (root / "sys/module/nvidia/version").write_text(module[0] + "\n")
    (root / "proc/driver/nvidia/version").write_text("\n".join(module[2:]) + "\n")
    pci = recorded_section("pci").split()
    fields = dict(f.split("=", 1) for f in pci[1:] if "=" in f)
    dev = root / "sys/bus/pci/devices/0000:00:06.0"
    dev.mkdir(parents=True)
    for name in ("vendor", "device", "class"):
        (dev / name).write_text(fields[name] + "\n")
    (root / ".dockerenv").write_text("")


def _environment(root: Path, cvd: str) -> Environment:
    environ = {"CUDA_VISIBLE_DEVICES": cvd}
    gpus, driver, notes = assemble(str(root), environ, Overrides(), (None, None), False, 5.0)
    runtime, rnotes = detect_runtime(MachineFS(str(root)), environ, bool(gpus))
    return Environment(
        gpus=tuple(gpus),
        driver=driver,
        runtime=runtime,
        frameworks=(TORCH,),
        env=environ,
        probes=tuple(notes + rnotes),
    )


HIDING = st.one_of(
    st.sampled_from(["-1", "", " ", "1", "7", "-1,0", "GPU-00000000", "MIG-x", "none"]),
    st.integers(min_value=1, max_value=64).map(str),
    st.from_regex(r"GPU-[0-9a-f]{8}", fullmatch=True).filter(
        lambda u: not "GPU-b8898371".startswith(u)
    ),
)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    r = tmp_path_factory.mktemp("h200")
    _recorded_root(r)
    return r


def test_the_recorded_machine_shows_its_gpu_without_the_variable(root: Path) -> None:
    env = _environment(root, "0")
    assert [g.name for g in env.gpus] == ["NVIDIA H200"]
    assert no_gpu(env, ()) is None


@settings(max_examples=examples(100))
@given(cvd=HIDING)
def test_a_gpu_hidden_by_cuda_visible_devices_is_said_to_be_hidden(root: Path, cvd: str) -> None:
    env = _environment(root, cvd)
    assert env.gpus == ()
    findings = diagnose(env, recipebook.load())
    verdict = no_gpu(env, findings)
    assert verdict is not None and verdict.exit_code == 3
    assert "CUDA_VISIBLE_DEVICES" in verdict.message
    assert "runtime" not in verdict.message and "CPU" not in verdict.message
    assert "CUDA_VISIBLE_DEVICES" in verdict.hint
    wanted = no_gpu(env, (), wanted=True)
    assert wanted is not None and "CUDA_VISIBLE_DEVICES" in wanted.message


def test_a_recorded_environment_without_the_probe_note_still_says_hidden(root: Path) -> None:
    """An environment JSON written before detection noted the variable: the driver probe's
    count and the variable are enough."""
    env = _environment(root, "-1")
    old = Environment(
        runtime=env.runtime,
        frameworks=env.frameworks,
        env=env.env,
        probes=tuple(p for p in env.probes if p.probe != "CUDA_VISIBLE_DEVICES"),
    )
    verdict = no_gpu(old, (), wanted=True)
    assert verdict is not None and "CUDA_VISIBLE_DEVICES='-1'" in verdict.message
