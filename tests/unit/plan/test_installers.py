"""fixer.planner.installers: the one place that builds installer argv."""

from __future__ import annotations

from fixer.planner import installers as ins
import re as _re

import pytest as _pytest
from hypothesis import given as _given
from hypothesis import settings as _settings
from hypothesis import strategies as _st
from fixer.errors import UsageError as _UsageError
from fixer.planner import installers as _inst
from tests.helpers.examples import examples as _examples
from tests.helpers.hostile import OPTION_LIKE as _OPTION_LIKE

PY = "/venv/bin/python"


def test_pip_install_for_a_target_interpreter():
    assert ins.pip_install(
        PY, ["torch==2.5.1+cu124"], index_url="https://download.pytorch.org/whl/cu124"
    ) == (
        PY,
        "-m",
        "pip",
        "install",
        "--no-input",
        "--index-url",
        "https://download.pytorch.org/whl/cu124",
        "--",
        "torch==2.5.1+cu124",
    )
    assert ins.pip_install(
        PY, ["nvidia-cudnn-cu12==9.3.0.75"], no_deps=True, force_reinstall=True
    ) == (
        PY,
        "-m",
        "pip",
        "install",
        "--no-input",
        "--no-deps",
        "--force-reinstall",
        "--",
        "nvidia-cudnn-cu12==9.3.0.75",
    )


def test_uv_pip_install_and_uninstall():
    assert ins.pip_install(
        PY,
        ["a==1"],
        installer="uv",
        uv="/usr/local/bin/uv",
        force_reinstall=True,
        extra_index_urls=["https://x/simple"],
    ) == (
        "/usr/local/bin/uv",
        "pip",
        "install",
        "--python",
        PY,
        "--reinstall-package",
        "a",
        "--extra-index-url",
        "https://x/simple",
        "--",
        "a==1",
    )
    assert ins.pip_uninstall(PY, ["torch"], installer="uv") == (
        "uv",
        "pip",
        "uninstall",
        "--python",
        PY,
        "--",
        "torch",
    )
    assert ins.pip_uninstall(PY, ["torch", "torchvision"]) == (
        PY,
        "-m",
        "pip",
        "uninstall",
        "-y",
        "--",
        "torch",
        "torchvision",
    )


def test_offline_and_mirrors():
    mirrors = [
        ("https://download.pytorch.org/whl", "http://127.0.0.1:8000/torch"),
        (ins.PYPI_SIMPLE, "http://127.0.0.1:8000/simple"),
    ]
    assert (
        ins.rewrite_index("https://download.pytorch.org/whl/cu126", mirrors)
        == "http://127.0.0.1:8000/torch/cu126"
    )
    assert ins.rewrite_index(None, mirrors) == "http://127.0.0.1:8000/simple"
    assert ins.rewrite_index(None, mirrors[:1]) is None
    assert (
        ins.rewrite_index("https://download.pytorch.org/whlx", mirrors[:1])
        == "https://download.pytorch.org/whlx"
    )
    assert ins.pip_install(PY, ["torch==2.5.1"], mirrors=mirrors) == (
        PY,
        "-m",
        "pip",
        "install",
        "--no-input",
        "--index-url",
        "http://127.0.0.1:8000/simple",
        "--",
        "torch==2.5.1",
    )
    assert ins.pip_install(
        PY,
        ["torch==2.5.1"],
        index_url="https://download.pytorch.org/whl/cu124",
        no_index=True,
        find_links=["/wheels"],
    ) == (
        PY,
        "-m",
        "pip",
        "install",
        "--no-input",
        "--no-index",
        "--find-links",
        "/wheels",
        "--",
        "torch==2.5.1",
    )
    assert ins.pip_install(PY, ["a==1"], break_system_packages=True)[5] == "--break-system-packages"


def test_apt_and_conda():
    assert ins.apt_install({"libcudnn8": "8.9.7.29-1+cuda12.2"}) == (
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "--allow-downgrades",
        "--allow-change-held-packages",
        "--",
        "libcudnn8=8.9.7.29-1+cuda12.2",
    )
    assert ins.apt_hold(["libcudnn8"]) == ("apt-mark", "hold", "--", "libcudnn8")
    assert ins.apt_unhold(["libcudnn8"]) == ("apt-mark", "unhold", "--", "libcudnn8")
    assert ins.apt_remove(["libcudnn8"]) == (
        "apt-get",
        "remove",
        "-y",
        "--allow-change-held-packages",
        "--",
        "libcudnn8",
    )
    assert ins.conda_install(["cudnn==9.3.0.75"], conda="mamba", prefix="/opt/conda") == (
        "mamba",
        "install",
        "-y",
        "-c",
        "conda-forge",
        "--override-channels",
        "-p",
        "/opt/conda",
        "--",
        "cudnn==9.3.0.75",
    )
    assert ins.condacolab_install("/usr/bin/python3") == (
        "/usr/bin/python3",
        "-c",
        "import condacolab; condacolab.install()",
    )


# --- every name and version is checked by its grammar before it reaches an installer


@_pytest.mark.parametrize("name", _OPTION_LIKE + ("Libcudnn9", "a", "lib cudnn"))
def test_apt_names_outside_debian_policy_never_reach_apt(name):
    for build in (
        lambda: _inst.apt_install({name: "9.19.0.56-1"}),
        lambda: _inst.apt_hold([name]),
        lambda: _inst.apt_unhold([name]),
        lambda: _inst.apt_remove([name]),
        lambda: _inst.apt_policy(name),
    ):
        with _pytest.raises(_UsageError, match="Debian Policy 5.6.1"):
            build()


@_pytest.mark.parametrize("version", ["", "-1", "1 2", "9" * 100, "1;x", "a1.0"])
def test_apt_versions_outside_debian_policy_never_reach_apt(version):
    with _pytest.raises(_UsageError):
        _inst.apt_install({"libcudnn9-cuda-13": version})


@_settings(max_examples=_examples(300))
@_given(_st.text(max_size=30))
def test_no_argument_after_the_options_starts_with_a_dash(word):
    """Whatever word comes in, a built argv has it only as a checked package argument."""
    for build in (
        lambda: _inst.pip_argv("/usr/bin/python3", [word]),
        lambda: _inst.pip_uninstall("/usr/bin/python3", [word]),
        lambda: _inst.apt_install({word: "1.0-1"}),
        lambda: _inst.apt_hold([word]),
    ):
        try:
            argv = build()
        except _UsageError as exc:
            assert "\n" not in str(exc)
            continue
        assert argv[-1] == word or argv[-1] == f"{word}=1.0-1"
        assert not word.startswith("-") and "\n" not in word and " " not in word


def test_exact_requirements_pass():
    argv = _inst.pip_argv("/py", ["torch==2.11.0+cu130", "jax[cuda12]==0.6.0", "numpy"])
    assert argv[-3:] == ("torch==2.11.0+cu130", "jax[cuda12]==0.6.0", "numpy")
    assert (
        _inst.apt_install({"libcudnn8": "8.9.7.29-1+cuda12.2"})[-1]
        == "libcudnn8=8.9.7.29-1+cuda12.2"
    )
    assert (
        _inst.apt_install({"cudnn9": "1:9.1-1ubuntu1~22.04"})[-1] == "cudnn9=1:9.1-1ubuntu1~22.04"
    )


_CONDA_NAME = _st.from_regex(r"[a-z0-9_][a-z0-9_.-]{0,30}", fullmatch=True)
_CONDA_VERSION = _st.from_regex(r"[0-9][A-Za-z0-9_.+!]{0,20}", fullmatch=True)


@_settings(max_examples=_examples(300))
@_given(_st.lists(_st.tuples(_CONDA_NAME, _CONDA_VERSION), min_size=1, max_size=3))
def test_conda_specs_in_conda_builds_grammar_reach_conda_after_the_marker(pairs):
    specs = [f"{n}=={v}" for n, v in pairs]
    argv = _inst.conda_install(specs, conda="/opt/conda/bin/conda", prefix="/usr/local")
    assert argv[argv.index(_inst.END_OF_OPTIONS) + 1 :] == tuple(specs)


@_settings(max_examples=_examples(300))
@_given(
    _st.one_of(
        _st.sampled_from(
            _OPTION_LIKE
            + ("cudnn", "Cudnn==9.3.0", "cudnn==9.3-0", "cudnn==", "cud nn==9", "cudnn==9;x")
        ),
        _st.text(max_size=40).filter(lambda t: "==" not in t),
        _st.tuples(_st.text(max_size=12), _st.text(max_size=12)).map("==".join),
    ).filter(
        lambda s: (
            not (
                "==" in s
                and _re.fullmatch(r"[a-z0-9_][a-z0-9_.-]*", s.partition("==")[0])
                and _re.fullmatch(r"[0-9][A-Za-z0-9_.+!]*", s.partition("==")[2])
            )
        )
    )
)
def test_conda_specs_outside_conda_builds_grammar_never_reach_conda(spec):
    with _pytest.raises(_UsageError, match="conda spec"):
        _inst.conda_install([spec], conda="conda")
