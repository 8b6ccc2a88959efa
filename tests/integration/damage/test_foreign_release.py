"""A wheel's cuDNN sub-library replaced by the file of another release (the GPU machine's case:
the apt copy's libcudnn_adv.so.9.14.0 copied over pip's libcudnn_adv.so.9): files-modified names
the file AND the release it looks like, from what the file answers (cudnnGetVersion) or, where
it cannot answer, from the copy beside it whose file has the same bytes
(fixer.detection.libraries.name_foreign_files). Real compiled libraries, real detection."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fixer.diagnosis.findings import diagnose
from fixer.recipebook import load
from tests.helpers.fakemachine import MULTIARCH
from tests.helpers.stublibs import build_stub
from tests.integration.damage.kinds import Base
from tests.integration.damage.machines import PIP_CUDNN, healthy

pytestmark = pytest.mark.integration
RECIPES = load(())


@pytest.mark.parametrize("other_size", [True, False], ids=["other-size", "same-size"])
@pytest.mark.parametrize("answers", [True, False], ids=["cudnnGetVersion", "silent"])
@pytest.mark.parametrize("target", ["libcudnn_adv.so.9", "libcudnn_cnn.so.9"])
def test_the_release_of_a_foreign_file_is_named(
    tmp_path: Path, answers: bool, target: str, other_size: bool
):
    m = healthy(tmp_path / "machine", Base())
    apt = m.p(MULTIARCH) / (target + ".14.0")
    if not answers:  # a file that exports no cudnnGetVersion: only its bytes tell
        apt.unlink()
        build_stub(apt, soname=target, exports={"cudnnGetCudartVersion": 13000})
    if other_size:  # bytes after the last section, which the loader never reads
        with apt.open("ab") as fh:
            fh.write(b"\0" * 4096)
    wheel = m.p(PIP_CUDNN) / target
    wheel.unlink()
    shutil.copyfile(apt, wheel)
    m.ld_cache()
    for hashes in (False, True):
        env = m.detect(hash_records=hashes)
        # (the fake machine's other wheels carry stand-in RECORD hashes: the cuDNN wheel's only)
        found = [
            f
            for f in diagnose(env, RECIPES)
            if f.id == "files-modified" and "nvidia-cudnn-cu13" in f.title
        ]
        if not hashes and apt.stat().st_size == _recorded(m, target):
            assert not found  # the same size as RECORD says: only the hash tells (--deep)
            continue
        assert len(found) == 1, [(f.id, f.title) for f in diagnose(env, RECIPES)]
        f = found[0]
        assert target in f.title
        if answers or hashes:
            # the release, said in the title: by cudnnGetVersion, or by identical bytes
            assert f"{target} (cuDNN 9.14.0)" in f.title, f.title
        if hashes:
            assert any(
                f"the same bytes as /usr/lib/x86_64-linux-gnu/{target}" in e for e in f.evidence
            )
            assert any("libcudnn9-cuda-13 9.14.0.64-1" in e for e in f.evidence), f.evidence


def _recorded(m, target: str) -> int:
    rec = next(m.p(PIP_CUDNN).parent.parent.parent.glob("nvidia_cudnn_cu13-*.dist-info")) / "RECORD"
    for line in rec.read_text().splitlines():
        path, _h, size = line.rsplit(",", 2)
        if path.endswith("/" + target):
            return int(size)
    raise AssertionError(f"{target} not in {rec}")
