"""A fake machine tree under a temp dir, laid out like the recorded H200 GPU machine.

Real pieces: compiled stub libraries (tests/helpers/stublibs.py) with real SONAME/RPATH/RUNPATH,
real dist-info directories with RECORD files, a dpkg .list and status, an ld.so.cache written by
the real `ldconfig -r ROOT` (or by `write_ld_cache` in glibc's format when ldconfig can't run),
and the sysfs/procfs texts recorded on the GPU machine (tests/data/gpu_machine/facts_h200.txt).
The target interpreter is this test run's Python with the fake site-packages on PYTHONPATH.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from tests.helpers.paths import DATA as TEST_DATA
from tests.helpers.stublibs import build_cudnn_copy, build_stub

DATA = TEST_DATA / "gpu_machine"
SITE = "/opt/torch/.venv/lib/python3.12/site-packages"
MULTIARCH = "/usr/lib/x86_64-linux-gnu"


def recorded_section(name: str, path: Path = DATA / "facts_h200.txt") -> str:
    """The text under "## <name>" in a recorded facts file, up to the next "## " header."""
    text = path.read_text()
    m = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    if not m:
        raise KeyError(name)
    return m.group(1)


def write_ld_cache(path: Path, entries: Sequence[Tuple[str, str]]) -> None:
    """A glibc "glibc-ld.so.cache1.1" file for (soname, path) entries (x86-64 libc6 flags)."""
    strings = bytearray()
    offsets = []
    header_len = 48 + 24 * len(entries)
    for soname, p in entries:
        k = header_len + len(strings)
        strings += soname.encode() + b"\0"
        v = header_len + len(strings)
        strings += p.encode() + b"\0"
        offsets.append((k, v))
    out = bytearray(b"glibc-ld.so.cache1.1")
    out += struct.pack("<IIB3xI12x", len(entries), len(strings), 2, 0)
    for k, v in offsets:
        out += struct.pack("<iIIIQ", 0x0303, k, v, 0, 0)
    out += strings
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))


class FakeMachine:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.environ: Dict[str, str] = {"PATH": os.environ.get("PATH", os.defpath)}
        self.cache_dirs: List[str] = [MULTIARCH]
        self.site = SITE
        self.environ["PYTHONPATH"] = str(self.p(SITE))

    # -- paths
    def p(self, machine_path: str) -> Path:
        return self.root / machine_path.lstrip("/")

    def write(self, machine_path: str, text: str) -> Path:
        f = self.p(machine_path)
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
        return f

    # -- driver and GPU, from the recorded H200 texts
    def nvidia_driver(
        self,
        version: str = "580.159.04",
        gpus: Sequence[Tuple[str, str, str]] = (("0000:00:06.0", "0x2335", "NVIDIA H200"),),
    ) -> "FakeMachine":
        sysmod = recorded_section("sys module").strip().splitlines()
        self.write("/sys/module/nvidia/version", sysmod[0].replace("580.159.04", version) + "\n")
        self.write(
            "/proc/driver/nvidia/version",
            "\n".join(sysmod[2:]).replace("580.159.04", version) + "\n",
        )
        info = recorded_section("proc gpus").split("\n", 1)[1]
        for bus, dev, name in gpus:
            self.write(
                f"/proc/driver/nvidia/gpus/{bus}/information",
                info.replace("NVIDIA H200", name).replace("0000:00:06.0", bus),
            )
        self.pci(gpus)
        return self

    def pci(self, gpus: Sequence[Tuple[str, str, str]]) -> "FakeMachine":
        for bus, dev, _name in gpus:
            self.write(f"/sys/bus/pci/devices/{bus}/vendor", "0x10de\n")
            self.write(f"/sys/bus/pci/devices/{bus}/device", dev + "\n")
            self.write(f"/sys/bus/pci/devices/{bus}/class", "0x030200\n")
        return self

    # -- python distributions
    def dist(
        self,
        name: str,
        version: str,
        *,
        requires: Iterable[str] = (),
        files: Iterable[str] = (),
        installer: str = "uv",
    ) -> Path:
        base = f"{re.sub(r'[-.]+', '_', name)}-{version}.dist-info"
        d = self.p(self.site) / base
        d.mkdir(parents=True, exist_ok=True)
        meta = ["Metadata-Version: 2.4", f"Name: {name}", f"Version: {version}"]
        meta += [f"Requires-Dist: {r}" for r in requires]
        (d / "METADATA").write_text("\n".join(meta) + "\n\nlong description\n")
        (d / "INSTALLER").write_text(installer + "\n")
        record = []
        for rel in files:
            f = self.p(self.site) / rel
            size = f.stat().st_size if f.exists() else 0
            record.append(f"{rel},sha256=x,{size}")
        record.append(f"{base}/RECORD,,")
        (d / "RECORD").write_text("\n".join(record) + "\n")
        return d

    def pip_cudnn(self, version: str = "9.19.0.56", cuda: int = 13, **kw) -> Path:
        lib = self.p(self.site) / "nvidia" / "cudnn" / "lib"
        build_cudnn_copy(lib, ".".join(version.split(".")[:3]), **kw)
        (self.p(self.site) / "nvidia" / "cudnn" / "include").mkdir(parents=True, exist_ok=True)
        files = [f"nvidia/cudnn/lib/{f.name}" for f in sorted(lib.iterdir())]
        skip = set(kw.get("skip", ()))
        files += [f"nvidia/cudnn/lib/{s}" for s in skip]  # RECORD still lists what was removed
        self.dist(f"nvidia-cudnn-cu{cuda}", version, files=files)
        return lib

    def pip_cuda_libs(
        self, cuda: int = 13, runtime: Optional[str] = None, cublas: Optional[str] = None
    ) -> Path:
        """The CUDA runtime and cuBLAS wheels. CUDA 13 keeps them in nvidia/cu13/lib; CUDA 12 in
        nvidia/cuda_runtime/lib and nvidia/cublas/lib (nvidia-cuda-runtime-cu12, nvidia-cublas-cu12)."""
        if cuda >= 13:
            lib = self.p(self.site) / "nvidia" / f"cu{cuda}" / "lib"
            for so in (f"libcudart.so.{cuda}", f"libcublas.so.{cuda}", f"libcublasLt.so.{cuda}"):
                build_stub(lib / so, soname=so, exports={"cudaRuntimeGetVersion": cuda * 1000})
            self.dist(
                "nvidia-cuda-runtime",
                runtime or f"{cuda}.0.96",
                files=[f"nvidia/cu{cuda}/lib/libcudart.so.{cuda}"],
            )
            self.dist(
                "nvidia-cublas",
                cublas or f"{cuda}.1.0.3",
                files=[
                    f"nvidia/cu{cuda}/lib/libcublas.so.{cuda}",
                    f"nvidia/cu{cuda}/lib/libcublasLt.so.{cuda}",
                ],
            )
            return lib
        rt = self.p(self.site) / "nvidia" / "cuda_runtime" / "lib"
        bl = self.p(self.site) / "nvidia" / "cublas" / "lib"
        build_stub(rt / f"libcudart.so.{cuda}", exports={"cudaRuntimeGetVersion": cuda * 1000})
        for so in (f"libcublas.so.{cuda}", f"libcublasLt.so.{cuda}"):
            build_stub(bl / so)
        self.dist(
            f"nvidia-cuda-runtime-cu{cuda}",
            runtime or f"{cuda}.6.77",
            files=[f"nvidia/cuda_runtime/lib/libcudart.so.{cuda}"],
        )
        self.dist(
            f"nvidia-cublas-cu{cuda}",
            cublas or f"{cuda}.6.4.1",
            files=[
                f"nvidia/cublas/lib/libcublas.so.{cuda}",
                f"nvidia/cublas/lib/libcublasLt.so.{cuda}",
            ],
        )
        return bl

    def cuda_toolkit(self, version: str = "12.1.105", cublas: str = "12.1.3.1") -> Path:
        """An older CUDA toolkit's libraries as the .run installer lays them out, real file names
        carrying the full version (libcublas.so.12 -> libcublas.so.12.1.3.1)."""
        major = version.split(".")[0]
        lib = self.p(f"/usr/local/cuda-{'.'.join(version.split('.')[:2])}/lib64")
        for base, full in (("libcudart", version), ("libcublas", cublas), ("libcublasLt", cublas)):
            real = build_stub(
                lib / f"{base}.so.{full}",
                soname=f"{base}.so.{major}",
                exports={"cudaRuntimeGetVersion": int(major) * 1000}
                if base == "libcudart"
                else None,
            )
            (lib / f"{base}.so.{major}").symlink_to(real.name)
        return lib

    def torch(
        self,
        version: str = "2.11.0+cu130",
        cuda: Optional[str] = "13.0",
        cudnn_pin: Optional[str] = "nvidia-cudnn-cu13==9.19.0.56",
        *,
        runpath: bool = False,
    ) -> Path:
        pkg = self.p(self.site) / "torch"
        (pkg / "lib").mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text(
            "raise ImportError('stand-in torch: not importable in tests')\n"
        )
        (pkg / "version.py").write_text(
            "from typing import Optional\n\n"
            f"__version__ = '{version}'\ndebug = False\n"
            f"cuda: Optional[str] = {cuda!r}\nhip: Optional[str] = None\n"
        )
        requires = []
        if cudnn_pin:
            requires.append(f'{cudnn_pin}; platform_system == "Linux"')
        if cuda:
            major = cuda.split(".")[0]
            if int(major) >= 13:
                cu = self.p(self.site) / "nvidia" / f"cu{major}" / "lib"
                needed = [
                    cu / f"libcudart.so.{major}",
                    cu / f"libcublas.so.{major}",
                    cu / f"libcublasLt.so.{major}",
                ]
                search = [
                    "$ORIGIN/../../nvidia/cudnn/lib",
                    f"$ORIGIN/../../nvidia/cu{major}/lib",
                    "$ORIGIN",
                ]
            else:
                rt, bl = (
                    self.p(self.site) / "nvidia" / "cuda_runtime" / "lib",
                    self.p(self.site) / "nvidia" / "cublas" / "lib",
                )
                needed = [
                    rt / f"libcudart.so.{major}",
                    bl / f"libcublas.so.{major}",
                    bl / f"libcublasLt.so.{major}",
                ]
                search = [
                    "$ORIGIN/../../nvidia/cudnn/lib",
                    "$ORIGIN/../../nvidia/cuda_runtime/lib",
                    "$ORIGIN/../../nvidia/cublas/lib",
                    "$ORIGIN",
                ]
            kw = {"runpath": search} if runpath else {"rpath": search}
            build_stub(
                pkg / "lib" / "libtorch_cuda.so", soname="libtorch_cuda.so", needed=needed, **kw
            )
            build_stub(
                pkg / "lib" / "libtorch_global_deps.so",
                soname="libtorch_global_deps.so",
                needed=needed[:1],
                rpath=search,
            )
        self.dist(
            "torch", version.split("+")[0] if "cu13" in version else version, requires=requires
        )
        return pkg

    def jax(
        self,
        version: str = "0.11.2",
        cuda: int = 13,
        cudnn_req: str = "nvidia-cudnn-cu13<10.0,>=9.12.0.46",
    ) -> Path:
        self.dist("jax", version)
        self.dist("jaxlib", version)
        self.dist(f"jax-cuda{cuda}-pjrt", version)
        self.dist(
            f"jax-cuda{cuda}-plugin",
            version,
            requires=[
                f"jax-cuda{cuda}-pjrt=={version}",
                f'{cudnn_req}; sys_platform == "linux" and extra == "with-cuda"',
            ],
        )
        plugin = self.p(self.site) / "jax_plugins" / f"xla_cuda{cuda}"
        build_stub(
            plugin / "xla_cuda_plugin.so",
            soname="xla_cuda_plugin.so",
            rpath=[f"$ORIGIN/../../nvidia/cu{cuda}/lib"],
        )
        return plugin

    # -- apt cuDNN, dpkg and the loader cache
    def apt_cudnn(self, version: str = "9.14.0", deb: str = "9.14.0.64-1", cuda: int = 13) -> Path:
        d = self.p(MULTIARCH)
        build_cudnn_copy(d, version, versioned_files=True)
        pkg = f"libcudnn9-cuda-{cuda}"
        listed = ["/.", "/usr", "/usr/lib", MULTIARCH]
        for f in sorted(d.iterdir()):
            if f.name.startswith("libcudnn"):
                listed.append(f"{MULTIARCH}/{f.name}")
        self.write(f"/var/lib/dpkg/info/{pkg}.list", "\n".join(listed) + "\n")
        status = self.p("/var/lib/dpkg/status")
        old = status.read_text() if status.exists() else ""
        status.parent.mkdir(parents=True, exist_ok=True)
        status.write_text(
            old + f"Package: {pkg}\nStatus: hold ok installed\nVersion: {deb}\n"
            f"Architecture: amd64\n\n"
        )
        return d

    def merged_usr(self) -> None:
        """/lib -> usr/lib as on Ubuntu (ld.so.cache names /lib/x86_64-linux-gnu/...)."""
        (self.root / "usr" / "lib").mkdir(parents=True, exist_ok=True)
        link = self.root / "lib"
        if not link.exists():
            link.symlink_to("usr/lib")

    def ld_cache(self, use_ldconfig: bool = True) -> str:
        """Write /etc/ld.so.cache for the cache dirs; returns which writer was used."""
        self.merged_usr()
        self.write("/etc/ld.so.conf", "\n".join(self.cache_dirs) + "\n")
        ldconfig = shutil.which("ldconfig") or (
            "/sbin/ldconfig" if os.path.exists("/sbin/ldconfig") else None
        )
        if use_ldconfig and ldconfig and hasattr(os, "geteuid") and os.geteuid() == 0:
            r = subprocess.run(
                [
                    ldconfig,
                    "-X",
                    "-r",
                    str(self.root),
                    "-C",
                    "/etc/ld.so.cache",
                    "-f",
                    "/etc/ld.so.conf",
                ],
                capture_output=True,
                text=True,
            )
            if r.returncode == 0 and self.p("/etc/ld.so.cache").exists():
                return "ldconfig"
        entries = []
        for d in self.cache_dirs:
            for f in sorted(self.p(d).iterdir()) if self.p(d).is_dir() else []:
                if re.match(r"^lib.*\.so\.\d+$", f.name):
                    entries.append((f.name, f"{d}/{f.name}"))
        write_ld_cache(self.p("/etc/ld.so.cache"), entries)
        return "python"

    def h200(
        self, *, apt: bool = True, jax: bool = True, runpath: bool = False, **pip_kw
    ) -> "FakeMachine":
        """The GPU machine as recorded: pip cuDNN 9.19 for torch 2.11+cu130, apt 9.14, JAX cuda13."""
        self.nvidia_driver()
        self.pip_cuda_libs(13)
        self.pip_cudnn("9.19.0.56", 13, **pip_kw)
        self.torch(runpath=runpath)
        if jax:
            self.jax()
        if apt:
            self.apt_cudnn()
        self.environ["LD_LIBRARY_PATH"] = "/usr/local/nvidia/lib64:/usr/local/nvidia/lib"
        self.ld_cache()
        return self

    def detect(self, **kw):
        from fixer.detection import Overrides, detect

        kw.setdefault("overrides", Overrides(cuda_version="13.0"))
        return detect(sys.executable, root=str(self.root), environ=self.environ, **kw)


def small_recipes():
    """The few real facts the rules need (values from the repo's data/)."""
    from fixer.model import Build, CudaDriverFloor, CudnnRelease, GpuModel, Recipes

    return Recipes(
        builds=(
            Build(
                "torch",
                "2.11.0",
                "cu130",
                "13.0",
                "9.19.0",
                compute_capabilities=("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"),
                ptx="12.0",
                packages=("torch==2.11.0",),
                requires=("nvidia-cudnn-cu13==9.19.0.56",),
            ),
            Build(
                "torch",
                "2.11.0",
                "cu126",
                "12.6",
                "9.10.2",
                compute_capabilities=("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"),
                index_url="https://download.pytorch.org/whl/cu126",
                packages=("torch==2.11.0+cu126",),
                requires=("nvidia-cudnn-cu12==9.10.2.21",),
            ),
        ),
        cudnn=(
            CudnnRelease("9.11.0", (12, 13), min_compute_capability="7.5"),
            CudnnRelease("9.10.2", (11, 12)),
        ),
        driver_floors=(CudaDriverFloor("13", "580.65.06"), CudaDriverFloor("12", "525.60.13")),
        gpus=(
            GpuModel("Tesla T4", "7.5", ("0x1eb8",)),
            GpuModel("NVIDIA H200", "9.0", ("0x2335",)),
            GpuModel("Tesla P100-PCIE-16GB", "6.0", ("0x15f8",)),
        ),
    )
