"""Rollback's reinstall command (fixer.applier.sources.install_exact_argv): one installer run for
every requirement (uv fetches them in parallel; pip at least resolves once), the installers'
caches left on (no --no-cache-dir / --no-cache: a wheel the machine already has is not fetched
again), the journal's wheels first. Over generated sources."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer.applier.sources import install_exact_argv
from tests.helpers.examples import examples

names = st.sampled_from(["torch", "nvidia-cudnn-cu13", "jax", "cupy-cuda13x", "nvidia-cublas"])
reqs = st.lists(
    st.builds(lambda n, v: f"{n}=={v}", names, st.sampled_from(["1.0", "9.19.0.56", "2.11.0"])),
    min_size=1,
    max_size=5,
    unique=True,
)
urls = st.lists(
    st.sampled_from(["https://pypi.org/simple", "https://download.pytorch.org/whl/cu130"]),
    unique=True,
    max_size=2,
)
sources = st.fixed_dictionaries(
    {
        "index_urls": urls,
        "extra_index_urls": urls,
        "find_links": st.lists(st.sampled_from(["/w1", "/w2"]), unique=True, max_size=2),
        "no_index": st.booleans(),
        "break_system_packages": st.booleans(),
    }
)


@settings(max_examples=examples(200))
@given(
    requirements=reqs,
    src=sources,
    tool=st.sampled_from(["pip", "uv"]),
    wheels=st.one_of(st.none(), st.just("/journal/wheels")),
    offline=st.booleans(),
)
def test_one_run_for_every_requirement_with_the_caches_on(requirements, src, tool, wheels, offline):
    argv = install_exact_argv(
        "/venv/bin/python", requirements, tool=tool, sources=src, wheels_dir=wheels, offline=offline
    )
    assert all(argv.count(r) == 1 for r in requirements)
    assert not {"--no-cache-dir", "--no-cache", "-n"} & set(argv)
    assert "--no-deps" in argv
    if wheels:
        links = [argv[i + 1] for i, a in enumerate(argv) if a == "--find-links"]
        assert links[0] == wheels
    if offline or src["no_index"]:
        assert "--no-index" in argv and "--index-url" not in argv
