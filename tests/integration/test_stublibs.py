import ctypes
import subprocess

from tests.helpers.stublibs import build_cudnn_copy, build_stub


def test_stub_exports_version_and_sets_runpath(tmp_path):
    lib = build_stub(
        tmp_path / "libcudnn.so.9", exports={"cudnnGetVersion": 91400}, runpath=["$ORIGIN"]
    )
    f = ctypes.CDLL(str(lib)).cudnnGetVersion
    f.restype = ctypes.c_size_t
    assert f() == 91400
    dyn = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True).stdout
    assert "RUNPATH" in dyn and "$ORIGIN" in dyn and "libcudnn.so.9" in dyn


def test_apt_style_copy_with_missing_sublib(tmp_path):
    d = build_cudnn_copy(
        tmp_path / "apt", "9.14.0", versioned_files=True, skip=["libcudnn_cnn.so.9"]
    )
    names = sorted(p.name for p in d.iterdir())
    assert "libcudnn.so.9.14.0" in names and "libcudnn.so.9" in names
    assert "libcudnn_cnn.so.9" not in names
