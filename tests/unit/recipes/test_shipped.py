"""The shipped recipes load, validate clean, hold every row of the research data and the
facts the other stages depend on."""

from __future__ import annotations

import time
from pathlib import Path


from fixer import recipebook as rec
from fixer.system.compat import tomllib
from fixer.system.paths import recipes_dir
from tests.helpers.paths import REPO

ROOT = REPO


def test_shipped_recipes_validate_clean():
    assert rec.validate() == []
    r = rec.load()
    assert {Path(f).name for f in r.files} >= {
        "torch.toml",
        "tensorflow.toml",
        "jax.toml",
        "nvidia.toml",
        "colab.toml",
        "others.toml",
    }
    assert "errors.toml" not in {Path(f).name for f in r.files}


def test_every_file_has_schema_and_every_record_a_source():
    for f in sorted(recipes_dir().glob("*.toml")):
        if f.name in rec.NOT_RECIPES:
            continue
        doc = tomllib.loads(f.read_text())
        assert doc["schema"] == 1, f
        for kind, records in doc.items():
            if isinstance(records, list):
                for r in records:
                    assert r.get("source", "").strip(), (f.name, kind, r)


def test_every_torch_row_of_the_research_data_made_it_in(shared_data):
    data = tomllib.loads((shared_data / "torch_builds.toml").read_text())
    variants = {}
    for v in data["variant"]:
        if "cuda" in v:
            variants.setdefault(v["torch"], []).append(v["variant"])
    expected = {
        (d["torch"], var)
        for d in data["pypi_default"]
        for var in variants[".".join(d["torch"].split(".")[:2])]
    }
    got = {(b.version, b.variant) for b in rec.load().builds_for("torch")}
    assert len(expected) == 72
    assert got == expected
    defaults = {(d["torch"], d["pypi_default_variant"]) for d in data["pypi_default"]}
    for b in rec.load().builds_for("torch"):
        assert (b.index_url is None) == ((b.version, b.variant) in defaults), b


def test_every_tensorflow_row_made_it_in(shared_data):
    data = tomllib.loads((shared_data / "tensorflow_builds.toml").read_text())
    expected = set()
    for a in data["and_cuda"]:
        expected.add((a["tensorflow"], "system"))
        if a["has_and_cuda_extra"]:
            expected.add((a["tensorflow"], "and-cuda"))
    got = {(b.version, b.variant) for b in rec.load().builds_for("tensorflow")}
    assert len(expected) == 38
    assert got == expected


def test_every_jax_plugin_row_made_it_in(shared_data):
    data = tomllib.loads((shared_data / "jax_builds.toml").read_text())
    plugins = {(p["package"], p["version"]) for p in data["plugin"]}
    got = {(b.version, b.variant) for b in rec.load().builds_for("jax")}
    # every published plugin release is the plugin of the jax release of the same number
    expected = {(v, "cuda12" if "cuda12" in p else "cuda13") for p, v in plugins}
    assert len(expected) == 41
    assert got - expected == {("0.11.2", "cuda13")}  # added from the GPU machine's probe
    assert expected <= got


# --- facts the resolver, diagnosis and plan rely on ---------------------------------------


def _one(builds, variant):
    (b,) = [x for x in builds if x.variant == variant]
    return b


def test_torch_2_11_pypi_default_is_cu130():
    b = _one(rec.load().builds_for("torch", "2.11.0"), "cu130")
    assert b.index_url is None and b.packages == ("torch==2.11.0",)
    assert b.cuda == "13.0" and b.cudnn == "9.19.0"
    assert "nvidia-cudnn-cu13==9.19.0.56" in b.requires
    assert (
        b.compute_capabilities[0] == "7.5"
        and b.compute_capabilities[-1] == "12.0"
        and b.ptx == "12.0"
    )
    assert "torchvision==0.26.0" in b.companions and "torchaudio==2.11.0" in b.companions
    assert b.python == ">=3.10,<3.15"


def test_torch_2_11_cu128_trusts_metadata_over_release_md():
    b = _one(rec.load().builds_for("torch", "2.11.0"), "cu128")
    assert b.index_url == "https://download.pytorch.org/whl/cu128"
    assert b.packages == ("torch==2.11.0+cu128",)
    assert b.cudnn == "9.19.0" and "nvidia-cudnn-cu12==9.19.0.56" in b.requires
    assert "7.0" not in b.compute_capabilities


def test_torch_2_5_1_cu121_pins_cudnn_9_1_0_70():
    b = _one(rec.load().builds_for("torch", "2.5.1"), "cu121")
    assert b.requires == ("nvidia-cudnn-cu12==9.1.0.70",)
    assert b.cudnn == "9.1.0" and b.cuda == "12.1"
    assert b.companions == ("torchaudio==2.5.1", "torchvision==0.20.1")


def test_torch_cu126_keeps_pre_turing_kernels_for_p100():
    for b in rec.load().builds_for("torch", "2.11"):
        if b.variant == "cu126":
            assert {"6.0", "7.0"} <= set(b.compute_capabilities) and b.cudnn == "9.10.2"


def test_tensorflow_2_18_built_with_cudnn_9_3():
    builds = rec.load().builds_for("tensorflow", "2.18.0")
    assert {b.variant: b.cudnn for b in builds} == {"system": "9.3.0", "and-cuda": "9.3.0"}
    assert "nvidia-cudnn-cu12==9.3.0.75" in _one(builds, "and-cuda").requires
    assert _one(builds, "system").requires == ()
    assert _one(builds, "and-cuda").packages == ("tensorflow[and-cuda]==2.18.0",)


def test_tensorflow_2_20_asks_a_range():
    b = _one(rec.load().builds_for("tensorflow", "2.20.0"), "and-cuda")
    assert "nvidia-cudnn-cu12<10.0,>=9.3.0.75" in b.requires and b.cudnn == "9.3.0"


def test_jax_plugins_and_cudnn_floor():
    builds = rec.load().builds_for("jax", "0.7.2")
    c12, c13 = _one(builds, "cuda12"), _one(builds, "cuda13")
    assert c12.packages == ("jax[cuda12]==0.7.2",) and c12.cudnn == "9.8.0"
    assert "nvidia-cudnn-cu12<10.0,>=9.8" in c12.requires
    assert "jax-cuda12-plugin==0.7.2" in c12.companions
    assert c13.cudnn == "9.12.0" and "nvidia-cudnn-cu13<10.0,>=9.12.0.46" in c13.requires
    assert c13.min_compute_capability == "7.5" and c12.min_compute_capability == "5.2"


def test_cudnn_releases():
    r = rec.load()
    c911 = r.cudnn_release("9.11.0")
    assert c911 is not None and c911.min_compute_capability == "7.5"
    c919 = r.cudnn_release("9.19.0.56")
    assert c919.pip == {"nvidia-cudnn-cu12": "9.19.0.56", "nvidia-cudnn-cu13": "9.19.0.56"}
    assert c919.cuda_majors == (12, 13) and c919.min_compute_capability == "7.5"
    # every libcudnn9-cuda-1x twin of the pip versions (data/apt_cudnn.toml, each row with its source)
    assert r.cudnn_release("9.8.0").apt == {
        "libcudnn9-cuda-11": "9.8.0.87-1",
        "libcudnn9-cuda-12": "9.8.0.87-1",
    }
    assert r.cudnn_release("8.9.7").apt["libcudnn8"] == "8.9.7.29-1+cuda12.2"
    assert r.cudnn_release("9.14.0").apt == {
        "libcudnn9-cuda-12": "9.14.0.64-1",
        "libcudnn9-cuda-13": "9.14.0.64-1",
    }
    assert r.cudnn_release("9.10.2").min_compute_capability == "5.0"
    assert "nvidia-cudnn-cu11" in r.cudnn_release("9.10.2").pip


def test_driver_floors():
    r = rec.load()
    assert r.min_driver("13.0") == "580.65.06"
    assert r.min_driver("13.2") == "580.65.06"  # family floor (minor-version compatibility)
    assert r.min_driver("12.8") == "525.60.13"
    assert r.min_driver("11.8") == "450.80.02"
    assert r.min_driver("10.2") == "440.33"  # no family row: the toolkit's own
    assert {f.cuda for f in r.driver_floors} >= {"13", "12", "11", "13.0", "12.6"}


def test_gpus():
    r = rec.load()
    assert r.gpu_by_pci("0x1eb8").compute_capability == "7.5"
    assert r.gpu_by_pci("0x233510DE").name == "NVIDIA H200"
    assert r.gpu_by_pci("0x27b8").name == "NVIDIA L4"
    assert r.gpu_by_pci("0x20b2").compute_capability == "8.0"  # A100 SXM4 80GB
    assert r.gpu_by_pci("0x2237").compute_capability == "8.6"  # A10G, checked
    assert r.gpu_by_pci("0x102d").compute_capability == "3.7"  # K80
    assert r.gpu_by_pci("0x15f8").compute_capability == "6.0"  # P100
    assert r.gpu_by_pci("0x1db4").compute_capability == "7.0"  # V100
    assert r.gpu_by_name("Tesla T4").compute_capability == "7.5"
    for g in r.gpus:
        assert g.pci_device_ids or g.name.startswith("Jetson"), (
            g.name
        )  # Jetson GPUs are not PCI devices


def test_colab_image_2026_08_19():
    (img,) = [i for i in rec.load().colab_images if (i.date, i.commit) == ("2026-08-19", "a724079")]
    assert img.pip_cudnn == "nvidia-cudnn-cu12==9.19.0.56"
    assert img.apt_cudnn == "libcudnn9-cuda-12=9.8.0.87-1"
    assert img.torch == "2.11.0+cu128" and img.python == "3.13.15"


def test_colab_images_cover_every_distinct_state(shared_data):
    import csv

    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "import_shared_data", ROOT / "scripts" / "import_shared_data.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    COLAB_STATE = mod.COLAB_STATE

    rows = list(csv.DictReader(open(shared_data / "colab_images.csv", newline="")))
    states = {tuple(r[c] for c in COLAB_STATE) for r in rows}
    images = rec.load().colab_images
    assert len(images) >= len(states)
    assert {r["source_commit"][:7] for r in rows if r["release"]} <= {i.commit for i in images}


def test_others():
    r = rec.load()
    ct = {b.version: b for b in r.builds_for("ctranslate2")}
    assert ct["4.4.0"].cudnn == "8.9.7" and ct["4.5.0"].cudnn == "9.1.0"
    assert ct["4.6.3"].cudnn is None and ct["4.6.3"].cuda == "12.8"


def test_load_is_fast_and_cached():
    rec.clear_cache()
    t = time.process_time()  # CPU time: the JSON cache re-checks every record (a few tens of ms)
    rec.load()
    cold = time.process_time() - t
    t = time.perf_counter()
    for _ in range(100):
        rec.load()
    warm = (time.perf_counter() - t) / 100
    assert warm < 0.005
    assert cold < 0.5  # measured ~30 ms; the bound leaves room for a slow CI machine
