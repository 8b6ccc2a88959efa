"""Every API result renders exactly once in a real Jupyter kernel (nbclient + ipykernel).

A result is the last expression of its cell: the cell must hold ONE output, the execute_result
(text/plain: the repr; text/html: the rendering), and no stream or display_data beside it.
rich's Jupyter-aware console used to display every printed line itself (a plan was 36 output
blocks, then the table). The content is read too: each rendering holds what its command says.
"""

from __future__ import annotations

import html
import os
import re
import sys

import pytest

from fixer.planner import installers
from tests.helpers.pyindex import PackageIndex
from tests.integration.lock.test_stock_images import _serve_closure

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = pytest.mark.integration


def _text(output) -> str:
    """The visible text of an HTML output (tags dropped, entities read)."""
    return html.unescape(re.sub(r"<[^>]+>", "", output["data"]["text/html"]))


def _run(cells, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    return nb.cells


def test_each_result_cell_has_exactly_one_output(tmp_path, monkeypatch):
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", "none")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv(
        "PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    )
    with PackageIndex(tmp_path / "index") as index:
        _serve_closure("colab-2025-01-tf215", index, tmp_path)
        mirrors = [
            f"{installers.PYPI_SIMPLE}={index.url.rstrip('/')}",
            f"{installers.PYTORCH_INDEX}={index.pytorch_url}",
        ]
        lock_out = tmp_path / "stack.lock.toml"
        # (cell, words its rendering must show)
        results = [
            ("fixer.doctor(environment='colab-2025-01-tf215')", ["tensorflow", "2.15.1"]),
            ("fixer.plan(environment='colab-2025-01-tf215')", ["libcudnn8=", "apt-mark hold"]),
            ("fixer.plan(environment='colab-2026-08-cpu')", ["Change runtime type"]),
            (
                "fixer.explain('Could not load library libcudnn_cnn_infer.so.8. "
                "Error: libcudnn_cnn_infer.so.8: cannot open shared object file')",
                ["libcudnn_cnn_infer.so.8"],
            ),
            (
                f"fixer.lock(environment='colab-2025-01-tf215', output={str(lock_out)!r}, "
                f"index_mirror={mirrors!r})",
                [str(lock_out)],
            ),
            ("fixer.report(environment='colab-2025-01-tf215')", ["libcudnn.so.8"]),
            ("fixer.recipes('list')", ["torch", "Colab images"]),
            ("fixer.recipes('show', 'cudnn')", ["nvidia-cudnn-cu12=="]),
            (f"fixer.rollback(root={str(tmp_path)!r})", ["roll"]),
        ]
        cells = _run(["import fixer"] + [c for c, _ in results], tmp_path)
    for cell, (code, words) in zip(cells[1:], results):
        kinds = [o["output_type"] for o in cell.outputs]
        assert kinds == ["execute_result"], (code, kinds)
        out = cell.outputs[0]
        assert out["data"]["text/plain"].startswith("<"), out["data"]["text/plain"]
        shown = _text(out)
        for word in words:
            assert word.lower() in shown.lower(), (code, word, shown[:2000])
        assert "Traceback" not in shown
        # a fragment for the output area, not a whole page whose style sets the page's body
        assert "<body" not in out["data"]["text/html"] and "body {" not in out["data"]["text/html"]
