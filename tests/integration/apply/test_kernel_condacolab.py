"""condacolab in a REAL Jupyter kernel (jupyter_client + ipykernel): fixer.apply() in a cell stops
before condacolab, condacolab.install_from_url() runs in the kernel for real (its own code:
installer run, pinned file, ipython_config exec_lines, sys.executable wrapper, kernel shutdown),
the kernel dies, a fresh one starts as Colab's would, and a plain fixer.apply() there picks the
journal up and finishes: conda installs cuDNN 8 into the prefix, the loader fix is written, and the new kernel
maps the conda cuDNN -- "fixed in this kernel". Only the Miniforge download is replaced: by a
local shell installer this test builds (condacolab's own installer-URL parameter, file://).
The first cell runs the stages fixer.apply() runs there (fixer.pipeline.plan_for,
fixer.applier.apply_plan, fixer.applier.kernel.run_condacolab): the plan comes from a file
describing a Colab machine, which fixer.apply() refuses to apply (--environment needs --dry-run),
and its conda steps under --root too (fixer.pipeline.apply_refusal).
Everything lands in a --root sandbox, the kernel's venv included; condacolab's one write outside its prefix
(/etc/ipython/ipython_config.py) is redirected there by fixer.applier.kernel.run_condacolab."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.helpers.kernels import run_cell, see_this_environment
from tests.helpers.stublibs import build_cudnn_copy, cc

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")
# condacolab refuses to import outside Colab (it checks google.colab): the kernel gets a stand-in for that
if __import__("importlib").util.find_spec("condacolab") is None:
    pytest.skip("condacolab is not installed (test extra)", allow_module_level=True)

FAKE_INSTALLER = r"""#!/bin/bash
# A constructor-like installer (condacolab runs `bash installer -bfp PREFIX`): lays out a conda
# whose `install -p PREFIX cudnn==V` copies a cuDNN 8 built by the test into PREFIX/lib.
set -e
PREFIX="${@: -1}"
mkdir -p "$PREFIX/bin" "$PREFIX/lib" "$PREFIX/conda-meta"
cat > "$PREFIX/bin/conda" <<'EOS'
#!/bin/bash
set -e
[ "$1" = install ] || { echo "fake conda: only install" >&2; exit 2; }
shift
prefix=""; specs=()
while [ $# -gt 0 ]; do
  case "$1" in
    -p) prefix="$2"; shift 2;;
    -c) shift 2;;
    -y|--override-channels|--) shift;;
    *) specs+=("$1"); shift;;
  esac
done
for s in "${specs[@]}"; do
  echo "{\"name\": \"${s%%==*}\", \"version\": \"${s#*==}\"}" > "$prefix/conda-meta/${s%%==*}-${s#*==}.json"
done
cp PAYLOAD/libcudnn*.so.8 "$prefix/lib/"
echo "fake conda installed ${specs[*]} into $prefix"
EOS
chmod +x "$PREFIX/bin/conda"
echo "fake Miniforge installed into $PREFIX"
"""


def _kernel_venv(tmp: Path) -> Path:
    """A venv (under `tmp`: the --root sandbox) whose interpreter sees this test environment's
    packages (fixer, ipykernel, condacolab) through a .pth, so condacolab can rename ITS
    sys.executable, not ours. The apply changes none of those (they lie outside the sandbox)."""
    venv = tmp / "kvenv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (sp,) = list((venv / "lib").glob("python3*/site-packages"))
    see_this_environment(sp)
    return venv / "bin" / "python"


def _fake_google_colab(tmp: Path) -> Path:
    d = tmp / "fakecolab"
    (d / "google" / "colab").mkdir(parents=True)
    (d / "google" / "colab" / "__init__.py").write_text(
        "# stands in for Colab's google.colab (condacolab checks it)\n"
    )
    return d


def _environment(tmp: Path, python: Path) -> Path:
    """colab-2025-01-tf215 (TF 2.15 needs cuDNN 8; torch keeps its pip cuDNN 9) as seen from the
    kernel's interpreter, with condacolab already installed."""
    from fixer.planner.steps import environments_dir

    data = json.loads((Path(environments_dir()) / "colab-2025-01-tf215.json").read_text())
    py = data["environment"]["python"]
    py["executable"] = str(python)
    py["distributions"].append(
        {
            "name": "condacolab",
            "version": "0.1.10",
            "location": py["site_packages"][0],
            "installer": "pip",
            "requires": [],
            "editable": False,
        }
    )
    out = tmp / "colab-tf215.json"
    out.write_text(json.dumps(data))
    return out


@pytest.mark.skipif(cc() is None, reason="no C compiler to build the stub cuDNN")
def test_condacolab_restart_and_resume_in_a_real_kernel(tmp_path, monkeypatch):
    sandbox = tmp_path / "root"
    sandbox.mkdir()
    payload = build_cudnn_copy(tmp_path / "payload", "8.9.7")
    installer = tmp_path / "Miniforge3-fake.sh"
    installer.write_text(FAKE_INSTALLER.replace("PAYLOAD", str(payload)))
    python = _kernel_venv(sandbox)  # inside the sandbox: --root refuses an interpreter outside
    env_file = _environment(tmp_path, python)
    _kernel_spec(tmp_path, python)
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    work = tmp_path / "content"
    work.mkdir()
    km = jupyter_client.KernelManager(kernel_name="ccf")
    km.start_kernel(cwd=str(work))
    try:
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        out = run_cell(
            kc,
            textwrap.dedent(f"""
            from fixer.applier import apply_plan
            from fixer.applier.kernel import run_condacolab
            from fixer.model import Intent, PlanOptions
            from fixer.pipeline import plan_for
            from fixer.planner.conda import CONDACOLAB_PREFIX
            from fixer.system.paths import under_root
            options = PlanOptions(root={str(sandbox)!r})
            plan = plan_for(environment={str(env_file)!r}, intent=Intent(cudnn_from="conda"),
                            options=options).plan
            r = apply_plan(plan, python={str(python)!r}, options=options)
            print("AWAITING", r.awaiting_restart, flush=True)
            run_condacolab(str(under_root(CONDACOLAB_PREFIX, options.root)), root=options.root,
                           installer_url={installer.as_uri()!r})
        """),
        )
        assert "AWAITING True" in out
        # condacolab ended the kernel (do_shutdown), as on Colab
        deadline = time.monotonic() + 60
        while km.is_alive() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not km.is_alive(), "condacolab did not end the kernel"
        journal = json.loads(
            next((sandbox / "var/lib/colab-cudnn-fix/journal").glob("*/journal.json")).read_text()
        )
        assert journal["status"] == "awaiting-restart"
        assert journal["resume"]["steps"][journal["resume"]["next"]]["packages"] == ["condacolab"]
        # what condacolab did, for real, into the sandbox
        prefix = sandbox / "usr/local"
        assert (prefix / "bin/conda").is_file() and "python" in (
            prefix / "conda-meta/pinned"
        ).read_text()
        assert "site-packages" in (sandbox / "etc/ipython/ipython_config.py").read_text()
        assert Path(str(python) + ".real").exists() and python.read_text().startswith("#!/bin/bash")
        kc.stop_channels()

        # Colab starts a fresh kernel; the user (or the next cell) resumes
        km.restart_kernel(now=True)
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=60)
        out = run_cell(
            kc,
            textwrap.dedent(f"""
            import json, os
            import fixer
            r = fixer.apply(root={str(sandbox)!r})          # picks the waiting journal up
            maps = sorted({{l.split()[-1] for l in open("/proc/self/maps") if "libcudnn" in l}})
            print("RESULT", json.dumps({{"verdict": r.verdict, "payload": r.to_dict(), "maps": maps,
                                         "ld": os.environ.get("LD_LIBRARY_PATH", "")}}))
        """),
        )
        result = json.loads(out.split("RESULT ", 1)[1])
    finally:
        km.shutdown_kernel(now=True)
    _assert_resumed(result, prefix, sandbox)


def _assert_resumed(result: dict, prefix: Path, sandbox: Path) -> None:
    """The kernel after the restart: fixed in it, the journal done, condacolab's prefix loaded."""
    assert result["verdict"] == "fixed in this kernel"
    assert (
        result["payload"]["restart"]["verdict"] == "fixed in this kernel"
        and not result["payload"]["nothing_to_do"]
    )
    assert f"{prefix}/lib/libcudnn.so.8" in result["maps"]
    assert result["ld"].startswith(f"{prefix}/lib")  # condacolab's wrapper started this kernel
    journal = json.loads(
        next((sandbox / "var/lib/colab-cudnn-fix/journal").glob("*/journal.json")).read_text()
    )
    assert journal["status"] == "done"
    assert [s["status"] for s in journal["steps"]] == ["done"] * len(journal["steps"])
    assert (prefix / "conda-meta/cudnn-8.9.7.29.json").is_file()
    assert (sandbox / "etc/ld.so.conf.d/00-colab-cudnn-fix.conf").read_text().splitlines()[1:] == [
        "/usr/local/lib"
    ]
    assert (sandbox / "root/.ipython/profile_default/startup/00-colab-cudnn-fix.py").is_file()


def _kernel_spec(tmp_path: Path, python: Path) -> None:
    """A kernel spec `ccf` under tmp_path/jupyter: the venv's python, Colab's google.colab stand-in
    and the overrides that stand for a T4."""
    spec_dir = tmp_path / "jupyter" / "kernels" / "ccf"
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "ccf",
                "language": "python",
                "env": {
                    "PYTHONPATH": str(_fake_google_colab(tmp_path)),
                    "COLAB_CUDNN_FIX_GPU": "Tesla T4:7.5",
                    "COLAB_CUDNN_FIX_DRIVER": "550.54.15",
                    "COLAB_CUDNN_FIX_CUDA": "12.4",
                },
            }
        )
    )
