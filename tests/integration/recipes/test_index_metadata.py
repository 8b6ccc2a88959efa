"""fixer.system.index against a real HTTP server on 127.0.0.1 (PEP 691 page + PEP 658 file)."""

from __future__ import annotations

import time

import pytest

from fixer.system.index import fetch_requires

from tests.integration.recipes.index_server import PEP691, IndexServer, metadata_text

TORCH_REQS = [
    "filelock",
    'nvidia-cudnn-cu12==9.10.2.21; platform_system == "Linux"',
    'nvidia-cublas-cu12==12.6.4.1; platform_system == "Linux"',
]


@pytest.fixture
def index():
    with IndexServer() as srv:
        srv.add_project(
            "/whl/cu126",
            "torch",
            [
                (
                    "torch-2.11.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
                    metadata_text("torch", "2.11.0+cu126", TORCH_REQS),
                ),
                (
                    "torch-2.11.0+cu126-cp311-cp311-manylinux_2_28_x86_64.whl",
                    metadata_text("torch", "2.11.0+cu126", TORCH_REQS[:2]),
                ),
                (
                    "torch-2.11.0+cu126-cp312-cp312-win_amd64.whl",
                    metadata_text("torch", "2.11.0+cu126", ["windows-only"]),
                ),
                (
                    "torch-2.10.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
                    metadata_text("torch", "2.10.0+cu126", ["old"]),
                ),
                (
                    "torch-2.9.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl",
                    None,
                ),  # no PEP 658 file
            ],
        )
        yield srv


def test_reads_requires_dist(index, tmp_path):
    got = fetch_requires(
        index.url + "/whl/cu126", "torch", "2.11.0+cu126", python_tag="cp312", cache_dir=tmp_path
    )
    assert got == tuple(TORCH_REQS)


def test_python_tag_picks_the_file(index, tmp_path):
    got = fetch_requires(
        index.url + "/whl/cu126", "torch", "2.11.0+cu126", python_tag="cp311", cache_dir=tmp_path
    )
    assert got == tuple(TORCH_REQS[:2])


def test_public_version_matches_the_local_build(index, tmp_path):
    got = fetch_requires(index.url + "/whl/cu126/", "Torch", "2.10.0", cache_dir=tmp_path)
    assert got == ("old",)


def test_missing_version_or_metadata_is_none(index, tmp_path):
    assert fetch_requires(index.url + "/whl/cu126", "torch", "2.99.0", cache_dir=tmp_path) is None
    assert fetch_requires(index.url + "/whl/cu126", "torch", "2.9.0", cache_dir=tmp_path) is None
    assert (
        fetch_requires(index.url + "/whl/cu999", "torch", "2.11.0", cache_dir=tmp_path) is None
    )  # 404


def test_cache_serves_the_second_call(index, tmp_path, monkeypatch):
    # the cache is written only into the tool's private cache directory (through the gate,
    # fixer.system.fsgate): here $XDG_CACHE_HOME/colab-cudnn-fix/index under tmp_path
    from fixer.system.index import default_cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cache = default_cache_dir()
    url = index.url + "/whl/cu126"
    first = fetch_requires(url, "torch", "2.11.0+cu126", python_tag="cp312", cache_dir=cache)
    hits = dict(index.hits)
    second = fetch_requires(url, "torch", "2.11.0+cu126", python_tag="cp312", cache_dir=cache)
    assert first == second and index.hits == hits


def test_metadata_hash_mismatch_is_none(index, tmp_path):
    path = "/whl/cu126/torch/torch-2.11.0+cu126-cp312-cp312-manylinux_2_28_x86_64.whl.metadata"
    index.routes[path] = (
        200,
        "text/plain",
        b"Metadata-Version: 2.1\nName: torch\nRequires-Dist: evil\n",
        0.0,
    )
    assert (
        fetch_requires(
            index.url + "/whl/cu126",
            "torch",
            "2.11.0+cu126",
            python_tag="cp312",
            cache_dir=tmp_path,
        )
        is None
    )


def test_http_500_is_none_after_retries(index, tmp_path):
    index.routes["/broken/torch/"] = (500, "text/plain", b"oops", 0.0)
    t = time.monotonic()
    assert fetch_requires(index.url + "/broken", "torch", "2.11.0", cache_dir=tmp_path) is None
    assert index.hits["/broken/torch/"] == 3  # first try + 2 retries
    assert time.monotonic() - t < 5


def test_transient_500_is_retried(index, tmp_path):
    good = index.routes["/whl/cu126/torch/"]
    index.sequences["/whl/cu126/torch/"] = [(503, "text/plain", b"busy", 0.0), good]
    got = fetch_requires(
        index.url + "/whl/cu126", "torch", "2.11.0+cu126", python_tag="cp312", cache_dir=tmp_path
    )
    assert got == tuple(TORCH_REQS) and index.hits["/whl/cu126/torch/"] == 2


def test_hang_is_none_within_the_timeout(index, tmp_path):
    index.routes["/hang/torch/"] = (200, PEP691, b"{}", 5.0)
    t = time.monotonic()
    assert (
        fetch_requires(
            index.url + "/hang", "torch", "2.11.0", cache_dir=tmp_path, timeout=(1.0, 0.5)
        )
        is None
    )
    assert time.monotonic() - t < 1.5


def test_connection_refused_is_none(tmp_path):
    with IndexServer() as srv:
        url = srv.url
    assert (
        fetch_requires(
            url + "/whl/cu126", "torch", "2.11.0", cache_dir=tmp_path, timeout=(0.5, 0.5)
        )
        is None
    )


def test_html_only_index_is_none(index, tmp_path):
    index.routes["/html/torch/"] = (200, "text/html", b"<html></html>", 0.0)
    assert fetch_requires(index.url + "/html", "torch", "2.11.0", cache_dir=tmp_path) is None
