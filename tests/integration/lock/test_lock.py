"""Lock round trip on real venvs: lock -> TOML -> new venv -> apply --lock -> identical freeze."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from fixer import lockfile as locking
from fixer.cli import main
from fixer.errors import FixerError, UsageError
from fixer.lockfile.closure import dependency_closure
from fixer.model import (
    Build,
    Choice,
    Driver,
    Environment,
    EnvFix,
    Gpu,
    Pin,
    PythonEnv,
    Runtime,
    PlanOptions,
    Stack,
    to_dict,
)
from tests.integration.apply.conftest import CUDNN_GOOD, TORCH, copy_venv, uv_install
from tests.helpers.pyindex import freeze_of, sha256_file

pytestmark = pytest.mark.integration


def _env(python: str, cuda: str = "13.0", cc: str = "9.0") -> Environment:
    import subprocess

    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return Environment(
        gpus=(Gpu(index=0, name="NVIDIA H200", compute_capability=cc),),
        driver=Driver(version="580.159.04", cuda_version=cuda),
        runtime=Runtime(kind="linux", glibc="2.39", arch="x86_64"),
        python=PythonEnv(executable=python, version=version),
    )


def _stack(index_url: str) -> Stack:
    build = Build(
        framework="torch",
        version="2.11.0",
        variant="cu130",
        cuda="13.0",
        cudnn="9.19.0",
        compute_capabilities=("7.5", "8.0", "8.6", "9.0", "10.0", "12.0"),
        ptx="12.0",
        index_url=index_url,
        packages=(f"torch=={TORCH}",),
    )
    return Stack(
        choices=(Choice(framework="torch", build=build, action="keep"),),
        pins=(
            Pin(name="torch", version=TORCH, index_url=index_url),
            Pin(name="nvidia-cudnn-cu13", version=CUDNN_GOOD, index_url=index_url),
            Pin(name="nvidia-cudnn-cu12", version="9.10.2.21", action="remove"),
        ),
        cudnn="9.19.0",
        cudnn_from="pip",
        env_fixes=(
            EnvFix(kind="ld-library-path-drop", value="/usr/lib/x86_64-linux-gnu", why="shadows"),
        ),
    )


def _write_env(path: Path, env: Environment) -> str:
    path.write_text(json.dumps({"schema": 2, "environment": to_dict(env), "findings": []}))
    return str(path)


@pytest.fixture
def source(venv, index):
    uv_install(venv, index, f"torch=={TORCH}", f"nvidia-cudnn-cu13=={CUDNN_GOOD}")
    return venv


def test_make_write_read_round_trip(source, index, wheelhouse, tmp_path):
    lock = locking.make_lock(_env(source), _stack(index.url))
    assert [p.name for p in lock.packages] == ["torch", "nvidia-cudnn-cu13"]
    assert lock.packages[1].hashes == ("sha256:" + sha256_file(wheelhouse["cudnn13-good"]),)
    assert (
        lock.requires.cuda == "13.0"
        and lock.requires.python == lock.machine.python.rsplit(".", 1)[0]
    )
    assert lock.remove == ("nvidia-cudnn-cu12",)
    path = locking.write_lock(lock, str(tmp_path / "stack.lock.toml"))
    text = path.read_text()
    assert text.count("[[package]]") == 2 and "version = 2" in text
    assert locking.read_lock(str(path)) == lock


def test_hashes_from_json_and_html_indexes_and_find_links(index, wheelhouse, tmp_path):
    from fixer.system.index import file_hashes

    want = ("sha256:" + sha256_file(wheelhouse["cudnn13-good"]),)
    assert (
        file_hashes(index.url, "nvidia-cudnn-cu13", CUDNN_GOOD, cache_dir=tmp_path / "c1") == want
    )  # PEP 691
    index.add_pytorch(
        "cu130", wheelhouse["cudnn13-good"]
    )  # PEP 503 HTML only, as download.pytorch.org
    assert (
        file_hashes(
            index.pytorch_url + "/cu130", "nvidia-cudnn-cu13", CUDNN_GOOD, cache_dir=tmp_path / "c2"
        )
        == want
    )
    local = locking.local_hashes([str(wheelhouse["torch"].parent)], "torch", TORCH)
    assert local == ("sha256:" + sha256_file(wheelhouse["torch"]),)


def test_apply_lock_in_a_new_venv_gives_the_same_freeze(
    source, index, sandbox, tmp_path, _base_venvs, monkeypatch
):
    lock_file = tmp_path / "stack.lock.toml"
    locking.write_lock(locking.make_lock(_env(source), _stack(index.url)), str(lock_file))
    fresh = copy_venv(_base_venvs["pip"], sandbox / "fresh")  # inside the --root sandbox
    uv_install(fresh, index, "nvidia-cudnn-cu12==9.10.2.21")  # the lock removes it
    # this machine as the lock's machine (the driver and GPU are the true edge); apply refuses an
    # --environment file without --dry-run: it describes another machine
    _this_machine(monkeypatch)
    args = [
        "apply",
        "--lock",
        str(lock_file),
        "--python",
        fresh,
        "--root",
        str(sandbox),
        "--no-verify",
    ]
    assert main(args) == 0
    assert freeze_of(fresh) == freeze_of(source)
    log = next((sandbox / "var/lib/colab-cudnn-fix/journal").glob("*/apply.log")).read_text()
    assert "--require-hashes" in log
    assert (sandbox / "etc/profile.d/colab-cudnn-fix.sh").is_file()
    assert main(args + ["--json"]) == 0  # second time: nothing to do


def _this_machine(monkeypatch, cuda: str = "13.0", cc: str = "9.0") -> None:
    """This machine as a GPU machine (the driver and GPU are the true edge): apply refuses an
    --environment file without --dry-run, since it describes another machine."""
    monkeypatch.setenv(
        "COLAB_CUDNN_FIX_DRIVER", "580.159.04" if cuda.startswith("13") else "535.104.05"
    )
    monkeypatch.setenv("COLAB_CUDNN_FIX_CUDA", cuda)
    monkeypatch.setenv("COLAB_CUDNN_FIX_GPU", f"NVIDIA H200:{cc}")


def test_tampered_hash_fails_and_rolls_back(
    source, index, sandbox, tmp_path, _base_venvs, capsys, monkeypatch
):
    lock_file = tmp_path / "stack.lock.toml"
    locking.write_lock(locking.make_lock(_env(source), _stack(index.url)), str(lock_file))
    text = lock_file.read_text()
    lock_file.write_text(re.sub(r"sha256:[0-9a-f]{64}", "sha256:" + "0" * 64, text, count=2))
    fresh = copy_venv(_base_venvs["pip"], sandbox / "fresh")  # inside the --root sandbox
    before = freeze_of(fresh)
    _this_machine(monkeypatch)
    code = main(
        [
            "apply",
            "--lock",
            str(lock_file),
            "--python",
            fresh,
            "--root",
            str(sandbox),
            "--no-verify",
        ]
    )
    assert code == 1
    assert "rolled back" in " ".join(capsys.readouterr().err.split())
    assert freeze_of(fresh) == before
    assert not (sandbox / "etc/profile.d/colab-cudnn-fix.sh").exists()


@pytest.mark.parametrize(
    "cuda, cc, needle",
    [
        ("12.2", "9.0", "driver 535.104.05 supports CUDA 12.2"),
        ("13.0", "6.0", "compute capability 6.0"),
    ],
)
def test_lock_for_another_machine_is_refused(
    source, index, sandbox, tmp_path, capsys, cuda, cc, needle, monkeypatch
):
    lock_file = tmp_path / "stack.lock.toml"
    locking.write_lock(locking.make_lock(_env(source), _stack(index.url)), str(lock_file))
    _this_machine(monkeypatch, cuda, cc)
    code = main(["apply", "--lock", str(lock_file), "--python", source, "--root", str(sandbox)])
    assert code == 2
    assert needle in " ".join(capsys.readouterr().err.split())
    assert not (sandbox / "var/lib/colab-cudnn-fix/journal").exists()  # nothing was started


def test_drift(source, index, tmp_path):
    lock_file = tmp_path / "stack.lock.toml"
    locking.write_lock(locking.make_lock(_env(source), _stack(index.url)), str(lock_file))
    from fixer.model import Distribution

    env = _env(source)
    same = dataclasses.replace(
        env,
        python=dataclasses.replace(
            env.python,
            distributions=(
                Distribution(name="torch", version=TORCH),
                Distribution(name="nvidia-cudnn-cu13", version=CUDNN_GOOD),
            ),
        ),
    )
    assert locking.check_drift(str(lock_file), same) == ()
    drifted = dataclasses.replace(
        env,
        driver=Driver(version="535.104.05", cuda_version="12.2"),
        python=dataclasses.replace(
            env.python,
            distributions=(
                Distribution(name="torch", version=TORCH),
                Distribution(name="nvidia-cudnn-cu13", version="9.14.0.64"),
                Distribution(name="nvidia-cudnn-cu12", version="9.10.2.21"),
            ),
        ),
    )
    titles = [f.title for f in locking.check_drift(str(lock_file), drifted)]
    assert any("nvidia-cudnn-cu13 is 9.14.0.64, the lock has 9.19.0.56" in t for t in titles)
    assert any("nvidia-cudnn-cu12 is installed" in t for t in titles)
    assert any("supports CUDA 12.2" in t for t in titles)


@pytest.mark.parametrize(
    "body, key",
    [
        ("version = 3\n", "version"),
        (
            "version = 2\n[[apt]]\npackage = 'libcudnn8'\nversion = '8.9.7.29-1'\n"
            "integrity = 'sha256'\n",
            "apt[0].integrity",
        ),
        ("version = 2\n[apt]\nlibcudnn8 = 8\n", "apt"),
        (
            "version = 1\n[[package]]\nname = 'x'\nversion = '1'\nhashes = ['md5:1']\n",
            "package[0].hashes",
        ),
        ("version = 1\nbogus = 1\n", "bogus"),
        ("version = [\n", "not TOML"),
    ],
)
def test_bad_lock_files_are_usage_errors(tmp_path, body, key):
    f = tmp_path / "bad.toml"
    f.write_text(body)
    with pytest.raises(UsageError, match=re.escape(key)):
        locking.read_lock(str(f))


def test_lock_cli_then_apply_lock_in_a_new_venv(
    monkeypatch, venv, index, sandbox, tmp_path, _base_venvs, capsys
):
    """`lock -o` on a healthy machine (real detect/resolve; GPU and driver given as overrides),
    then `apply --lock` into an empty venv: the same freeze, dependencies included; doctor --lock
    reports no drift."""
    from tests.helpers.pyindex import cuda_runtime_wheel, torch_wheel

    for k, v in (
        ("COLAB_CUDNN_FIX_DRIVER", "580.159.04"),
        ("COLAB_CUDNN_FIX_CUDA", "13.0"),
        ("COLAB_CUDNN_FIX_GPU", "NVIDIA H200:9.0"),
    ):
        monkeypatch.setenv(k, v)
    w = tmp_path / "native"
    index.add(
        torch_wheel(
            w,
            TORCH,
            native=True,
            requires=[f"nvidia-cudnn-cu13=={CUDNN_GOOD}", "nvidia-cuda-runtime==13.0.96"],
        ),
        cuda_runtime_wheel(w),
    )
    uv_install(
        venv,
        index,
        f"torch=={TORCH}",
        "nvidia-cuda-runtime==13.0.96",
        f"nvidia-cudnn-cu13=={CUDNN_GOOD}",
    )
    mirror = [
        "--index-mirror",
        f"https://pypi.org/simple={index.url.rstrip('/')}",
        "--index-mirror",
        f"https://download.pytorch.org/whl={index.url.rstrip('/')}",
    ]
    lock_file = tmp_path / "stack.lock.toml"
    assert main(["lock", "-o", str(lock_file), "--python", venv, *mirror]) == 0
    lock = locking.read_lock(str(lock_file))
    assert {p.name for p in lock.packages} >= {"torch", "nvidia-cudnn-cu13", "nvidia-cuda-runtime"}
    assert all(
        p.index and "127.0.0.1" not in p.index for p in lock.packages
    )  # the real index is recorded
    assert lock.machine.gpus == ("NVIDIA H200",) and lock.requires.cuda == "13.0"

    fresh = copy_venv(_base_venvs["pip"], sandbox / "fresh")  # inside the --root sandbox
    assert (
        main(
            ["apply", "--lock", str(lock_file), "--python", fresh, "--root", str(sandbox), *mirror]
        )
        == 0
    )
    assert freeze_of(fresh) == freeze_of(venv)
    capsys.readouterr()
    assert main(["doctor", "--python", fresh, "--lock", str(lock_file)]) == 0


def _switch_to_cu126(index_url: str) -> Stack:
    """The stack moves torch 2.11 cu130 to 2.9.0+cu126: its cuDNN 12 wheel is a NEW dependency."""
    build = Build(
        framework="torch",
        version="2.9.0",
        variant="cu126",
        cuda="12.6",
        cudnn="9.10.2",
        compute_capabilities=("9.0",),
        index_url=index_url,
        packages=("torch==2.9.0+cu126",),
    )
    return Stack(
        choices=(Choice(framework="torch", build=build, action="change"),),
        pins=(
            Pin(
                name="torch",
                version="2.9.0+cu126",
                index_url=index_url,
                action="downgrade",
                installed=TORCH,
            ),
            Pin(name="nvidia-cudnn-cu13", version=CUDNN_GOOD, action="remove"),
        ),
        cudnn="9.10.2",
        cudnn_from="pip",
    )


def test_a_build_the_stack_installs_brings_its_declared_dependencies(source, index, wheelhouse):
    # online: torch 2.9.0+cu126's Requires-Dist read from the index's PEP 658 metadata
    lock = locking.make_lock(_env(source, cuda="12.6"), _switch_to_cu126(index.url))
    assert {p.name: p.version for p in lock.packages} == {
        "torch": "2.9.0+cu126",
        "nvidia-cudnn-cu12": "9.10.2.21",
    }
    cudnn = [p for p in lock.packages if p.name == "nvidia-cudnn-cu12"][0]
    assert cudnn.hashes == ("sha256:" + sha256_file(wheelhouse["cudnn12"]),)
    # offline from a wheelhouse: the same, read from the wheel's own METADATA
    offline = locking.make_lock(
        _env(source, cuda="12.6"),
        _switch_to_cu126(index.url),
        options=dataclasses.replace(
            PlanOptions(), no_index=True, find_links=(str(wheelhouse["cudnn12"].parent),)
        ),
    )
    assert {p.name: p.version for p in offline.packages} == {
        p.name: p.version for p in lock.packages
    }


def test_a_lock_with_unknowable_dependencies_is_refused(source):
    env = _env(source, cuda="12.6")
    stack = _switch_to_cu126("http://127.0.0.1:9/simple")
    with pytest.raises(
        FixerError, match="cannot lock torch 2.9.0\\+cu126: its dependencies are unknown"
    ):
        dependency_closure(env, stack, requires_of=lambda index, name, version: None)
    # a range that nothing installed satisfies is refused too, never locked loosely
    with pytest.raises(
        FixerError, match="needs nvidia-cudnn-cu12<10,>=9.10, which nothing installed"
    ):
        dependency_closure(
            env, stack, requires_of=lambda index, name, version: ("nvidia-cudnn-cu12>=9.10,<10",)
        )
