#!/usr/bin/env python3
"""Run examples/colab_quickstart.ipynb top to bottom on a local kernel (nbclient) and save its
outputs in it: the saved outputs are a real run's, showing what a user of an installed copy sees.

    python scripts/regenerate_notebook.py [NOTEBOOK]

The run is the one tests/integration/apply/test_notebook.py makes: no GPU (COLAB_CUDNN_FIX_GPU=none,
so nothing is changed on this machine), the working folder a temporary HOME. Unlike the test, the
kernel is not this checkout's interpreter: the tool is installed from this checkout (a wheel, as
`pip install` makes it) into a fresh virtual environment inside that HOME, whose interpreter runs
the kernel and whose bin folder is first on PATH for the `!` cells; VIRTUAL_ENV is unset, as in
Colab. So no output names the developer's folders; what is left of the temporary HOME is hidden
by the redaction every report uses (fixer.system.redact: the home becomes "~"). The cells with
`environment=` show the bundled Colab images, as they do on any machine. Execution timings are
dropped from the saved metadata (they differ on every run)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict

import nbclient
import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from fixer.system.redact import Redaction  # noqa: E402

KERNEL = "ccf-installed"


def installed_kernel(home: Path) -> Dict[str, str]:
    """A virtual environment in `home` with this checkout installed from a wheel (and ipykernel),
    registered as the kernel KERNEL; the environment variables the run needs."""
    venv = home / ".venv"
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [*uv, "pip", "install", "-q", "-p", str(python), str(REPO), "ipykernel"], check=True
    )
    spec = home / "jupyter" / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    return {
        "COLAB_CUDNN_FIX_GPU": "none",
        "HOME": str(home),
        "JUPYTER_PATH": str(home / "jupyter"),
        "PATH": str(venv / "bin") + os.pathsep + os.environ.get("PATH", ""),
    }


def redacted(value: Any, redaction: Redaction) -> Any:
    """Every string of an output (stream text, each MIME type's data) through the redaction; in
    HTML, the text between tags (a path stands alone inside the nowrap span of its word)."""
    if isinstance(value, str):  # markup stays; each run of text between tags is redacted
        return re.sub(r"[^<>]+(?=<|$)", lambda m: redaction.text(m.group(0)), value)
    if isinstance(value, list):
        return [redacted(v, redaction) for v in value]
    if isinstance(value, dict):
        return type(value)((k, redacted(v, redaction)) for k, v in value.items())
    return value


def neutral(source: str, output: Any, redaction: Redaction, home: str) -> Any:
    """An output as a user of an installed copy sees it. A cell about this machine goes through
    the redaction (the kernel's temporary HOME becomes "~"). A cell with `environment=` shows a
    bundled Colab image, whose own paths (/root/...) are facts of that image and laid out in its
    tables: there only the temporary HOME (where the installed copy lives, named by the startup
    file a plan writes) becomes "~", as the redaction would write it."""
    if "environment=" not in source:
        return redacted(output, redaction)
    text = json.dumps(output)
    return nbformat.from_dict(json.loads(text.replace(json.dumps(home)[1:-1], "~")))


def run(path: Path) -> "nbformat.NotebookNode":
    """The notebook at `path`, executed in a fresh kernel of an installed copy of the tool."""
    nb = nbformat.read(str(path), as_version=4)
    kernelspec = nb.metadata.get("kernelspec")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = installed_kernel(home)
        saved = {k: os.environ.get(k) for k in [*env, "VIRTUAL_ENV"]}
        os.environ.update(env)
        os.environ.pop("VIRTUAL_ENV", None)
        try:
            client = nbclient.NotebookClient(
                nb, timeout=300, kernel_name=KERNEL, resources={"metadata": {"path": str(home)}}
            )
            client.execute()
            redaction = Redaction.for_machine(os.environ)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = [neutral(cell.source, o, redaction, str(home)) for o in cell.outputs]
    if kernelspec is not None:
        nb.metadata["kernelspec"] = kernelspec
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
