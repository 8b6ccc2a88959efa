"""A dist-info folder named for another version than its METADATA: the probe (run inside the
target, here imported) reports the name's version next to METADATA's, and parse_probe keeps it
exactly when the two differ by PEP 440 (fixer.system.versions.installer_skips says why: uv
reads the name, pip METADATA)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings, strategies as st

from fixer.children import probe
from fixer.detection.python_env import parse_probe
from fixer.system.versions import installer_skips, same_version
from tests.helpers.examples import examples

VERSION = st.lists(st.integers(0, 99), min_size=1, max_size=4).map(
    lambda xs: ".".join(map(str, xs))
)


@settings(max_examples=examples(60), deadline=None)
@given(VERSION, VERSION)
def test_the_probe_reports_a_folder_named_for_another_version(named: str, meta: str) -> None:
    with tempfile.TemporaryDirectory() as site:
        info = Path(site, f"nvidia_cudnn_cu13-{named}.dist-info")
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: {meta}\n\n"
        )
        dists: list = []
        probe.scan(site, set(), dists, [])
    assert len(dists) == 1 and dists[0]["version"] == meta
    assert dists[0].get("named_version") == (None if named == meta else named)
    env = parse_probe({"distributions": dists})
    d = env.distributions[0]
    assert d.version == meta
    assert (d.named_version is None) == same_version(meta, named)


@given(st.one_of(st.none(), VERSION), st.one_of(st.none(), VERSION), VERSION)
def test_an_installer_skips_exactly_what_it_takes_as_installed(installed, named, wanted) -> None:
    """pip skips when METADATA's version is the wanted one, uv when the folder's name is."""
    pip_skips = installed is not None and same_version(installed, wanted)
    uv_skips = (named or installed) is not None and same_version(named or installed, wanted)
    assert installer_skips(installed, named, wanted) == (pip_skips or uv_skips)
