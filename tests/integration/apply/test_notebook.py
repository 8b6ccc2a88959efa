"""examples/colab_quickstart.ipynb runs top to bottom on a real local kernel (nbclient): here the
no-GPU path (every command says so, nothing changes) and the bundled environments' plans. Its
saved outputs are a real run's (scripts/regenerate_notebook.py): one output per cell, and the
cells that show a bundled environment hold exactly what a fresh run shows."""

from __future__ import annotations

import html
import json
import os
import re
import sys

import pytest
from tests.helpers.paths import REPO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK = REPO / "examples" / "colab_quickstart.ipynb"


def _text(output) -> str:
    """What a person reads in an output: a stream's text, or the HTML's text (tags dropped)."""
    if output.get("output_type") == "stream":
        return "".join(output.get("text", ""))
    data = output.get("data", {})
    if "text/html" in data:
        return html.unescape(re.sub(r"<[^>]+>", "", "".join(data["text/html"])))
    return "".join(data.get("text/plain", ""))


def _kinds(outputs) -> list:
    """The outputs' types, consecutive stream chunks counted once (the kernel sends a `!` cell's
    text in as many messages as it flushes)."""
    kinds: list = []
    for o in outputs:
        kind = (o["output_type"], o.get("name"))
        if not (kinds and kind == kinds[-1] and kind[0] == "stream"):
            kinds.append(kind)
    return kinds


def _portable(text: str) -> str:
    """The text without the checkout's own folder, which the IPython startup file a plan shows
    names (sys.path.append/remove of where this copy of the tool lives)."""
    return re.sub(r"sys\.path\.(append|remove)\('[^']*'\)", r"sys.path.\1(CHECKOUT)", text)


def test_saved_outputs_are_one_per_cell():
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert sum(len(c["outputs"]) for c in code) > 0, "run scripts/regenerate_notebook.py"
    for cell in code:
        assert len(_kinds(cell["outputs"])) <= 1, "".join(cell["source"])
        assert all(o["output_type"] != "error" for o in cell["outputs"])


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
        _text(o) for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs
    )
    # one output per cell, as saved; a bundled environment's cell shows what is saved
    saved = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    for fresh, old in zip(nb.cells, saved):
        if fresh.cell_type != "code":
            continue
        assert _kinds(fresh.outputs) == _kinds(old["outputs"]), fresh.source
        if "environment=" in fresh.source:
            assert [_portable(_text(o)) for o in fresh.outputs] == [
                _portable(_text(o)) for o in old["outputs"]
            ]
    assert "Traceback" not in text
    # doctor / apply / fixer.apply() in the kernel: no GPU, nothing to fix, nothing changed
    assert "no nvidia gpu" in text.lower()
    # the bundled environments' plans: TF 2.15's cuDNN 8 as exact commands; the CPU runtime's hint
    assert "libcudnn8=" in text and "apt-mark hold -- libcudnn8" in text
    assert "Runtime → Change runtime type → a GPU" in text
    # the conda variant: condacolab into /usr/local, torch's pip cuDNN 9 kept
    assert "-p /usr/local -- cudnn==8." in text
    # nothing written on a machine without a GPU (IPython itself makes ~/.ipython/profile_default)
    assert not (tmp_path / ".ipython/profile_default/startup/00-colab-cudnn-fix.py").exists()
