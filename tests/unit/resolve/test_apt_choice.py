"""Which new apt (or conda) cuDNN the plan installs: the twin of a copy on
disk (the same release built for the CUDA major the framework needs) when one exists, else the
newest release that fits; never merely the oldest acceptable one. No framework pins an apt
package, so the smallest step up has no reason behind it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fixer import model as m
from fixer.pipeline import resolve
from fixer.system.versions import version_key

from tests.helpers.envs import APT_DIR, apt_copy, cudnn, load, make_env, small_recipes, tf_build
from tests.helpers.examples import examples

#: cuDNN 8.9 releases as data/apt_cudnn.toml lists them (+cuda12.2), each with a +cuda11.8 twin.
PATCHES = ("8.9.0.131", "8.9.2.26", "8.9.4.25", "8.9.5.29", "8.9.6.50", "8.9.7.29")


def _releases(patches, with_twins):
    out = []
    for v in patches:
        apt = {"libcudnn8": f"{v}-1+cuda12.2"}
        out.append(cudnn(".".join(v.split(".")[:3]), (12,), apt=apt))
        if v in with_twins:
            out.append(
                cudnn(".".join(v.split(".")[:3]), (11,), apt={"libcudnn8": f"{v}-1+cuda11.8"})
            )
    return out


@st.composite
def cases(draw):
    offered = sorted(
        draw(st.sets(st.sampled_from(PATCHES), min_size=1, max_size=len(PATCHES))), key=version_key
    )
    on_disk = draw(st.sampled_from(PATCHES))
    built = draw(st.sampled_from(("8.6.0", "8.9.0")))
    releases = _releases(offered, {on_disk})
    copy = apt_copy("libcudnn8", f"{on_disk}-1+cuda11.8")
    copy = m.LibraryCopy(**{**copy.__dict__, "cuda_major": 11})
    tf = m.FrameworkBuild(
        "tensorflow",
        "tensorflow",
        "2.15.0",
        variant="and-cuda",
        cuda="12.2",
        cudnn=built,
        compute_capabilities=("7.5",),
    )
    env = make_env(
        dists={"tensorflow": "2.15.0"},
        frameworks=[tf],
        libraries=[copy],
        loads=[
            load("tensorflow", copy, major=8, via="ld.so.cache", search=(("ld.so.cache", APT_DIR),))
        ],
    )
    recipes = small_recipes([tf_build("2.15.0", "12.2", built)], releases)
    return env, recipes, offered, on_disk


@settings(max_examples=examples(60), deadline=None)
@given(cases())
def test_apt_cudnn_is_the_twin_else_the_newest(case):
    env, recipes, offered, on_disk = case
    stack = resolve(env, m.Intent(cudnn_from="apt"), recipes)
    assert list(stack.apt) == ["libcudnn8"]
    chosen = stack.apt["libcudnn8"]
    if on_disk in offered:
        # the twin: the release on disk, built for CUDA 12
        assert chosen == f"{on_disk}-1+cuda12.2"
    else:
        assert chosen == f"{offered[-1]}-1+cuda12.2"
