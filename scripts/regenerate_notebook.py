#!/usr/bin/env python3
"""Run examples/colab_quickstart.ipynb top to bottom on a local kernel (nbclient) and save its
outputs in it: the saved outputs are a real run's.

    python scripts/regenerate_notebook.py [NOTEBOOK]

The run is the one tests/integration/apply/test_notebook.py makes: no GPU (COLAB_CUDNN_FIX_GPU=none,
so nothing is changed on this machine), HOME and the working folder a temporary folder, this
interpreter's bin folder first on PATH for the `!` cells. The cells with `environment=` show the
bundled Colab images, as they do on any machine. Execution timings are dropped from the saved
metadata (they differ on every run)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import nbclient
import nbformat

REPO = Path(__file__).resolve().parent.parent


def run(path: Path) -> "nbformat.NotebookNode":
    """The notebook at `path`, executed in a fresh kernel as the test runs it."""
    nb = nbformat.read(str(path), as_version=4)
    with tempfile.TemporaryDirectory() as home:
        env = {
            "COLAB_CUDNN_FIX_GPU": "none",
            "HOME": home,
            "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
        }
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            client = nbclient.NotebookClient(
                nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": home}}
            )
            client.execute()
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    return nb


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "examples" / "colab_quickstart.ipynb"
    nb = run(path)
    nbformat.write(nb, str(path))
    counts = [len(c.outputs) for c in nb.cells if c.cell_type == "code"]
    print(f"{path}: {len(counts)} code cells, outputs per cell {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
