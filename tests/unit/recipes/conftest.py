"""Fixtures for the recipe tests: throw-away recipe directories (`shared_data`, the research data, is in
tests/conftest.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import pytest


@pytest.fixture
def write_recipe(tmp_path: Path) -> Callable[[str, str], Path]:
    """write_recipe("x.toml", text) -> path in a fresh directory (dedented; `schema = 1` is not added)."""
    d = tmp_path / "extra"
    d.mkdir()

    def write(name: str, text: str) -> Path:
        p = d / name
        p.write_text(textwrap.dedent(text).lstrip("\n"))
        return p

    return write


#: A minimal valid extra file: one torch build whose CUDA family and cuDNN exist in the shipped recipes.
GOOD_BUILD = """
schema = 1

[[build]]
framework = "torch"
version = "9.9.0"
variant = "cu126"
cuda = "12.6"
cudnn = "9.10.2"
python = ">=3.10"
compute_capabilities = ["7.5", "8.0"]
index_url = "https://download.pytorch.org/whl/cu126"
packages = ["torch==9.9.0+cu126"]
requires = ["nvidia-cudnn-cu12==9.10.2.21"]
source = "test"
"""
