"""The GPU machine's real breakages, replayed on a fake machine tree with compiled stub libraries:
detection must name the copy that loads and its version, and diagnosis the cause."""

from __future__ import annotations

import os

import pytest

from fixer.detection import Overrides
from fixer import model as m
from fixer.diagnosis.findings import diagnose, is_healthy
from tests.helpers.fakemachine import MULTIARCH, SITE, small_recipes
from tests.helpers.stublibs import build_cudnn_copy

PIP_CUDNN = f"{SITE}/nvidia/cudnn/lib"


def load(env, consumer, library="cudnn"):
    return next(r for r in env.loads if r.consumer == consumer and r.library == library)


def ids(findings, severities=("error", "warning")):
    return sorted({f.id for f in findings if f.severity in severities})


def test_healthy_pip_wins_over_apt(machine):
    env = machine.h200().detect()
    torch = load(env, "torch")
    assert (torch.path, torch.version, torch.via) == (
        f"{PIP_CUDNN}/libcudnn.so.9",
        "9.19.0",
        "DT_RPATH",
    )
    assert any(s.startswith(f"{MULTIARCH}/libcudnn.so.9") for s in torch.shadowed)
    jax = load(env, "jax")
    assert (jax.path, jax.via) == (f"{PIP_CUDNN}/libcudnn.so.9", "preload")
    copies = {c.directory: c for c in env.libraries if c.library == "cudnn"}
    assert (
        copies[PIP_CUDNN].origin == "pip"
        and str(copies[PIP_CUDNN].package) == "nvidia-cudnn-cu13 9.19.0.56"
    )
    apt = copies[MULTIARCH]
    assert (apt.origin, apt.version, apt.package) == (
        "apt",
        "9.14.0",
        m.Package("libcudnn9-cuda-13", "9.14.0.64-1"),
    )
    assert env.gpus[0].name == "NVIDIA H200" and env.driver.version == "580.159.04"
    findings = diagnose(env, small_recipes())
    assert is_healthy(findings), findings


def test_pip_cudnn_hidden_torch_falls_to_apt(machine):
    machine.h200()
    os.rename(machine.p(PIP_CUDNN), machine.p(PIP_CUDNN + ".hidden"))
    env = machine.detect()
    torch = load(env, "torch")
    assert torch.path.endswith("x86_64-linux-gnu/libcudnn.so.9") and torch.via == "ld.so.cache"
    assert torch.version == "9.14.0"
    jax = load(env, "jax")
    assert jax.version == "9.14.0"
    findings = diagnose(env, small_recipes())
    too_old = [f for f in findings if f.id == "cudnn-too-old"]
    assert [f.frameworks for f in too_old] == [("torch",)]
    assert "9.19" in too_old[0].title and "9.14.0" in too_old[0].title
    assert "nvidia-cudnn-cu13==9.19.0.56" in too_old[0].fix
    gone = [f for f in findings if f.id == "cudnn-incomplete"]
    assert gone and "nvidia-cudnn-cu13 9.19.0.56" in gone[0].title


def test_engines_precompiled_missing(machine):
    env = machine.h200(skip=["libcudnn_engines_precompiled.so.9", "libcudnn_cnn.so.9"]).detect()
    pip = next(c for c in env.libraries if c.directory == PIP_CUDNN)
    assert set(pip.missing) == {"libcudnn_engines_precompiled.so.9", "libcudnn_cnn.so.9"}
    findings = diagnose(env, small_recipes())
    inc = [f for f in findings if f.id == "cudnn-incomplete" and f.severity == "error"]
    assert inc and "torch" in inc[0].frameworks and "jax" in inc[0].frameworks
    assert "libcudnn_engines_precompiled.so.9" in " ".join(inc[0].evidence)


def test_ld_library_path_shadows_a_runpath_consumer(machine):
    machine.h200(runpath=True, jax=False)
    build_cudnn_copy(machine.p("/opt/shadow/lib"), "9.14.0")
    machine.environ["LD_LIBRARY_PATH"] = "/opt/shadow/lib:/usr/local/nvidia/lib64"
    env = machine.detect()
    torch = load(env, "torch")
    assert (torch.path, torch.via, torch.version) == (
        "/opt/shadow/lib/libcudnn.so.9",
        "LD_LIBRARY_PATH",
        "9.14.0",
    )
    assert torch.intended == f"{PIP_CUDNN}/libcudnn.so.9"
    found = ids(diagnose(env, small_recipes()))
    assert "cudnn-shadowed" in found and "cudnn-too-old" in found
    shadow = next(c for c in env.libraries if c.directory == "/opt/shadow/lib")
    assert shadow.origin == "ld-library-path" and shadow.version_source == "cudnnGetVersion"


def test_rpath_beats_ld_library_path_for_the_main_library_but_not_its_sub_libraries(machine):
    # torch's DT_RPATH finds the pip libcudnn.so.9 first, but that library dlopens its sub-libraries
    # by name, and for a caller with DT_RUNPATH the loader searches LD_LIBRARY_PATH first: on the GPU
    # machine an apt 9.14 family on LD_LIBRARY_PATH made torch report runtime (9, 14, 0) and map the
    # apt sub-libraries next to the pip libcudnn.so.9 (docs/measurements/runs-2026-11-26b/kernel_fix.txt, case 1)
    machine.h200(jax=False)
    build_cudnn_copy(machine.p("/opt/shadow/lib"), "9.14.0")
    machine.environ["LD_LIBRARY_PATH"] = "/opt/shadow/lib"
    env = machine.detect()
    torch = load(env, "torch")
    assert torch.via == "DT_RPATH" and torch.version == "9.19.0" and torch.intended is None
    assert "/opt/shadow/lib/libcudnn.so.9 (LD_LIBRARY_PATH)" in torch.shadowed
    (f,) = [f for f in diagnose(env, small_recipes()) if f.id == "cudnn-mixed"]
    assert "/opt/shadow/lib" in f.title and f.frameworks == ("torch",)


def test_garbage_libcudnn_first_on_ld_library_path(machine):
    machine.h200(runpath=True, jax=False)
    bad = machine.p("/opt/garbage/libcudnn.so.9")
    bad.parent.mkdir(parents=True)
    bad.write_bytes(os.urandom(4096))
    machine.environ["LD_LIBRARY_PATH"] = "/opt/garbage"
    env = machine.detect()
    torch = load(env, "torch")
    assert torch.error and "invalid ELF header" in torch.error
    f = [f for f in diagnose(env, small_recipes()) if f.id == "cudnn-shadowed"]
    assert f and f[0].severity == "error"


def test_mixed_sub_library_versions(machine):
    machine.h200(runpath=True, jax=False)
    build_cudnn_copy(
        machine.p("/opt/cudnn/lib"), "9.19.0", sub_versions={"libcudnn_cnn.so.9": "9.14.0"}
    )
    machine.environ["LD_LIBRARY_PATH"] = "/opt/cudnn/lib"
    env = machine.detect()
    copy = next(c for c in env.libraries if c.directory == "/opt/cudnn/lib")
    assert copy.mixed and copy.version == "9.19.0"
    assert {f.name: f.version for f in copy.files}["libcudnn_cnn.so.9"] == "9.14.0"
    assert "cudnn-mixed" in ids(diagnose(env, small_recipes()))


def test_mixed_pip_copy_found_with_deep_versions(machine):
    machine.h200(jax=False, sub_versions={"libcudnn_ops.so.9": "9.14.0"})
    shallow = machine.detect()
    assert not next(
        c for c in shallow.libraries if c.directory == PIP_CUDNN
    ).mixed  # RECORD sizes agree
    from fixer.detection import libraries as L
    from fixer.detection.fs import MachineFS

    fs = MachineFS(str(machine.root))
    copies, _ = L.scan(shallow.python, machine.environ, fs, [], [], [])
    i = next(i for i, c in enumerate(copies) if c.directory == PIP_CUDNN)
    paths = L.unknown_cudnn_files(copies, deep=True)[i]
    from fixer.detection.python_env import python_script
    import sys

    data, err = python_script(
        sys.executable, "native.py", ["cudnn", *[fs.R(p) for p in paths]], timeout=20
    ).result()
    L.apply_probe_versions(copies, i, data, fs, [])
    assert L.freeze(copies[i]).mixed


def test_no_gpu_visible(machine):
    machine.h200()
    machine.environ["CUDA_VISIBLE_DEVICES"] = ""
    env = machine.detect()
    assert env.gpus == ()
    findings = diagnose(env, small_recipes())
    assert ids(findings) == ["gpu-missing"]
    assert "CUDA_VISIBLE_DEVICES" in findings[0].fix


def test_driver_550_with_cu130_torch(machine):
    machine.h200(jax=False)
    machine.nvidia_driver("550.54.15")
    env = machine.detect(overrides=Overrides(cuda_version="12.4"))
    f = [f for f in diagnose(env, small_recipes()) if f.id == "driver-too-old"]
    assert f and "550.54.15" in f[0].title and "580.65.06" in f[0].fix
    assert "cu126" in f[0].fix


@pytest.mark.parametrize(
    "name,dev,expect", [("Tesla P100-PCIE-16GB", "0x15f8", True), ("Tesla T4", "0x1eb8", False)]
)
def test_old_gpu_with_cu130(machine, name, dev, expect):
    machine.h200(jax=False)
    machine.nvidia_driver(gpus=(("0000:00:06.0", dev, name),))
    env = machine.detect()
    assert env.gpus[0].name == name
    arch = [f for f in diagnose(env, small_recipes()) if f.id == "gpu-arch-unsupported"]
    assert bool(arch) == expect
    if expect:
        text = " ".join(f.title for f in arch)
        assert "6.0" in text and "cuDNN 9.19.0 needs compute capability >= 7.5" in text


def test_cpu_torch_on_gpu_machine(machine):
    machine.nvidia_driver()
    machine.torch(version="2.11.0+cpu", cuda=None, cudnn_pin=None)
    machine.ld_cache()
    env = machine.detect()
    assert env.framework("torch").is_cuda_build is False
    f = diagnose(env, small_recipes())
    assert ids(f) == ["cpu-only-build"]


def test_driver_missing_gpu_named_from_pci(machine):
    machine.h200(jax=False)
    import shutil

    shutil.rmtree(machine.p("/proc/driver"))
    shutil.rmtree(machine.p("/sys/module"))
    env = machine.detect(overrides=Overrides())
    assert env.gpus[0].pci_device_id == "0x2335" and env.gpus[0].source == "sysfs-pci"
    assert env.driver.version is None and env.driver.error
    f = [f for f in diagnose(env, small_recipes()) if f.id == "driver-missing"]
    assert f and "NVIDIA H200" in f[0].title


def test_cpu_machine_without_gpu_frameworks_is_clean(machine):
    machine.dist("numpy", "2.1.0")
    env = machine.detect(overrides=Overrides())
    assert env.gpus == () and diagnose(env, small_recipes()) == ()


def test_colab_cpu_runtime_with_cuda_torch_says_change_runtime_type(machine):
    # CUDA builds on a Colab CPU runtime are exit 3 with Colab's own menu path
    machine.pip_cuda_libs(13)
    machine.pip_cudnn()
    machine.torch()
    machine.environ.update({"COLAB_RELEASE_TAG": "release-colab_20261101", "COLAB_GPU": ""})
    env = machine.detect(overrides=Overrides())
    assert env.runtime.kind == "colab" and env.runtime.accelerator == "cpu"
    findings = diagnose(env, small_recipes())
    assert [(f.id, f.severity) for f in findings] == [("gpu-missing", "error")]
    assert "Runtime → Change runtime type → a GPU" in findings[0].fix


def test_bad_input_unreadable_dir_truncated_so_corrupt_dist_info(machine):
    machine.h200(jax=False)
    lib = machine.p(PIP_CUDNN) / "libcudnn_cnn.so.9"
    lib.write_bytes(lib.read_bytes()[:1000])
    meta = machine.p(SITE) / "jax-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_bytes(b"\x00\xff garbage without headers")
    (machine.p(SITE) / "broken.dist-info").mkdir()
    locked = machine.p("/opt/locked")
    locked.mkdir()
    locked.chmod(0)
    machine.environ["LD_LIBRARY_PATH"] = "/opt/locked:/etc/ld.so.conf"
    try:
        env = machine.detect()
    finally:
        locked.chmod(0o755)
    pip = next(c for c in env.libraries if c.directory == PIP_CUDNN)
    assert [f.name for f in pip.files if not f.valid_elf] == ["libcudnn_cnn.so.9"]
    assert any("unreadable metadata" in p.detail for p in env.probes)
    assert any("broken.dist-info" in p.detail for p in env.probes)
    f = [f for f in diagnose(env, small_recipes()) if f.id == "cudnn-incomplete"]
    assert f and "not loadable" in " ".join(f[0].evidence)


def test_ld_preload_beats_everything(machine):
    machine.h200(jax=False)
    build_cudnn_copy(machine.p("/opt/pre"), "9.14.0")
    machine.environ["LD_PRELOAD"] = "/opt/pre/libcudnn.so.9"
    env = machine.detect()
    torch = load(env, "torch")
    assert (torch.via, torch.version, torch.intended) == (
        "LD_PRELOAD",
        "9.14.0",
        f"{PIP_CUDNN}/libcudnn.so.9",
    )
    assert {"cudnn-shadowed", "cudnn-too-old"} <= set(ids(diagnose(env, small_recipes())))


def test_torch_preloads_wheels_by_path_only_when_its_first_load_fails(machine):
    machine.h200(jax=False, apt=False)
    cu = machine.p(f"{SITE}/nvidia/cu13/lib")
    rt = machine.p(f"{SITE}/nvidia/cuda_runtime/lib")
    rt.mkdir(parents=True)
    os.rename(
        cu / "libcudart.so.13", rt / "libcudart.so.13"
    )  # global deps can't find cudart via RPATH
    env = machine.detect()
    assert load(env, "torch").via == "preload"
    assert load(env, "torch", "cudart").path == f"{SITE}/nvidia/cuda_runtime/lib/libcudart.so.13"
    healthy = machine.__class__(machine.root.parent / "m2").h200(jax=False, apt=False).detect()
    assert load(healthy, "torch").via == "DT_RPATH"


def cu126_torch_machine(machine, *, runpath=True, pip_libs=True):
    """torch 2.11+cu126 with its pip CUDA 12.6 libraries, and a CUDA 12.1 toolkit under /usr/local."""
    machine.nvidia_driver()
    machine.pip_cuda_libs(12)  # nvidia-cuda-runtime-cu12 12.6.77, nvidia-cublas-cu12 12.6.4.1
    machine.pip_cudnn("9.10.2.21", 12)
    machine.torch("2.11.0+cu126", "12.6", "nvidia-cudnn-cu12==9.10.2.21", runpath=runpath)
    machine.cuda_toolkit("12.1.105", "12.1.3.1")
    if not pip_libs:
        for d in ("cuda_runtime", "cublas"):
            os.rename(machine.p(f"{SITE}/nvidia/{d}"), machine.p(f"{SITE}/nvidia/{d}.gone"))
    return machine


def test_older_cuda_toolkit_on_ld_library_path_shadows_the_frameworks_own_libraries(machine):
    cu126_torch_machine(machine)
    machine.environ["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.1/lib64:/usr/local/nvidia/lib64"
    machine.ld_cache()
    env = machine.detect()
    cublas = load(env, "torch", "cublas")
    assert (cublas.path, cublas.version, cublas.via) == (
        "/usr/local/cuda-12.1/lib64/libcublas.so.12",
        "12.1.3",
        "LD_LIBRARY_PATH",
    )
    assert cublas.intended == f"{SITE}/nvidia/cublas/lib/libcublas.so.12"
    (f,) = [f for f in diagnose(env, small_recipes()) if f.id == "cuda-lib-mismatch"]
    assert f.severity == "error" and f.frameworks == ("torch",)
    assert f.title == (
        "PyTorch loads cudart 12.1.105, cublas 12.1.3, cublasLt 12.1.3 from /usr/local/cuda-12.1/lib64, "
        "older than the CUDA 12.6 it was built with"
    )
    assert any(
        e.endswith(f"its own copy {SITE}/nvidia/cublas/lib/libcublasLt.so.12 loses")
        for e in f.evidence
    )
    assert "Remove /usr/local/cuda-12.1/lib64 from LD_LIBRARY_PATH" in f.fix


def test_older_cuda_libraries_found_when_the_pip_ones_are_gone(machine):
    cu126_torch_machine(machine, pip_libs=False)
    machine.cache_dirs.append(
        "/usr/local/cuda-12.1/lib64"
    )  # as the toolkit's ld.so.conf.d entry does
    machine.ld_cache()
    env = machine.detect()
    assert load(env, "torch", "cudart").via == "ld.so.cache"
    (f,) = [f for f in diagnose(env, small_recipes()) if f.id == "cuda-lib-mismatch"]
    assert (
        "pip install --force-reinstall torch==2.11.0" in f.fix and "CUDA >= 12.6 toolkit" in f.fix
    )


def test_newer_cuda_toolkit_first_or_rpath_consumer_is_no_mismatch(machine):
    cu126_torch_machine(machine, runpath=False)  # DT_RPATH: LD_LIBRARY_PATH cannot win
    machine.environ["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.1/lib64"
    machine.ld_cache()
    assert not [
        f for f in diagnose(machine.detect(), small_recipes()) if f.id == "cuda-lib-mismatch"
    ]
    machine.cuda_toolkit("12.8.90", "12.8.4.1")  # a newer minor first on the path: compatible
    machine.environ["LD_LIBRARY_PATH"] = "/usr/local/cuda-12.8/lib64"
    machine.torch("2.11.0+cu126", "12.6", "nvidia-cudnn-cu12==9.10.2.21", runpath=True)
    env = machine.detect()
    assert load(env, "torch", "cublas").version == "12.8.4"
    assert not [f for f in diagnose(env, small_recipes()) if f.id == "cuda-lib-mismatch"]


def test_ld_preload_of_another_copys_sub_library_is_mixed(machine):
    # verify saw this on the GPU machine: LD_PRELOAD=<apt>/libcudnn_ops.so.9 made torch and JAX
    # map the apt sub-library next to the pip copy (cudnn-mixed); doctor must see it too.
    machine.h200()
    machine.environ["LD_PRELOAD"] = f"{MULTIARCH}/libcudnn_ops.so.9"
    env = machine.detect()
    assert load(env, "torch").version == "9.19.0"  # the main library still comes from pip
    (f,) = [f for f in diagnose(env, small_recipes()) if f.id == "cudnn-mixed"]
    assert f.severity == "error" and f.frameworks == ("jax", "torch")
    assert f.title.startswith(
        f"LD_PRELOAD forces libcudnn_ops.so.9 (9.14.0) from {MULTIARCH} into every process"
    )
    assert f"Remove {MULTIARCH}/libcudnn_ops.so.9 from LD_PRELOAD" in f.fix
    from fixer.model import Intent
    from fixer.resolver import resolve

    fixes = {(x.kind, x.value) for x in resolve(env, Intent(), small_recipes()).env_fixes}
    assert ("ld-preload-drop", f"{MULTIARCH}/libcudnn_ops.so.9") in fixes


@pytest.mark.parametrize(
    "preload",
    [
        f"{PIP_CUDNN}/libcudnn_ops.so.9",  # its own copy: nothing mixed
        "libcudnn_ops.so.9",  # a bare name: not placeable
        "/opt/other/libfoo.so",
    ],
)
def test_ld_preload_that_mixes_nothing_is_no_finding(machine, preload):
    machine.h200()
    machine.environ["LD_PRELOAD"] = preload
    assert not [f for f in diagnose(machine.detect(), small_recipes()) if f.id == "cudnn-mixed"]


def test_a_sub_library_that_will_not_load_beside_its_copy_makes_it_incomplete(machine, tmp_path):
    """A pip cuDNN file replaced by one of another release (its size no longer the RECORD's, so
    its version is asked of the library itself): when the loader refuses it beside its own copy's
    libraries (on the GPU machine: "undefined symbol: ..., version libcudnn_graph.so.9"), the copy
    is not complete (present, loadable, one version), so doctor reports it and plan reinstalls."""
    from tests.helpers.stublibs import build_stub

    machine.h200(jax=False)
    other = build_stub(tmp_path / "libcudnn_graph_other_release.so.9")
    target = machine.p(PIP_CUDNN) / "libcudnn_cnn.so.9"
    built = build_stub(
        tmp_path / "cnn" / "libcudnn_cnn.so.9", needed=[other], exports={"cudnnGetVersion": 91400}
    )
    target.write_bytes(built.read_bytes())  # its DT_NEEDED is nowhere beside the copy
    env = machine.detect()
    copy = next(c for c in env.libraries if c.directory == PIP_CUDNN)
    cnn = {f.name: f for f in copy.files}["libcudnn_cnn.so.9"]
    assert cnn.valid_elf is False
    assert any("cudnnGetVersion" in str(n) and "libcudnn_cnn.so.9" in str(n) for n in env.probes)
    assert "cudnn-incomplete" in ids(diagnose(env, small_recipes()))


@pytest.mark.parametrize(
    "subs",
    [
        ("libcudnn_ops.so.9",),
        ("libcudnn_ops.so.9", "libcudnn_graph.so.9"),
        ("libcudnn_engines_precompiled.so.9", "libcudnn_heuristic.so.9"),
    ],
)
def test_ld_library_path_lending_sub_libraries_is_mixed_and_dropped(machine, subs):
    # on the GPU machine a folder on LD_LIBRARY_PATH holding only the apt libcudnn_ops made torch
    # map it next to the pip libcudnn.so.9 (damage_cycle.sh ld-ops): doctor was healthy, verify failed
    machine.h200()
    lender = machine.p("/opt/lend/lib")
    build_cudnn_copy(lender, "9.14.0")
    for f in lender.iterdir():
        if f.name not in subs:
            f.unlink()
    machine.environ["LD_LIBRARY_PATH"] = "/opt/lend/lib"
    env = machine.detect()
    assert load(env, "torch").version == "9.19.0"  # the main library still comes from pip
    (f,) = [f for f in diagnose(env, small_recipes()) if f.id == "cudnn-mixed"]
    assert f.severity == "error" and "torch" in f.frameworks
    assert f.title.startswith(
        f"LD_LIBRARY_PATH lends {', '.join(sorted(subs))} (9.14.0) from /opt/lend/lib"
    )
    assert f.evidence[0].startswith("/opt/lend/lib: ")  # the odd one out first
    from fixer.model import Intent
    from fixer.resolver import resolve

    fixes = {(x.kind, x.value) for x in resolve(env, Intent(), small_recipes()).env_fixes}
    assert ("ld-library-path-drop", "/opt/lend/lib") in fixes


def test_a_lone_main_library_on_ld_library_path_lends_nothing(machine):
    # torch preloads its own libcudnn.so.9 by path: a lone libcudnn.so.9 first on the path changed
    # nothing on the GPU machine (damage_cycle.sh ld-lone), and lends no sub-library
    machine.h200()
    lender = machine.p("/opt/lone/lib")
    build_cudnn_copy(lender, "9.14.0")
    for f in lender.iterdir():
        if not f.name.startswith("libcudnn.so"):
            f.unlink()
    machine.environ["LD_LIBRARY_PATH"] = "/opt/lone/lib"
    env = machine.detect()
    assert not [f for f in diagnose(env, small_recipes()) if f.id == "cudnn-mixed"]


def test_detect_records_each_search_as_data(machine):
    """Every load's search order is data (LoadResolution.search): the winner's directory is one
    of the directories it lists under the way it won (the default directories are implied), and
    the LD_PRELOAD entries naming the soname are split once, in LD_PRELOAD's order."""
    machine.h200(runpath=True)
    build_cudnn_copy(machine.p("/opt/shadow/lib"), "9.14.0")
    machine.environ["LD_LIBRARY_PATH"] = "/opt/shadow/lib:/usr/local/nvidia/lib64"
    machine.environ["LD_PRELOAD"] = f"libfoo.so {MULTIARCH}/libcudnn.so.9:/opt/none/libcudnn.so.9"
    env = machine.detect()
    for ld in env.loads:
        if ld.path and ld.via != "default":
            assert m.SearchDir(ld.via, os.path.dirname(ld.path)) in ld.search, (
                ld.consumer,
                ld.via,
                ld.search,
            )
        assert all(
            os.path.isabs(s.directory) and s.directory == os.path.normpath(s.directory)
            for s in ld.search
        )
    torch = load(env, "torch")
    assert torch.ld_preload == (f"{MULTIARCH}/libcudnn.so.9", "/opt/none/libcudnn.so.9")
    vias = [s.via for s in torch.search]
    assert vias.index("LD_PRELOAD") < vias.index("LD_LIBRARY_PATH") < vias.index("DT_RUNPATH")
    assert [s.directory for s in torch.search if s.via == "LD_LIBRARY_PATH"] == [
        "/opt/shadow/lib",
        "/usr/local/nvidia/lib64",
    ]
    assert m.SearchDir("DT_RUNPATH", PIP_CUDNN) in torch.search
