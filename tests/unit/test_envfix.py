"""Loader fixes decided in one place (fixer.envfix): what plan shows is what apply and lock write.
The files are executed for real: the env file by sh, the IPython startup file by Python."""
import os
import subprocess
import sys

from fixer import model as m
from fixer.envfix import env_fix_steps
from tests.helpers.stublibs import build_cudnn_copy


def _source(content, tmp_path, environ):
    script = tmp_path / "env.sh"
    script.write_text(content)
    out = subprocess.run(["sh", "-c", f'. "{script}"; printf "%s|%s" "${{LD_LIBRARY_PATH-unset}}" "${{LD_PRELOAD-unset}}"'],
                         capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **environ}, check=True)
    return out.stdout.split("|")


def test_ld_preload_drop_rewrites_ld_preload_only(tmp_path):
    fixes = [m.EnvFix("ld-preload-drop", "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9", why="forced")]
    (step,) = env_fix_steps(fixes, home=str(tmp_path), is_root=True)
    lib_path, preload = _source(step.content, tmp_path, {
        "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9 /opt/other.so", "LD_LIBRARY_PATH": "/a:/b"})
    assert preload == "/opt/other.so" and lib_path == "/a:/b"
    _, preload = _source(step.content, tmp_path, {"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9"})
    assert preload == "unset"


def test_ipython_preload_of_a_library_file_maps_that_copy(tmp_path):
    copy = build_cudnn_copy(tmp_path / "site" / "nvidia" / "cudnn" / "lib", "9.19.0")
    fixes = [m.EnvFix("ipython-preload", f"{copy}/libcudnn.so.9", why="kernel"),
             m.EnvFix("ld-library-path-drop", "/usr/lib/x86_64-linux-gnu", why="shadow")]
    steps = env_fix_steps(fixes, home=str(tmp_path / "home"), is_root=False)
    assert [os.path.basename(s.files[0]) for s in steps] == ["00-colab-cudnn-fix.py"]   # no /etc file as a user
    startup = tmp_path / "startup.py"
    startup.write_text(steps[0].content)
    probe = (f"exec(open({str(startup)!r}).read());"
             "import os; print(os.environ.get('LD_LIBRARY_PATH','-'));"
             "print(sorted({l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn' in l}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         env={"LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu:/x", "PATH": os.environ["PATH"]}).stdout
    first, mapped = out.splitlines()
    assert first == "/x"
    assert f"{copy}/libcudnn.so.9" in mapped and f"{copy}/libcudnn_graph.so.9" in mapped


def test_sandbox_paths_and_no_ldconfig_there(tmp_path):
    fixes = [m.EnvFix("ld-so-conf", "/opt/cudnn/lib", why="not searched")]
    (step,) = env_fix_steps(fixes, home="/root", root=str(tmp_path))
    assert step.files == (f"{tmp_path}/etc/ld.so.conf.d/00-colab-cudnn-fix.conf",)
    assert step.argv == ()
    assert step.content.splitlines()[1:] == ["/opt/cudnn/lib"]
