"""`lock` on the stock Colab images (bundled environments), against local indexes that serve
both layouts: PyPI's simple index (PEP 691 JSON + PEP 503 HTML) and PyTorch's per-variant
folders (download.pytorch.org/whl/cu128: HTML only), both on 127.0.0.1 through --index-mirror.
apt packages become held apt pins; +cuXXX builds are hashed from the PyTorch layout; an index
that cannot be reached is named as such."""

from __future__ import annotations

import json

import pytest

from fixer.planner import installers
from fixer.cli import main
from fixer.lockfile import read_lock
from fixer.lockfile.closure import build_index, dependency_closure
from fixer.pipeline import plan_for
from tests.helpers.pyindex import PackageIndex, build_wheel, sha256_file

pytestmark = pytest.mark.integration


def _serve_closure(name, index, tmp_path):
    """A stand-in wheel for every (name, version) the image's stack locks, each on the index
    layout the real one lives on; returns {name: (version, sha256, layout)}."""
    view = plan_for(environment=name)
    served = {}
    for dist, version, idx in dependency_closure(view.env, view.plan.stack):
        idx = idx or build_index(view.plan.stack, dist, version)
        w = build_wheel(
            tmp_path / "wheels",
            dist,
            version,
            {f"{dist.replace('-', '_')}/__init__.py": ""},
            tag="py3-none-manylinux_2_17_x86_64",
        )
        if idx and idx.startswith(installers.PYTORCH_INDEX + "/"):
            index.add_pytorch(idx.rsplit("/", 1)[1], w)
            served[dist] = (version, sha256_file(w), idx)
        else:
            index.add(w)
            served[dist] = (version, sha256_file(w), installers.PYPI_SIMPLE)
    return view, served


def _mirrors(index):
    return [
        "--index-mirror",
        f"{installers.PYPI_SIMPLE}={index.url.rstrip('/')}",
        "--index-mirror",
        f"{installers.PYTORCH_INDEX}={index.pytorch_url}",
    ]


@pytest.mark.parametrize("name", ["colab-2025-01-tf215", "colab-2026-08"])
def test_lock_on_a_stock_colab_image(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with PackageIndex(tmp_path / "index") as index:
        view, served = _serve_closure(name, index, tmp_path)
        out = tmp_path / "stack.lock.toml"
        code = main(["lock", "--environment", name, "-o", str(out), "--json", *_mirrors(index)])
        body = json.loads(capsys.readouterr().out)
        assert code == 0, body
        lock = read_lock(str(out))
        assert {p.name: (p.version, p.hashes, p.index) for p in lock.packages} == {
            d: (v, ("sha256:" + h,), i) for d, (v, h, i) in served.items()
        }
        plus = [p for p in lock.packages if "+cu" in p.version]
        assert plus and all(p.index.startswith(installers.PYTORCH_INDEX + "/cu") for p in plus)
        # the +cuXXX files came from the PyTorch layout, never from the PyPI one
        assert any(r.startswith("/whl/cu") for r in index.requests)
        assert not any(r.startswith("/simple/torch") for r in index.requests)
        assert {(a.package, a.version, a.hold, a.integrity) for a in lock.apt} == {
            (k, v, True, "apt-signed-index") for k, v in view.plan.stack.apt.items()
        }
        if view.plan.stack.apt:
            assert (
                "[[apt]]" in out.read_text() and 'integrity = "apt-signed-index"' in out.read_text()
            )


def test_an_index_that_cannot_be_reached_is_named(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    dead = "http://127.0.0.1:9"  # nothing listens on the discard port
    code = main(
        [
            "lock",
            "--environment",
            "colab-2026-08",
            "-o",
            str(tmp_path / "x.toml"),
            "--index-mirror",
            f"{installers.PYPI_SIMPLE}={dead}/simple",
            "--index-mirror",
            f"{installers.PYTORCH_INDEX}={dead}/whl",
        ]
    )
    err = " ".join(capsys.readouterr().err.split())
    assert code == 1 and "cannot reach http://127.0.0.1:9/" in err and "no file" not in err, err
    assert not (tmp_path / "x.toml").exists()
