"""Loader fixes decided in one place (fixer.planner.envfix): what plan shows is what apply and lock write.
The files are executed for real: the env file by sh, the IPython startup file by Python."""

import os
import subprocess
import sys

import pytest

from fixer import model as m
from fixer.planner.envfix import env_fix_steps, environ_after
from tests.helpers.stublibs import build_cudnn_copy


def _source(content, tmp_path, environ):
    script = tmp_path / "env.sh"
    script.write_text(content)
    out = subprocess.run(
        [
            "sh",
            "-c",
            f'. "{script}"; printf "%s|%s" "${{LD_LIBRARY_PATH-unset}}" "${{LD_PRELOAD-unset}}"',
        ],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **environ},
        check=True,
    )
    return out.stdout.split("|")


def test_ld_preload_drop_rewrites_ld_preload_only(tmp_path):
    fixes = [
        m.EnvFix("ld-preload-drop", "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9", why="forced")
    ]
    (step,) = env_fix_steps(fixes, home=str(tmp_path), is_root=True)
    lib_path, preload = _source(
        step.content,
        tmp_path,
        {
            "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9 /opt/other.so",
            "LD_LIBRARY_PATH": "/a:/b",
        },
    )
    assert preload == "/opt/other.so" and lib_path == "/a:/b"
    _, preload = _source(
        step.content, tmp_path, {"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9"}
    )
    assert preload == "unset"


def test_ipython_preload_of_a_library_file_maps_that_copy(tmp_path):
    copy = build_cudnn_copy(tmp_path / "site" / "nvidia" / "cudnn" / "lib", "9.19.0")
    fixes = [
        m.EnvFix("ipython-preload", f"{copy}/libcudnn.so.9", why="kernel"),
        m.EnvFix("ld-library-path-drop", "/usr/lib/x86_64-linux-gnu", why="shadow"),
    ]
    steps = env_fix_steps(fixes, home=str(tmp_path / "home"), is_root=False)
    assert [os.path.basename(s.files[0]) for s in steps] == [
        "00-colab-cudnn-fix.py"
    ]  # no /etc file as a user
    startup = tmp_path / "startup.py"
    startup.write_text(steps[0].content)
    probe = (
        f"exec(open({str(startup)!r}).read());"
        "import os; print(os.environ.get('LD_LIBRARY_PATH','-'));"
        "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn' in l}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu:/x", "PATH": os.environ["PATH"]},
    ).stdout
    first, mapped = out.splitlines()
    assert first == "/x"
    assert f"{copy}/libcudnn.so.9" in mapped and f"{copy}/libcudnn_graph.so.9" in mapped


def test_sandbox_paths_and_no_ldconfig_there(tmp_path):
    fixes = [m.EnvFix("ld-so-conf", "/opt/cudnn/lib", why="not searched")]
    (step,) = env_fix_steps(fixes, home="/root", root=str(tmp_path))
    assert step.files == (f"{tmp_path}/etc/ld.so.conf.d/00-colab-cudnn-fix.conf",)
    assert step.argv == ()
    assert step.content.splitlines()[1:] == ["/opt/cudnn/lib"]


def test_ipython_preload_of_cuda_libraries_loads_dependencies_first(tmp_path):
    # The kernel started with an older CUDA 12.1 toolkit on LD_LIBRARY_PATH. Preloading the
    # framework's own cuBLAS by path must bring its own cuBLASLt too: cuBLASLt goes first, else
    # cuBLAS's DT_NEEDED would find the toolkit's libcublasLt.so.12 through LD_LIBRARY_PATH.
    from tests.helpers.stublibs import build_stub

    old, own = tmp_path / "cuda-12.1" / "lib64", tmp_path / "site" / "nvidia" / "cublas" / "lib"
    for d, v in ((old, 12010), (own, 12060)):
        lt = build_stub(d / "libcublasLt.so.12", exports={"cublasLtGetVersion": v})
        build_stub(
            d / "libcublas.so.12",
            exports={"cublasGetVersion_v2_stub": v},
            needed=[lt],
            runpath=["$ORIGIN"],
        )
    fixes = [
        m.EnvFix("ld-library-path-drop", str(old), why="older toolkit"),
        m.EnvFix("ipython-preload", f"{own}/libcublas.so.12", why="kernel"),
        m.EnvFix("ipython-preload", f"{own}/libcublasLt.so.12", why="kernel"),
    ]
    steps = env_fix_steps(fixes, home=str(tmp_path / "home"), is_root=False)
    (step,) = [s for s in steps if s.files[0].endswith("00-colab-cudnn-fix.py")]
    assert "libcublasLt.so.12, libcublas.so.12 by path" in step.summary
    startup = tmp_path / "startup.py"
    startup.write_text(step.content)
    probe = (
        f"exec(open({str(startup)!r}).read());import ctypes;"
        "lt = ctypes.CDLL('libcublasLt.so.12'); lt.cublasLtGetVersion.restype = ctypes.c_size_t;"
        "print(lt.cublasLtGetVersion());"
        "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcublas' in l}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={"LD_LIBRARY_PATH": f"{old}:/x", "PATH": os.environ["PATH"]},
    ).stdout
    version, mapped = out.splitlines()
    assert version == "12060"
    assert (
        str(old) not in mapped
        and f"{own}/libcublasLt.so.12" in mapped
        and f"{own}/libcublas.so.12" in mapped
    )


@pytest.mark.parametrize(
    "fixes,environ",
    [
        (
            [m.EnvFix("ld-library-path-drop", "/usr/local/cuda-12.1/lib64")],
            {"LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64/:/usr/local/nvidia/lib64::/x"},
        ),  # trailing slash, empty entry
        (
            [
                m.EnvFix("ld-library-path-drop", "/opt/old"),
                m.EnvFix("ld-library-path-add", "/opt/new"),
            ],
            {"LD_LIBRARY_PATH": "/opt/old:/opt/new:/y"},
        ),
        (
            [m.EnvFix("ld-library-path-drop", "/opt/old")],
            {"LD_LIBRARY_PATH": "/opt/old"},
        ),  # nothing left: unset
        (
            [m.EnvFix("ld-preload-drop", "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9")],
            {
                "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9 /opt/other.so",
                "LD_LIBRARY_PATH": "/a",
            },
        ),
        ([m.EnvFix("ld-library-path-drop", "/opt/old")], {}),
    ],
)
def test_environ_after_is_what_the_env_file_does_in_a_real_shell(tmp_path, fixes, environ):
    # apply checks its result in the environment a new shell gets: the Python twin must agree with sh.
    steps = [
        s
        for s in env_fix_steps(fixes, home=str(tmp_path), is_root=True)
        if s.files[0].endswith(".sh")
    ]
    lib_path, preload = _source(steps[0].content, tmp_path, environ)
    after = environ_after(fixes, {"PATH": "/usr/bin:/bin", **environ})
    assert after.get("LD_LIBRARY_PATH", "unset") == lib_path
    assert after.get("LD_PRELOAD", "unset") == preload
    dropped = {f.value for f in fixes if f.kind == "ld-library-path-drop"}
    assert not [d for d in lib_path.split(":") if d.rstrip("/") in dropped]
