"""`colab-cudnn-fix plan` end to end through fixer.cli.main (no GPU, no network)."""

from __future__ import annotations

import json

from fixer.cli import main


def run(capsys, *argv):
    code = main(["plan", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_healthy_bundled_environment_says_nothing_to_do(capsys):
    code, out, _ = run(capsys, "--environment", "colab-2026-08")
    assert code == 0
    assert "machine: bundled environment 'colab-2026-08'" in out
    assert "Nothing to do" in out
    assert out.index("target python") < out.index("Nothing to do")  # the settings come first


def test_broken_bundled_environment_prints_the_literal_commands(capsys):
    code, out, _ = run(capsys, "--environment", "colab-2025-01-tf215")
    assert code == 0
    assert (
        "apt-get install -y --no-install-recommends --allow-downgrades --allow-change-held-packages "
        "-- libcudnn8=8.9.7.29-1+cuda12.2" in out
    )
    assert "apt-mark hold -- libcudnn8" in out
    assert "cudnn-missing" in out or "libcudnn.so.8" in out


def test_json_schema(capsys):
    code, out, _ = run(capsys, "--json", "--environment", "h200-pip-cudnn-hidden")
    assert code == 0
    data = json.loads(out)
    assert data["schema"] == 1 and data["plan"]["nothing_to_do"] is False
    assert data["plan"]["steps"][0]["argv"] == [
        "/usr/local/bin/uv",
        "pip",
        "install",
        "--python",
        "/opt/torch/.venv/bin/python3",
        "--no-deps",
        "--reinstall-package",
        "nvidia-cudnn-cu13",
        "--",
        "nvidia-cudnn-cu13==9.19.0.56",
    ]
    assert data["plan"]["stack"]["cudnn_runtime"] == {"9": "9.19.0.56"}
    code, out, _ = run(capsys, "--json", "--environment", "h200-healthy")
    assert code == 0 and json.loads(out)["plan"]["nothing_to_do"] is True


def test_plan_options_change_the_argv(capsys):
    code, out, _ = run(
        capsys,
        "--json",
        "--environment",
        "h200-pip-cudnn-hidden",
        "--installer",
        "pip",
        "--no-index",
        "--find-links",
        "/wheels",
    )
    assert json.loads(out)["plan"]["steps"][0]["argv"] == [
        "/opt/torch/.venv/bin/python3",
        "-m",
        "pip",
        "install",
        "--no-input",
        "--no-deps",
        "--force-reinstall",
        "--no-index",
        "--find-links",
        "/wheels",
        "--",
        "nvidia-cudnn-cu13==9.19.0.56",
    ]


def test_environment_file_round_trip(capsys, tmp_path):
    from fixer.planner.steps import environments_dir

    src = json.load(open(f"{environments_dir()}/h200-healthy.json"))
    path = tmp_path / "doctor.json"
    path.write_text(json.dumps({"schema": 2, "environment": src["environment"], "findings": []}))
    code, out, _ = run(capsys, "--environment", str(path))
    assert code == 0 and "Nothing to do" in out


def test_unsatisfiable_exits_1_with_clashes_and_ways_out(capsys):
    # torch on CUDA 13 and TensorFlow (CUDA 12 only) cannot share one libcudnn.so.9
    code, _out, err = run(
        capsys, "--environment", "colab-2026-08", "--torch", "2.11.0", "--cuda", "13.0"
    )
    assert code == 1
    assert "error: no stack fits" in err and "clash:" in err and "way out:" in err
    code, out, _ = run(
        capsys, "--json", "--environment", "colab-2026-08", "--torch", "2.11.0", "--cuda", "13.0"
    )
    body = json.loads(out)["error"]
    assert code == 1 and body["type"] == "Unsatisfiable" and body["clashes"] and body["ways_out"]


def test_bad_input_exits_2_with_a_clear_message(capsys, tmp_path):
    cases = [
        (
            ["--environment", "colab-2026-08", "--torch", "9.9"],
            "--torch 9.9: no such PyTorch version",
        ),
        (["--environment", "colab-2026-08", "--cuda", "99"], "--cuda 99: no build"),
        (
            ["--environment", "colab-2026-08", "--framework", "tensorflw"],
            "'--framework': 'tensorflw' is not one of: torch",
        ),
        (["--environment", "no-such-machine"], "no bundled environment of that name"),
        (
            ["--environment", "colab-2026-08", "--installer", "npm"],
            "'--installer': 'npm' is not one of: auto, pip",
        ),
        (["--environment", "colab-2026-08", "--index-mirror", "nonsense"], "expected FROM=TO"),
    ]
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps({"schema": 2, "environment": {"gpus": [{"index": "zero", "name": "T4"}]}})
    )
    cases.append((["--environment", str(bad)], "$.environment.gpus[0].index: expected int"))
    notjson = tmp_path / "notjson.json"
    notjson.write_text("{nope")
    cases.append((["--environment", str(notjson)], "not JSON (line 1"))
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"schema": 7, "environment": {}}))
    cases.append((["--environment", str(wrong)], "$.schema: 7"))
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    (recipes / "torch.toml").write_text("[[build]\nframework = 'torch'\n")
    cases.append((["--environment", "colab-2026-08", "--recipes", str(recipes)], "torch.toml"))
    for argv, message in cases:
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, out, err)
        assert message in " ".join(err.split()), (argv, err)  # rich wraps long lines
