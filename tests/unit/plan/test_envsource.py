"""Where a loader variable comes from, and the fix there (fixer.planner.envsource), over
generated files in a --root sandbox: kernel specs in every directory jupyter_core lists,
/etc/environment and /etc/profile.d scripts. Invariants:

- every file that sets the dropped entry is found, and its fixed content no longer holds it,
  while every other entry and every other key or line stays as it was;
- fixing is idempotent: the fixed files hold nothing more to fix;
- a verdict names exactly the process kinds the plan's files reach (plan_reach, claims_of):
  a fix written only to /etc/profile.d never claims new processes or kernels.
"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.applier.kernel import child_verdict, claims_of, plan_reach, scope_words
from fixer.planner import envsource as es
from fixer.planner.envfix import ENV_FILE, env_fix_steps
from tests.helpers.examples import examples

BAD = "/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9"
OTHERS = ("/opt/lib/libjemalloc.so.2", "/usr/lib/libtcmalloc.so.4", "/x/liba.so")
PLACES = ("kernel-spec", "etc-environment", "profile-d")


@st.composite
def machines(draw):
    places = draw(st.sets(st.sampled_from(PLACES), min_size=1))
    keep = draw(st.lists(st.sampled_from(OTHERS), unique=True, max_size=2))
    at = draw(st.integers(0, len(keep)))
    value = keep[:at] + [BAD] + keep[at:]
    sep = draw(st.sampled_from((":", " ")))
    spec_dir = draw(
        st.sampled_from(
            (
                "/usr/local/share/jupyter/kernels",
                "/usr/share/jupyter/kernels",
                "/venv/share/jupyter/kernels",
                "/root/.local/share/jupyter/kernels",
            )
        )
    )
    quote = draw(st.sampled_from(('"', "'", "")))
    return places, keep, sep.join(value), spec_dir, quote if sep == ":" or quote else '"'


def _write(root: Path, path: str, text: str) -> None:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


@settings(
    max_examples=examples(80),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(machines())
def test_every_source_is_found_and_fixed_there(tmp_path_factory, machine):
    places, keep, value, spec_dir, quote = machine
    root = tmp_path_factory.mktemp("root")
    wrote = {}
    if "kernel-spec" in places:
        spec = {"argv": ["python", "-m", "ipykernel"], "env": {"LD_PRELOAD": value, "X": "1"}}
        wrote["kernel-spec"] = f"{spec_dir}/py/kernel.json"
        _write(root, wrote["kernel-spec"], json.dumps(spec))
    if "etc-environment" in places:
        wrote["etc-environment"] = "/etc/environment"
        _write(root, "/etc/environment", f'PATH="/usr/bin"\nLD_PRELOAD={quote}{value}{quote}\n')
    if "profile-d" in places:
        wrote["profile-d"] = "/etc/profile.d/cuda.sh"
        _write(root, wrote["profile-d"], f"# cuda\nexport LD_PRELOAD={quote}{value}{quote}\n")
    found = es.find_sources(
        [("LD_PRELOAD", BAD)],
        environ={},
        root=str(root),
        prefix="/venv",
        home="/root",
        own=ENV_FILE,
    )
    assert sorted((s.kind, s.path) for s in found) == sorted(wrote.items())
    for s in found:
        assert s.fixed is not None and BAD not in s.fixed
        for other in keep:
            assert other in s.fixed
        _write(root, s.path, s.fixed)
        if s.kind == "kernel-spec":
            assert json.loads(s.fixed)["env"]["X"] == "1"
        else:
            assert ("PATH=" in s.fixed) == (s.kind == "etc-environment")
    again = es.find_sources(
        [("LD_PRELOAD", BAD)], environ={}, root=str(root), prefix="/venv", home="/root"
    )
    assert again == []


def test_kernel_dirs_follow_jupyter_core():
    dirs = es.kernel_dirs({"JUPYTER_PATH": "/a:/b/", "XDG_DATA_HOME": "/xdg"}, "/venv", "/home/u")
    assert dirs == [
        "/a/kernels",
        "/b/kernels",
        "/xdg/jupyter/kernels",
        "/venv/share/jupyter/kernels",
        "/usr/local/share/jupyter/kernels",
        "/usr/share/jupyter/kernels",
    ]
    assert es.kernel_dirs({"JUPYTER_DATA_DIR": "/d"}, None, "/home/u")[0] == "/d/kernels"
    assert es.kernel_dirs({}, None, "/home/u")[0] == "/home/u/.local/share/jupyter/kernels"


FIX_KINDS = ("ld-preload-drop", "ld-library-path-drop", "ld-so-conf", "ipython-preload")
VALUES = {
    "ld-preload-drop": BAD,
    "ld-library-path-drop": "/opt/old/lib",
    "ld-so-conf": "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib",
    "ipython-preload": "/venv/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
}
EXTRA_FILES = (
    "/usr/local/share/jupyter/kernels/py/kernel.json",
    "/etc/environment",
    "/etc/profile.d/cuda.sh",
)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.sets(st.sampled_from(FIX_KINDS), min_size=1),
    st.sets(st.sampled_from(EXTRA_FILES)),
    st.booleans(),
    st.booleans(),
)
def test_a_verdict_names_exactly_what_the_files_reach(kinds, extra, is_root, kernel):
    fixes = tuple(m.EnvFix(k, VALUES[k]) for k in sorted(kinds))  # type: ignore[arg-type]
    steps = list(env_fix_steps(fixes, home="/root", is_root=is_root))
    steps += [m.Step(kind="env-fix", summary="", files=(f,), content="") for f in sorted(extra)]
    plan = m.Plan(steps=tuple(steps), stack=m.Stack(env_fixes=fixes))
    reach = plan_reach(plan)
    words = scope_words(reach)
    claims = set(claims_of(words))
    assert claims == ({es.NEW_PROCESSES} if es.NEW_PROCESSES in reach else set(reach))
    files = [f for s in steps for f in s.files]
    if "ld-preload-drop" in kinds:
        # an LD_PRELOAD entry is gone only where a file that kind reads was fixed
        assert es.NEW_PROCESSES not in reach
        if not any(f.endswith("kernel.json") for f in files):
            assert es.NEW_KERNELS not in reach
        if all(f.startswith("/etc/profile.d/") for f in files):
            assert reach in ((es.LOGIN_SHELLS,), ())
    info = (
        None if not kernel else type("K", (), {"pid": 1, "loaded": (), "restart_needed": False})()
    )
    v = child_verdict(info, plan)
    assert set(claims_of(v.message)) <= ({es.NEW_PROCESSES} | set(reach))
    if es.NEW_PROCESSES not in reach:
        assert "new processes" not in v.message.split(" only", 1)[0]


@st.composite
def notebooks(draw):
    """A notebook whose code cells may set LD_PRELOAD with %env (both spellings IPython takes,
    quoted or not), among other lines and cells."""
    keep = draw(st.lists(st.sampled_from(OTHERS), unique=True, max_size=2))
    at = draw(st.integers(0, len(keep)))
    value = ":".join(keep[:at] + [BAD] + keep[at:])
    form = draw(
        st.sampled_from(("%env LD_PRELOAD={}", "%env LD_PRELOAD {}", '%env LD_PRELOAD="{}"'))
    )
    other = draw(st.sampled_from(("import torch", "%env A=1", "!nvidia-smi", "x = 1")))
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": [f"%env LD_PRELOAD={BAD}\n"]},
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": [other + "\n", form.format(value) + "\n", "print(1)"],
        },
    ]
    draw(st.randoms()).shuffle(cells)
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, keep


@settings(max_examples=examples(100), deadline=None)
@given(notebooks())
def test_a_notebook_env_line_is_fixed_in_the_notebook(case):
    """The notebook the kernel runs (JPY_SESSION_NAME) is found; its fixed text is a notebook
    whose %env lines no longer hold the entry, whose other entries and other lines and cells
    are as they were, and which holds nothing more to fix."""
    nb, keep = case
    text = json.dumps(nb, indent=1)
    fixed, held = es._fixed("notebook", text, [("LD_PRELOAD", BAD)])
    assert held == [("LD_PRELOAD", BAD)] and fixed is not None
    new = json.loads(fixed)
    for before, after in zip(nb["cells"], new["cells"]):
        if before["cell_type"] != "code":
            assert after == before  # a markdown cell is text, not code
            continue
        lines = after["source"]
        assert not any(BAD in x for x in lines), lines
        assert [x for x in before["source"] if "%env LD_PRELOAD" not in x] == [
            x for x in lines if "%env LD_PRELOAD" not in x
        ]
        if keep:
            assert any(all(k in x for k in keep) for x in lines), lines
    assert es._fixed("notebook", fixed, [("LD_PRELOAD", BAD)]) == (None, [])


def test_the_notebook_is_the_one_the_kernel_names():
    """jupyter_server's JPY_SESSION_NAME: absolute, or relative to HOME; an .ipynb only."""
    assert es.notebook_path({"JPY_SESSION_NAME": "/content/a.ipynb"}) == "/content/a.ipynb"
    assert es.notebook_path({"JPY_SESSION_NAME": "w/a.ipynb", "HOME": "/root"}) == "/root/w/a.ipynb"
    assert es.notebook_path({"JPY_SESSION_NAME": "fileId=1AbC"}) is None
    assert es.notebook_path({}) is None
