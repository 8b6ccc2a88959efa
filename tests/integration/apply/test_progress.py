"""Progress while a real installer downloads (fixer.applier.progress + fixer.render.progress).

Real pip (this environment's, >= 24.1, repacked into a wheel and installed into a throw-away venv)
and real uv install an 8 MB wheel from an index on 127.0.0.1 that sends it at a few MB/s, through
apply_plan (the journaled apply) with the CLI's reporter:

- in a terminal (a real pty, as `colab-cudnn-fix apply` in a shell or a Colab `!` cell): the live
  line is redrawn in place with bytes, rate and time left, and what came down stays;
- in a log (no terminal): a few plain lines, and a heartbeat while uv says nothing;
- in a real Jupyter kernel (jupyter_client): ONE output for the whole apply, updated in place
  (update_display_data), not an output per update.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

from fixer.applier import apply_plan
from fixer.model import Plan, Step
from tests.helpers.pyindex import PackageIndex, build_wheel
from tests.helpers.wheelbuild import build_wheel_from_installed
from tests.integration.apply.conftest import options, pip_step, uv_step

pytestmark = pytest.mark.integration

SIZE = 8_000_000
RATE = 3_000_000  # bytes per second the index sends at: the download takes about 3 s
WANT = "nvidia-cudnn-cu13==9.19.0.56"


@pytest.fixture
def big_index(tmp_path: Path) -> Any:
    """An index serving an 8 MB stand-in cuDNN wheel (stored, incompressible) at RATE, and this
    environment's pip repacked as a wheel (a venv's ensurepip may predate raw progress)."""
    import pip

    house = tmp_path / "house"
    wheel = build_wheel(
        house,
        "nvidia-cudnn-cu13",
        "9.19.0.56",
        {"nvidia/cudnn/__init__.py": ""},
        padding=SIZE,
        tag="py3-none-manylinux_2_17_x86_64",
    )
    dist_info = next(Path(pip.__file__).parent.parent.glob("pip-*.dist-info"))
    pip_wheel = build_wheel_from_installed(dist_info, house)
    with PackageIndex(tmp_path / "index") as index:
        index.add(wheel, pip_wheel)
        yield index


def _new_pip(venv: str, index: PackageIndex) -> str:
    subprocess.run(
        [venv, "-m", "pip", "install", "--no-deps", "--index-url", index.url, "-U", "pip"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = subprocess.run(
        [venv, "-c", "import pip; print(pip.__version__)"], capture_output=True, text=True
    )
    return out.stdout.strip()


def _plan(step: Step, python: str) -> Plan:
    return Plan(steps=(dataclasses_replace(step, download_bytes=SIZE),), python=python)


def dataclasses_replace(step: Step, **kw: Any) -> Step:
    import dataclasses

    return dataclasses.replace(step, **kw)


_CHILD = textwrap.dedent(
    """
    import json, sys
    from fixer.applier import apply_plan
    from fixer.model import Plan, PlanOptions, Step, PipOptions
    from fixer.render.apply import ConsoleReporter
    data = json.loads(sys.argv[1])
    step = Step(kind="pip-install", summary=data["summary"], argv=tuple(data["argv"]),
                packages=tuple(data["packages"]), download_bytes=data["bytes"],
                pip=PipOptions(index_url=data["index"], no_deps=True))
    plan = Plan(steps=(step,), python=data["python"])
    reporter = ConsoleReporter()
    reporter.starting(plan)
    apply_plan(plan, python=data["python"], options=PlanOptions(root=data["root"]), reporter=reporter)
    """
)


def _in_a_pty(argv: List[str], env: Dict[str, str], timeout: float = 240) -> str:
    """Run `argv` with a pseudo-terminal as its stdout and stderr; everything it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks: List[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.wait(timeout=30)
    assert proc.returncode == 0, b"".join(chunks).decode("utf-8", "replace")[-3000:]
    return b"".join(chunks).decode("utf-8", "replace")


def _frames(raw: str) -> List[str]:
    """What a terminal showed, frame by frame: the text between carriage returns and line ends,
    colours and cursor controls dropped."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    return [f.strip() for f in re.split(r"[\r\n]+", plain) if f.strip()]


def _step_data(venv: str, index: PackageIndex, sandbox: Path) -> Dict[str, Any]:
    """The install step of WANT from `index` into `venv`, as the child (_CHILD, _CELL) reads it."""
    step = pip_step(venv, index, WANT)
    return {
        "summary": step.summary,
        "argv": list(step.argv),
        "packages": list(step.packages),
        "bytes": SIZE,
        "index": index.url,
        "python": venv,
        "root": str(sandbox),
    }


def test_pip_download_shows_bytes_rate_and_time_left_in_a_terminal(
    venv: str, big_index: PackageIndex, sandbox: Path
) -> None:
    assert tuple(int(p) for p in _new_pip(venv, big_index).split(".")[:2]) >= (24, 1)
    big_index.bandwidth(RATE)
    data = _step_data(venv, big_index, sandbox)
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    raw = _in_a_pty([sys.executable, "-c", _CHILD, json.dumps(data)], env)
    frames = _frames(raw)
    assert any(f.startswith("to download (dependencies included): 8.0 MB") for f in frames), frames
    live = [f for f in frames if f.startswith("downloading nvidia-cudnn-cu13")]
    # redrawn in place while the bytes come: several distinct frames, bytes never going back
    done = [
        float(m.group(1)) for f in live for m in [re.search(r": ([\d.]+) MB of 8\.0 MB", f)] if m
    ]
    assert len(set(done)) >= 3, frames
    assert done == sorted(done)
    assert any(re.search(r"MB of 8\.0 MB, [\d.]+ MB/s, \d+ s left  \[#*\.*\]$", f) for f in live), (
        live
    )
    assert "\x1b[2K" in raw or "\r" in raw  # the same line, redrawn (not a new line per update)
    assert any(re.match(r"downloaded 8\.0 MB in \d+ s \([\d.]+ MB/s\)", f) for f in frames), frames
    assert any(f.startswith("ok (") for f in frames)


def test_uv_in_a_log_says_what_comes_and_beats_while_silent(
    bare_venv: str, big_index: PackageIndex, sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uv prints nothing between "Downloading X (7.6MiB)" and " Downloaded X": the log names
    what comes and how big, then says "still downloading" while it waits."""
    from fixer.render import new_console, progress as render_progress
    from fixer.render.apply import ConsoleReporter

    monkeypatch.setattr(render_progress, "HEARTBEAT_EVERY", 1.0)
    big_index.bandwidth(1_000_000)  # 8 s of silence from uv
    buf = io.StringIO()
    reporter = ConsoleReporter(new_console(file=buf, width=100, soft_wrap=True))
    plan = _plan(uv_step(bare_venv, big_index, WANT), bare_venv)
    reporter.starting(plan)
    apply_plan(plan, python=bare_venv, options=options(sandbox), reporter=reporter)
    lines = [line.strip() for line in buf.getvalue().splitlines()]
    assert "to download (dependencies included): 8.0 MB" in lines
    beats = [line for line in lines if line.startswith("still downloading nvidia-cudnn-cu13 (")]
    assert len(beats) >= 2, lines
    assert all(re.search(r"\(\d+ s, no output\)", b) for b in beats)
    assert "\r" not in buf.getvalue() and "\x1b[" not in buf.getvalue()  # a log: plain lines


_CELL = textwrap.dedent(
    """
    import json
    from fixer.applier import apply_plan
    from fixer.model import Plan, PlanOptions, Step, PipOptions
    from fixer.api import _notebook_reporter
    data = json.loads({data!r})
    step = Step(kind="pip-install", summary=data["summary"], argv=tuple(data["argv"]),
                packages=tuple(data["packages"]), download_bytes=data["bytes"],
                pip=PipOptions(index_url=data["index"], no_deps=True))
    plan = Plan(steps=(step,), python=data["python"])
    reporter = _notebook_reporter()  # what fixer.apply() uses in a kernel
    assert reporter is not None
    reporter.starting(plan)
    done = apply_plan(plan, python=data["python"], options=PlanOptions(root=data["root"]), reporter=reporter)
    """
)


def test_a_notebook_kernel_shows_one_output_updated_in_place(
    venv: str, big_index: PackageIndex, sandbox: Path
) -> None:
    jupyter_client = pytest.importorskip("jupyter_client")
    pytest.importorskip("ipykernel")
    _new_pip(venv, big_index)
    big_index.bandwidth(RATE)
    data = json.dumps(_step_data(venv, big_index, sandbox))
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        msgs = _execute(kc, _CELL.format(data=data))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    kinds = [m["msg_type"] for m in msgs]
    assert "error" not in kinds, [m["content"] for m in msgs if m["msg_type"] == "error"]
    shown = [m for m in msgs if m["msg_type"] in ("display_data", "stream", "execute_result")]
    assert [m["msg_type"] for m in shown] == ["display_data"], kinds
    display_id = shown[0]["content"]["transient"]["display_id"]
    updates = [m for m in msgs if m["msg_type"] == "update_display_data"]
    assert len(updates) >= 3 and all(
        u["content"]["transient"]["display_id"] == display_id for u in updates
    )
    texts = [u["content"]["data"]["text/plain"] for u in updates]
    assert any(re.search(r"MB of 8\.0 MB, [\d.]+ MB/s, \d+ s left", t) for t in texts), texts
    final = texts[-1]
    assert "downloaded 8.0 MB in" in final and "ok (" in final
    assert "to download (dependencies included): 8.0 MB" in final
    assert "<pre" in updates[-1]["content"]["data"]["text/html"]


def _execute(kc: Any, code: str, timeout: float = 240) -> List[Dict[str, Any]]:
    """Run `code`; every iopub message it caused, until the kernel is idle again."""
    msg_id = kc.execute(code)
    msgs: List[Dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = kc.get_iopub_msg(timeout=max(1.0, deadline - time.monotonic()))
        mine = msg["parent_header"].get("msg_id") == msg_id
        if not mine and msg["msg_type"] != "update_display_data":  # an update from the ticker
            continue  # thread may carry another parent; its display_id says whose it is
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return msgs
        if msg["msg_type"] != "status":
            msgs.append(msg)
    raise AssertionError("the cell did not finish")


def test_verify_in_a_notebook_kernel_says_what_it_checks_in_one_output() -> None:
    """fixer.verify() in a kernel: one display for "checking X ..." (updated in place, ending
    with what was checked) and the result; no stream. The framework is missing here, so its
    child fails at the import: what is checked is said all the same."""
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    try:
        msgs = _execute(kc, "import fixer\nfixer.verify(framework='tensorflow')")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    shown = [m for m in msgs if m["msg_type"] in ("display_data", "stream", "execute_result")]
    assert [m["msg_type"] for m in shown] == ["display_data", "execute_result"], msgs
    display_id = shown[0]["content"]["transient"]["display_id"]
    first = shown[0]["content"]["data"]["text/plain"]
    assert first.strip().startswith("checking tensorflow on the GPU (")
    updates = [
        m["content"]["data"]["text/plain"]
        for m in msgs
        if m["msg_type"] == "update_display_data"
        and m["content"]["transient"]["display_id"] == display_id
    ]
    assert updates and re.match(r"checked tensorflow on the GPU in \d+ s$", updates[-1].strip())
