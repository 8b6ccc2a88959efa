"""The env-fix file a plan writes does what it says when a real shell sources it."""

from __future__ import annotations

import subprocess

from fixer import model as m
from fixer.planner.steps import make_plan
from fixer.resolver import resolve
from tests.helpers.envs import PIP_DIR, cudnn, load, make_env, pip_copy, small_recipes, tf_build


def test_env_fixes_carry_the_exact_file_content_under_root(tmp_path):
    good = pip_copy("9.3.0.75")
    bad = m.LibraryCopy("cudnn", 9, "9.1.0", "/opt/old/cudnn", "ld-library-path")
    env = make_env(
        dists={"tensorflow": "2.18.0", "nvidia-cudnn-cu12": "9.3.0.75"},
        frameworks=(
            m.FrameworkBuild("tensorflow", "tensorflow", "2.18.0", cuda="12.5", cudnn="9.3.0"),
        ),
        libraries=(good, bad),
        runtime=m.Runtime(
            kind="colab", in_notebook_kernel=True, kernel_loaded=("/opt/old/cudnn/libcudnn.so.9",)
        ),
        env={"LD_LIBRARY_PATH": "/opt/old/cudnn:/usr/local/nvidia/lib"},
        loads=(
            load(
                "tensorflow",
                bad,
                via="LD_LIBRARY_PATH",
                search=(("LD_LIBRARY_PATH", "/opt/old/cudnn"),),
            ),
        ),
    )
    recipes = small_recipes(
        [tf_build("2.18.0", "12.5", "9.3.0")],
        [cudnn("9.3.0", (12,), pip={"nvidia-cudnn-cu12": "9.3.0.75"})],
    )
    plan = make_plan(env, resolve(env, m.Intent(), recipes), m.PlanOptions(root=str(tmp_path)))
    fixes = [s for s in plan.steps if s.kind == "env-fix"]
    assert [s.files for s in fixes] == [
        (f"{tmp_path}/etc/profile.d/colab-cudnn-fix.sh",),
        (f"{tmp_path}/root/.ipython/profile_default/startup/00-colab-cudnn-fix.py",),
    ]
    # the env file really drops the shadowing entry when a shell sources it
    script = tmp_path / "env.sh"
    script.write_text(fixes[0].content)
    got = subprocess.run(
        ["sh", "-c", f'. "{script}"; printf %s "$LD_LIBRARY_PATH"'],
        capture_output=True,
        text=True,
        env={"LD_LIBRARY_PATH": "/opt/old/cudnn:/usr/local/nvidia/lib", "PATH": "/usr/bin:/bin"},
    ).stdout
    assert got == "/usr/local/nvidia/lib"
    preload = fixes[1].content
    assert f"{PIP_DIR}/libcudnn.so.9" in preload and "fix_process" in preload
    compile(preload, "startup.py", "exec")  # it is valid Python
    assert plan.restart_required and [s.kind for s in plan.steps][-2:] == ["restart", "verify"]
