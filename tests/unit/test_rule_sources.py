"""The compatibility rules of fixer/rules.py and fixer/children/childrules.py that
tests/unit/test_compat_table.py does not pin, each against the source cited beside it:

- CUDNN_SUBLIBRARIES / expected_cudnn_sonames: the files the GPU machine's cuDNN 9 copy has
  (its recorded ldconfig -p, tests/data/gpu_machine/probe_h200_cuda13.txt);
- cudnn_version_from_int / cuda_version_from_int: the integer forms of cudnn_version.h and
  cuda.h (CUDNN_VERSION, CUDA_VERSION), generated over every major.minor.patch;
- older_minor: CUDA minor-version compatibility runs a build on a NEWER runtime minor of its
  major only (the CUDA Compatibility guide), generated;
- minor_version_floor: NVIDIA's Table 1 values in recipes/nvidia.toml;
- runs_under: under minor-version compatibility only SASS runs (no JIT of newer PTX), generated
  against runs_on;
- cuda_fit (the "cuda-minor-version" row) and runs_on_arch_list (the "kernels" row) against the
  statements of the CUDA Compatibility guide and the CUDA C++ Programming Guide, generated."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from fixer import rules
from fixer.children import childrules
from fixer.recipebook import load
from fixer.system.versions import older_minor, version_key
from tests.helpers.examples import examples

PROBE = Path(__file__).resolve().parents[1] / "data" / "gpu_machine" / "probe_h200_cuda13.txt"
RECIPES = load(())


def test_cudnn_9_sonames_are_the_files_the_gpu_machine_has():
    text = PROBE.read_text()
    section = text.split("## ldconfig cudnn/cuda", 1)[1].split("\n## ", 1)[0]
    found = set(re.findall(r"\b(libcudnn(?:_[a-z_]+)?\.so\.9)\b", section))
    assert found == set(rules.expected_cudnn_sonames(9))
    assert childrules.cudnn_sublibraries(10) == childrules.CUDNN_SUBLIBRARIES[9]


@settings(max_examples=examples(300))
@given(st.integers(1, 12), st.integers(0, 99), st.integers(0, 99))
def test_version_integers_invert_their_headers(major, minor, patch):
    """cudnn_version.h: CUDNN_VERSION = MAJOR*1000+MINOR*100+PATCH before 9 (minor < 10), and
    MAJOR*10000+MINOR*100+PATCH from 9; cuda.h: CUDA_VERSION = MAJOR*1000+MINOR*10."""
    if major < 9:
        minor, patch = minor % 10, patch % 100
        n = major * 1000 + minor * 100 + patch
    else:
        n = major * 10000 + minor * 100 + patch
    assert childrules.cudnn_version_from_int(n) == f"{major}.{minor}.{patch}"
    assert (
        rules.cuda_version_from_int(major * 1000 + (minor % 100) * 10) == f"{major}.{minor % 100}"
    )


@settings(max_examples=examples(300))
@given(
    st.tuples(st.integers(10, 14), st.integers(0, 9), st.integers(0, 200)),
    st.tuples(st.integers(10, 14), st.integers(0, 9)),
)
def test_older_minor_is_an_older_runtime_of_the_same_major(lib, built):
    v, b = ".".join(map(str, lib)), ".".join(map(str, built))
    assert older_minor(v, b) == (lib[0] == built[0] and lib[:2] < built)


def test_minor_version_floors_are_nvidias_table():
    floors = RECIPES.driver_floors
    assert rules.minor_version_floor(11, floors) == "450.80.02"
    assert rules.minor_version_floor(12, floors) == "525.60.13"
    assert rules.minor_version_floor(13, floors).startswith("580.")
    assert rules.minor_version_floor(10, floors) is None  # NVIDIA defines none before CUDA 11


CC = st.sampled_from(["7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"])
ARCH = st.sampled_from(["7.0", "7.5", "8.0", "8.6", "9.0", "10.0", "12.0"])


@settings(max_examples=examples(300))
@given(CC, st.lists(ARCH, max_size=4), st.one_of(st.none(), ARCH))
def test_minor_version_compatibility_runs_sass_only(cc, sass, ptx):
    if not sass and not ptx:
        assert rules.runs_under(cc, sass, ptx, "minor-version")
        return
    assert rules.runs_under(cc, sass, ptx, "native") == rules.runs_on(cc, sass, ptx)
    assert rules.runs_under(cc, sass, ptx, "minor-version") == rules.runs_on(cc, sass, None)
    assert rules.runs_under(cc, sass, ptx, None) is False


CUDA = st.tuples(st.integers(11, 13), st.integers(0, 9))
DRIVER = st.sampled_from(
    ["450.80.02", "470.256.02", "525.60.13", "535.104.05", "570.124.06", "580.65.06", "580.159.04"]
)


@settings(max_examples=examples(300))
@given(CUDA, CUDA, DRIVER)
def test_cuda_fit_is_the_compatibility_guide(build, driver_cuda, driver):
    """NVIDIA's CUDA Compatibility guide: a build runs natively when its CUDA is no newer than
    the driver's; a newer one of the same major runs by minor-version compatibility when the
    driver meets that major's floor (Table 1); nothing else runs."""
    floors = RECIPES.driver_floors
    fit = rules.cuda_fit(".".join(map(str, build)), driver, ".".join(map(str, driver_cuda)), floors)
    floor = rules.minor_version_floor(build[0], floors)
    if build <= driver_cuda:
        assert fit == "native"
    elif build[0] == driver_cuda[0] and floor and version_key(driver) >= version_key(floor):
        assert fit == "minor-version"
    else:
        assert fit is None


TOKEN = st.tuples(
    st.sampled_from(["sm", "compute"]),
    st.integers(5, 12),
    st.integers(0, 9),
    st.sampled_from(["", "a", "f"]),
)


@settings(max_examples=examples(500))
@given(st.tuples(st.integers(5, 12), st.integers(0, 9)), TOKEN)
def test_one_kernel_token_runs_where_the_programming_guide_says(cc, token):
    """CUDA C++ Programming Guide: cubin sm_XY runs on X.Z, Z >= Y; PTX compute_XY is JIT-compiled
    for any X.Y or newer; an arch-specific target (...a) runs on exactly its architecture, a
    family-specific one (...f) on its major with a minor >= its own."""
    kind, major, minor, suffix = token
    text = f"{kind}_{major}{minor}{suffix}"
    want = (major, minor)
    if suffix == "a":
        expected = cc == want
    elif kind == "sm" or suffix == "f":
        expected = cc[0] == major and cc[1] >= minor
    else:
        expected = cc >= want
    assert rules.runs_on_arch_list(f"{cc[0]}.{cc[1]}", [text]) == expected
