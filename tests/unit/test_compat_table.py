"""rules.COMPAT_RULES against its sources: TensorFlow's own test cases, and for generated
(built, loaded) cuDNN versions each row's rule equals the predicate of the source it cites,
ported here line for line (so the two are written independently of each other)."""

from __future__ import annotations

from typing import Tuple

import pytest
from hypothesis import given, settings, strategies as st

from fixer import rules
from fixer.system.versions import version_key
from tests.helpers.examples import examples

V = Tuple[int, int, int]

# tensorflow/tensorflow tensorflow/stream_executor/cuda/cudnn_version_test.cc @ 337fc7c54ae6,
# TEST(IsSourceCompatibleWithCudnnLibraryTest, Basic): (source_version, loaded_version, expected).
TF_CASES = [
    ((7, 0, 12), (7, 0, 14), True),  # same major and minor, patch differs
    ((6, 1, 14), (6, 1, 0), True),
    ((7, 0, 12), (6, 1, 14), False),  # majors never mix
    ((8, 1, 15), (7, 0, 14), False),
    ((7, 0, 14), (7, 1, 14), True),  # a newer minor from cuDNN 7
    ((7, 0, 14), (7, 1, 15), True),
    ((7, 1, 15), (7, 0, 14), False),
    ((6, 0, 14), (6, 1, 15), False),  # before 7 the minor must match
    ((6, 1, 14), (6, 0, 14), False),
]


def _s(v: V) -> str:
    return ".".join(map(str, v))


@pytest.mark.parametrize("source, loaded, expected", TF_CASES)
def test_tensorflow_cudnn_version_test_cases(source: V, loaded: V, expected: bool) -> None:
    assert rules.cudnn_compatible(_s(loaded), _s(source), "tensorflow", "1.15.5") is expected
    assert rules.cudnn_compatible(_s(loaded), _s(source)) is expected


def test_tensorflow_1_15_built_with_7_4_loading_7_6_is_compatible() -> None:
    # The Colab case of issue 22: TF 1.15.5 (cuDNN 7.4.1) with cuDNN 7.6.5.
    assert rules.cudnn_compatible("7.6.5", "7.4.1", "tensorflow", "1.15.5") is True
    assert rules.cudnn_relation("7.6.5", "7.4.1") == "ok"


# --- each source's predicate, ported -------------------------------------------------------


def torch_init(compile_v: V, runtime_v: V) -> bool:
    """torch/backends/cudnn/__init__.py _init() @ 017943b70f69 (is_cuda: True)."""
    runtime_major, runtime_minor, _ = runtime_v
    compile_major, compile_minor, _ = compile_v
    if runtime_major != compile_major:
        return False
    if runtime_major < 7:
        return runtime_minor == compile_minor
    return runtime_minor >= compile_minor


def tf_is_source_compatible(source: V, loaded: V) -> bool:
    """tensorflow/stream_executor/cuda/cudnn_version.cc @ 0db332dc4ca5."""
    if loaded[0] != source[0]:
        return False
    return loaded[1] == source[1] or (source[0] >= 7 and loaded[1] >= source[1])


def xla_is_source_compatible(source: V, loaded: V) -> bool:
    """xla/stream_executor/cuda/cuda_dnn.cc @ a51b0f552430."""
    return loaded[0] == source[0] and loaded[1] >= source[1]


def _cudnn_get_version(v: V) -> int:
    # cudnn_version.h's CUDNN_VERSION of each release: M*1000+m*100+p before 9, M*10000+... from 9
    return v[0] * (10000 if v[0] >= 9 else 1000) + v[1] * 100 + v[2]


def jax_own_check(jax_version: str, build: V, runtime: V) -> bool:
    """jax's _version_check("cuDNN", ..., scale_for_comparison=100[, min_supported_version])."""
    b, r = _cudnn_get_version(build), _cudnn_get_version(runtime)
    j = tuple(int(x) for x in jax_version.split("."))
    if j < (0, 4, 17):
        return True  # no check of its own before jax-v0.4.17
    if j < (0, 4, 26):  # jax/_src/xla_bridge.py @ jax-v0.4.20
        return not (b // 100 > r // 100)
    if j < (0, 4, 31):  # @ jax-v0.4.26: min_supported_version=8900
        return 8900 <= r
    if j < (0, 6, 1):  # @ jax-v0.4.31 .. jax-v0.6.0: min_supported_version=9100
        return 9100 <= r
    return b // 100 <= r  # jax_plugins/cuda/__init__.py @ jax-v0.7.0 .. jax-v0.11.0


cudnn_versions = st.tuples(st.integers(5, 11), st.integers(0, 25), st.integers(0, 20))
jax_versions = st.sampled_from(
    ["0.4.13", "0.4.17", "0.4.25", "0.4.26", "0.4.30", "0.4.31", "0.5.0", "0.6.0", "0.6.1", "0.8.0"]
)


@settings(max_examples=examples(500))
@given(cudnn_versions, cudnn_versions)
def test_torch_and_tensorflow_rows_equal_their_sources(built: V, loaded: V) -> None:
    assert rules.cudnn_compatible(_s(loaded), _s(built), "torch", "2.11.0") is torch_init(
        built, loaded
    )
    want = tf_is_source_compatible(built, loaded)
    assert rules.cudnn_compatible(_s(loaded), _s(built), "tensorflow", "1.15.5") is want
    assert rules.cudnn_compatible(_s(loaded), _s(built), "tensorflow", "2.21.0") is want
    assert rules.cudnn_compatible(_s(loaded), _s(built)) is want  # the shared default
    assert rules.cudnn_compatible(_s(loaded), _s(built), "xla") is xla_is_source_compatible(
        built, loaded
    )


@settings(max_examples=examples(500))
@given(jax_versions, cudnn_versions, cudnn_versions)
def test_jax_rows_equal_xla_and_jax_own_check(jax: str, built: V, loaded: V) -> None:
    want = xla_is_source_compatible(built, loaded) and jax_own_check(jax, built, loaded)
    assert rules.cudnn_compatible(_s(loaded), _s(built), "jax", jax) is want


def test_every_row_has_a_source_and_a_rule() -> None:
    known = set(rules.CUDNN_PREDICATES) | {"cuda_fit", "runs_on_arch_list"}
    for row in rules.COMPAT_RULES:
        assert row.rule in known, row
        assert "@" in row.source or "NVIDIA" in row.source or "Guide" in row.source, row
        assert not (row.since and row.before) or version_key(row.since) < version_key(row.before)
        if row.rule in ("cuda_fit", "runs_on_arch_list"):
            assert callable(getattr(rules, row.rule))


def test_jax_eras_do_not_overlap() -> None:
    rows = [r for r in rules.compat_rules("cudnn", "jax") if r.since or r.before]
    rows.sort(key=lambda r: version_key(r.since))
    for a, b in zip(rows, rows[1:]):
        assert a.before == b.since
