"""examples/colab_quickstart.ipynb runs top to bottom on a real local kernel (nbclient): here the
no-GPU path (every command says so, nothing changes) and the bundled environments' plans."""

from __future__ import annotations

import json
import os
import sys

import pytest
from tests.helpers.paths import REPO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = REPO / "examples" / "colab_quickstart.ipynb"


def test_notebook_is_stored_with_outputs_cleared():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None


def test_notebook_runs_top_to_bottom_on_a_local_kernel(tmp_path, monkeypatch):
    # No GPU here: the override says so plainly (no probing of this machine's PCI bus), HOME is
    # a temp folder so nothing can land in the real ~/.ipython, the tool's bin dir is on PATH
    # for the `!` cells.
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "none")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(
        "PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    )
    nb = nbformat.read(str(NOTEBOOK), as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    text = "\n".join(
        "".join(o.get("text", ""))
        if o.get("output_type") == "stream"
        else json.dumps(o.get("data", {}))
        for cell in nb.cells
        if cell.cell_type == "code"
        for o in cell.outputs
    )
    assert "Traceback" not in text
    # doctor / apply / fixer.apply() in the kernel: no GPU, nothing to fix, nothing changed
    assert "no nvidia gpu" in text.lower()
    # the bundled environments' plans: TF 2.15's cuDNN 8 as exact commands; the CPU runtime's hint
    assert "libcudnn8=" in text and "apt-mark hold libcudnn8" in text
    assert "Runtime → Change runtime type → a GPU" in text
    # the conda variant: condacolab into /usr/local, torch's pip cuDNN 9 kept
    assert "-p /usr/local cudnn==8." in text
    # nothing written on a machine without a GPU (IPython itself makes ~/.ipython/profile_default)
    assert not (tmp_path / ".ipython/profile_default/startup/00-colab-cudnn-fix.py").exists()
