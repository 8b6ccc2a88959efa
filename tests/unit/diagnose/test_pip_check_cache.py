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
