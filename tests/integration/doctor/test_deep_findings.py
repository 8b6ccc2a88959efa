"""doctor --deep: a framework that fails to import in the child becomes a finding, classified
through explain's catalogue where it knows the message, shown in the human output. The
framework is a stand-in whose import raises what the real one prints (a real child process
imports it)."""

from __future__ import annotations

import pytest

from fixer.explainer import diagnose_all as diagnose
from fixer.recipebook import load
from tests.helpers.fakemachine import SITE, FakeMachine

RECIPES = load(())


@pytest.mark.parametrize(
    "raises, expected",
    [
        (
            "RuntimeError('cuDNN version incompatibility: PyTorch was compiled against (9, 19, 0) but found runtime "
            "version (9, 14, 0). PyTorch already comes bundled with cuDNN.')",
            "cudnn-too-old",
        ),
        (
            "ImportError('libcudnn_cnn.so.9: cannot open shared object file: No such file or directory')",
            "cudnn-missing",
        ),
        ("ImportError('stand-in torch: something no catalogue knows')", "import-failed"),
    ],
)
def test_import_failure_is_a_finding(tmp_path, capsys, raises, expected):
    m = FakeMachine(tmp_path / "m").h200(jax=False)
    m.p(SITE + "/torch/__init__.py").write_text(f"raise {raises}\n")
    # the import views alone: the stand-in wheels' RECORD rows carry no real hashes, which
    # --deep's record check (tests/unit/diagnose/test_records.py) would report as well
    env = m.detect(deep=True, hash_records=False)
    (view,) = [v for v in env.runtime_views if v.framework == "torch"]
    assert view.error and not view.imported
    findings = [
        f for f in diagnose(env, RECIPES) if "torch" in f.frameworks and f.severity == "error"
    ]
    assert [f.id for f in findings] == [expected], [(f.id, f.title) for f in findings]
    assert "doctor --deep imported torch" in findings[0].evidence[0] and findings[0].fix

    from fixer.render.doctor import render_doctor

    render_doctor(env, findings, False, 1)
    out = " ".join(capsys.readouterr().out.split())
    assert "deep: torch failed to import" in out and expected in out
