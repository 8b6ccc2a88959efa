#!/usr/bin/env python3
"""Record what Ray says to a client whose token a token-authenticated cluster refuses:
tests/data/ray/auth_errors.json (what the unit tests of fixer.cluster.ray_runner.check_token feed
their stand-in Ray with).

    python scripts/record_ray_auth.py [OUT]

Starts a real Ray head node on 127.0.0.1 (RAY_AUTH_MODE=token, a fresh token, its own HOME and
temp dir, in its own session), asks it from child processes with each client setting through
ray._raylet.GcsClient, records the exception's type, `.message` and str(), then kills that session
only (never `ray stop`, which would stop every Ray on the machine)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROBE = r"""
import json, sys
import ray
from ray._raylet import GcsClient
try:
    GcsClient(address=sys.argv[1])
    print(json.dumps({"exception": None}))
except Exception as exc:
    print(json.dumps({"exception": type(exc).__name__, "module": type(exc).__module__,
                      "message": getattr(exc, "message", None), "str": str(exc)}))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_head(root: Path, token: str, port: int) -> "subprocess.Popen[bytes]":
    env = dict(os.environ, HOME=str(root), RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=token)
    ray = str(Path(sys.executable).parent / "ray")
    head = subprocess.Popen(
        [
            ray,
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=1",
            "--include-dashboard=false",
            "--node-ip-address=127.0.0.1",
            "--object-store-memory=80000000",
            f"--temp-dir={root / 'r'}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            time.sleep(2)  # the GCS listens before it serves
            return head
        except OSError:
            time.sleep(0.5)
    stop_head(head)
    raise RuntimeError("the Ray head node did not start within 60 s")


def stop_head(head: "subprocess.Popen[bytes]") -> None:
    """SIGTERM, then SIGKILL, to the head's own session (process group) only."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(head.pid, sig)
        except ProcessLookupError:
            return
        try:
            head.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue
    time.sleep(1)
    try:
        os.killpg(head.pid, signal.SIGKILL)  # what --block's exit left behind
    except ProcessLookupError:
        pass


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests/data/ray/auth_errors.json"
    import ray

    token = secrets.token_hex(32)
    cases = {
        "no RAY_AUTH_MODE, no token": {},
        "RAY_AUTH_MODE=token, a wrong RAY_AUTH_TOKEN": {
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": "0" * 64,
        },
        "no RAY_AUTH_MODE, the right RAY_AUTH_TOKEN": {"RAY_AUTH_TOKEN": token},
        "RAY_AUTH_MODE=token, the right RAY_AUTH_TOKEN": {
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": token,
        },
    }
    records = []
    with tempfile.TemporaryDirectory() as root, tempfile.TemporaryDirectory() as home:
        port = free_port()
        head = start_head(Path(root), token, port)
        try:
            for name, extra in cases.items():
                env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
                env.update(extra, HOME=home)
                r = subprocess.run(
                    [sys.executable, "-c", PROBE, f"127.0.0.1:{port}"],
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                got = json.loads(r.stdout.strip().splitlines()[-1])
                got["str"] = (got.get("str") or "").replace(home, "~")
                records.append({"client": name, **got})
        finally:
            stop_head(head)
    value = {
        "recorded_by": "scripts/record_ray_auth.py",
        "ray": ray.__version__,
        "note": "ray._raylet.GcsClient(address=HOST:PORT) against a head started with RAY_AUTH_MODE=token",
        "cases": records,
    }
    out.write_text(json.dumps(value, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(value, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
