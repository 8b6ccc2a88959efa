#!/usr/bin/env python3
"""Build doctor-JSON environments from real Colab snapshots and from our GPU machine.

    python scripts/make_environments.py            # bundled examples + the replay set
    python scripts/make_environments.py --check    # fail if the files on disk differ

Writes
- fixer/environments/NAME.json: the bundled examples (`plan --environment NAME`);
- tests/data/gpu_machine/doctor_cases_h200.current.jsonl: the environments `doctor --json`
  recorded on the GPU machine (doctor_cases_h200.jsonl, schema 1) in today's schema
  (upgrade_schema1), for the tests;
- tests/data/replay/images.json: every distinct Colab image of colab_images.csv (test data,
  not shipped); tests/unit/resolve builds its doctor-JSON Environment with a T4, an L4 and an A100
  through `build_environment` (the same function as the bundled files).

Each file is what `doctor --json` prints: {"schema": 2, "environment": {...}, "findings": []}.

Where the facts come from
- Distributions: the image's pip-freeze.txt (snapshots) or its colab_images.csv row (every
  other image: torch/torchvision/torchaudio/tensorflow/jax/jaxlib/plugins/pip cuDNN columns).
  Only the GPU-relevant distributions are kept.
- apt cuDNN: apt-list.txt or the CSV's apt_cudnn column.
- What each framework was built with: the recipes (as doctor reads it from the wheel's
  metadata); for builds the recipes do not list, the build's own label (torch +cu113,
  jaxlib +cuda11.cudnn805) and TensorFlow's "tested build configurations" table
  (https://www.tensorflow.org/install/source#gpu: 2.8 and 2.9 were built with CUDA 11.2 and
  cuDNN 8.1). torch wheels of the PyTorch index that declare no nvidia-cudnn dependency
  (no nvidia-cudnn-* in the image's pip freeze) carry their own cuDNN in torch/lib
  ("bundled"); its version is the one the recipes give for that build, else 8.3.2 for
  torch 1.12/1.13 (unverified: the PyTorch 1.12/1.13 release notes).
- Library copies and which one each framework loads are synthesised the way the loader
  would resolve them: pip cuDNN in <site-packages>/nvidia/cudnn/lib (found first through
  torch's RPATH, TensorFlow >= 2.14's RUNPATH and the JAX plugin's preload), apt cuDNN in
  /usr/lib/x86_64-linux-gnu (found through ld.so.cache).
- GPU: a T4 (7.5), an L4 (8.9) or an A100 (8.0) with their PCI ids. Driver: the CSV's
  driver column (the nvidia-driver-NNN package of the image), carried forward to the later
  rows that have none (a lower bound: Colab only ever raised it), and 580.82.07 from
  2026-02-05 on (commit 66982a1's message). The CUDA version the driver supports comes
  from the recipes' driver table.
- Colab's kernel environment: LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64
  (Colab's documented container default; unverified for every image).
- The GPU machine: tests/data/gpu_machine/facts_h200.txt (H200, driver 580.159.04,
  torch 2.11.0 (cu130), JAX 0.11.2 with jax-cuda13-plugin, pip nvidia-cudnn-cu13 9.19.0.56
  and apt libcudnn9-cuda-13 9.14.0.64).
"""

from __future__ import annotations

import argparse
import dataclasses
import csv
import json
import re
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from fixer import model as m  # noqa: E402

DATA = REPO / "data"  # copied from the research data, with SOURCE files (data/README.md)
BUNDLED_DIR = REPO / "fixer" / "environments"
REPLAY_DIR = REPO / "tests" / "data" / "replay"

GPUS: Dict[str, m.Gpu] = {
    "t4": m.Gpu(0, "Tesla T4", "00000000:00:04.0", "0x1eb8", "7.5", 15360, source="override"),
    "l4": m.Gpu(0, "NVIDIA L4", "00000000:00:03.0", "0x27b8", "8.9", 23034, source="override"),
    "a100": m.Gpu(
        0, "NVIDIA A100-SXM4-40GB", "00000000:00:04.0", "0x20b0", "8.0", 40960, source="override"
    ),
}
COLAB_LD_LIBRARY_PATH = "/usr/local/nvidia/lib:/usr/local/nvidia/lib64"
APT_DIR = "/usr/lib/x86_64-linux-gnu"
TF_TESTED = {
    "2.8": ("11.2", "8.1.0"),
    "2.9": ("11.2", "8.1.0"),
}  # tensorflow.org/install/source#gpu
TORCH_1X_BUNDLED_CUDNN = "8.3.2"
RELEVANT = re.compile(
    r"^(torch|torchvision|torchaudio|tensorflow|tf-keras|keras|jax|jaxlib|jax-cuda\d+-(plugin|pjrt)|"
    r"nvidia-.*|cupy-cuda.*|ctranslate2|onnxruntime(-gpu)?|faster-whisper)$"
)
CUDNN9_LIBS = (
    "libcudnn",
    "libcudnn_adv",
    "libcudnn_cnn",
    "libcudnn_engines_precompiled",
    "libcudnn_engines_runtime_compiled",
    "libcudnn_graph",
    "libcudnn_heuristic",
    "libcudnn_ops",
)
CUDNN8_LIBS = (
    "libcudnn",
    "libcudnn_adv_infer",
    "libcudnn_adv_train",
    "libcudnn_cnn_infer",
    "libcudnn_cnn_train",
    "libcudnn_ops_infer",
    "libcudnn_ops_train",
)


def _recipes() -> m.Recipes:
    from fixer.recipebook import load

    return load()


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def xyz(v: str) -> str:
    """ "8.9.6.50-1+cuda12.2" -> "8.9.6"."""
    nums = re.findall(r"\d+", v.split("-")[0])
    return ".".join(nums[:3])


# ---------------------------------------------------------------------------------------
# reading the snapshots
# ---------------------------------------------------------------------------------------


def parse_freeze(text: str) -> Dict[str, str]:
    """pip freeze lines -> {name: version}; "name @ URL" takes the version from the wheel name."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "==" in line:
            name, ver = line.split("==", 1)
            out[canon(name)] = ver.strip()
        elif " @ " in line:
            name, url = line.split(" @ ", 1)
            fname = url.split("/")[-1].split("#")[0].replace("%2B", "+")
            parts = fname.split("-")
            if len(parts) > 2:
                out[canon(name)] = parts[1]
    return out


def parse_apt_list(text: str) -> Dict[str, str]:
    """`apt list --installed` lines -> {package: version}."""
    out: Dict[str, str] = {}
    for line in text.splitlines():
        mm = re.match(r"^([^/\s]+)/\S+\s+(?:now\s+)?(\S+)\s+\S+\s+\[installed", line)
        if mm:
            out[mm.group(1)] = mm.group(2)
    return out


class Image:
    """A Colab image: what is installed, by name."""

    def __init__(
        self,
        date: str,
        commit: str,
        python: str,
        dists: Dict[str, str],
        apt: Dict[str, str],
        driver: Optional[str],
        source: str,
    ) -> None:
        self.date, self.commit, self.python, self.dists, self.apt = date, commit, python, dists, apt
        self.driver, self.source = driver, source

    @property
    def name(self) -> str:
        return f"{self.date}_{self.commit[:7]}"


def _csv_rows() -> List[Dict[str, str]]:
    with open(DATA / "colab_images.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _drivers(rows: Sequence[Dict[str, str]]) -> List[Optional[str]]:
    """The driver of each row: its own column, else carried forward."""
    out: List[Optional[str]] = []
    last: Optional[str] = None
    for r in rows:
        d = r["driver"]
        mm = re.search(r"(\d{3}\.\d+(?:\.\d+)?)", d)
        if mm:
            last = mm.group(1)
        out.append(last)
    return out


def _python(v: str) -> str:
    return v if v.count(".") >= 2 else v + ".0"


_CSV_KEY = (
    "python",
    "torch",
    "tensorflow",
    "jax",
    "jaxlib",
    "jax_cuda_plugin",
    "pip_cudnn",
    "apt_cudnn",
    "driver",
)


def csv_images() -> List[Image]:
    """Every distinct image of colab_images.csv (distinct framework, cuDNN, Python and driver)."""
    rows = _csv_rows()
    drivers = _drivers(rows)
    seen = set()
    out: List[Image] = []
    for r, drv in zip(rows, drivers):
        key = tuple(r[k] for k in _CSV_KEY[:-1]) + (drv,)
        if key in seen:
            continue
        seen.add(key)
        dists: Dict[str, str] = {}
        for col, dist in (
            ("torch", "torch"),
            ("torchvision", "torchvision"),
            ("torchaudio", "torchaudio"),
            ("tensorflow", "tensorflow"),
            ("jax", "jax"),
            ("jaxlib", "jaxlib"),
        ):
            if r[col]:
                dists[dist] = r[col]
        for part in filter(None, r["jax_cuda_plugin"].split(";")):
            k, v = part.split("=", 1)
            dists[canon(k)] = v
        if r["pip_cudnn"]:
            k, v = r["pip_cudnn"].split("=", 1)
            dists[f"nvidia-cudnn-{k}"] = v
        apt = {}
        for part in filter(None, r["apt_cudnn"].split(";")):
            k, v = part.split("=", 1)
            apt[k] = v
        out.append(
            Image(
                r["date"],
                r["source_commit"],
                _python(r["python"]),
                dists,
                apt,
                drv,
                f"googlecolab/backend-info {r['source_commit'][:7]} (colab_images.csv row {r['date']})",
            )
        )
    return out


def snapshot_image(name: str) -> Image:
    """A snapshot directory of data/colab_snapshots (full pip freeze and apt list)."""
    d = DATA / "colab_snapshots" / name
    date, commit = name.split("_", 1)
    rows = _csv_rows()
    drivers = _drivers(rows)
    python, driver = "3.12.0", None
    for r, drv in zip(rows, drivers):
        if r["source_commit"].startswith(commit):
            python, driver = _python(r["python"]), drv
    dists = {
        k: v
        for k, v in parse_freeze((d / "pip-freeze.txt").read_text()).items()
        if RELEVANT.match(k)
    }
    apt = {
        k: v
        for k, v in parse_apt_list((d / "apt-list.txt").read_text()).items()
        if k.startswith("libcudnn") and "-dev" not in k and "headers" not in k
    }
    return Image(
        date,
        commit,
        python,
        dists,
        apt,
        driver,
        f"googlecolab/backend-info {commit} (data/colab_snapshots/{name})",
    )


# ---------------------------------------------------------------------------------------
# building an Environment
# ---------------------------------------------------------------------------------------


def _driver_cuda(recipes: m.Recipes, driver: Optional[str]) -> Optional[str]:
    if not driver:
        return None
    from fixer.system.versions import version_key as vkey

    best = None
    for f in recipes.driver_floors:
        if "." in f.cuda and vkey(f.min_driver) <= vkey(driver):
            if best is None or vkey(f.cuda) > vkey(best):
                best = f.cuda
    return best


def _cudnn_copy(
    major: int,
    version: str,
    directory: str,
    origin: str,
    package: Optional[m.Package],
    cuda_major: Optional[int],
    versioned: bool,
    missing: Sequence[str] = (),
) -> m.LibraryCopy:
    libs = CUDNN9_LIBS if major >= 9 else CUDNN8_LIBS
    files = tuple(
        m.LibFile(
            f"{n}.so.{version}" if versioned else f"{n}.so.{major}", f"{n}.so.{major}", version
        )
        for n in libs
        if n not in missing
    )
    return m.LibraryCopy(
        "cudnn",
        major,
        version,
        directory,
        origin,
        package,
        "dpkg" if origin == "apt" else "dist-info" if origin == "pip" else "soname",
        files,
        tuple(f"{n}.so.{major}" for n in missing),
        False,
        cuda_major,
    )


def _find_build(
    recipes: m.Recipes,
    framework: str,
    version: str,
    variant: Optional[str],
    cuda_major: Optional[int] = None,
) -> Optional[m.Build]:
    pub = version.split("+")[0]
    cands = [b for b in recipes.builds_for(framework) if b.version == pub]
    if variant:
        for b in cands:
            if b.variant == variant:
                return b
    if framework == "torch" and not variant:
        for b in cands:
            if b.index_url is None:
                return b
    if framework == "jax" and cuda_major:
        for b in cands:
            if b.variant == f"cuda{cuda_major}":
                return b
    return cands[0] if cands else None


def _cudnn_pin(build: Optional[m.Build]) -> Optional[str]:
    if build is None:
        return None
    for r in build.requires:
        if r.startswith("nvidia-cudnn-"):
            return r
    return None


class _Machine:
    """An image's machine while build_environment assembles it: its cuDNN copies, framework
    builds and the loader's answer for each (glibc's order, as ld.so(8) and fixer.detection.loader)."""

    def __init__(self, dists: Dict[str, str], image: Image, sp: str) -> None:
        self.dists = dists
        self.sp = sp
        self.ld_path = COLAB_LD_LIBRARY_PATH
        self.libraries: List[m.LibraryCopy] = []
        self.frameworks: List[m.FrameworkBuild] = []
        self.loads: List[m.LoadResolution] = []
        self.pip_cudnn: Dict[int, m.LibraryCopy] = {}
        self.apt_cudnn: Dict[int, m.LibraryCopy] = {}
        self._pip_copies()
        self._apt_copies(image)

    def _pip_copies(self) -> None:
        for k, v in sorted(self.dists.items()):
            mm = re.match(r"nvidia-cudnn-cu(\d+)$", k)
            if mm:
                major = int(v.split(".")[0])
                c = _cudnn_copy(
                    major,
                    xyz(v),
                    f"{self.sp}/nvidia/cudnn/lib",
                    "pip",
                    m.Package(k, v),
                    int(mm.group(1)),
                    False,
                )
                self.libraries.append(c)
                self.pip_cudnn[major] = c

    def _apt_copies(self, image: Image) -> None:
        for k, v in sorted(image.apt.items()):
            mm = re.match(r"libcudnn(\d+)(?:-cuda-(\d+))?$", k)
            if not mm:
                continue
            major = int(mm.group(1))
            cm = mm.group(2) or (
                re.search(r"\+cuda(\d+)", v).group(1) if re.search(r"\+cuda(\d+)", v) else None
            )
            c = _cudnn_copy(
                major, xyz(v), APT_DIR, "apt", m.Package(k, v), int(cm) if cm else None, True
            )
            self.libraries.append(c)
            self.apt_cudnn[major] = c

    def resolve_load(
        self, consumer: str, major: int, first: Sequence[Tuple[str, Optional[m.LibraryCopy]]]
    ) -> None:
        steps: List[str] = []
        search: List[m.SearchDir] = []
        winner: Optional[Tuple[str, m.LibraryCopy]] = None
        ld_path = self.ld_path
        for via, copy in list(first) + [
            ("LD_LIBRARY_PATH", None),
            ("ld.so.cache", self.apt_cudnn.get(major)),
        ]:
            where = copy.directory if copy else (ld_path if via == "LD_LIBRARY_PATH" else APT_DIR)
            if via == "LD_LIBRARY_PATH":
                steps.append(f"LD_LIBRARY_PATH {ld_path}: no libcudnn.so.{major}")
                search += [m.SearchDir("LD_LIBRARY_PATH", d) for d in ld_path.split(":")]
                continue
            ok = copy is not None and not copy.missing
            steps.append(f"{via} {where}: {'found' if ok else 'no libcudnn.so.' + str(major)}")
            if via != "ld.so.cache" or ok:
                search.append(m.SearchDir(via, where))  # type: ignore[arg-type]
            if ok and winner is None:
                winner = (via, copy)  # type: ignore[assignment]
                break
        soname = f"libcudnn.so.{major}"
        via, copy = winner if winner is not None else ("", None)
        self.loads.append(
            m.LoadResolution(
                consumer,
                "cudnn",
                soname,
                f"{copy.directory}/{soname}" if copy else None,
                copy.directory if copy else None,
                copy.version if copy else None,
                via,
                tuple(steps),
                search=tuple(search),
            )
        )

    def torch(self, recipes: m.Recipes) -> None:
        sp, v = self.sp, self.dists["torch"]
        variant = v.split("+", 1)[1] if "+" in v else None
        b = _find_build(recipes, "torch", v, variant)
        variant = variant or (b.variant if b else None)
        cuda = (
            b.cuda
            if b
            else (
                f"{variant[2:-1]}.{variant[-1]}" if variant and variant.startswith("cu") else None
            )
        )
        cudnn = b.cudnn if b else (TORCH_1X_BUNDLED_CUDNN if cuda else None)
        major = int(cudnn.split(".")[0]) if cudnn else None
        bundled = cuda is not None and major is not None and major not in self.pip_cudnn
        self.frameworks.append(
            m.FrameworkBuild(
                "torch",
                "torch",
                v,
                sp + "/torch",
                variant,
                cuda,
                cudnn,
                _cudnn_pin(b),
                b.compute_capabilities if b else (),
                b.ptx if b else None,
                cuda is not None,
                False,
                f"{sp}/torch/lib/libtorch_cuda.so",
                "torch/version.py; recipes",
            )
        )
        if major is None or not cudnn:
            return
        if not bundled:
            self.resolve_load("torch", major, [("DT_RPATH", self.pip_cudnn.get(major))])
            return
        copy = _cudnn_copy(
            major,
            xyz(cudnn),
            f"{sp}/torch/lib",
            "bundled",
            m.Package("torch", v),
            int(cuda.split(".")[0]),  # type: ignore[union-attr]
            False,
        )
        self.libraries.append(copy)
        self.resolve_load("torch", major, [("DT_RUNPATH", copy)])

    def tensorflow(self, recipes: m.Recipes) -> None:
        sp, v = self.sp, self.dists["tensorflow"]
        pub = v.split("+")[0]
        b = _find_build(recipes, "tensorflow", pub, "system")
        if b:
            cuda, cudnn = b.cuda, b.cudnn
        else:
            cuda, cudnn = TF_TESTED.get(".".join(pub.split(".")[:2]), (None, None))
        self.frameworks.append(
            m.FrameworkBuild(
                "tensorflow",
                "tensorflow",
                v,
                sp + "/tensorflow",
                "system",
                cuda,
                cudnn,
                None,
                (),
                None,
                cuda is not None,
                False,
                f"{sp}/tensorflow/python/_pywrap_tensorflow_internal.so",
                "tensorflow/python/platform/build_info.py; recipes",
            )
        )
        if cudnn:
            major = int(cudnn.split(".")[0])
            from fixer.system.versions import version_key as vkey

            first = [("DT_RUNPATH", self.pip_cudnn.get(major))] if vkey(pub) >= (2, 14) else []
            self.resolve_load("tensorflow", major, first)

    def jax_plugin(self, recipes: m.Recipes, plugin: str) -> None:
        v = self.dists[plugin]
        cm = int(re.search(r"cuda(\d+)", plugin).group(1))  # type: ignore[union-attr]
        b = _find_build(recipes, "jax", v, f"cuda{cm}", cm)
        cuda = b.cuda if b else f"{cm}.0"
        cudnn = b.cudnn if b else None
        self.frameworks.append(
            m.FrameworkBuild(
                "jax",
                plugin,
                v,
                f"{self.sp}/jax_plugins",
                f"cuda{cm}",
                cuda,
                cudnn,
                None,
                (),
                None,
                True,
                True,
                None,
                "jax_plugins metadata; recipes",
            )
        )
        if cudnn:
            major = int(cudnn.split(".")[0])
            self.resolve_load("jax", major, [("preload", self.pip_cudnn.get(major))])

    def jaxlib(self) -> None:
        v = self.dists["jaxlib"]
        mm = re.search(r"cuda(\d+)\.cudnn(\d)(\d+)", v)
        if not mm:
            return
        cuda = mm.group(1) + ".0"
        digits = mm.group(3)
        minor, patch = (digits[0], digits[1:] or "0") if len(digits) > 1 else (digits, "0")
        cudnn = f"{mm.group(2)}.{minor}.{patch}"
        self.frameworks.append(
            m.FrameworkBuild(
                "jax",
                "jaxlib",
                v,
                f"{self.sp}/jaxlib",
                f"cuda{mm.group(1)}",
                cuda,
                cudnn,
                None,
                (),
                None,
                True,
                False,
                None,
                "jaxlib version label",
            )
        )
        self.resolve_load("jax", int(mm.group(2)), [])


def build_environment(
    image: Image,
    gpu: m.Gpu,
    recipes: m.Recipes,
    *,
    driver: Optional[str] = None,
    overrides: Optional[Dict[str, str]] = None,
    kernel_loaded: Sequence[str] = (),
) -> m.Environment:
    """The Environment doctor would report for `image` on a Colab VM with `gpu`.
    `overrides` replaces distribution versions (a user's `pip install X==V`); "" removes one."""
    dists = dict(image.dists)
    for k, v in (overrides or {}).items():
        if v:
            dists[canon(k)] = v
        else:
            dists.pop(canon(k), None)
    pyver = image.python
    sp = f"/usr/local/lib/python{'.'.join(pyver.split('.')[:2])}/dist-packages"
    machine = _Machine(dists, image, sp)
    if "torch" in dists:
        machine.torch(recipes)
    if "tensorflow" in dists:
        machine.tensorflow(recipes)
    plugin = next((k for k in dists if re.match(r"jax-cuda\d+-plugin$", k)), None)
    if plugin:
        machine.jax_plugin(recipes, plugin)
    elif "jaxlib" in dists and "cuda" in dists["jaxlib"]:
        machine.jaxlib()
    return _environment(image, gpu, recipes, driver or image.driver, kernel_loaded, machine)


def _environment(
    image: Image,
    gpu: m.Gpu,
    recipes: m.Recipes,
    driver: Optional[str],
    kernel_loaded: Sequence[str],
    machine: _Machine,
) -> m.Environment:
    distributions = tuple(
        m.Distribution(k, v, machine.sp, "pip") for k, v in sorted(machine.dists.items())
    )
    return m.Environment(
        tool_version="make_environments",
        gpus=(gpu,),
        driver=m.Driver(
            driver,
            _driver_cuda(recipes, driver),
            "/usr/lib64-nvidia/libcuda.so.1",
            None,
            "override",
            None,
        ),
        runtime=m.Runtime(
            "colab",
            "gpu",
            f"{image.date} {image.commit[:7]}",
            None,
            "x86_64",
            None,
            bool(kernel_loaded),
            None,
            tuple(kernel_loaded),
            image.source,
        ),
        python=m.PythonEnv(
            "/usr/bin/python3",
            image.python,
            "/usr",
            "/usr",
            False,
            (machine.sp,),
            distributions,
            "24.1.2",
            None,
            None,
            False,
        ),
        frameworks=tuple(machine.frameworks),
        libraries=tuple(machine.libraries),
        loads=tuple(machine.loads),
        env={"LD_LIBRARY_PATH": machine.ld_path},
        probes=(m.ProbeNote("make_environments", True, image.source),),
    )


def doctor_json(env: m.Environment, description: str, compact: bool = False) -> str:
    body = {
        "schema": m.ENVIRONMENT_SCHEMA,
        "environment": m.to_dict(env),
        "findings": [],
        "description": description,
    }
    if compact:
        return json.dumps(body, separators=(",", ":")) + "\n"
    return json.dumps(body, indent=1, sort_keys=False) + "\n"


def bundled(recipes: m.Recipes) -> Dict[str, Tuple[m.Environment, str]]:
    out: Dict[str, Tuple[m.Environment, str]] = {}
    img = snapshot_image("2026-08-19_a724079")
    out["colab-2026-08"] = (
        build_environment(img, GPUS["t4"], recipes, driver="580.82.07"),
        "Colab GPU image of 2026-08-19 (a724079) on a T4, as shipped: healthy. Driver 580.82.07 "
        "(commit 66982a1's message; later drivers unknown).",
    )
    gpu_env = out["colab-2026-08"][0]
    out["colab-2026-08-cpu"] = (
        dataclasses.replace(
            gpu_env,
            gpus=(),
            driver=m.Driver(source="none: no NVIDIA device on a CPU runtime"),
            runtime=dataclasses.replace(gpu_env.runtime, accelerator="cpu"),
        ),
        "The same Colab image of 2026-08-19 (a724079) on a CPU runtime: the CUDA builds of torch and JAX are "
        "installed (Colab runs one image for every accelerator), no GPU is attached. Nothing can be repaired: "
        "doctor, plan and apply exit 3 with Colab's 'Runtime -> Change runtime type' hint.",
    )
    img = snapshot_image("2025-01-27_ba35a68")
    out["colab-2025-01-tf215"] = (
        build_environment(img, GPUS["t4"], recipes, overrides={"tensorflow": "2.15.1"}),
        "Colab GPU image of 2025-01-27 (ba35a68) on a T4 after `pip install tensorflow==2.15.1`: TensorFlow 2.15 "
        "needs cuDNN 8 and the image has only cuDNN 9 (pip nvidia-cudnn-cu12 9.3.0.75, apt libcudnn9-cuda-12 "
        "9.2.1.18). Driver: carried forward from the last one colab_images.csv records (530.30.02).",
    )
    # Our GPU machine: the environments are REAL `doctor --json` output recorded there by
    # scripts/device/doctor.sh (tests/data/gpu_machine/doctor_cases_h200.jsonl), not synthesised.
    out["h200-healthy"] = (
        recorded_h200("healthy"),
        "Our GPU machine (H200, driver 580.159.04, torch 2.11.0+cu130, "
        "JAX 0.11.2 cuda13), recorded by `doctor --json` there: healthy.",
    )
    out["h200-pip-cudnn-hidden"] = (
        recorded_h200("pip cuDNN hidden"),
        "Our GPU machine with site-packages/nvidia/cudnn/lib hidden, recorded by `doctor --json` there: torch "
        "(built with cuDNN 9.19) loads the apt libcudnn9-cuda-13 9.14 and fails its version check; reinstalling "
        "nvidia-cudnn-cu13 9.19.0.56 fixes it.",
    )
    return out


RECORDED_H200 = REPO / "tests" / "data" / "gpu_machine" / "doctor_cases_h200.jsonl"
#: The same cases in today's schema (ENVIRONMENT_SCHEMA): written by this script, read by the tests.
RECORDED_H200_CURRENT = REPO / "tests" / "data" / "gpu_machine" / "doctor_cases_h200.current.jsonl"


def recorded_h200(label_prefix: str) -> m.Environment:
    """The Environment `doctor --json` recorded on the GPU machine for the case whose label starts so."""
    for line in RECORDED_H200.read_text().splitlines():
        case = json.loads(line)
        if case["label"].startswith(label_prefix):
            return m.from_dict(m.Environment, upgrade_schema1(case["environment"]))
    raise SystemExit(f"{RECORDED_H200}: no case labelled {label_prefix!r}")


def recorded_h200_current() -> str:
    """Every recorded case, its environment in today's schema, one JSON object per line."""
    out = []
    for line in RECORDED_H200.read_text().splitlines():
        case = json.loads(line)
        env = m.from_dict(m.Environment, upgrade_schema1(case["environment"]))
        out.append(json.dumps(dict(case, environment=m.to_dict(env)), separators=(",", ":")))
    return "\n".join(out) + "\n"


def upgrade_schema1(env: Dict[str, object]) -> Dict[str, object]:
    """A schema-1 `doctor --json` environment (recorded on the GPU machine before schema 2) in
    schema 2: a copy's package "name version" becomes {"name", "version"}; each load's search,
    which schema 1 kept only as the words of `steps`, becomes `search` and `ld_preload` data.
    This reads the words detect wrote then (fixer/detect/loader.py at that time):
    "LD_PRELOAD: A B" (or "-"), "torch preloads by path: /x/a.so, /y/b.so",
    "DT_RPATH of /x/lib.so: $ORIGIN/..:/abs", "LD_LIBRARY_PATH: /a:/b" (or "-"),
    "DT_RUNPATH of /x/lib.so: ...", "ld.so.cache: /dir/lib.so" (or "-")."""
    import os.path as op

    out = dict(env, schema=m.ENVIRONMENT_SCHEMA)
    libs = []
    for c in env.get("libraries") or []:  # type: ignore[union-attr]
        c = dict(c)
        pkg = c.get("package")
        if isinstance(pkg, str):
            name, _, ver = pkg.partition(" ")
            c["package"] = {"name": name, "version": ver or None}
        libs.append(c)
    out["libraries"] = libs
    loads = []
    for ld in env.get("loads") or []:  # type: ignore[union-attr]
        ld = dict(ld)
        search: List[Dict[str, str]] = []
        preloaded: List[str] = []
        for step in ld.get("steps") or []:
            head, sep, tail = step.partition(": ")
            if not sep or tail == "-":
                continue
            mm = re.match(r"^(DT_RPATH|DT_RUNPATH) of (\S+)$", head)
            if mm:
                origin = op.dirname(mm.group(2))
                search += [
                    {
                        "via": mm.group(1),
                        "directory": op.normpath(
                            e.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
                        ),
                    }
                    for e in tail.split(":")
                    if e
                ]
            elif head.endswith(" preloads by path"):
                search += [
                    {"via": "preload", "directory": op.dirname(p.strip())}
                    for p in tail.split(",")
                    if p.strip()
                ]
            elif head == "LD_PRELOAD":
                preloaded = tail.split()
                search += [
                    {"via": "LD_PRELOAD", "directory": op.dirname(p)}
                    for p in preloaded
                    if p.startswith("/")
                ]
            elif head == "LD_LIBRARY_PATH":
                search += [
                    {"via": "LD_LIBRARY_PATH", "directory": op.normpath(d)}
                    for d in tail.split(":")
                    if d
                ]
            elif head == "ld.so.cache" and tail.startswith("/"):
                search.append({"via": "ld.so.cache", "directory": op.dirname(tail)})
        ld.setdefault("search", search)
        ld.setdefault("ld_preload", preloaded)
        loads.append(ld)
    out["loads"] = loads
    return out


def replay_images() -> List[Image]:
    return csv_images()


def images_json(images: Sequence[Image]) -> str:
    rows = [
        {
            "name": i.name,
            "date": i.date,
            "commit": i.commit,
            "python": i.python,
            "dists": i.dists,
            "apt": i.apt,
            "driver": i.driver,
            "source": i.source,
        }
        for i in images
    ]
    return json.dumps(rows, indent=0, sort_keys=True) + "\n"


def load_images(path: Path = REPLAY_DIR / "images.json") -> List[Image]:
    """The replay set as written by this script (tests build each GPU's Environment from it)."""
    return [
        Image(r["date"], r["commit"], r["python"], r["dists"], r["apt"], r["driver"], r["source"])
        for r in json.loads(path.read_text())
    ]


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--check",
        action="store_true",
        help="compare with the files on disk; exit 1 on a difference",
    )
    ap.add_argument("--no-replay", action="store_true", help="only the bundled examples")
    args = ap.parse_args(argv)
    recipes = _recipes()
    files: Dict[Path, str] = {}
    for name, (env, desc) in bundled(recipes).items():
        files[BUNDLED_DIR / f"{name}.json"] = doctor_json(env, desc)
    files[RECORDED_H200_CURRENT] = recorded_h200_current()
    if not args.no_replay:
        files[REPLAY_DIR / "images.json"] = images_json(replay_images())
    stale = [p for p, text in files.items() if not p.exists() or p.read_text() != text]
    if args.check:
        for p in stale:
            print(f"stale: {p.relative_to(REPO)}")
        return 1 if stale else 0
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    print(f"wrote {len(files)} files ({len(stale)} changed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
