"""The pip-conflict verdict is cached on disk by the GPU distributions it depends on: a cached
answer equals a computed one, and any change of version or Requires-Dist is a new key."""

from fixer import model as m
from fixer.diagnosis.findings import _pip_conflict_records, pip_conflict_records

MARKERS = {"platform_system": "Linux", "sys_platform": "linux", "python_version": "3.12"}


def _dists(cudnn="9.19.0.56", torch_pin='nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"'):
    return (
        m.Distribution("torch", "2.11.0", requires=(torch_pin, "triton==3.6.0")),
        m.Distribution("nvidia-cudnn-cu13", cudnn),
        m.Distribution(
            "jax-cuda13-plugin",
            "0.11.2",
            requires=(
                'nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == "linux" and extra == "with-cuda"',
            ),
        ),
    )


def test_cached_verdict_equals_computed_and_follows_changes():
    healthy = _dists()
    assert pip_conflict_records(healthy, MARKERS) == _pip_conflict_records(healthy, MARKERS) == []
    assert pip_conflict_records(healthy, MARKERS) == []  # second call: from the cache

    older = _dists(cudnn="9.14.0.64")
    (rec,) = pip_conflict_records(older, MARKERS)
    assert (
        rec["name"] == "nvidia-cudnn-cu13" and rec["have"] == "9.14.0.64" and rec["safe"] is False
    )
    assert pip_conflict_records(older, MARKERS) == _pip_conflict_records(older, MARKERS)

    newer = _dists(cudnn="9.20.0.1")  # above torch's == pin: safe at run time
    (rec,) = pip_conflict_records(newer, MARKERS)
    assert rec["safe"] is True
    assert pip_conflict_records(_dists(), MARKERS) == []  # and back: no stale answer


# -- the cache is untrusted data (fixer.system.cachefile; issue 21's "hostile caches") --------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from fixer.diagnosis.findings import _RECORD_TYPES, _cached_records_ok  # noqa: E402
from tests.helpers.examples import examples  # noqa: E402
from tests.helpers.hostile import values  # noqa: E402

#: torch's pin broken (not safe), jax's range met, and a pin on a wheel that is not installed
CONFLICTS = (
    m.Distribution(
        "torch",
        "2.11.0",
        requires=(
            'nvidia-cudnn-cu13==9.19.0.56; platform_system == "Linux"',
            "nvidia-nccl-cu13==2.28.9",
        ),
    ),
    m.Distribution("nvidia-cudnn-cu13", "9.14.0.64"),
    m.Distribution(
        "jax-cuda13-plugin",
        "0.11.2",
        requires=('nvidia-cudnn-cu13<10.0,>=9.12.0.46; sys_platform == "linux"',),
    ),
)


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def _cache_file(home: Path) -> Path:
    (f,) = (home / "colab-cudnn-fix" / "pip-check").glob("*.json")
    return f


def test_every_computed_record_passes_the_cache_check() -> None:
    for dists in (CONFLICTS, _dists(cudnn="9.14.0.64"), _dists(cudnn="9.20.0.1")):
        records = _pip_conflict_records(dists, MARKERS)
        assert records and _cached_records_ok(records, dists), records


@settings(
    max_examples=examples(300),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    where=st.integers(0, 1),
    field=st.sampled_from(sorted(_RECORD_TYPES) + ["bogus"]),
    hostile=st.one_of(values(), st.sampled_from(["evil-pkg", "nvidia-cudnn-cu13", "==1", True])),
)
def test_a_hostile_cached_record_is_never_believed(
    cache_home: Path, where: int, field: str, hostile: object
) -> None:
    """Any one field of a cached record replaced: the answer is the computed one, unless the
    replacement happened to write what was there (then it is that record)."""
    computed = _pip_conflict_records(CONFLICTS, MARKERS)
    pip_conflict_records(CONFLICTS, MARKERS)  # writes the cache
    f = _cache_file(cache_home)
    planted = json.loads(f.read_text())
    planted[where % len(planted)][field] = hostile
    f.write_text(json.dumps(planted))
    assert pip_conflict_records(CONFLICTS, MARKERS) == computed
    f.unlink()


def test_a_record_changed_in_two_consistent_fields_still_names_only_the_line_s_versions(
    cache_home: Path,
) -> None:
    pip_conflict_records(CONFLICTS, MARKERS)
    f = _cache_file(cache_home)
    planted = json.loads(f.read_text())
    torch = next(r for r in planted if r["dist"] == "torch" and "cudnn" in r["name"])
    torch["spec"], torch["req"] = "==1.0", 'nvidia-cudnn-cu13==1.0; platform_system == "Linux"'
    f.write_text(json.dumps(planted))
    assert pip_conflict_records(CONFLICTS, MARKERS) == _pip_conflict_records(CONFLICTS, MARKERS)


def test_a_cache_that_is_not_our_private_file_is_not_read(cache_home: Path) -> None:
    pip_conflict_records(CONFLICTS, MARKERS)
    f = _cache_file(cache_home)
    f.write_text("[]")  # it would hide every conflict
    f.chmod(0o666)
    assert pip_conflict_records(CONFLICTS, MARKERS) == _pip_conflict_records(CONFLICTS, MARKERS)
