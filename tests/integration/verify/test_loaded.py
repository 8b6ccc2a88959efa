"""The loaded-library check on real compiled stub libraries: the real child (libs mode) dlopens
files from two cuDNN copies, reads its own /proc/self/maps and asks each mapped file for
cudnnGetVersion; the parent turns that into cudnn-mixed / cudnn-too-old / ... ."""

from __future__ import annotations

import ctypes
import sys

import pytest

from fixer.children import verify as child
from fixer.verifier.checks import run_check
from tests.helpers.stublibs import build_cudnn_copy, cc

pytestmark = pytest.mark.skipif(cc() is None, reason="no C compiler to build stub libraries")
PY = sys.executable


def libs(*paths, built=None):
    args = []
    for p in paths:
        args += ["--dlopen", str(p)]
    if built:
        args += ["--built", built]
    return run_check(PY, "libs", args=args, timeout=60)


def ids(result):
    return [f.id for f in result.findings]


def test_sub_library_from_another_copy_is_cudnn_mixed(tmp_path):
    pip = build_cudnn_copy(tmp_path / "site-packages/nvidia/cudnn/lib", "9.19.0")
    apt = build_cudnn_copy(tmp_path / "usr/lib/x86_64-linux-gnu", "9.14.0", versioned_files=True)
    r = libs(
        pip / "libcudnn.so.9",
        apt / "libcudnn_ops.so.9",
        pip / "libcudnn_graph.so.9",
        built="9.19.0",
    )
    assert ids(r) == ["cudnn-mixed"], r
    mixed = r.findings[0]
    assert "libcudnn_ops.so.9.14.0 9.14.0 from " + str(apt) in mixed.title
    assert str(pip) in mixed.title
    assert r.cudnn_loaded == "9.19.0"
    assert str(apt / "libcudnn_ops.so.9.14.0") in r.mapped  # maps show the symlink's target


def test_older_copy_than_the_build_is_cudnn_too_old_even_when_nothing_failed(tmp_path):
    apt = build_cudnn_copy(tmp_path / "apt", "9.14.0", versioned_files=True)
    r = libs(apt / "libcudnn.so.9", apt / "libcudnn_graph.so.9", built="9.19.0")
    assert ids(r) == ["cudnn-too-old"]
    assert r.cudnn_loaded == "9.14.0" and r.cudnn_built == "9.19.0"
    assert str(apt) in r.findings[0].title and "9.19.0" in r.findings[0].title


def test_other_major_is_cudnn_major_mismatch(tmp_path):
    old = build_cudnn_copy(tmp_path / "cudnn8", "8.9.7")
    r = libs(old / "libcudnn.so.8", built="9.1.0")
    assert ids(r) == ["cudnn-major-mismatch"]


def test_copy_without_engines_precompiled_is_cudnn_incomplete(tmp_path):
    pip = build_cudnn_copy(tmp_path / "pip", "9.19.0", skip=["libcudnn_engines_precompiled.so.9"])
    r = libs(pip / "libcudnn.so.9", built="9.19.0")
    assert ids(r) == ["cudnn-incomplete"]
    assert any("libcudnn_engines_precompiled.so.9" in e for e in r.findings[0].evidence)


def test_one_complete_copy_at_the_built_version_has_no_findings(tmp_path):
    pip = build_cudnn_copy(tmp_path / "pip", "9.19.0")
    r = libs(pip / "libcudnn.so.9", pip / "libcudnn_cnn.so.9", built="9.19.0")
    assert r.findings == ()
    assert r.cudnn_loaded == "9.19.0" and len(r.mapped) == 2


def test_newer_minor_than_the_build_is_fine(tmp_path):
    pip = build_cudnn_copy(tmp_path / "pip", "9.20.0")
    assert libs(pip / "libcudnn.so.9", built="9.19.0").findings == ()


def test_maps_parser_keeps_order_dedupes_and_strips_deleted():
    maps = "\n".join(
        [
            "7f00-7f01 r--p 00000000 08:01 1 /sp/nvidia/cudnn/lib/libcudnn.so.9",
            "7f01-7f02 r-xp 00001000 08:01 1 /sp/nvidia/cudnn/lib/libcudnn.so.9",
            "7f02-7f03 r--p 00000000 08:01 2 /usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.14.0 (deleted)",
            "7f03-7f04 r--p 00000000 08:01 3 /usr/lib/libcublas.so.13",
            "7f04-7f05 rw-p 00000000 00:00 0 ",
            "7f05-7f06 r--p 00000000 08:01 4 /opt/x/libcudnn_engines_precompiled.so.9",
        ]
    )
    assert child.mapped_cudnn_files(maps) == [
        "/sp/nvidia/cudnn/lib/libcudnn.so.9",
        "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9.14.0",
        "/opt/x/libcudnn_engines_precompiled.so.9",
    ]


@pytest.mark.parametrize(
    "raw,text",
    [(91900, "9.19.0"), (91400, "9.14.0"), (90100, "9.1.0"), (8907, "8.9.7"), (7605, "7.6.5")],
)
def test_decode_cudnn_version(raw, text):
    assert child.cudnn_version_from_int(raw) == text


def test_version_of_a_file_not_mapped_is_not_loaded_to_find_out(tmp_path):
    pip = build_cudnn_copy(tmp_path / "pip", "9.19.0")
    # RTLD_NOLOAD: asking for a file that is not mapped answers None and maps nothing.
    assert child._mapped_version(str(pip / "libcudnn_adv.so.9")) is None
    ctypes.CDLL(str(pip / "libcudnn_adv.so.9"))
    assert child._mapped_version(str(pip / "libcudnn_adv.so.9")) == "9.19.0"
