"""fixer.rules: cuDNN version decoding and compatibility, over generated versions."""

from __future__ import annotations

from hypothesis import given, strategies as st

from fixer.rules import cudnn_compatible, cudnn_relation, decode_cudnn_version

majors = st.integers(5, 12)
minors = st.integers(0, 9)
patches = st.integers(0, 99)


@given(majors, minors, patches)
def test_decode_every_form_of_one_version_agrees(ma, mi, pa):
    n = ma * 10000 + mi * 100 + pa if ma >= 9 else ma * 1000 + mi * 100 + pa
    want = f"{ma}.{mi}.{pa}"
    assert decode_cudnn_version(n) == want
    assert decode_cudnn_version(str(n)) == want
    assert decode_cudnn_version((ma, mi, pa)) == want
    assert decode_cudnn_version(f"({ma}, {mi}, {pa})") == want
    assert decode_cudnn_version(want) == want


@given(majors, minors, majors, minors)
def test_compatible_is_same_major_and_minor_rule(rma, rmi, bma, bmi):
    ok = cudnn_compatible(f"{rma}.{rmi}.0", f"{bma}.{bmi}.0")
    if rma != bma:
        assert ok is False and cudnn_relation(f"{rma}.{rmi}.0", f"{bma}.{bmi}.0") == "other-major"
    elif bma >= 7:  # newer minors accepted from cuDNN 7 (COMPAT_RULES)
        assert ok is (rmi >= bmi)
    else:
        assert ok is (rmi == bmi)


def test_unreadable_is_none():
    assert decode_cudnn_version("x") is None and decode_cudnn_version(12) is None
    assert cudnn_compatible(None, "9.1") is None and cudnn_relation("9", "9.1") is None
