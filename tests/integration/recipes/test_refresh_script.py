"""scripts/refresh_recipes.py against the local index: diff in --dry-run, in-place rewrite, and
the rewritten file still validates."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from fixer import recipebook as rec

from tests.integration.recipes.index_server import IndexServer, metadata_text
from tests.helpers.paths import REPO

ROOT = REPO

TORCH_TOML = """schema = 1

# two builds to refresh
[[build]]
framework = "torch"
version = "2.11.0"
variant = "cu126"
cuda = "12.6"
cudnn = "9.10.2"
python = ">=3.10,<3.15"
compute_capabilities = ["5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0"]
index_url = "https://download.pytorch.org/whl/cu126"
packages = ["torch==2.11.0+cu126"]
requires = ["nvidia-cudnn-cu12==9.10.2.21"]
source = "RELEASE.md (row 2.11)"
note = "requires: only the cuDNN pin, = RELEASE.md's cuDNN for cu126 | other note"

[[build]]
framework = "torch"
version = "2.11.0"
variant = "cu130"
cuda = "13.0"
cudnn = "9.19.0"
python = ">=3.10,<3.15"
packages = ["torch==2.11.0"]
requires = ["nvidia-cudnn-cu13==9.19.0.56"]
source = "pip metadata"
"""

CU126_REQS = [
    "filelock",
    'nvidia-cuda-runtime-cu12==12.6.77; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cudnn-cu12==9.19.0.56; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-cublas-cu12==12.6.4.1; platform_system == "Linux" and platform_machine == "x86_64"',
    'nvidia-nccl-cu12==2.27.5; platform_system == "Windows"',
]


def _script():
    spec = importlib.util.spec_from_file_location(
        "refresh_recipes", ROOT / "scripts" / "refresh_recipes.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


@pytest.fixture
def index():
    with IndexServer() as srv:
        srv.add_project(
            "/whl/cu126",
            "torch",
            [
                (
                    "torch-2.11.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
                    metadata_text("torch", "2.11.0+cu126", CU126_REQS),
                ),
            ],
        )
        srv.add_json(
            "/pypi/torch/2.11.0/json",
            {
                "info": {
                    "requires_dist": [
                        "filelock",
                        'cuda-toolkit[cudart,cublas]==13.0.2; platform_system == "Linux"',
                        'nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"',
                        'triton==3.6.0; platform_system == "Linux"',
                    ]
                }
            },
        )
        yield srv


def _run(mod, path: Path, index: IndexServer, tmp_path: Path, *extra: str) -> int:
    return mod.main(
        [
            "--recipes",
            str(path),
            "--index-url",
            index.url + "/whl",
            "--pypi-url",
            index.url,
            "--cache-dir",
            str(tmp_path / "cache"),
            "--timeout",
            "2",
            *extra,
        ]
    )


def test_dry_run_prints_the_diff_and_changes_nothing(index, tmp_path, capsys):
    path = tmp_path / "r" / "torch.toml"
    path.parent.mkdir()
    path.write_text(TORCH_TOML)
    assert _run(_script(), path, index, tmp_path, "--dry-run") == 0
    out = capsys.readouterr()
    assert path.read_text() == TORCH_TOML
    assert '-requires = ["nvidia-cudnn-cu12==9.10.2.21"]' in out.out
    assert (
        '+requires = ["nvidia-cuda-runtime-cu12==12.6.77", "nvidia-cudnn-cu12==9.19.0.56", '
        '"nvidia-cublas-cu12==12.6.4.1"]'
    ) in out.out
    assert '+cudnn = "9.19.0"' in out.out
    assert (
        '+requires = ["cuda-toolkit[cublas,cudart]==13.0.2", "nvidia-cudnn-cu13==9.19.0.56"]'
        in out.out
    )
    assert "2 builds checked, 2 changed, 0 not answered" in out.err


def test_write_then_validate_and_idempotent(index, tmp_path, capsys):
    path = tmp_path / "r" / "torch.toml"
    path.parent.mkdir()
    path.write_text(TORCH_TOML)
    mod = _script()
    assert _run(mod, path, index, tmp_path) == 0
    text = path.read_text()
    assert "# two builds to refresh" in text  # layout and comments stay
    assert rec.validate([str(path.parent)]) == []
    (cu126,) = [
        b
        for b in rec.load([str(path.parent)]).builds_for("torch", "2.11.0")
        if b.variant == "cu126"
    ]
    assert cu126.cudnn == "9.19.0" and "nvidia-cublas-cu12==12.6.4.1" in cu126.requires
    assert cu126.source.startswith(
        "package metadata read by refresh_recipes.py: " + index.url + "/whl/cu126/torch/"
    )
    assert cu126.note == "requires: read from the wheel's own metadata | other note"
    capsys.readouterr()
    assert _run(mod, path, index, tmp_path) == 0  # second run: nothing to change
    assert path.read_text() == text
    assert "0 changed" in capsys.readouterr().err


def test_offline_index_leaves_the_file_alone(tmp_path, capsys):
    with IndexServer() as srv:
        url = srv.url
    path = tmp_path / "r" / "torch.toml"
    path.parent.mkdir()
    path.write_text(TORCH_TOML)
    mod = _script()
    assert (
        mod.main(
            [
                "--recipes",
                str(path),
                "--index-url",
                url + "/whl",
                "--pypi-url",
                url,
                "--cache-dir",
                str(tmp_path / "c"),
                "--timeout",
                "0.5",
            ]
        )
        == 0
    )
    assert path.read_text() == TORCH_TOML
    assert "2 not answered" in capsys.readouterr().err


def test_refreshed_records_survive_a_reimport(index, tmp_path, shared_data):
    """import_shared_data.py keeps records a refresh rewrote."""
    out = tmp_path / "out"
    spec = importlib.util.spec_from_file_location(
        "import_shared_data", ROOT / "scripts" / "import_shared_data.py"
    )
    imp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(imp)  # type: ignore[union-attr]
    assert imp.main(["--data", str(shared_data), "--out", str(out)]) == 0
    assert _run(_script(), out / "torch.toml", index, tmp_path, "--only", "2.11.0") == 0
    refreshed = (out / "torch.toml").read_text()
    assert "nvidia-cublas-cu12==12.6.4.1" in refreshed
    assert imp.main(["--data", str(shared_data), "--out", str(out)]) == 0
    assert (out / "torch.toml").read_text() == refreshed
