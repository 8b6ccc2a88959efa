"""Each source's pure parse_* function on text recorded on the real H200 machine."""

from __future__ import annotations

import json

from fixer.detection.gpu import (
    filter_visible,
    parse_nvidia_smi_csv,
    parse_nvml_result,
    parse_pci_device,
    parse_proc_driver_nvidia_version,
    parse_proc_gpu_information,
    parse_sys_module_nvidia_version,
)
from fixer.detection.ldcache import LdCache, parse_ldconfig_p
from fixer.detection.libraries import parse_cudnn_version_h
from fixer.rules import cuda_version_from_int, cudnn_requirement, cudnn_version_from_int
from fixer.detection.overrides import overrides_from_env, parse_gpu_override
from fixer.detection.runtime import parse_maps_gpu_libs, parse_os_release
from fixer.errors import UsageError
from fixer.model import Gpu
from tests.helpers.fakemachine import DATA, recorded_section

PROBE = DATA / "probe_h200_cuda13.txt"  # device_probe.sh output on the H200 machine


def probe_section(name):
    return recorded_section(name, PROBE)


def test_sys_module_and_proc_version():
    text = recorded_section("sys module").splitlines()
    assert parse_sys_module_nvidia_version(text[0] + "\n") == "580.159.04"
    assert parse_proc_driver_nvidia_version("\n".join(text[2:])) == ("580.159.04", "open")
    old = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\nGCC version: gcc 12"
    assert parse_proc_driver_nvidia_version(old) == ("535.104.05", "proprietary")
    assert parse_proc_driver_nvidia_version("garbage") == (None, None)
    assert parse_sys_module_nvidia_version("not a version") is None


def test_proc_gpu_information():
    info = parse_proc_gpu_information(recorded_section("proc gpus"))
    assert info["Model"] == "NVIDIA H200"
    assert info["Bus Location"] == "0000:00:06.0"
    assert info["GPU UUID"].startswith("GPU-b8898371")


def test_nvidia_smi_csv_recorded_and_robust():
    gpus, driver = parse_nvidia_smi_csv(recorded_section("smi query"))
    assert driver == "580.159.04"
    (g,) = gpus
    assert (g.name, g.compute_capability, g.pci_device_id, g.memory_mib) == (
        "NVIDIA H200",
        "9.0",
        "0x2335",
        143771,
    )
    # with units left in, a header line, two GPUs, [N/A] fields and an error line
    text = (
        recorded_section("smi query header")
        + "1, Tesla T4, 00000000:00:07.0, 0x1EB810DE, [N/A], [N/A], 580.159.04, [N/A]\n"
        "Unable to determine the device handle for GPU 0000:00:08.0: Unknown Error\n\n"
    )
    gpus, driver = parse_nvidia_smi_csv(text)
    assert [g.index for g in gpus] == [0, 1]
    assert gpus[0].memory_mib == 143771
    assert (
        gpus[1].compute_capability is None
        and gpus[1].uuid is None
        and gpus[1].pci_device_id == "0x1eb8"
    )
    assert parse_nvidia_smi_csv("") == ([], None)


def test_nvml_result_from_recorded_values():
    # values recorded under "## nvml ctypes" and "## libcuda cuInit with CVD empty"
    rec = recorded_section("nvml ctypes")
    assert "cc 0 9 0" in rec and "cudadrv 0 13000" in rec
    data = {
        "nvml": {
            "driver": "580.159.04",
            "cuda": 13000,
            "gpus": [
                {
                    "index": 0,
                    "name": "NVIDIA H200",
                    "cc": "9.0",
                    "pci_bus_id": "00000000:00:06.0",
                    "pci_device_id": "0x233510de",
                    "memory_mib": 150754820096 // (1 << 20),
                    "uuid": "GPU-b8898371-26f0-95a0-abb2-69448be4d2dd",
                }
            ],
        },
        "cuda_driver": 13000,
    }
    gpus, driver, cuda = parse_nvml_result(json.loads(json.dumps(data)))
    assert driver == "580.159.04" and cuda == "13.0"
    assert (
        gpus[0].pci_device_id == "0x2335"
        and gpus[0].memory_mib == 143771
        and gpus[0].source == "nvml"
    )


def test_cuda_and_cudnn_version_ints():
    assert cuda_version_from_int(13000) == "13.0"
    assert cuda_version_from_int(12080) == "12.8"
    assert cudnn_version_from_int(91900) == "9.19.0"
    assert cudnn_version_from_int(8902) == "8.9.2"


def test_pci_filter():
    assert parse_pci_device("0x10de\n", "0x2335\n", "0x030200\n") == "0x2335"
    assert parse_pci_device("0x10de", "0x22a3", "0x068000") is None  # NVSwitch bridge, not a GPU
    assert parse_pci_device("0x8086", "0x1234", "0x030000") is None


def test_cuda_visible_devices():
    gpus = [Gpu(0, "A", uuid="GPU-b8898371-26f0"), Gpu(1, "B", uuid="GPU-0000aaaa")]
    assert filter_visible(gpus, None) == (gpus, None)
    vis, note = filter_visible(gpus, "")
    assert vis == [] and "empty" in note
    assert filter_visible(gpus, "1")[0] == [gpus[1]]
    assert filter_visible(gpus, "GPU-b889")[0] == [gpus[0]]
    assert filter_visible(gpus, "0,7,1")[0] == [gpus[0]]  # stops at the first invalid entry
    assert filter_visible(gpus, "-1")[0] == []


def test_ldconfig_text_recorded():
    text = probe_section("ldconfig cudnn/cuda")
    cache = LdCache(parse_ldconfig_p(text), "ldconfig -p")
    assert cache.lookup("libcudnn.so.9") == "/lib/x86_64-linux-gnu/libcudnn.so.9"
    assert cache.lookup("libcuda.so.1") == "/usr/local/nvidia/lib64/libcuda.so.1"
    assert cache.all_for("libcuda.so.1") == [
        "/usr/local/nvidia/lib64/libcuda.so.1",
        "/lib/libcuda.so.1",
    ]


def test_cudnn_header_and_requirements():
    hdr = "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 14\n#define CUDNN_PATCHLEVEL 0\n"
    assert parse_cudnn_version_h(hdr) == "9.14.0"
    assert parse_cudnn_version_h("#define CUDNN_MAJOR 9\n") is None
    torch_req = ["filelock", 'nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"']
    assert cudnn_requirement(torch_req) == ("nvidia-cudnn-cu13==9.19.0.56", "9.19.0")
    jax_req = [
        "jax-cuda13-pjrt==0.11.2",
        'nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == "linux" and extra == "with-cuda"',
    ]
    assert cudnn_requirement(jax_req) == (None, None)
    assert cudnn_requirement(jax_req, allow_extras=True) == (
        "nvidia-cudnn-cu13<10.0,>=9.12.0.46",
        "9.12.0",
    )


def test_os_release_and_maps():
    assert (
        parse_os_release('NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 24.04.3 LTS"\n')
        == "Ubuntu 24.04.3 LTS"
    )
    maps = "\n".join(
        f"7f00-7f01 r-xp 0 00:00 1 {p}"
        for p in recorded_section("maps torch conv").splitlines()[1:]
        if p.startswith("/")
    )
    libs = parse_maps_gpu_libs(maps)
    assert "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9" in libs
    assert any(p.endswith("libcuda.so.580.159.04") for p in libs)
    assert not any("libnccl" in p for p in libs)


def test_overrides_from_env():
    o = overrides_from_env(
        {
            "COLAB_CUDNN_FIX_DRIVER": "550.54.15",
            "COLAB_CUDNN_FIX_CUDA": "12.4",
            "COLAB_CUDNN_FIX_GPU": "Tesla T4:7.5,NVIDIA H200",
        }
    )
    assert o.driver_version == "550.54.15" and o.cuda_version == "12.4"
    assert [(g.name, g.compute_capability) for g in o.gpus] == [
        ("Tesla T4", "7.5"),
        ("NVIDIA H200", None),
    ]
    assert overrides_from_env({"COLAB_CUDNN_FIX_GPU": "none"}).gpus == ()
    assert overrides_from_env({}).any() is False
    for bad in (
        {"COLAB_CUDNN_FIX_DRIVER": "new"},
        {"COLAB_CUDNN_FIX_CUDA": "x"},
        {"COLAB_CUDNN_FIX_GPU": "T4:fast"},
    ):
        try:
            overrides_from_env(bad)
        except UsageError as exc:
            assert "COLAB_CUDNN_FIX" in str(exc)
        else:
            raise AssertionError(bad)
    assert parse_gpu_override("7.5")[0].compute_capability == "7.5"


def test_recorded_cudnn_headers_and_versions():
    text = recorded_section("9 cudnn header version", DATA / "breakages_h200_cuda13.txt")
    lines = text.strip().splitlines()
    assert parse_cudnn_version_h("\n".join(lines[:3])) == "9.14.0"  # apt header
    assert parse_cudnn_version_h("\n".join(lines[3:6])) == "9.19.0"  # pip header
    cuda_get = recorded_section(
        "10 cudnnGetVersion via ctypes", DATA / "breakages_h200_cuda13.txt"
    ).split()
    assert cudnn_version_from_int(int(cuda_get[0])) == "9.19.0"


def test_recorded_torch_requires():
    line = next(l for l in probe_section("torch requires").splitlines() if l.startswith("torch "))
    import ast

    reqs = ast.literal_eval(line[line.index("[") :])
    assert cudnn_requirement(reqs) == ("nvidia-cudnn-cu13==9.19.0.56", "9.19.0")
