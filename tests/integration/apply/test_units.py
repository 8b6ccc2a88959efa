"""Lock, journal, loader fixes and kernel detection on real files and real processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import Dict

import pytest

from fixer.applier import envfix
from fixer.applier.colab import find_kernel, mapped_gpu_libraries, parent_pid, restart_kernel
from fixer.applier.filelock import ApplyLock
from fixer.applier.journal import Journal, atomic_write
from fixer.applier.runner import run_command
from fixer.model import CommandResult
from fixer.errors import LockHeld, UsageError
from fixer.model import EnvFix, Plan, Step
from fixer.planner import installers
from tests.helpers.stublibs import build_cudnn_copy
from tests.helpers.paths import REPO


# -- lock ------------------------------------------------------------------------------------


def test_second_lock_names_the_holder_and_sigkill_frees_it(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
        import sys, time
        from fixer.applier.filelock import ApplyLock
        ApplyLock(__import__("pathlib").Path({str(tmp_path)!r}), command="colab-cudnn-fix apply --yes").acquire()
        print("held", flush=True); time.sleep(60)
    """),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(LockHeld) as info:
        ApplyLock(tmp_path).acquire()
    msg = info.value.message
    assert f"pid {holder.pid}" in msg and "colab-cudnn-fix apply --yes" in msg
    holder.kill()
    holder.wait()
    with ApplyLock(tmp_path) as lock:  # the kernel dropped the dead holder's lock
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
    assert lock.path.read_text() == ""


# -- journal ---------------------------------------------------------------------------------


def test_journal_last_and_atomic_write(tmp_path):
    assert Journal.last(tmp_path) is None
    j = Journal.create(tmp_path, python="/usr/bin/python3", root=None)
    j.set(status="applying")
    again = Journal.last(tmp_path)
    assert again.id == j.id and again.status == "applying"
    atomic_write(tmp_path / "x" / "f.txt", b"one")
    atomic_write(tmp_path / "x" / "f.txt", b"two", mode=0o600)
    assert (tmp_path / "x" / "f.txt").read_bytes() == b"two"
    assert (tmp_path / "x" / "f.txt").stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["f.txt"]  # no temporary left


# -- runner ----------------------------------------------------------------------------------


def test_runner_streams_output_and_times_out():
    lines = []
    res = run_command(
        [sys.executable, "-c", "print('a'); print('b')"], timeout=30, on_output=lines.append
    )
    assert res.rc == 0 and lines == ["a", "b"]
    res = run_command([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert res.timed_out and res.rc == 124
    assert run_command(["/nonexistent/tool"], timeout=5).rc == 127


# -- loader fixes ----------------------------------------------------------------------------


def test_env_file_drops_shadowing_entries_in_a_real_shell(tmp_path):
    f = tmp_path / "fix.sh"
    f.write_text(
        envfix.env_file_content(
            ["/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64"],
            prepend=["/opt/venv/nvidia/cudnn/lib"],
        )
    )
    env = {
        "PATH": os.environ["PATH"],
        "LD_LIBRARY_PATH": "/usr/local/nvidia/lib64:/usr/lib/x86_64-linux-gnu::/usr/local/cuda/lib64:/x",
    }
    out = subprocess.run(
        ["sh", "-c", f'. "{f}"; echo "[$LD_LIBRARY_PATH]"'],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "[/opt/venv/nvidia/cudnn/lib:/usr/local/nvidia/lib64:/x]"
    env["LD_LIBRARY_PATH"] = "/usr/lib/x86_64-linux-gnu"
    drop_only = tmp_path / "drop.sh"
    drop_only.write_text(envfix.env_file_content(["/usr/lib/x86_64-linux-gnu"]))
    out = subprocess.run(
        ["sh", "-c", f'. "{drop_only}"; echo "[${{LD_LIBRARY_PATH-unset}}]"'],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == "[unset]"


def test_ipython_startup_preloads_the_intended_cudnn(tmp_path):
    good = build_cudnn_copy(tmp_path / "pip" / "nvidia" / "cudnn" / "lib", "9.19.0")
    startup = tmp_path / "00-colab-cudnn-fix.py"
    startup.write_text(
        envfix.ipython_startup_content(str(good), drop=["/usr/lib/x86_64-linux-gnu"])
    )
    probe = textwrap.dedent(f"""
        import ctypes, os
        exec(open({str(startup)!r}).read())
        lib = ctypes.CDLL("libcudnn.so.9")           # by soname, as a framework does
        lib.cudnnGetVersion.restype = ctypes.c_size_t
        maps = [l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l]
        print(lib.cudnnGetVersion(), os.environ.get("LD_LIBRARY_PATH"), len(set(maps)), all(m.startswith({str(good)!r}) for m in maps))
    """)
    env = {**os.environ, "LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu:/somewhere"}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["91900", "/somewhere", "8", "True"]


def test_env_fix_steps_write_idempotently_under_root(tmp_path):
    fixes = (
        EnvFix(kind="ld-library-path-drop", value="/usr/lib/x86_64-linux-gnu"),
        EnvFix(kind="ld-so-conf", value="/opt/venv/nvidia/cudnn/lib"),
        EnvFix(kind="ipython-preload", value="/opt/venv/nvidia/cudnn/lib"),
    )
    steps = envfix.env_fix_steps(fixes, home="/root", is_root=True)
    assert [s.files for s in steps] == [
        (envfix.ENV_FILE,),
        (envfix.LD_SO_CONF,),
        ("/root/.ipython/profile_default/startup/00-colab-cudnn-fix.py",),
    ]
    from fixer.applier.prepare import plan_files
    from fixer.system import fsgate

    # the gate allows exactly the loader-fix files of the steps (fixer.applier.prepare.confine)
    allowed = plan_files(steps, str(tmp_path))
    with fsgate.allowed(files=allowed):
        for s in steps:
            path = envfix.target_path(s.files[0], str(tmp_path))
            assert str(path).startswith(str(tmp_path))
            assert envfix.target_path(str(path), str(tmp_path)) == path  # already rooted
            assert envfix.write_managed(path, s.content) is True
            assert envfix.write_managed(path, s.content) is False  # idempotent
            assert envfix.is_managed(path)
    with pytest.raises(fsgate.PathRefused):  # outside the block: nothing is allowed
        envfix.write_managed(envfix.target_path(steps[0].files[0], str(tmp_path)), "x")
    assert (tmp_path / "etc/ld.so.conf.d/00-colab-cudnn-fix.conf").read_text().splitlines()[
        1
    ] == "/opt/venv/nvidia/cudnn/lib"
    assert envfix.ldconfig_argv(str(tmp_path)) is None  # never in a sandbox
    assert envfix.needs_ldconfig([envfix.LD_SO_CONF]) and not envfix.needs_ldconfig(
        [envfix.ENV_FILE]
    )
    # not root: nothing under /etc
    user_steps = envfix.env_fix_steps(fixes, home="/home/u", is_root=False)
    assert [s.files[0] for s in user_steps] == [
        "/home/u/.ipython/profile_default/startup/00-colab-cudnn-fix.py"
    ]


def test_bad_directories_are_usage_errors():
    with pytest.raises(UsageError):
        envfix.env_file_content(["relative/dir"])
    with pytest.raises(UsageError):
        envfix.ld_so_conf_content(["/a:/b"])


# -- notebook kernel -------------------------------------------------------------------------


def test_kernel_ancestor_with_cudnn_loaded_needs_restart(tmp_path):
    lib = build_cudnn_copy(tmp_path / "lib", "9.19.0")
    script = textwrap.dedent(f"""
        import ctypes, subprocess, sys
        ctypes.CDLL({str(lib / "libcudnn.so.9")!r}, mode=ctypes.RTLD_GLOBAL)
        out = subprocess.run([sys.executable, "-c",
            "from fixer.applier.colab import find_kernel; k = find_kernel(); print(k.pid, k.restart_needed, k.loaded[0])"],
            capture_output=True, text=True, cwd={str(REPO)!r})
        print(out.stdout.strip() or out.stderr)
    """)
    # argv carries the launcher name, as `python -m ipykernel_launcher -f ...` does
    proc = subprocess.run(
        ["sh", "-c", 'exec "$0" -c "$1" ipykernel_launcher -f kernel.json', sys.executable, script],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    pid, needed, loaded = proc.stdout.split()
    assert needed == "True" and loaded == str(lib / "libcudnn.so.9")
    assert find_kernel() is None  # pytest runs under no kernel


def test_restart_kills_the_kernel_process():
    fake = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", "colab_kernel_launcher"]
    )
    assert parent_pid(fake.pid) == os.getpid()
    from fixer.applier.colab import KernelInfo, cmdline

    deadline = time.time() + 10
    while "colab_kernel_launcher" not in cmdline(fake.pid) and time.time() < deadline:
        time.sleep(0.02)  # until exec() has happened
    assert "colab_kernel_launcher" in cmdline(fake.pid)
    said = restart_kernel(KernelInfo(pid=fake.pid, cmdline=cmdline(fake.pid)))
    assert fake.wait(timeout=10) == -signal.SIGKILL
    assert f"kernel pid {fake.pid}" in said
    assert mapped_gpu_libraries(fake.pid) == ()


# -- apt journal and restore (apt itself cannot run here: a recorded dpkg state stands in) ----


def apt_install_and_hold(pkgs: Dict[str, str]) -> Plan:
    """The plan the planner writes for an apt cuDNN: install `pkgs` (name -> version), then hold them."""
    return Plan(
        steps=(
            Step(
                kind="apt-install",
                summary="apt",
                argv=installers.apt_install(pkgs),
                packages=tuple(f"{k}={v}" for k, v in pkgs.items()),
            ),
            Step(
                kind="apt-hold",
                summary="hold",
                argv=installers.apt_hold(list(pkgs)),
                packages=tuple(pkgs),
            ),
        )
    )


class FakeApt:
    """dpkg/apt-get/apt-mark over a dict, for the journal's apt bookkeeping."""

    def __init__(self, installed, held=()):
        self.installed = dict(installed)
        self.held = set(held)
        self.calls = []

    def __call__(self, argv, *, timeout, on_output=None, env=None):
        self.calls.append(tuple(argv))
        if argv[0] == "dpkg-query":
            v = self.installed.get(argv[-1])
            return (
                CommandResult(rc=0, output=f"install ok installed {v}")
                if v
                else CommandResult(rc=1)
            )
        if argv[:2] == ["apt-mark", "showhold"] or tuple(argv[:2]) == ("apt-mark", "showhold"):
            return CommandResult(rc=0, output="\n".join(sorted(self.held)))
        if argv[0] == "apt-mark":
            names = [w for w in argv[2:] if w != "--"]  # the end-of-options marker is no name
            (self.held.update if argv[1] == "hold" else self.held.difference_update)(names)
            return CommandResult(rc=0)
        if argv[0] == "apt-get" and "install" in argv:
            for spec in argv:
                if "=" in spec and not spec.startswith("-"):
                    k, v = spec.split("=", 1)
                    self.installed[k] = v
            return CommandResult(rc=0)
        if argv[0] == "apt-get" and "remove" in argv:
            for name in argv[3:]:
                if not name.startswith("-"):
                    self.installed.pop(name, None)
            return CommandResult(rc=0)
        return run_command(argv, timeout=timeout, on_output=on_output)


def test_apt_versions_and_holds_are_restored(venv, tmp_path):
    from fixer.applier import apply_plan, rollback
    from fixer.model import PlanOptions

    apt = FakeApt({"libcudnn9-cuda-13": "9.14.0.64-1"}, held={"libcublas-13-0"})
    pkgs = {"libcudnn9-cuda-13": "9.19.0.56-1", "libcudnn9-dev-cuda-13": "9.19.0.56-1"}
    plan = apt_install_and_hold(pkgs)
    apply_plan(plan, python=venv, options=PlanOptions(root=str(tmp_path)), runner=apt)
    assert apt.installed["libcudnn9-cuda-13"] == "9.19.0.56-1" and "libcudnn9-cuda-13" in apt.held
    back = rollback(root=str(tmp_path), runner=apt)
    assert back.exact
    assert apt.installed == {"libcudnn9-cuda-13": "9.14.0.64-1"}
    assert apt.held == {"libcublas-13-0"}
