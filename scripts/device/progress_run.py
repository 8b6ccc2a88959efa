"""A real cuDNN wheel install with apply's progress display, as a user sees it (issue 23 item 3,
issue 25 item 4): in a terminal (a pty) and in a notebook kernel (jupyter_client).

Run by scripts/device/progress.sh (read it for what it must show). What it does:
1. repacks the machine's installed nvidia-cudnn-cu13 (about 490 MB) and pip into a local
   wheelhouse (tests/helpers/wheelbuild.py, run as a child, as scripts/bench_apply.py does);
2. serves that folder on 127.0.0.1 at RATE bytes/s (a stdlib HTTP server: a directory
   listing is a find-links page), so pip DOWNLOADS the wheel as it would from PyPI on Colab;
3. installs it into a throw-away venv through apply_plan (the journaled apply, --root in a
   temp folder) with the CLI's reporter, in a pseudo-terminal, and prints the frames;
4. does the same inside a Jupyter kernel of a throw-away venv that sees this interpreter's
   packages (ipykernel + jupyter_client from .wheels-device/, offline), and counts the cell's
   outputs and their in-place updates.
Nothing of the machine changes: every install goes into a venv under a temp folder.
"""

from __future__ import annotations

import http.server
import json
import os
import pty
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Dict, List

REPO = Path(__file__).resolve().parents[2]
RATE = float(os.environ.get("PROGRESS_RATE", 100e6))  # bytes/s: a good Colab download
#: ipykernel + jupyter_client wheels for the kernel venv (progress.sh says how they were made)
WHEELS_DEVICE = Path(os.environ.get("PROGRESS_WHEELS", REPO / ".wheels-device"))

STEP = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, {repo!r})
    from fixer.applier import apply_plan
    from fixer.model import PipOptions, Plan, PlanOptions, Step
    data = json.loads({data!r})
    step = Step(kind="pip-install", summary=data["summary"], argv=tuple(data["argv"]),
                packages=tuple(data["packages"]), download_bytes=data["bytes"],
                pip=PipOptions(find_links=(data["index"],), no_index=True, no_deps=True))
    plan = Plan(steps=(step,), python=data["python"])
    """
)
TERMINAL = (
    STEP
    + """
from fixer.render.apply import ConsoleReporter
reporter = ConsoleReporter()
reporter.starting(plan)
done = apply_plan(plan, python=data["python"], options=PlanOptions(root=data["root"]), reporter=reporter)
"""
)
NOTEBOOK = (
    STEP
    + """
from fixer.api import _notebook_reporter
reporter = _notebook_reporter()  # what fixer.apply() uses in a kernel
reporter.starting(plan)
done = apply_plan(plan, python=data["python"], options=PlanOptions(root=data["root"]), reporter=reporter)
"""
)


def say(text: str) -> None:
    print(text, flush=True)


def run(argv: List[str], **kw: Any) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


def wheelhouse(tmp: Path) -> Path:
    """The installed cuDNN and pip, repacked."""
    house = tmp / "wheelhouse"
    house.mkdir()
    for name in ("nvidia-cudnn-cu13", "pip"):
        dist = metadata.distribution(name)
        dist_info = next(
            d
            for p in sys.path
            if os.path.isdir(p)
            for d in Path(p).glob(f"{name.replace('-', '_')}-{dist.version}.dist-info")
        )
        t = time.monotonic()
        run(
            [
                sys.executable,
                "-c",
                "import sys; from tests.helpers.wheelbuild import build_wheel_from_installed as b; "
                "print(b(sys.argv[1], sys.argv[2]))",
                str(dist_info),
                str(house),
            ],
            cwd=str(REPO),
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        say(f"repacked {name} {dist.version} in {time.monotonic() - t:.1f} s")
    for w in sorted(house.iterdir()):
        say(f"  {w.name}  {w.stat().st_size / 1e6:.1f} MB")
    return house


def serve(folder: Path) -> http.server.ThreadingHTTPServer:
    """`folder` on 127.0.0.1 (a directory listing: pip reads it as a find-links page), files sent
    at RATE bytes/s, with their Content-Length (pip's bar needs it)."""

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, directory=str(folder), **k)

        def copyfile(self, source: Any, outputfile: Any) -> None:
            start, sent = time.monotonic(), 0
            while True:
                chunk = source.read(1 << 20)
                if not chunk:
                    return
                outputfile.write(chunk)
                sent += len(chunk)
                ahead = sent / RATE - (time.monotonic() - start)
                if ahead > 0:
                    time.sleep(ahead)

        def log_message(self, *a: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def target_venv(tmp: Path, name: str, house: Path) -> str:
    """A throw-away venv with this machine's pip (repacked: ensurepip's may predate raw progress),
    or Colab's pip (24.1.2 in the 2026-08 image) when .wheels-device/ holds that wheel: the
    machine's own pip 24.0 predates pip's raw byte reports (24.1)."""
    venv = tmp / name
    run([sys.executable, "-m", "venv", str(venv)])
    py = str(venv / "bin" / "python")
    links = ["--find-links", str(house)]
    if any(WHEELS_DEVICE.glob("pip-*.whl")):
        links += ["--find-links", str(WHEELS_DEVICE)]
    run([py, "-m", "pip", "install", "-q", "--no-index", *links, "-U", "pip"])
    say(f"{name}: pip {run([py, '-c', 'import pip; print(pip.__version__)']).stdout.strip()}")
    return py


def step_data(py: str, url: str, root: Path, size: int, uv: str = "") -> str:
    """The step as JSON for the child: pip's form, or uv's when `uv` names its binary."""
    version = metadata.version("nvidia-cudnn-cu13")
    argv = [py, "-m", "pip", "install", "--no-deps", "--no-index", "--find-links", url]
    if uv:
        argv = [
            uv,
            "pip",
            "install",
            "--python",
            py,
            "--no-deps",
            "--no-index",
            "--find-links",
            url,
        ]
    return json.dumps(
        {
            "summary": f"install nvidia-cudnn-cu13=={version}",
            "argv": argv + [f"nvidia-cudnn-cu13=={version}"],
            "packages": [f"nvidia-cudnn-cu13=={version}"],
            "bytes": size,
            "index": url,
            "python": py,
            "root": str(root),
        }
    )


def child_env(tmp: Path) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_"))}
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        XDG_CACHE_HOME=str(tmp / "cache"),
        XDG_STATE_HOME=str(tmp / "state"),
    )
    return env


def in_terminal(code: str, env: Dict[str, str]) -> str:
    master, slave = pty.openpty()
    env = {**env, "COLUMNS": "100", "TERM": "xterm-256color"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    proc.wait()
    say(f"exit {proc.returncode}")
    return b"".join(chunks).decode("utf-8", "replace")


def show_terminal(raw: str) -> None:
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
    frames = [f.rstrip() for f in re.split(r"[\r\n]+", plain) if f.strip()]
    actions = ("downloading ", "still ", "starting ", "resolving ", "installing ", "finishing ")
    live = [f for f in frames if f.strip().startswith(actions)]
    say(
        f"terminal: {len(raw)} bytes written, {len(frames)} frames, {len(live)} of them the live "
        f"line (redrawn in place: {raw.count(chr(13))} carriage returns, "
        f"{raw.count(chr(27) + '[2K')} erase-line)"
    )
    say(
        "-- what the terminal showed: every line that stays, and every 4th frame of the live one --"
    )
    n = 0
    for f in frames:
        if f in live:
            n += 1
            if n % 4 and n != len(live):
                continue
            f = f + "    <- live frame %d of %d" % (n, len(live))
        say(f"| {f}")


def kernel_venv(tmp: Path) -> str:
    """A venv seeing this interpreter's packages (a .pth) plus ipykernel and jupyter_client,
    installed offline from .wheels-device/."""
    if os.environ.get("PROGRESS_KERNEL_PYTHON"):  # one that has ipykernel already (a dry run)
        return os.environ["PROGRESS_KERNEL_PYTHON"]
    if not WHEELS_DEVICE.is_dir():
        raise SystemExit(f"{WHEELS_DEVICE} missing: carry it to the GPU machine (see progress.sh)")
    venv = tmp / "kernel-venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    py = str(venv / "bin" / "python")
    site = run(
        [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    ).stdout.strip()
    import site as this_site

    parents = [p for p in this_site.getsitepackages() if os.path.isdir(p)] + [str(REPO)]
    Path(site, "_this_python.pth").write_text(
        "import site; " + "; ".join(f"site.addsitedir({p!r})" for p in parents) + "\n"
    )
    t = time.monotonic()
    run(
        [py, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(WHEELS_DEVICE)]
        + ["ipykernel", "jupyter_client"]
    )
    say(
        f"kernel venv: ipykernel + jupyter_client installed offline in {time.monotonic() - t:.1f} s"
    )
    return py


DRIVER = textwrap.dedent(
    """
    import json, sys, time
    import jupyter_client
    code = open(sys.argv[1]).read()
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3")
    msgs = []
    try:
        msg_id = kc.execute(code)
        deadline = time.monotonic() + 400
        while time.monotonic() < deadline:
            m = kc.get_iopub_msg(timeout=60)
            mine = m["parent_header"].get("msg_id") == msg_id
            if not mine and m["msg_type"] != "update_display_data":
                continue
            if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                break
            if m["msg_type"] != "status":
                msgs.append({"t": time.monotonic(), "type": m["msg_type"], "content": m["content"]})
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    print(json.dumps(msgs))
    """
)


def show_kernel(out: str) -> None:
    msgs = json.loads(out.strip().splitlines()[-1])
    outputs = [
        m for m in msgs if m["type"] in ("display_data", "stream", "execute_result", "error")
    ]
    updates = [m for m in msgs if m["type"] == "update_display_data"]
    say(
        f"notebook: {len(outputs)} output(s) in the cell "
        f"({', '.join(m['type'] for m in outputs)}), updated in place {len(updates)} times"
    )
    for m in outputs:
        if m["type"] == "error":
            say("\n".join(m["content"]["traceback"]))
    if not updates:
        return
    t0 = updates[0]["t"]
    picks = updates[:: max(1, len(updates) // 8)] + [updates[-1]]
    for m in picks:
        text = m["content"]["data"]["text/plain"]
        say(f"-- update at {m['t'] - t0:5.1f} s: the output now reads --")
        for line in text.splitlines()[-3:] if m is not updates[-1] else text.splitlines():
            say(f"| {line}")


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="progress-"))
    try:
        say(f"python {sys.version.split()[0]} at {sys.executable}; rate {RATE / 1e6:.0f} MB/s")
        house = wheelhouse(tmp)
        size = next(w.stat().st_size for w in house.iterdir() if w.name.startswith("nvidia_cudnn"))
        server = serve(house)
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        env = child_env(tmp)
        say("\n## 1 terminal (a pty, as `colab-cudnn-fix apply` in a shell or a Colab ! cell)")
        py = target_venv(tmp / "root-1", "target-1", house)  # inside --root, as it requires
        t = time.monotonic()
        raw = in_terminal(
            TERMINAL.format(repo=str(REPO), data=step_data(py, url, tmp / "root-1", size)), env
        )
        say(f"apply took {time.monotonic() - t:.1f} s")
        show_terminal(raw)
        uv = shutil.which("uv")
        if uv:
            say("\n## 1b the same with uv (it prints no bytes: the plan's size, then a heartbeat)")
            venv3 = tmp / "root-3" / "target-3"
            run([sys.executable, "-m", "venv", "--without-pip", str(venv3)])
            py3 = str(venv3 / "bin" / "python")
            uv_env = {**env, "UV_NO_CONFIG": "1", "UV_CACHE_DIR": str(tmp / "uv-cache")}
            data = step_data(py3, url, tmp / "root-3", size, uv=uv)
            show_terminal(in_terminal(TERMINAL.format(repo=str(REPO), data=data), uv_env))
        else:
            say("\n## 1b skipped: no uv on PATH")
        say("\n## 2 notebook kernel (jupyter_client), fixer's notebook reporter")
        kpy = kernel_venv(tmp)
        py2 = target_venv(tmp / "root-2", "target-2", house)
        cell = tmp / "cell.py"
        cell.write_text(
            NOTEBOOK.format(repo=str(REPO), data=step_data(py2, url, tmp / "root-2", size))
        )
        t = time.monotonic()
        out = subprocess.run(
            [kpy, "-c", DRIVER, str(cell)], capture_output=True, text=True, env=env, timeout=500
        )
        say(f"kernel cell took {time.monotonic() - t:.1f} s (exit {out.returncode})")
        if out.returncode != 0:
            say(out.stderr[-3000:])
            return 1
        show_kernel(out.stdout)
        server.shutdown()
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
