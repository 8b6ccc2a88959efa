"""`colab-cudnn-fix explain` on the command line: input forms, exit codes, JSON."""

from __future__ import annotations

import io
import json

import pytest

from fixer.cli import main

TEXT = "RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0)."


def test_argument(capsys):
    assert main(["explain", "--no-detect", TEXT]) == 0
    out = capsys.readouterr().out
    assert "cudnn-too-old" in out and "9.14.0" in out and "fix:" in out


def test_file_and_stdin(tmp_path, capsys, monkeypatch):
    log = tmp_path / "log.txt"
    log.write_text("noise\n" + TEXT + "\n")
    assert main(["explain", "--no-detect", "--file", str(log)]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(TEXT))
    assert main(["explain", "--no-detect", "-"]) == 0
    assert capsys.readouterr().out.count("cudnn-too-old") == 2


def test_json(capsys):
    assert main(["explain", "--no-detect", "--json", TEXT]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["schema"] == 2 and body["recognised"] is True and body["detected"] is False
    assert body["findings"][0]["id"] == "cudnn-too-old" and body["findings"][0]["confidence"] == 0.9
    assert body["rules"] and body["rules"][0].startswith("errors.toml:")


def test_unrecognised_exits_1_and_says_so(capsys):
    assert main(["explain", "--no-detect", "my training loss is nan"]) == 1
    assert "Not recognised" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["explain", "--no-detect"], "explain needs an error text"),
        (["explain", "--no-detect", "   "], "the error text is empty"),
        (["explain", "--no-detect", "--file", "/nonexistent/log.txt"], "no such file"),
        (["explain", "--no-detect", "--file", "/etc/hostname", "TEXT"], "not both"),
        (["explain", "--no-detect", "--recipes", "/nonexistent/dir", "TEXT"], "does not exist"),
    ],
)
def test_bad_input_exits_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bad_input_json_error(capsys):
    assert main(["explain", "--no-detect", "--json", ""]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["exit_code"] == 2


def test_json_has_ranked_alternatives_with_their_checks(capsys):
    assert (
        main(
            [
                "explain",
                "--no-detect",
                "--json",
                "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED",
            ]
        )
        == 0
    )
    body = json.loads(capsys.readouterr().out)
    alts = body["alternatives"]
    assert body["ambiguous"] is True and len(alts) >= 3
    assert [a["id"] for a in alts] == [f["id"] for f in body["findings"]]
    assert all(a["check"] for a in alts)
    assert [a["confidence"] for a in alts] == sorted((a["confidence"] for a in alts), reverse=True)


def test_benign_line_is_said_benign(capsys):
    assert (
        main(
            [
                "explain",
                "--no-detect",
                "I tensorflow/stream_executor/platform/default/dso_loader.cc:53] "
                "Successfully opened dynamic library libcudnn.so.8",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "Benign" in out and "log-noise" in out


def test_windows_text_says_linux_only(capsys):
    assert (
        main(
            [
                "explain",
                "--no-detect",
                "--json",
                "Could not locate cudnn_ops_infer64_8.dll. Please make sure it "
                "is in your library path!",
            ]
        )
        == 0
    )
    body = json.loads(capsys.readouterr().out)
    assert body["windows"] is True and body["findings"][0]["id"] == "cudnn-missing"
    assert any("Linux machines only" in n for n in body["notes"])


def test_a_log_over_5_mb_is_read_head_and_tail(tmp_path, capsys):
    """Errors come last: the error at the end of a long log is found, and the skip is said."""
    log = tmp_path / "big.log"
    filler = ("I0000 some harmless progress line that repeats " * 2 + "\n") * 70_000  # ~7 MB
    log.write_text(
        "start\n" + filler + "E cuda_dnn.cc:1] Loaded runtime CuDNN library: 9.1.0 but source was "
        "compiled with: 9.3.0.\n"
    )
    assert log.stat().st_size > 5_000_000
    assert main(["explain", "--no-detect", "--json", "--file", str(log)]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["findings"][0]["id"] == "cudnn-too-old"
    assert any("skipped" in n for n in body["notes"])


def test_stdin_over_5_mb_keeps_the_tail(monkeypatch, capsys):
    data = ("x" * 99 + "\n") * 60_000 + "RuntimeError: No CUDA GPUs are available\n"
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    assert main(["explain", "--no-detect", "--json", "-"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["findings"][0]["id"] == "gpu-missing" and any("skipped" in n for n in body["notes"])
