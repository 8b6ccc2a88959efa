"""Rules on hand-built Environments (pure: no machine), for the cases a fake tree can't reach easily."""

from __future__ import annotations

from fixer.diagnosis.findings import diagnose, is_healthy
from fixer.model import (
    Distribution,
    Driver,
    Environment,
    FrameworkBuild,
    Gpu,
    LibFile,
    LibraryCopy,
    LoadResolution,
    PythonEnv,
    Runtime,
)
from tests.helpers.fakemachine import small_recipes

H200 = Gpu(0, "NVIDIA H200", pci_device_id="0x2335", compute_capability="9.0")
DRV = Driver(version="580.159.04", cuda_version="13.0")
TORCH = FrameworkBuild(
    "torch",
    "torch",
    "2.11.0+cu130",
    variant="cu130",
    cuda="13.0",
    cudnn="9.19.0",
    cudnn_requirement="nvidia-cudnn-cu13==9.19.0.56",
    is_cuda_build=True,
)
TF = FrameworkBuild(
    "tensorflow",
    "tensorflow",
    "2.21.0",
    variant="cuda12",
    cuda="12.5",
    cudnn="9.3.0",
    is_cuda_build=True,
)


def copy(d, v, **kw):
    return LibraryCopy(
        "cudnn",
        9,
        v,
        d,
        origin=kw.pop("origin", "pip"),
        files=(LibFile("libcudnn.so.9", version=v),),
        **kw,
    )


def res(consumer, path, v, via="DT_RPATH", library="cudnn", soname="libcudnn.so.9"):
    return LoadResolution(
        consumer,
        library,
        soname,
        path,
        directory=path.rsplit("/", 1)[0] if path else None,
        version=v,
        via=via,
    )


def env(**kw):
    base = dict(gpus=(H200,), driver=DRV, runtime=Runtime(kind="linux", accelerator="gpu"))
    base.update(kw)
    return Environment(**base)


def test_frameworks_loading_different_copies_conflict():
    e = env(
        frameworks=(TORCH, TF),
        libraries=(
            copy("/sp/nvidia/cudnn/lib", "9.19.0"),
            copy("/usr/lib/x86_64-linux-gnu", "9.3.0", origin="apt"),
        ),
        loads=(
            res("torch", "/sp/nvidia/cudnn/lib/libcudnn.so.9", "9.19.0"),
            res(
                "tensorflow", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "9.3.0", via="ld.so.cache"
            ),
        ),
    )
    f = [x for x in diagnose(e, small_recipes()) if x.id == "cudnn-conflict"]
    assert f and f[0].severity == "warning"
    assert any("TensorFlow loads first, PyTorch gets cuDNN 9.3.0" in line for line in f[0].evidence)


def test_major_mismatch_and_missing():
    tf8 = FrameworkBuild(
        "tensorflow", "tensorflow", "2.14.0", cuda="11.8", cudnn="8.6.0", is_cuda_build=True
    )
    e = env(
        frameworks=(tf8, TORCH),
        loads=(
            res("tensorflow", "/x/libcudnn.so.8", "9.1.0", soname="libcudnn.so.8"),
            LoadResolution(
                "torch", "cudnn", "libcudnn.so.9", None, error="libcudnn.so.9: not found"
            ),
        ),
    )
    ids = {x.id for x in diagnose(e, small_recipes())}
    assert {"cudnn-major-mismatch", "cudnn-missing"} <= ids


def test_cuda_lib_missing():
    e = env(
        frameworks=(TORCH,),
        libraries=(copy("/sp/nvidia/cudnn/lib", "9.19.0"),),
        loads=(
            res("torch", "/sp/nvidia/cudnn/lib/libcudnn.so.9", "9.19.0"),
            LoadResolution(
                "torch", "cudart", "libcudart.so.13", None, error="libcudart.so.13: not found"
            ),
        ),
    )
    f = [x for x in diagnose(e, small_recipes()) if x.id == "cuda-lib-missing"]
    assert f and "libcudart.so.13" in f[0].title


def _pyenv(*dists):
    return PythonEnv(
        "/usr/bin/python3",
        "3.12.3",
        distributions=dists,
        markers={
            "platform_system": "Linux",
            "sys_platform": "linux",
            "python_version": "3.12",
            "platform_machine": "x86_64",
            "os_name": "posix",
            "implementation_name": "cpython",
            "python_full_version": "3.12.3",
            "platform_python_implementation": "CPython",
            "platform_release": "6",
        },
    )


def test_pip_conflict_newer_cudnn_is_only_info_older_is_warning():
    torch_dist = Distribution(
        "torch",
        "2.11.0",
        requires=(
            'nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"',
            'triton==3.6.0; platform_system == "Windows"',
        ),
    )
    newer = env(python=_pyenv(torch_dist, Distribution("nvidia-cudnn-cu13", "9.20.0.48")))
    f = [x for x in diagnose(newer, small_recipes()) if x.id == "pip-conflict"]
    assert [x.severity for x in f] == ["info"] and is_healthy(f)
    older = env(python=_pyenv(torch_dist, Distribution("nvidia-cudnn-cu13", "9.14.0.64")))
    f = [x for x in diagnose(older, small_recipes()) if x.id == "pip-conflict"]
    assert [x.severity for x in f] == ["warning"] and "9.14.0.64" in f[0].title
    missing = env(python=_pyenv(torch_dist))
    assert any(
        x.id == "pip-conflict" and "not installed" in x.title
        for x in diagnose(missing, small_recipes())
    )


def test_sorted_by_severity_and_info_keeps_healthy():
    e = env(
        frameworks=(TORCH,),
        libraries=(
            copy("/sp/nvidia/cudnn/lib", "9.19.0"),
            copy("/opt/old", "9.14.0", origin="system", missing=("libcudnn_cnn.so.9",)),
        ),
        loads=(res("torch", "/sp/nvidia/cudnn/lib/libcudnn.so.9", "9.19.0"),),
    )
    f = diagnose(e, small_recipes())
    assert [x.severity for x in f] == ["info"] and is_healthy(f)
    e2 = env(
        gpus=(),
        frameworks=(TORCH,),
        env={"CUDA_VISIBLE_DEVICES": ""},
        libraries=(copy("/opt/old", "9.14.0", missing=("libcudnn_cnn.so.9",)),),
        loads=(res("torch", "/opt/old/libcudnn.so.9", "9.14.0"),),
    )
    sev = [x.severity for x in diagnose(e2, small_recipes())]
    assert sev == sorted(sev, key=["error", "warning", "info"].index)


def test_gpu_from_pci_gets_compute_capability_from_recipes():
    p100 = Gpu(0, "NVIDIA GPU (PCI device 0x15f8)", pci_device_id="0x15f8", source="sysfs-pci")
    e = env(
        gpus=(p100,),
        frameworks=(TORCH,),
        loads=(res("torch", "/sp/nvidia/cudnn/lib/libcudnn.so.9", "9.19.0"),),
        libraries=(copy("/sp/nvidia/cudnn/lib", "9.19.0"),),
    )
    f = [x for x in diagnose(e, small_recipes()) if x.id == "gpu-arch-unsupported"]
    assert f and "Tesla P100" in f[0].title and "cu126" in " ".join(x.fix for x in f)


def test_documented_gpu_floor_without_kernel_list():
    import dataclasses
    from fixer.model import Build

    jax = FrameworkBuild(
        "jax",
        "jax-cuda12-plugin",
        "0.10.2",
        variant="cuda12",
        cuda="12",
        cudnn="9.8.0",
        is_cuda_build=True,
    )
    recipes = dataclasses.replace(
        small_recipes(),
        builds=small_recipes().builds
        + (Build("jax", "0.10.2", "cuda12", "12.1", "9.8.0", min_compute_capability="5.2"),),
    )
    k80 = Gpu(0, "Tesla K80", compute_capability="3.7")
    f = [
        x
        for x in diagnose(env(gpus=(k80,), frameworks=(jax,)), recipes)
        if x.id == "gpu-arch-unsupported"
    ]
    assert f and "5.2" in f[0].title
    assert not [
        x for x in diagnose(env(frameworks=(jax,)), recipes) if x.id == "gpu-arch-unsupported"
    ]
