"""The child-process harness: whatever the child does (crash, hang, garbage, success), verify
returns a classified CheckResult and never crashes itself."""

from __future__ import annotations

import os
import sys
import time

import pytest

from fixer.verifier.checks import CHILD, classify, parse_records, run_check, passed
from tests.integration.verify.conftest import record

PY = sys.executable

OK_CHILD = """
emit("start", framework="torch", python=sys.executable, pid=os.getpid(), cuda_visible_devices=None)
emit("imported", framework="torch", version="2.11.0+cu130", seconds=1.25, cuda_build=True, cuda="13.0")
emit("built", cudnn_built="9.19.0", source="stand-in")
emit("device", name="NVIDIA H200", cc="9.0", cudnn_enabled=True, tf32_conv=True)
emit("first", ms=480.0, case="small-3x32x32", dtype="float32")
emit("loaded", stage="after first conv", files=[
    {"path": "/sp/nvidia/cudnn/lib/libcudnn.so.9", "dir": "/sp/nvidia/cudnn/lib", "lib": "libcudnn", "major": 9,
     "version": "9.19.0", "version_source": "cudnnGetVersion"},
    {"path": "/sp/nvidia/cudnn/lib/libcudnn_graph.so.9", "dir": "/sp/nvidia/cudnn/lib", "lib": "libcudnn_graph",
     "major": 9, "version": "9.19.0", "version_source": "cudnnGetVersion"}], missing=[])
for dt in ("float32", "float16", "bfloat16"):
    emit("case", case="small-3x32x32", dtype=dt, layout="NCHW", x=[1, 3, 32, 32], w=[8, 3, 3, 3], stride=1,
         padding=0, errors={"y": 1e-4, "dx": 1e-4, "dw": 1e-4}, max_error=1e-4, tolerance=0.01, ok=True,
         first_ms=480.0, steady_ms=0.2)
emit("runtime", cudnn_reported=91900, available=True)
emit("done", seconds=1.9)
"""


def test_success_is_passed_with_versions_cases_and_timings(stand_in):
    r = run_check(PY, "torch", script=stand_in(OK_CHILD), timeout=30)
    assert r.status == "passed", r
    assert passed([r])
    assert r.cudnn_loaded == "9.19.0" and r.cudnn_built == "9.19.0"
    assert len(r.cases) == 3 and all(c["ok"] for c in r.cases)
    assert r.first_seconds == pytest.approx(0.48) and r.steady_seconds == pytest.approx(0.0002)
    assert (
        r.import_seconds == pytest.approx(1.25)
        and r.device == "NVIDIA H200"
        and r.compute_capability == "9.0"
    )
    assert r.findings == () and r.output == ""


@pytest.mark.parametrize(
    "how,sig", [("os.abort()", "SIGABRT"), ("os.kill(os.getpid(), signal.SIGSEGV)", "SIGSEGV")]
)
def test_crash_is_crashed_with_the_signal_and_keeps_partial_records(stand_in, how, sig):
    body = (
        """
emit("start", framework="torch", python=sys.executable, pid=os.getpid(), cuda_visible_devices=None)
emit("imported", framework="torch", version="2.11.0", seconds=1.0, cuda_build=True, cuda="13.0")
emit("case", case="small", dtype="float32", layout="NCHW", errors={}, max_error=0.0, tolerance=0.01, ok=True,
     first_ms=1.0, steady_ms=1.0)
sys.stderr.write("Fatal Python error: Segmentation fault\\n"); sys.stderr.flush()
"""
        + how
        + "\n"
    )
    r = run_check(PY, "torch", script=stand_in(body), timeout=30)
    assert r.status == "crashed" and r.signal == sig
    assert sig in r.summary and "1 case" in r.summary
    assert len(r.cases) == 1 and r.version == "2.11.0"
    assert "Segmentation fault" in r.output
    assert not passed([r])


def test_hang_is_killed_at_the_timeout_with_its_whole_process_group(stand_in, tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    body = f"""
import subprocess
p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
open({str(pidfile)!r}, "w").write(str(p.pid))
emit("start", framework="jax", python=sys.executable, pid=os.getpid(), cuda_visible_devices=None)
time.sleep(300)
"""
    t = time.monotonic()
    r = run_check(PY, "jax", script=stand_in(body), timeout=2)
    assert time.monotonic() - t < 20
    assert r.status == "timeout" and "2 s" in r.summary
    grandchild = int(pidfile.read_text())
    for _ in range(50):  # the kill is asynchronous; the grandchild must be gone (or a zombie) soon
        try:
            with open(f"/proc/{grandchild}/stat") as fh:
                state = fh.read().split(")")[-1].split()[0]
        except FileNotFoundError:
            break
        if state == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail("the grandchild survived the timeout kill")


def test_garbage_on_stdout_is_failed_with_the_output_tail(stand_in):
    body = """
print("}{ not json at all")
print(MARK + "{broken json")
sys.stderr.write("Traceback (most recent call last):\\nImportError: libcudnn.so.9: cannot open shared object file\\n")
sys.exit(1)
"""
    r = run_check(PY, "torch", script=stand_in(body), timeout=30)
    assert r.status == "failed"
    assert "no result from the child (exit 1)" in r.summary
    assert "not json at all" in r.output and "libcudnn.so.9" in r.output
    # The tail is explained with the same rules as `explain`.
    assert [f.id for f in r.findings] == ["cudnn-missing"]


def test_no_output_and_exit_zero_is_failed(stand_in):
    r = run_check(PY, "torch", script=stand_in("pass\n"), timeout=30)
    assert r.status == "failed" and "no output" in r.summary


def test_stopping_early_without_done_is_failed(stand_in):
    body = """
emit("start", framework="torch", python=sys.executable, pid=os.getpid(), cuda_visible_devices=None)
sys.exit(3)
"""
    r = run_check(PY, "torch", script=stand_in(body), timeout=30)
    assert r.status == "failed" and "stopped early (exit 3)" in r.summary


def test_missing_interpreter_is_a_failed_result_not_an_exception(tmp_path):
    r = run_check(str(tmp_path / "nope" / "python"), "torch", timeout=5)
    assert r.status == "failed" and "could not start" in r.summary


def _nogpu(message, cvd=None):
    return [
        {"event": "start", "framework": "torch", "cuda_visible_devices": cvd},
        {
            "event": "imported",
            "framework": "torch",
            "version": "2.11.0+cu130",
            "seconds": 1.0,
            "cuda_build": True,
        },
        {"event": "nogpu", "reason": "no-device", "message": message},
        {"event": "done", "seconds": 1.1},
    ]


def test_hidden_gpu_is_gpu_missing_naming_cuda_visible_devices():
    r = classify("torch", _nogpu("RuntimeError: No CUDA GPUs are available", cvd=""))
    assert r.status == "failed"
    assert r.findings[0].id == "gpu-missing"
    assert "CUDA_VISIBLE_DEVICES='' hides every GPU" in r.findings[0].evidence


def test_no_gpu_because_the_driver_is_too_old_is_driver_too_old():
    r = classify(
        "torch",
        _nogpu("RuntimeError: The NVIDIA driver on your system is too old (found version 12020)."),
    )
    assert [f.id for f in r.findings] == ["driver-too-old"]


def test_cpu_only_build():
    recs = _nogpu("torch 2.5.1+cpu is a CPU-only build")
    recs[2]["reason"] = "cpu-only-build"
    r = classify("torch", recs)
    assert r.findings[0].id == "cpu-only-build" and r.status == "failed"


def test_wrong_numbers_fail_even_without_an_error():
    recs = parse_records(
        "\n".join(
            [
                record("start", framework="torch", cuda_visible_devices=None),
                record(
                    "imported", framework="torch", version="2.11.0", seconds=1.0, cuda_build=True
                ),
                record(
                    "case",
                    case="small-3x32x32",
                    dtype="float32",
                    layout="NCHW",
                    errors={"y": 1.7},
                    max_error=1.7,
                    tolerance=0.01,
                    ok=False,
                    first_ms=1.0,
                    steady_ms=1.0,
                ),
                record("done", seconds=2.0),
            ]
        )
    )
    r = classify("torch", recs)
    assert r.status == "failed"
    assert "wrong numbers: small-3x32x32 float32 max error 1.7 > tolerance 0.01" in r.summary


def test_torch_version_check_error_becomes_cudnn_too_old():
    recs = parse_records(
        "\n".join(
            [
                record("start", framework="torch", cuda_visible_devices=None),
                record(
                    "imported", framework="torch", version="2.11.0", seconds=1.0, cuda_build=True
                ),
                record(
                    "case",
                    case="small",
                    dtype="float32",
                    layout="NCHW",
                    errors={},
                    max_error=0.0,
                    tolerance=0.01,
                    ok=True,
                    first_ms=1.0,
                    steady_ms=1.0,
                ),
                record(
                    "error",
                    stage="torch.backends.cudnn.version()",
                    type="RuntimeError",
                    message="cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime "
                    "version (9, 14, 0). PyTorch already comes bundled with cuDNN.",
                ),
                record("done", seconds=2.0),
            ]
        )
    )
    r = classify("torch", recs)
    assert r.status == "failed" and r.findings[0].id == "cudnn-too-old"
    assert "9.14.0" in r.findings[0].title


def test_parse_records_skips_noise_and_bad_lines():
    text = (
        "hello\n"
        + record("start", framework="x")
        + "\n@@fixer-verify@@ {bad\n@@fixer-verify@@ [1, 2]\n"
    )
    assert parse_records(text) == [{"event": "start", "framework": "x"}]


def test_a_stall_on_an_incomplete_copy_ends_early_with_its_stage(stand_in):
    # The real child's watchdog (armed when the loaded cuDNN copy lacks sub-libraries): JAX
    # hung until the 120 s timeout on the GPU machine with engines_precompiled missing.
    body = f"""
sys.path.insert(0, {str(CHILD.parent)!r})
import verify as c
c._protect_stdout()
c.emit("start", framework="jax", python=sys.executable, pid=os.getpid(), cuda_visible_devices=None)
c.emit("imported", framework="jax", version="0.11.2", seconds=0.7, cuda_build=None, cuda=None)
assert c.watchdog_for({{"missing": []}}) is None
dog = c.watchdog_for({{"missing": ["libcudnn_engines_precompiled.so.9"]}})
dog.arm("conv (all cases in one XLA program)")
time.sleep(60)
"""
    t = time.monotonic()
    r = run_check(
        PY,
        "jax",
        script=stand_in(body),
        timeout=50,
        environ={**os.environ, "FIXER_VERIFY_STALL_SECONDS": "0.5"},
    )
    assert time.monotonic() - t < 20
    assert r.status == "failed" and r.summary.startswith(
        "stalled in conv (all cases in one XLA program)"
    )
    assert "lacks libcudnn_engines_precompiled.so.9" in r.summary
    assert any("Stalled" in e for e in r.errors)


def test_phases_split_the_childs_wall_time():
    from fixer.verifier.checks import phases

    by = {
        "start": [{"event": "start", "t": 0.0, "wall": 1000.25}],
        "imported": [{"event": "imported", "t": 2.6, "seconds": 2.55}],
        "device": [{"event": "device", "t": 2.8}],
        "first": [{"event": "first", "t": 3.1}],
        "done": [{"event": "done", "t": 4.3}],
    }
    p = phases(by, seconds=4.6, started_wall=1000.0)
    assert p == {
        "startup": 0.25,
        "import": 2.55,
        "gpu_init": 0.2,
        "first_conv": 0.3,
        "checks": 1.2,
        "exit": 0.05,
    }
    # a child that never reached its GPU: only what it did reach
    assert phases(
        {"start": by["start"], "imported": by["imported"]}, seconds=3.0, started_wall=1000.0
    ) == {"startup": 0.25, "import": 2.55}


def test_the_real_child_reports_its_phases(stand_in):
    r = run_check(PY, "libs", timeout=30)
    assert set(r.phases) >= {"startup", "import", "exit"} and all(v >= 0 for v in r.phases.values())
    assert r.phases["startup"] < r.seconds


def test_after_done_the_parent_does_not_wait_for_the_childs_teardown(stand_in, tmp_path):
    # The real child closes its pipes after the last record; releasing a CUDA context then
    # took 0.2 s per check on the GPU machine. Here the "teardown" is a 30 s sleep.
    pidfile = tmp_path / "child.pid"
    body = (
        OK_CHILD
        + f"""
open({str(pidfile)!r}, "w").write(str(os.getpid()))
os.close(1); os.close(2)
time.sleep(30)
"""
    )
    t = time.monotonic()
    r = run_check(PY, "torch", script=stand_in(body), timeout=25)
    try:
        assert time.monotonic() - t < 10
        assert r.status == "passed", r.summary
    finally:
        os.kill(int(pidfile.read_text()), 9)


def test_without_done_a_closed_pipe_still_waits_for_the_exit_code(stand_in):
    body = """
emit("start", framework="torch", python=sys.executable, pid=os.getpid(), cuda_visible_devices=None)
os.close(1); os.close(2)
time.sleep(0.5)
os.kill(os.getpid(), signal.SIGSEGV)
"""
    r = run_check(PY, "torch", script=stand_in(body), timeout=25)
    assert r.status == "crashed" and r.signal == "SIGSEGV"


def test_cupys_check_is_called_a_gemm():
    recs = [
        {"event": "start"},
        {"event": "imported", "seconds": 0.4},
        {"event": "case", "case": "gemm-256", "dtype": "float32", "ok": True, "max_error": 1e-6},
        {"event": "done"},
    ]
    assert classify("cupy", recs).summary == "1 GEMM check passed"
